#include "sim/run/graph_run.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>
#include <tuple>
#include <utility>

#include "sim/config_error.h"
#include "sim/graph/graph_reader.h"
#include "sim/lowering/lowering.h"
#include "sim/replay/replay.h"
#include "sim/report/error_bars.h"
#include "sim/report/link_report.h"
#include "sim/report/measure.h"
#include "sim/report/timeline.h"
#include "sim/run/engine_run.h"
#include "sim/run/work_limits.h"
#include "workloads/parsing/units.h"

namespace dtsim::sim {

namespace {

// The busiest rank's compute in the last iteration (at its own speed) and that rank.
std::pair<double, int> busiest_compute(const ExecutionGraph& g, const LoweredGraph& lowered,
                                       std::int32_t last) {
  std::pair<double, int> busiest{0.0, 0};
  for (int r = 0; r < g.rank_count(); ++r) {
    if (lowered.stands_for[static_cast<std::size_t>(r)] != r) {
      continue;  // it computes as the rank it stands for, which comes first
    }
    const Program& p = g.program_of(r);
    double sec = 0;
    for (std::size_t i = 0; i < p.nodes.size(); ++i) {
      if (p.nodes[i].kind == NodeKind::kCompute && p.nodes[i].iteration == last) {
        sec += node_duration_sec(g, lowered, r, static_cast<std::int32_t>(i));
      }
    }
    if (sec > busiest.first) {
      busiest = {sec, r};
    }
  }
  return busiest;
}

// Every collective of iteration `last` (each once) and the send/recv transfers' count and bytes.
void last_iteration_communication(const ExecutionGraph& g, const LoweredGraph& lowered,
                                  const ReplayTimes& times, std::int32_t last, double start_sec,
                                  GraphReport& report) {
  const IterationCommunication comm = iteration_communication(g, lowered, last);
  for (std::int32_t index : comm.instances) {
    const CollectiveInstance& c = lowered.instances[static_cast<std::size_t>(index)];
    CollectiveResult result{
        .communicator = g.communicators[static_cast<std::size_t>(c.communicator)].name,
        .op = std::string(op_name(c.op)),
        .bytes = c.bytes,
        .algorithm = lowered.choices[static_cast<std::size_t>(c.choice)].algorithm};
    result.start_sec = result.end_sec = 0;
    if (c.first != c.end) {
      result.start_sec =
          *std::min_element(times.start_sec.begin() + c.first, times.start_sec.begin() + c.end) -
          start_sec;
      result.end_sec =
          *std::max_element(times.end_sec.begin() + c.first, times.end_sec.begin() + c.end) -
          start_sec;
    }
    report.collectives.push_back(std::move(result));
  }
  for (const auto& [index, count] : comm.left_out) {
    report.last_iteration_left_out += static_cast<std::size_t>(count);
  }
  report.transfers = comm.transfers.size();
  for (TaskId t : comm.transfers) {
    report.transfer_bytes += lowered.tasks.tasks()[static_cast<std::size_t>(t)].bytes;
  }
}

// How far a shadow's exit may be from its representative's for a verified fold to hold
// (fold.h): SimGrid computes a symmetric share to the last bits, and 1 ns is below anything a
// report prints.
constexpr double kFoldToleranceSec = 1e-9;

// A verified fold is checked while its replay runs, each time another twentieth of the tasks has
// ended: one that did not hold stops the replay there (its mismatch in `mismatch`), and the run
// starts again with the next fold without replaying the rest (a pipeline transfer of a
// 2,520-GPU job did not match at 0.2 s of a 144 s replay).
ReplayWatch fold_watch(const ExecutionGraph& graph, const LoweredGraph& lowered,
                       std::string& mismatch) {
  if (lowered.fold_checks.empty()) {
    return {};
  }
  constexpr std::size_t kChecksPerReplay = 20;
  return {.every_tasks = std::max<std::size_t>(1, lowered.tasks.tasks().size() / kChecksPerReplay),
          .check = [&graph, &lowered, &mismatch,
                    compared = std::vector<std::uint8_t>()](const ReplayTimes& so_far) mutable {
            mismatch =
                check_fold_so_far(graph, lowered, so_far, kFoldToleranceSec, compared).mismatch;
            return mismatch.empty();
          }};
}

// What the report calls the fold that ran: "none", "exact", "verified" or "node".
std::string fold_name(const LoweredGraph& lowered, FoldMode mode) {
  if (!lowered.ranks_folded) {
    return "none";
  }
  if (lowered.shadows == 0) {
    return "exact";
  }
  return mode == FoldMode::kNode ? "node" : "verified";
}

int repeats_left_out(const LoweredGraph& lowered) {
  int n = 0;
  for (const LeftOutRepeats& l : lowered.left_out) {
    n += l.count;
  }
  return n;
}

// What a replay of `g` needs beyond a valid graph: a node, iterations numbered 0, 1, 2, ...
// without a gap, and compute that ends (at the slowest GPU's speed). A stream's iterations may
// interleave (P3's updates of step k run after step k+1's first forward nodes): lowering runs
// each stream in its listed order whatever the iterations, and iteration k ends once every node
// of iterations 0..k has (sim/graph/GRAPH.md).
void check_replayable(const ExecutionGraph& g, const std::string& path, double slowest) {
  std::set<std::int32_t> iterations;
  for (const Program& p : g.programs) {
    double compute_sec = 0;
    for (const Node& node : p.nodes) {
      iterations.insert(node.iteration);
      compute_sec += node.duration_sec;
    }
    if (!std::isfinite(slowest * compute_sec)) {
      throw ConfigError(path + ": program \"" + p.name + "\": its compute durations add up to " +
                        parsing::format_number("%g", compute_sec) + " s" +
                        (slowest != 1
                             ? " (x " + parsing::format_number("%g", slowest) + ", the slowest GPU)"
                             : "") +
                        ": a replay would never end");
    }
  }
  if (iterations.empty()) {
    throw ConfigError(path + ": the graph has no node to replay");
  }
  const std::int32_t last = *iterations.rbegin();
  if (*iterations.begin() != 0 || last + 1 != static_cast<std::int32_t>(iterations.size())) {
    std::int32_t missing = 0;
    while (iterations.contains(missing)) {
      ++missing;
    }
    throw ConfigError(path + ": no node has iteration " + std::to_string(missing) +
                      ", but one has iteration " + std::to_string(last) +
                      " (iterations are numbered 0, 1, 2, ... without a gap)");
  }
}

// What a replay lasts at least: a program's compute at full GPU speed, or the software latency
// of the collectives on one of its communicators, which run one after another.
double shortest_run_sec(const ExecutionGraph& g, double collective_latency_sec) {
  double longest_sec = 0;
  for (const Program& p : g.programs) {
    double compute_sec = 0;
    std::vector<double> latency_sec(p.comms.size(), 0.0);
    for (const Node& node : p.nodes) {
      compute_sec += node.duration_sec;
      if (node.kind == NodeKind::kCollective) {
        latency_sec[static_cast<std::size_t>(node.comm)] += collective_latency_sec;
      }
    }
    longest_sec = std::max(longest_sec, compute_sec);
    for (double sec : latency_sec) {
      longest_sec = std::max(longest_sec, sec);
    }
  }
  return longest_sec;
}

// The lowering options of `run` on `engine`: folding and memoizing where run.collapse allows,
// memoizing on an otherwise idle network only (no background traffic).
LoweringOptions lowering_options(const RunOptions& run, const ValidatedRun& v,
                                 const EngineRun& engine) {
  const bool memoize = run.collapse && !engine.has_background_traffic();
  LoweringOptions options{.compute_factor = engine.compute_factors(),
                          .fold = run.collapse ? run.fold : FoldMode::kOff,
                          .memoize = memoize,
                          .rank_nodes = v.hints.rank_nodes,
                          .max_tasks = run.max_tasks};
  options.route_shape = [&engine](int src, int dst) {
    std::vector<double> shape{engine.hints().latency_sec(src, dst)};
    for (const auto& [id, bandwidth] : engine.hints().links(src, dst)) {
      shape.push_back(bandwidth);
    }
    return shape;
  };
  if (memoize) {
    options.route_links = [&engine](int src, int dst) {
      std::vector<int> ids;
      for (const auto& [id, bandwidth] : engine.hints().route_links(src, dst)) {
        ids.push_back(id);
      }
      return ids;
    };
  }
  return options;
}

// Replays `lowered`, checking a verified fold while it runs and after (`verdict`); throws
// FoldNotExact where it did not hold.
ReplayTimes replay_checking_fold(const ExecutionGraph& graph, const LoweredGraph& lowered,
                                 const EngineRun& engine, FoldVerdict& verdict) {
  std::string fold_mismatch;
  ReplayTimes times =
      replay(lowered.tasks, engine.rank_hosts(), fold_watch(graph, lowered, fold_mismatch));
  if (times.stopped) {
    throw FoldNotExact(fold_mismatch);
  }
  verdict = check_fold(graph, lowered, times, kFoldToleranceSec);
  if (!verdict.mismatch.empty()) {
    throw FoldNotExact(verdict.mismatch);
  }
  return times;
}

}  // namespace

GraphReport replay_graph(ExecutionGraph& graph, const RunOptions& run, const std::string& origin,
                         SimulateOutputs* outputs, const ReplayObserver& observe) {
  ValidatedRun v = validate_run(run, nullptr, origin);
  graph = apply_graph_what_ifs(std::move(graph), run.what_if, {.origin = origin});
  if (const double run_sec = shortest_run_sec(graph, run.collective_latency_sec);
      std::isfinite(run_sec)) {
    check_background_limit(v.platform, run_sec, "the compute or collective latencies of " + origin,
                           run.max_events);
  }
  EngineRun engine(run, v.platform, v.hints);
  check_replayable(graph, origin, std::ranges::max(engine.compute_factors()));
  const LoweringOptions options = lowering_options(run, v, engine);
  GroupChooser choose(v.chooser, engine, run.ranks);
  graph = with_priority_order(std::move(graph), options, choose);
  const LoweredGraph lowered = lower(graph, options, std::ref(choose));
  choose.release_schedules();
  FoldVerdict verdict;
  const ReplayTimes times = replay_checking_fold(graph, lowered, engine, verdict);
  if (outputs != nullptr && outputs->want_timeline) {
    outputs->timeline = timeline_json(graph, lowered, times);
  }
  const TrainingTimes t = measure_training(graph, lowered, times);
  GraphReport report{.run = run_info("simulate", run, v.platform, v.hints, engine.host_count()),
                     .graph_file = origin,
                     .programs = graph.programs.size(),
                     .communicators = graph.communicators.size(),
                     .iterations_simulated = static_cast<int>(t.iteration_end_sec.size()),
                     .tasks_replayed = lowered.tasks.tasks().size(),
                     .ranks_folded = lowered.ranks_folded,
                     .collectives_memoized = lowered.memoized,
                     .fold = fold_name(lowered, options.fold),
                     .shadows = lowered.shadows,
                     .fold_checks = verdict.checked,
                     .fold_max_difference_sec = verdict.max_difference_sec,
                     .repeats_left_out = repeats_left_out(lowered),
                     .iteration_time_sec = t.iteration_time_sec,
                     .iteration_end_sec = t.iteration_end_sec};
  for (const Program& p : graph.programs) {
    report.nodes += p.nodes.size();
  }
  report.error_bars = {error_bar("graph", "an execution graph read from a file")};
  for (ErrorBar& bar : what_if_error_bars(run.what_if)) {
    report.error_bars.push_back(std::move(bar));
  }
  const auto last = static_cast<std::int32_t>(t.iteration_end_sec.size()) - 1;
  std::tie(report.compute_sec, report.busiest_rank) = busiest_compute(graph, lowered, last);
  report.exposed_comm_sec = std::max(0.0, t.iteration_time_sec - report.compute_sec);
  last_iteration_communication(graph, lowered, times, last,
                               t.iteration_end_sec.back() - t.iteration_time_sec, report);
  report.links =
      measure_link_loads(graph, lowered, engine.rank_hosts(), v.platform, t.iteration_time_sec);
  if (observe) {
    observe(graph, lowered, times, t);
  }
  if (outputs != nullptr) {
    outputs->links = report.links;
    if (outputs->want_graph) {
      outputs->graph = std::move(graph);
    }
  }
  return report;
}

GraphReport simulate_graph(const GraphConfig& config, SimulateOutputs* outputs) {
  return simulate_execution_graph(read_execution_graph(config.graph_path), config.run,
                                  config.graph_path, outputs);
}

GraphReport simulate_execution_graph(ExecutionGraph graph, const RunOptions& options,
                                     const std::string& origin, SimulateOutputs* outputs) {
  if (graph.rank_count() < 1) {
    throw ConfigError(origin + ": the graph has no ranks");
  }
  RunOptions run = options;
  if (run.ranks != 0 && run.ranks != graph.rank_count()) {
    throw ConfigError("ranks", std::to_string(run.ranks) + ": " + origin + " has " +
                                   std::to_string(graph.rank_count()) + " ranks");
  }
  run.ranks = graph.rank_count();
  return replay_graph(graph, run, origin, outputs, {});
}

}  // namespace dtsim::sim
