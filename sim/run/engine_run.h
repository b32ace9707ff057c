// What every verb of a run shares: its options checked before SimGrid starts, the process's
// SimGrid engine with the platform built and the ranks placed, and the chooser that picks each
// collective's algorithm on its group's hosts. Internal to sim/run.
#ifndef DTSIM_SIM_RUN_ENGINE_RUN_H_
#define DTSIM_SIM_RUN_ENGINE_RUN_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <simgrid/forward.h>

#include "platforms/build_platform.h"
#include "platforms/platform_spec.h"
#include "sim/collectives/collective_choice.h"
#include "sim/graph/execution_graph.h"
#include "sim/lowering/lowering.h"
#include "sim/report/error_bars.h"
#include "sim/report/limiter.h"
#include "sim/report/report.h"
#include "sim/run/simulation.h"
#include "sim/whatif/what_if.h"

namespace dtsim::sim {

// What both verbs check before SimGrid starts.
struct ValidatedRun {
  platforms::PlatformSpec platform;
  CollectiveChooser chooser;
  TopologyHints hints;  // all but what needs the built platform
};

// Checks `run`, and that its algorithm can run `request` (if given) as far as is known before the
// platform is built. `ranks_from` names where run.ranks came from, for messages (default: the
// --ranks flag).
ValidatedRun validate_run(const RunOptions& run, const CollectiveRequest* request,
                          const std::string& ranks_from = "");

// The process's SimGrid engine, configured for `run`, with the platform built and ranks placed.
class EngineRun {
 public:
  // Starts SimGrid with run's settings, builds `spec`'s platform, places the ranks, checks XML
  // routes, starts background flows. Throws ConfigError for --cfg settings SimGrid refuses.
  EngineRun(const RunOptions& run, const platforms::PlatformSpec& spec, TopologyHints hints);
  ~EngineRun();
  EngineRun(const EngineRun&) = delete;
  EngineRun& operator=(const EngineRun&) = delete;

  [[nodiscard]] const std::vector<simgrid::s4u::Host*>& rank_hosts() const { return rank_hosts_; }
  [[nodiscard]] const TopologyHints& hints() const { return hints_; }
  [[nodiscard]] std::size_t host_count() const { return platform_.hosts.size(); }
  // Per rank, from the spec's slow GPUs (1: healthy).
  [[nodiscard]] const std::vector<double>& compute_factors() const { return compute_factors_; }
  // Background flows load the network: repeated collectives are then not alike (no memoizing).
  [[nodiscard]] bool has_background_traffic() const { return has_background_traffic_; }

 private:
  std::vector<std::string> args_;
  std::vector<char*> argv_;
  std::unique_ptr<simgrid::s4u::Engine> engine_;
  platforms::Platform platform_;
  std::vector<simgrid::s4u::Host*> rank_hosts_;
  std::vector<double> compute_factors_;
  bool has_background_traffic_ = false;
  std::map<const simgrid::s4u::Link*, int>
      link_ids_;  // only groups loads: iteration order never matters
  TopologyHints hints_;
};

// nccl-tests' bus bandwidth factors: what each rank's link carries relative to S/t.
double bus_bandwidth_factor(CollectiveOp op, int p);

// What the report says of how `run` was set up.
RunInfo run_info(const char* verb, const RunOptions& run, const platforms::PlatformSpec& spec,
                 const TopologyHints& hints, std::size_t hosts);

// Chooses every collective's algorithm on its communicator's hosts, once per distinct
// (communicator, op, bytes, root), and keeps each choice's alpha and beta terms for the limiter.
class GroupChooser {
 public:
  GroupChooser(const CollectiveChooser& chooser, const EngineRun& engine, int ranks)
      : chooser_(chooser), engine_(engine), ranks_(ranks) {}

  // The choice for `request` on `comm` (a ChooseCollective, lowering.h): made once per key.
  const CollectiveChoice& operator()(const CollectiveRequest& request, const Communicator& comm);
  // Frees the schedules once the task graph holds them (the costs stay).
  void release_schedules();
  // The alpha and beta terms of the choice made for `node` of `rank`'s program.
  [[nodiscard]] const CommCost& cost(const ExecutionGraph& g, int rank, const Node& node) const {
    const std::string algorithm =
        node.algorithm < 0 ? "" : g.algorithms[static_cast<std::size_t>(node.algorithm)];
    return made_.at({g.communicator_of(rank, node).name, node.op, node.bytes, node.root, algorithm})
        .second;
  }

 private:
  using Key = std::tuple<std::string, CollectiveOp, std::uint64_t, int, std::string>;
  // The chooser of a collective's own algorithm (request.algorithm), or the run's.
  const CollectiveChooser& chooser_for(const CollectiveRequest& request);

  const CollectiveChooser& chooser_;
  std::map<std::string, CollectiveChooser> named_;  // per algorithm a graph names
  const EngineRun& engine_;
  int ranks_;
  std::map<Key, std::pair<CollectiveChoice, CommCost>> made_;
  bool released_ = false;
};

// The validated error of what `what_ifs` change (whatif_error_bar), one bar per class: a run
// they transformed is that much less certain than its untransformed class says.
[[nodiscard]] std::vector<ErrorBar> what_if_error_bars(const std::vector<WhatIf>& what_ifs);

// Whether ranks 0..ranks-1 sit on more than one node.
[[nodiscard]] bool spans_nodes(const TopologyHints& hints, int ranks);

// `graph` with its priorities honoured (sim/whatif/priority.h): each program's streams in the
// order the priority policy starts their nodes, collectives timed by the chooser's estimates.
[[nodiscard]] ExecutionGraph with_priority_order(ExecutionGraph graph,
                                                 const LoweringOptions& options,
                                                 GroupChooser& choose);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_RUN_ENGINE_RUN_H_
