// Reports as values: what a `simulate` or `collective` run found, built from the replay's times
// and the execution graph's tags (measure.h), and two printers of each, the JSON document of
// --report and the short text on stdout. Deterministic: the same inputs give byte-identical
// output (ordered keys, no clocks).
#ifndef DTSIM_SIM_REPORT_REPORT_H_
#define DTSIM_SIM_REPORT_REPORT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/collectives/collective_choice.h"
#include "sim/report/error_bars.h"
#include "sim/report/limiter.h"
#include "sim/report/link_report.h"

namespace dtsim::sim {

// How a run was set up: the platform, the ranks and the collective and replay options.
struct RunInfo {
  std::string verb;  // "simulate" or "collective"
  std::string platform_file;
  std::string topology;
  std::size_t hosts = 0;
  int ranks = 0;
  std::string placement;
  std::optional<std::uint64_t> placement_seed;  // random placement only
  std::string algorithm;
  std::string replay;  // "collapsed", "fast" or "step"
  std::uint64_t chunk_bytes = 0;
  double collective_latency_sec = 0;
  std::optional<int> ranks_per_node;  // hierarchical and auto only
  std::string network_model;
  std::vector<std::string> simgrid_cfg;  // the model's settings
  std::vector<std::string> extra_cfg;    // added with --cfg
  std::vector<std::string> what_if;      // --apply passes, as given (sim/whatif/WHATIF.md)
};

struct WorkloadInfo {
  std::string file;
  std::string model;
  std::string device;
  std::string precision;
  int batch_per_device = 0;
  std::uint64_t param_bytes = 0;
};

// One gradient bucket's all-reduce in the reported iteration (times from its start).
struct BucketResult {
  std::uint64_t bytes = 0;
  std::string algorithm;
  std::string first_layer;
  std::string last_layer;
  double ready_sec = 0;
  double start_sec = 0;
  double end_sec = 0;
  std::optional<CollectiveChoice> auto_choice;  // --algorithm auto: every candidate
};

struct TrainingResult {
  double iteration_time_sec = 0;
  double compute_sec = 0;  // one rank's forward + backward (every micro-batch) + optimizer
  double forward_sec = 0;
  double backward_sec = 0;
  double optimizer_sec = 0;
  double exposed_comm_sec = 0;    // iteration time not hidden behind compute
  double scaling_efficiency = 0;  // compute_sec / iteration_time_sec
  double samples_per_sec_per_device = 0;
  double backward_end_sec = 0;
  std::vector<double> iteration_end_sec;
  std::vector<BucketResult> buckets;
  Limiter limiter;
  CommCost comm_cost;  // the buckets' alpha and beta terms
};

// What `dtsim simulate` reports.
struct SimulateReport {
  RunInfo run;
  WorkloadInfo workload;
  std::uint64_t bucket_cap_bytes = 0;
  std::uint64_t first_bucket_cap_bytes = 0;
  int iterations_simulated = 0;
  int accumulation_steps = 1;
  std::string overlap;
  std::size_t tasks_replayed = 0;
  bool ranks_folded = false;
  int all_reduces_memoized = 0;
  TrainingResult result;
  std::vector<LinkLoad> links;  // every loaded link (the JSON lists the busiest per level)
  std::vector<ErrorBar> error_bars;
};

// What `dtsim collective` reports.
struct CollectiveReport {
  RunInfo run;
  std::string op;
  std::optional<int> root;  // broadcast, reduce, send-recv
  std::uint64_t bytes = 0;
  std::optional<CollectiveChoice> auto_choice;
  double time_sec = 0;
  double algorithm_bandwidth_bytes_per_sec = 0;  // nccl-tests' algbw = bytes / time
  double bus_bandwidth_bytes_per_sec = 0;        // and busbw
  std::size_t transfers = 0;
  std::vector<ErrorBar> error_bars;
  // With CollectiveConfig::dump_algorithm: the algorithm as a file (not part of the report).
  std::optional<nlohmann::ordered_json> algorithm_file;
};

// One collective of the reported iteration of a graph run (times from the iteration's start).
struct CollectiveResult {
  std::string communicator;
  std::string op;
  std::uint64_t bytes = 0;
  std::string algorithm;
  double start_sec = 0;
  double end_sec = 0;
};

// What `dtsim simulate --graph` reports: the graph's shape and its last iteration.
struct GraphReport {
  RunInfo run;
  std::string graph_file;
  std::size_t programs = 0;
  std::size_t communicators = 0;
  std::size_t nodes = 0;  // over all programs
  int iterations_simulated = 0;
  std::size_t tasks_replayed = 0;
  bool ranks_folded = false;
  int collectives_memoized = 0;
  // How ranks folded (sim/lowering/fold.h): "none", "exact" or "verified"; for "verified", the
  // communication of folded ranks that released no representative (shadows), how many of their
  // exits were checked and the largest difference found, and the shadow repeats left out.
  std::string fold = "none";
  int shadows = 0;
  std::size_t fold_checks = 0;
  double fold_max_difference_sec = 0;
  int repeats_left_out = 0;
  std::size_t last_iteration_left_out = 0;  // of them, in the last iteration
  double iteration_time_sec = 0;
  std::vector<double> iteration_end_sec;
  double compute_sec = 0;       // the busiest rank's compute in the last iteration (its own speed)
  int busiest_rank = 0;         // the lowest of the busiest
  double exposed_comm_sec = 0;  // iteration time not hidden behind that compute
  std::vector<CollectiveResult> collectives;  // in the order lowering added them
  std::size_t transfers = 0;                  // send/recv pairs in the last iteration
  std::uint64_t transfer_bytes = 0;
  std::vector<LinkLoad> links;
  std::vector<ErrorBar> error_bars;
};

// The --report documents (README, "Report").
[[nodiscard]] nlohmann::ordered_json report_json(const SimulateReport& report);
[[nodiscard]] nlohmann::ordered_json report_json(const CollectiveReport& report);
[[nodiscard]] nlohmann::ordered_json report_json(const GraphReport& report);

// ", with --apply P, --apply Q" when what-ifs transformed `run` (empty otherwise), for a
// summary's first line.
[[nodiscard]] std::string what_if_note(const RunInfo& run);

// The busiest link of each level, a line each, for the summaries.
[[nodiscard]] std::string busiest_links(const std::vector<LinkLoad>& links);

// "", " with ranks folded" or " with ranks folded and verified", for a summary's first line.
[[nodiscard]] std::string fold_note(const GraphReport& report);

// A few lines for people.
[[nodiscard]] std::string report_summary(const SimulateReport& report);
// One line for people.
[[nodiscard]] std::string report_summary(const CollectiveReport& report);
[[nodiscard]] std::string report_summary(const GraphReport& report);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_REPORT_REPORT_H_
