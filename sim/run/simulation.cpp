#include "sim/run/simulation.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>
#include <tuple>
#include <utility>

#include "sim/collectives/algorithm_file.h"
#include "sim/collectives/registry.h"
#include "sim/config_error.h"
#include "sim/graph/graph_reader.h"
#include "sim/lowering/lowering.h"
#include "sim/replay/replay.h"
#include "sim/report/error_bars.h"
#include "sim/report/link_report.h"
#include "sim/report/measure.h"
#include "sim/report/timeline.h"
#include "sim/run/engine_run.h"
#include "sim/run/graph_run.h"
#include "sim/run/work_limits.h"
#include "sim/strategies/data_parallel.h"
#include "sim/whatif/bucket_cost.h"
#include "sim/whatif/op_classes.h"
#include "sim/whatif/priority.h"
#include "sim/whatif/what_if.h"
#include "workloads/generator.h"
#include "workloads/parsing/units.h"
#include "workloads/trace_reader.h"

namespace dtsim::sim {

namespace {

// Whether ranks 0..ranks-1 sit on more than one node.
bool spans_nodes(const TopologyHints& hints, int ranks) {
  for (int r = 1; r < ranks; ++r) {
    if (hints.node_of(r) != hints.node_of(0)) {
      return true;
    }
  }
  return false;
}

// The iteration and compute figures of `t` (buckets, limiter and costs are added by the caller).
TrainingResult training_result(const TrainingTimes& t, int batch_per_device) {
  TrainingResult r{
      .iteration_time_sec = t.iteration_time_sec,
      .compute_sec = t.compute_sec,
      .forward_sec = t.forward_sec,
      .backward_sec = t.backward_sec,
      .optimizer_sec = t.optimizer_sec,
      // Never negative: float sums of the same durations may differ in the last bit.
      .exposed_comm_sec = std::max(0.0, t.iteration_time_sec - t.compute_sec),
      .scaling_efficiency = t.iteration_time_sec > 0 ? t.compute_sec / t.iteration_time_sec : 1.0,
      .backward_end_sec = t.backward_end_sec,
      .iteration_end_sec = t.iteration_end_sec};
  r.samples_per_sec_per_device =
      t.iteration_time_sec > 0 ? 1.0 * batch_per_device * t.micro_batches / t.iteration_time_sec
                               : 0.0;
  return r;
}

// Refuses a run of job.iterations whose task graph would exceed options.max_tasks, from the
// first two iterations (the second as every later one: memoized repeats), before the graph of
// all of them, which could itself be too big, is built.
void check_task_limit(const workloads::Workload& workload, DataParallelJob job,
                      const LoweringOptions& options, GroupChooser& choose) {
  const int iterations = job.iterations;
  job.iterations = 1;
  const double first =
      count_lowered_tasks(build_data_parallel(workload, job), options, std::ref(choose));
  job.iterations = std::min(2, iterations);
  const double first_two =
      count_lowered_tasks(build_data_parallel(workload, job), options, std::ref(choose));
  if (const double tasks = first + (iterations - 1) * (first_two - first);
      tasks > options.max_tasks) {
    throw ConfigError("iterations", std::to_string(iterations) + ": about " +
                                        parsing::format_number("%.3g", tasks) +
                                        " tasks to replay, more than --max-tasks " +
                                        parsing::format_number("%.3g", options.max_tasks) +
                                        "; the last of 3 iterations is already the steady state");
  }
}

// One bucket result per gradient all-reduce of rank 0's last iteration, and their costs.
void add_buckets(const ExecutionGraph& graph, const LoweredGraph& lowered, const TrainingTimes& t,
                 const GroupChooser& choose, bool with_candidates, TrainingResult& result) {
  const Program& p0 = graph.program_of(0);
  for (const TrainingTimes::CollectiveTimes& c : t.collectives) {
    const Node& node = p0.nodes[static_cast<std::size_t>(c.node)];
    const CollectiveChoice& choice = lowered.choices[static_cast<std::size_t>(
        lowered.instances[static_cast<std::size_t>(c.instance)].choice)];
    result.buckets.push_back({.bytes = node.bytes,
                              .algorithm = choice.algorithm,
                              .first_layer = graph.layers[static_cast<std::size_t>(node.layer)],
                              .last_layer = graph.layers[static_cast<std::size_t>(node.last_layer)],
                              .ready_sec = c.ready_sec,
                              .start_sec = c.start_sec,
                              .end_sec = c.end_sec});
    if (with_candidates) {
      result.buckets.back().auto_choice = choice;
    }
    result.comm_cost += choose.cost(graph, 0, node);
  }
}

// The GPU the run computes on, for the bucket costs: the last --apply gpu=NAME's, else the
// trace's (catalogue name, or empty); and how to say which, for a message.
struct RunGpu {
  std::string name;
  std::string said;
};
RunGpu run_gpu(const SimulateConfig& config, const workloads::Workload& workload) {
  for (auto it = config.run.what_if.rbegin(); it != config.run.what_if.rend(); ++it) {
    if (it->kind == WhatIfKind::kGraph && it->name == "gpu") {
      return {.name = it->value,
              .said = "the run's GPU is \"" + it->value + "\" (" + it->text + ")"};
    }
  }
  return {.name = catalogue_device(workload.device),
          .said = config.workload_path + " was measured on \"" + workload.device + "\""};
}

// `graph` with the SM share of config.nccl_channels taken from the backward pass while each
// gradient all-reduce runs (sim/whatif/bucket_cost.h), timed by the chooser's estimates.
ExecutionGraph with_bucket_contention(ExecutionGraph graph, const SimulateConfig& config,
                                      const workloads::Workload& workload,
                                      const LoweringOptions& options, GroupChooser& choose) {
  const RunGpu gpu = run_gpu(config, workload);
  const int sms = streaming_multiprocessors(gpu.name);
  if (sms == 0 || config.nccl_channels < 0 || config.nccl_channels > sms) {
    throw ConfigError("nccl_channels",
                      std::to_string(config.nccl_channels) + ": expected 0 to the SMs of the " +
                          "run's GPU (v100 80, a100 108, h100 and h200 132), and " + gpu.said);
  }
  (void)count_lowered_tasks(graph, options, std::ref(choose));  // every bucket's choice made
  const auto seconds = [&choose](const ExecutionGraph& g, const Node& n) {
    const CommCost& c = choose.cost(g, 0, n);
    return c.latency_sec + c.bandwidth_sec;
  };
  return add_bucket_contention(std::move(graph), seconds, 1.0 * config.nccl_channels / sms);
}

// `graph` with config.bucket_kernels kernels of the run's GPU after each bucket's gradients
// (sim/whatif/bucket_cost.h).
ExecutionGraph with_bucket_kernels(ExecutionGraph graph, const SimulateConfig& config,
                                   const workloads::Workload& workload) {
  if (config.bucket_kernels < 0 || config.bucket_kernels > kMaxBucketKernels) {
    throw ConfigError("bucket_kernels", std::to_string(config.bucket_kernels) + ": expected 0 to " +
                                            std::to_string(kMaxBucketKernels) +
                                            " kernels per bucket");
  }
  const RunGpu gpu = run_gpu(config, workload);
  const double kernel_sec = kernel_launch_sec(gpu.name);
  if (kernel_sec == 0) {
    throw ConfigError("bucket_kernels",
                      std::to_string(config.bucket_kernels) +
                          ": the fixed kernel cost is catalogued for v100, a100, h100 and h200, "
                          "and " +
                          gpu.said);
  }
  return add_bucket_kernels(std::move(graph), config.bucket_kernels * kernel_sec);
}

// `graph` with its priorities honoured (sim/whatif/priority.h): each program's streams in the
// order the priority policy starts their nodes, collectives timed by the chooser's estimates.
ExecutionGraph with_priority_order(ExecutionGraph graph, const LoweringOptions& options,
                                   GroupChooser& choose) {
  if (!has_priorities(graph)) {
    return graph;
  }
  (void)count_lowered_tasks(graph, options, std::ref(choose));  // every collective's choice made
  const auto seconds = [&choose](const ExecutionGraph& g, int rank, const Node& n) {
    const CommCost& c = choose.cost(g, rank, n);
    return c.latency_sec + c.bandwidth_sec;
  };
  return order_by_priority(std::move(graph), seconds);
}

}  // namespace

SimulateReport simulate_data_parallel(const SimulateConfig& config, SimulateOutputs* outputs) {
  if (config.iterations < 1) {
    throw ConfigError("iterations",
                      std::to_string(config.iterations) + ": expected an integer >= 1");
  }
  if (config.accumulation_steps < 1) {
    throw ConfigError("accumulation_steps",
                      std::to_string(config.accumulation_steps) + ": expected an integer >= 1");
  }
  if (config.bucket_cap_bytes < 1) {
    throw ConfigError("bucket_cap_bytes", ": expected a bucket size > 0");
  }
  const workloads::Workload workload = workloads::read_workload(config.workload_path);
  const CollectiveRequest all_reduce{
      .op = CollectiveOp::kAllReduce, .ranks = config.run.ranks, .bytes = 1};
  ValidatedRun v = validate_run(config.run, &all_reduce);
  const double compute_sec =
      (workload.forward_sec() + workload.backward_sec()) * config.accumulation_steps +
      workload.optimizer_sec;
  // Before the engine starts (SimGrid warns on an exit while it exists); at full GPU speed,
  // and at least one gradient all-reduce (its software latency) per iteration after the
  // compute that produced it.
  const double one_iteration_sec =
      compute_sec + (config.run.ranks > 1 ? config.run.collective_latency_sec : 0.0);
  check_background_limit(
      v.platform, one_iteration_sec * config.iterations,
      std::to_string(config.iterations) + " iterations of " + config.workload_path,
      config.run.max_events);

  EngineRun engine(config.run, v.platform, v.hints);
  const double slowest = std::ranges::max(engine.compute_factors());
  if (!std::isfinite(compute_sec * config.iterations)) {  // the trace alone (issue #21's blame)
    throw ConfigError(config.workload_path + ": " + std::to_string(config.iterations) +
                      " iterations of this trace last forever");
  }
  if (!std::isfinite(slowest * compute_sec * config.iterations)) {
    throw ConfigError(v.platform.file + ": /perturbations/slow_gpus: a compute factor of " +
                      parsing::format_number("%g", slowest) + " makes " +
                      std::to_string(config.iterations) + " iterations of " + config.workload_path +
                      " last forever");
  }
  const DataParallelJob job{.ranks = config.run.ranks,
                            .bucket_cap_bytes = config.bucket_cap_bytes,
                            .iterations = config.iterations,
                            .accumulation_steps = config.accumulation_steps,
                            .overlap = config.overlap};
  const LoweringOptions options{.compute_factor = engine.compute_factors(),
                                .fold = config.run.collapse ? FoldMode::kExact : FoldMode::kOff,
                                .memoize = config.run.collapse && !engine.has_background_traffic(),
                                .max_tasks = config.run.max_tasks};
  GroupChooser choose(v.chooser, engine, config.run.ranks);
  check_task_limit(workload, job, options, choose);
  ExecutionGraph graph =
      apply_graph_what_ifs(build_data_parallel(workload, job), config.run.what_if,
                           {.device = catalogue_device(workload.device),
                            .precision = workload.precision,
                            .layer_classes = layer_op_classes(workload),
                            .origin = config.workload_path});
  if (config.nccl_channels != 0) {
    graph = with_bucket_contention(std::move(graph), config, workload, options, choose);
  }
  if (config.bucket_kernels != 0) {
    graph = with_bucket_kernels(std::move(graph), config, workload);
  }
  graph = with_priority_order(std::move(graph), options, choose);
  const LoweredGraph lowered = lower(graph, options, std::ref(choose));
  choose.release_schedules();
  const ReplayTimes times = replay(lowered.tasks, engine.rank_hosts());
  if (outputs != nullptr && outputs->want_timeline) {
    outputs->timeline = timeline_json(graph, lowered, times);
  }

  SimulateReport report{
      .run = run_info("simulate", config.run, v.platform, v.hints, engine.host_count()),
      .workload = {.file = config.workload_path,
                   .model = workload.model,
                   .device = workload.device,
                   .precision = workload.precision,
                   .batch_per_device = workload.batch_per_device,
                   .param_bytes = workload.param_bytes()},
      .bucket_cap_bytes = config.bucket_cap_bytes,
      .first_bucket_cap_bytes = job.first_bucket_cap_bytes,
      .iterations_simulated = config.iterations,
      .accumulation_steps = config.accumulation_steps,
      .overlap = overlap_name(config.overlap),
      .tasks_replayed = lowered.tasks.tasks().size(),
      .ranks_folded = lowered.ranks_folded,
      .all_reduces_memoized = lowered.memoized};
  const TrainingTimes t = measure_training(graph, lowered, times);
  report.result = training_result(t, workload.batch_per_device);
  add_buckets(graph, lowered, t, choose, config.run.algorithm.starts_with("auto"), report.result);
  report.links =
      measure_link_loads(graph, lowered, engine.rank_hosts(), v.platform, t.iteration_time_sec);
  Straggler straggler;  // the slowest rank: its healthy compute times its factor
  const std::vector<double>& factors = engine.compute_factors();
  if (const auto worst = std::max_element(factors.begin(), factors.end());
      worst != factors.end() && *worst > 1) {
    straggler = {.compute_sec = report.result.compute_sec * *worst,
                 .rank = static_cast<int>(worst - factors.begin())};
  }
  report.result.limiter =
      find_limiter(t.iteration_time_sec, report.result.compute_sec, report.result.comm_cost,
                   report.links, straggler, level_oversubscription(v.platform));
  report.error_bars = training_error_bars(workloads::compute_timing(workload),
                                          spans_nodes(v.hints, config.run.ranks),
                                          catalogue_device(workload.device));
  if (outputs != nullptr) {
    outputs->links = report.links;
    if (outputs->want_graph) {
      outputs->graph = std::move(graph);
    }
  }
  return report;
}

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

}  // namespace

namespace {

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
  const bool memoize = run.collapse && !engine.has_background_traffic();
  const FoldMode fold = run.collapse ? run.fold : FoldMode::kOff;
  LoweringOptions options{.compute_factor = engine.compute_factors(),
                          .fold = fold,
                          .memoize = memoize,
                          .rank_nodes = v.hints.rank_nodes,
                          .max_tasks = run.max_tasks};
  if (memoize) {
    options.route_links = [&engine](int src, int dst) {
      std::vector<int> ids;
      for (const auto& [id, bandwidth] : engine.hints().route_links(src, dst)) {
        ids.push_back(id);
      }
      return ids;
    };
  }
  GroupChooser choose(v.chooser, engine, run.ranks);
  graph = with_priority_order(std::move(graph), options, choose);
  const LoweredGraph lowered = lower(graph, options, std::ref(choose));
  choose.release_schedules();
  std::string fold_mismatch;
  const ReplayTimes times =
      replay(lowered.tasks, engine.rank_hosts(), fold_watch(graph, lowered, fold_mismatch));
  if (times.stopped) {
    throw FoldNotExact(fold_mismatch);
  }
  const FoldVerdict verdict = check_fold(graph, lowered, times, kFoldToleranceSec);
  if (!verdict.mismatch.empty()) {
    throw FoldNotExact(verdict.mismatch);
  }
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
                     .fold = fold_name(lowered, fold),
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

CollectiveReport simulate_collective(const CollectiveConfig& config, SimulateOutputs* outputs) {
  const auto op = parse_op(config.op);
  if (!op) {
    std::string names;
    for (CollectiveOp o : all_ops()) {
      names += (names.empty() ? "" : ", ") + std::string(op_name(o));
    }
    throw ConfigError("op", config.op + ": unknown operation (expected one of " + names + ")");
  }
  const int p = config.run.ranks;
  if (config.root < 0 || config.root >= p) {
    throw ConfigError("root", std::to_string(config.root) + ": expected a rank in [0, " +
                                  std::to_string(p) + ")");
  }
  if (*op == CollectiveOp::kSendRecv && p < 2) {
    throw ConfigError("op", "send-recv: needs at least 2 ranks");
  }
  const CollectiveRequest request{
      .op = *op, .ranks = p, .bytes = config.bytes, .root = config.root};
  ValidatedRun v = validate_run(config.run, &request);
  // Before the engine starts: the run lasts at least the collective's software latency (paid
  // once per collective), however fast its transfers.
  check_background_limit(v.platform, p > 1 ? config.run.collective_latency_sec : 0.0,
                         "the collective latency of one " + std::string(op_name(*op)),
                         config.run.max_events);
  EngineRun engine(config.run, v.platform, v.hints);
  // One collective node on every rank, on the communicator of all ranks.
  ExecutionGraph graph;
  graph.communicators.push_back({.name = "all"});
  for (int r = 0; r < p; ++r) {
    graph.communicators[0].ranks.push_back(r);
  }
  Program program{.name = "collective", .comms = {"all"}};
  program.add({.kind = NodeKind::kCollective,
               .op = *op,
               .comm = 0,
               .root = config.root,
               .bytes = config.bytes});
  graph.programs.push_back(std::move(program));
  graph.ranks.assign(static_cast<std::size_t>(p), RankProgram{.program = 0, .comms = {0}});
  GroupChooser choose(v.chooser, engine, p);
  const LoweredGraph lowered = lower(graph, {.max_tasks = kMaxScheduleOps}, std::ref(choose));
  choose.release_schedules();
  std::optional<nlohmann::ordered_json> algorithm_file;  // before the replay: it may refuse
  if (config.dump_algorithm) {
    const std::string& name = lowered.choices.front().algorithm;
    const auto step_level = make_algorithm(
        name, AlgorithmOptions{.collapse = false, .chunk_bytes = config.run.chunk_bytes});
    algorithm_file = algorithm_file_json(step_level->build(request, v.hints), request, name);
  }
  const ReplayTimes times = replay(lowered.tasks, engine.rank_hosts());
  double time_sec = 0;
  for (double t : times.end_sec) {
    time_sec = std::max(time_sec, t);
  }
  if (outputs != nullptr) {
    if (outputs->want_timeline) {
      outputs->timeline = timeline_json(graph, lowered, times);
    }
    outputs->links = measure_link_loads(graph, lowered, engine.rank_hosts(), v.platform, time_sec);
    if (outputs->want_graph) {
      outputs->graph = graph;
    }
  }
  const CollectiveChoice& choice = lowered.choices.front();

  CollectiveReport report{
      .run = run_info("collective", config.run, v.platform, v.hints, engine.host_count()),
      .op = config.op,
      .bytes = config.bytes,
      .time_sec = time_sec,
      .transfers = lowered.tasks.tasks().size()};
  if (*op == CollectiveOp::kBroadcast || *op == CollectiveOp::kReduce ||
      *op == CollectiveOp::kSendRecv) {
    report.root = config.root;
  }
  if (config.run.algorithm.starts_with("auto")) {
    report.auto_choice = choice;
  }
  report.algorithm_file = std::move(algorithm_file);
  report.error_bars = collective_error_bars(config.op, spans_nodes(v.hints, p));
  // nccl-tests conventions: algbw = S/t; busbw = algbw * factor(op, p).
  report.algorithm_bandwidth_bytes_per_sec =
      time_sec > 0 ? static_cast<double>(config.bytes) / time_sec : 0.0;
  report.bus_bandwidth_bytes_per_sec =
      report.algorithm_bandwidth_bytes_per_sec * bus_bandwidth_factor(*op, p);
  return report;
}

}  // namespace dtsim::sim
