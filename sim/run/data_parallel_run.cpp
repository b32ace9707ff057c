#include <algorithm>
#include <cmath>
#include <functional>
#include <utility>

#include "sim/config_error.h"
#include "sim/lowering/lowering.h"
#include "sim/replay/replay.h"
#include "sim/report/error_bars.h"
#include "sim/report/link_report.h"
#include "sim/report/measure.h"
#include "sim/report/timeline.h"
#include "sim/run/engine_run.h"
#include "sim/run/simulation.h"
#include "sim/run/work_limits.h"
#include "sim/strategies/data_parallel.h"
#include "sim/whatif/bucket_cost.h"
#include "sim/whatif/op_classes.h"
#include "sim/whatif/what_if.h"
#include "workloads/generator.h"
#include "workloads/parsing/units.h"
#include "workloads/trace_reader.h"

namespace dtsim::sim {

namespace {

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

// Throws ConfigError for counts a run cannot have.
void check_counts(const SimulateConfig& config) {
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
}

// Throws ConfigError if the run's compute, `compute_sec` per iteration at full speed, lasts
// forever: blaming the trace if it alone does (issue #21), else the platform's slowest GPU,
// `slowest` times slower.
void check_finite(const SimulateConfig& config, const std::string& platform_file,
                  double compute_sec, double slowest) {
  if (!std::isfinite(compute_sec * config.iterations)) {
    throw ConfigError(config.workload_path + ": " + std::to_string(config.iterations) +
                      " iterations of this trace last forever");
  }
  if (!std::isfinite(slowest * compute_sec * config.iterations)) {
    throw ConfigError(platform_file + ": /perturbations/slow_gpus: a compute factor of " +
                      parsing::format_number("%g", slowest) + " makes " +
                      std::to_string(config.iterations) + " iterations of " + config.workload_path +
                      " last forever");
  }
}

// The execution graph of `job`, with the run's what-ifs, bucket costs and priorities applied.
ExecutionGraph data_parallel_graph(const SimulateConfig& config,
                                   const workloads::Workload& workload, const DataParallelJob& job,
                                   const LoweringOptions& options, GroupChooser& choose) {
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
  return with_priority_order(std::move(graph), options, choose);
}

// What the report says of the run before its times: the platform, the trace and the job.
SimulateReport data_parallel_report(const SimulateConfig& config,
                                    const workloads::Workload& workload, const DataParallelJob& job,
                                    const ValidatedRun& v, const EngineRun& engine,
                                    const LoweredGraph& lowered) {
  return {.run = run_info("simulate", config.run, v.platform, v.hints, engine.host_count()),
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
}

// What limits an iteration of `iteration_sec` (report.result's compute and communication
// costs, report.links), with the slowest GPU of `factors` as the straggler.
Limiter training_limiter(const SimulateReport& report, double iteration_sec,
                         const std::vector<double>& factors,
                         const platforms::PlatformSpec& platform) {
  Straggler straggler;  // the slowest rank: its healthy compute times its factor
  if (const auto worst = std::max_element(factors.begin(), factors.end());
      worst != factors.end() && *worst > 1) {
    straggler = {.compute_sec = report.result.compute_sec * *worst,
                 .rank = static_cast<int>(worst - factors.begin())};
  }
  return find_limiter(iteration_sec, report.result.compute_sec, report.result.comm_cost,
                      report.links, straggler, level_oversubscription(platform));
}

}  // namespace

SimulateReport simulate_data_parallel(const SimulateConfig& config, SimulateOutputs* outputs) {
  check_counts(config);
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
  check_finite(config, v.platform.file, compute_sec, std::ranges::max(engine.compute_factors()));
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
  ExecutionGraph graph = data_parallel_graph(config, workload, job, options, choose);
  const LoweredGraph lowered = lower(graph, options, std::ref(choose));
  choose.release_schedules();
  const ReplayTimes times = replay(lowered.tasks, engine.rank_hosts());
  if (outputs != nullptr && outputs->want_timeline) {
    outputs->timeline = timeline_json(graph, lowered, times);
  }

  SimulateReport report = data_parallel_report(config, workload, job, v, engine, lowered);
  const TrainingTimes t = measure_training(graph, lowered, times);
  report.result = training_result(t, workload.batch_per_device);
  add_buckets(graph, lowered, t, choose, config.run.algorithm.starts_with("auto"), report.result);
  report.links =
      measure_link_loads(graph, lowered, engine.rank_hosts(), v.platform, t.iteration_time_sec);
  report.result.limiter =
      training_limiter(report, t.iteration_time_sec, engine.compute_factors(), v.platform);
  report.error_bars = training_error_bars(workloads::compute_timing(workload),
                                          spans_nodes(v.hints, config.run.ranks),
                                          catalogue_device(workload.device));
  for (ErrorBar& bar : what_if_error_bars(config.run.what_if)) {
    report.error_bars.push_back(std::move(bar));
  }
  if (outputs != nullptr) {
    outputs->links = report.links;
    if (outputs->want_graph) {
      outputs->graph = std::move(graph);
    }
  }
  return report;
}

}  // namespace dtsim::sim
