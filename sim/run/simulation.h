// One dtsim run, end to end: read and validate the inputs, configure SimGrid, build the platform,
// place ranks, build the task graph, replay it, and produce the report.
// One simulation per process: SimGrid allows a single engine, and its clock never resets.
#ifndef DTSIM_SIM_RUN_SIMULATION_H_
#define DTSIM_SIM_RUN_SIMULATION_H_

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/graph/execution_graph.h"
#include "sim/lowering/fold.h"
#include "sim/replay/rank_mapping.h"
#include "sim/report/link_report.h"
#include "sim/report/report.h"
#include "sim/strategies/buckets.h"
#include "sim/strategies/data_parallel.h"
#include "sim/whatif/what_if.h"

namespace dtsim::sim {

// The SimGrid network model of a run.
enum class NetworkModel {
  kExact,  // CM02, no cross-traffic, no TCP window cap: flow-level alpha-beta with max-min sharing
  kLv08,   // SimGrid's default LV08 (TCP latency/bandwidth factors, cross-traffic)
};

// "exact" or "lv08"; nothing for other names.
[[nodiscard]] std::optional<NetworkModel> parse_network_model(const std::string& name);
[[nodiscard]] std::string network_model_name(NetworkModel model);
// The --cfg settings a model stands for, e.g. {"network/model:CM02", ...}.
[[nodiscard]] std::vector<std::string> network_model_settings(NetworkModel model);

// Throws ConfigError unless `setting` is KEY:VALUE with a key dtsim leaves to the user (not the
// network, CPU or host model, cross-traffic, TCP-gamma or contexts/*, which dtsim sets) and a
// value SimGrid survives: a precision or a network/*-factor > 0, a concurrency limit of -1 or
// >= 1 (SimGrid aborts, hangs or deadlocks otherwise). Unknown keys and values of the wrong type
// are SimGrid's to refuse, when the engine starts.
void check_simgrid_cfg(const std::string& setting);

// Default work bounds of a run (sim/run/work_limits.h): 2^17 hosts (about 0.3 GB and 4 s to
// build), 10^6 background transfers (about 5 s: a flow every 10 ms for 10^4 simulated s; the
// CLI mutator's "hangs" were 5e7 of them, over 10 minutes).
inline constexpr double kDefaultMaxHosts = 131072;
inline constexpr double kDefaultMaxEvents = 1e6;
// Tasks a replay may have once lowered (sim/lowering/lowering.h), counted before any is built:
// about 2.6 us and 150 bytes each on the 2-core development machine, so about 2 minutes and
// 7.5 GB at this bound.
inline constexpr double kDefaultMaxTasks = 5e7;
// Transfers of one named algorithm's collective that may run at once (each holds about 40 KB in
// the replay: 3e5 is about 12 GB; measured, a direct all-reduce of 512 ranks, 261,632 at once,
// peaked at 10.0 GB).
inline constexpr double kDefaultMaxConcurrent = 3e5;

// Options shared by both verbs.
struct RunOptions {
  std::string platform_path;
  int ranks = 0;
  Placement placement;              // which host runs which rank (--placement)
  std::string algorithm = "ring";   // a registry name, or "auto"
  bool collapse = true;             // collapsed ("collapsed") or step-level replay
  bool collapse_pipelines = false;  // trees collapsed too ("fast"; needs collapse)
  // With collapse, how graph replays fold ranks (sim/lowering/fold.h; --fold verified|node|exact):
  // kVerified, kNode or kExact.
  FoldMode fold = FoldMode::kVerified;
  std::uint64_t chunk_bytes = 512 * 1024;  // pipelining chunk of trees and chains
  double collective_latency_sec = 0;       // software latency per collective (AlgorithmOptions)
  int ranks_per_node = 0;  // hierarchical algorithm; 0: the platform's GPUs per node
  std::vector<int> grid;   // torus-2d algorithm; empty: the dims of a 2-D torus platform
  NetworkModel network_model = NetworkModel::kExact;
  std::vector<std::string> simgrid_cfg;  // extra SimGrid settings KEY:VALUE (--cfg)
  // Work bounds (work_limits.h): hosts a platform may build, background transfers a run may
  // start, tasks a replay may have, transfers of one collective at once.
  double max_hosts = kDefaultMaxHosts;
  double max_events = kDefaultMaxEvents;
  double max_tasks = kDefaultMaxTasks;
  double max_concurrent = kDefaultMaxConcurrent;
  // What-if passes (--apply; sim/whatif/WHATIF.md): the platform ones when it is read, the
  // graph ones on the graph before it is lowered. Flag knobs are the caller's to apply.
  std::vector<WhatIf> what_if;
};

// A verified fold (sim/lowering/fold.h) did not hold: a folded rank's communication ended
// elsewhen than its representative's. The replay's times are not every rank's; replay again with
// RunOptions::fold kNode (after kVerified) or kExact (a fresh process: SimGrid runs one engine
// per process).
class FoldNotExact : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The most kernels per bucket --bucket-kernels takes: DDP launches one or none; more is a typo.
inline constexpr int kMaxBucketKernels = 16;

struct SimulateConfig {
  RunOptions run;
  std::string workload_path;
  std::uint64_t bucket_cap_bytes = kDefaultBucketCapBytes;
  int iterations = 3;
  int accumulation_steps = 1;  // micro-batches per optimizer step (see DataParallelJob)
  // When gradient all-reduces may run: alongside backward or after it (see Overlap).
  Overlap overlap = Overlap::kBackward;
  // NCCL channels (thread blocks, one SM each) an all-reduce kernel holds while the backward pass
  // runs; 0: no compute-side bucket cost (sim/whatif/bucket_cost.h, WHATIF.md).
  int nccl_channels = 0;
  // Kernels DDP launches on the compute stream per gradient bucket, each at the GPU's fixed cost
  // of a kernel (PyTorch <= 1.7: 1, the div_ that prescales the bucket); 0: none
  // (sim/whatif/bucket_cost.h, WHATIF.md).
  int bucket_kernels = 0;
};

// `dtsim simulate --graph`: an execution graph from a file (sim/graph/GRAPH.md). run.ranks is
// the graph's rank count, or 0 to take it from the graph.
struct GraphConfig {
  RunOptions run;
  std::string graph_path;
};

struct CollectiveConfig {
  RunOptions run;
  std::string op = "all-reduce";  // see sim/collectives/collective_algorithm.h
  std::uint64_t bytes = 0;
  int root = 0;
  // Also write the algorithm that runs as an algorithm file (CollectiveReport::algorithm_file):
  // its step-level schedule, what `--replay step` runs.
  bool dump_algorithm = false;
};

// What simulate_data_parallel produces besides its report, on request.
struct SimulateOutputs {
  bool want_graph = false;
  ExecutionGraph graph;  // if want_graph: the execution graph the run replayed
  bool want_timeline = false;
  nlohmann::ordered_json timeline;  // if want_timeline: the Chrome trace (sim/report/timeline.h)
  std::vector<LinkLoad> links;      // every link's load (sim/report/link_report.h)
};

// Simulates data-parallel training and returns the report (see README, "Report"); fills
// `outputs` if given. Throws ConfigError, workloads::TraceError or platforms::PlatformError,
// before the simulation starts, for any bad input.
[[nodiscard]] SimulateReport simulate_data_parallel(const SimulateConfig& config,
                                                    SimulateOutputs* outputs = nullptr);

// Replays the execution graph at config.graph_path and returns its report; fills `outputs` if
// given. Throws as simulate_data_parallel, and GraphError for a bad graph file.
[[nodiscard]] GraphReport simulate_graph(const GraphConfig& config,
                                         SimulateOutputs* outputs = nullptr);

// Replays `graph`, built by an importer (sim/chakra) rather than read from a graph file, and
// returns its report; `origin` names it in errors and the report. run.ranks is the graph's rank
// count, or 0 to take it from the graph. Throws as simulate_graph.
[[nodiscard]] GraphReport simulate_execution_graph(ExecutionGraph graph, const RunOptions& run,
                                                   const std::string& origin,
                                                   SimulateOutputs* outputs = nullptr);

// Simulates one collective alone on an idle network and returns its report ("time_sec", ...).
// Throws as simulate_data_parallel.
// Fills `outputs` if given: the one-collective graph, its timeline, every link's load.
[[nodiscard]] CollectiveReport simulate_collective(const CollectiveConfig& config,
                                                   SimulateOutputs* outputs = nullptr);

// Builds the platform at `path` in SimGrid and describes it: hosts, links, fat-tree levels and
// oversubscription, bisection bandwidth (platforms/describe.h). Throws PlatformError.
[[nodiscard]] nlohmann::ordered_json describe_platform(const std::string& path);

// A text rendering of describe_platform's result.
[[nodiscard]] std::string platform_summary(const nlohmann::ordered_json& description);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_RUN_SIMULATION_H_
