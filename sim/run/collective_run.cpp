#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>

#include "sim/collectives/algorithm_file.h"
#include "sim/collectives/registry.h"
#include "sim/config_error.h"
#include "sim/lowering/lowering.h"
#include "sim/replay/replay.h"
#include "sim/report/error_bars.h"
#include "sim/report/link_report.h"
#include "sim/report/timeline.h"
#include "sim/run/engine_run.h"
#include "sim/run/simulation.h"
#include "sim/run/work_limits.h"

namespace dtsim::sim {

namespace {

// The operation config.op names; throws ConfigError if it is unknown or cannot run with
// config.root on config.run.ranks.
CollectiveOp checked_op(const CollectiveConfig& config) {
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
  return *op;
}

// One collective node on every rank, on the communicator of all `ranks`.
ExecutionGraph one_collective(CollectiveOp op, int ranks, int root, std::uint64_t bytes) {
  ExecutionGraph graph;
  graph.communicators.push_back({.name = "all"});
  for (int r = 0; r < ranks; ++r) {
    graph.communicators[0].ranks.push_back(r);
  }
  Program program{.name = "collective", .comms = {"all"}};
  program.add({.kind = NodeKind::kCollective, .op = op, .comm = 0, .root = root, .bytes = bytes});
  graph.programs.push_back(std::move(program));
  graph.ranks.assign(static_cast<std::size_t>(ranks), RankProgram{.program = 0, .comms = {0}});
  return graph;
}

// The report of collective `op` of `config` that took `time_sec`, with `choice` its algorithm
// (the caller adds what the lowering and replay counted).
CollectiveReport collective_report(const CollectiveConfig& config, CollectiveOp op,
                                   const ValidatedRun& v, const EngineRun& engine,
                                   const CollectiveChoice& choice, double time_sec) {
  const int p = config.run.ranks;
  CollectiveReport report{
      .run = run_info("collective", config.run, v.platform, v.hints, engine.host_count()),
      .op = config.op,
      .bytes = config.bytes,
      .time_sec = time_sec};
  if (op == CollectiveOp::kBroadcast || op == CollectiveOp::kReduce ||
      op == CollectiveOp::kSendRecv) {
    report.root = config.root;
  }
  if (config.run.algorithm.starts_with("auto")) {
    report.auto_choice = choice;
  }
  report.error_bars = collective_error_bars(config.op, spans_nodes(v.hints, p));
  // nccl-tests conventions: algbw = S/t; busbw = algbw * factor(op, p).
  report.algorithm_bandwidth_bytes_per_sec =
      time_sec > 0 ? static_cast<double>(config.bytes) / time_sec : 0.0;
  report.bus_bandwidth_bytes_per_sec =
      report.algorithm_bandwidth_bytes_per_sec * bus_bandwidth_factor(op, p);
  return report;
}

}  // namespace

CollectiveReport simulate_collective(const CollectiveConfig& config, SimulateOutputs* outputs) {
  const CollectiveOp op = checked_op(config);
  const int p = config.run.ranks;
  const CollectiveRequest request{.op = op, .ranks = p, .bytes = config.bytes, .root = config.root};
  ValidatedRun v = validate_run(config.run, &request);
  // Before the engine starts: the run lasts at least the collective's software latency (paid
  // once per collective), however fast its transfers.
  check_background_limit(v.platform, p > 1 ? config.run.collective_latency_sec : 0.0,
                         "the collective latency of one " + std::string(op_name(op)),
                         config.run.max_events);
  EngineRun engine(config.run, v.platform, v.hints);
  const ExecutionGraph graph = one_collective(op, p, config.root, config.bytes);
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
  CollectiveReport report =
      collective_report(config, op, v, engine, lowered.choices.front(), time_sec);
  report.transfers = lowered.tasks.tasks().size();
  report.algorithm_file = std::move(algorithm_file);
  return report;
}

}  // namespace dtsim::sim
