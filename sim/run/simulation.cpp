#include "sim/run/simulation.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <set>
#include <tuple>
#include <utility>

#include <simgrid/s4u.hpp>

#include "platforms/build_platform.h"
#include "platforms/describe.h"
#include "platforms/platform_spec.h"
#include "workloads/parsing/units.h"
#include "platforms/xml_checks.h"
#include "sim/collectives/collective_choice.h"
#include "sim/collectives/registry.h"
#include "sim/config_error.h"
#include "sim/graph/graph_reader.h"
#include "sim/invariant.h"
#include "sim/lowering/lowering.h"
#include "sim/strategies/data_parallel.h"
#include "sim/report/limiter.h"
#include "sim/report/link_report.h"
#include "sim/replay/perturbations.h"
#include "sim/replay/rank_mapping.h"
#include "sim/replay/replay.h"
#include "sim/report/measure.h"
#include "sim/report/report.h"
#include "sim/report/timeline.h"
#include "workloads/trace_reader.h"

namespace dtsim::sim {

namespace sg4 = simgrid::s4u;
using nlohmann::ordered_json;

std::optional<NetworkModel> parse_network_model(const std::string& name) {
  if (name == "exact") {
    return NetworkModel::kExact;
  }
  if (name == "lv08") {
    return NetworkModel::kLv08;
  }
  return std::nullopt;
}

std::string network_model_name(NetworkModel model) {
  return model == NetworkModel::kExact ? "exact" : "lv08";
}

std::vector<std::string> network_model_settings(NetworkModel model) {
  if (model == NetworkModel::kExact) {
    // TCP-gamma caps a flow at gamma / (2 * route latency); 1e12 lifts the cap for any fabric.
    return {"network/model:CM02", "network/crosstraffic:0", "network/TCP-gamma:1e12"};
  }
  return {"network/model:LV08"};
}

void check_simgrid_cfg(const std::string& setting) {
  const std::size_t colon = setting.find(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == setting.size()) {
    throw ConfigError("simgrid_cfg", setting +
                      ": expected KEY:VALUE, e.g. network/maxmin-selective-update:yes");
  }
  const std::string key = setting.substr(0, colon);
  const std::string value = setting.substr(colon + 1);
  if (key.starts_with("network/model") || key == "network/crosstraffic" ||
      key == "network/TCP-gamma") {
    throw ConfigError("simgrid_cfg", setting + ": dtsim sets " + key +
                      " itself; choose the network model with --network-model exact|lv08");
  }
  if (key.ends_with("/model")) {
    throw ConfigError("simgrid_cfg", setting + ": dtsim sets " + key +
                      " itself (compute is replayed from the trace's times, not modelled)");
  }
  if (key.starts_with("contexts/")) {
    throw ConfigError("simgrid_cfg", setting + ": dtsim sets " + key +
                      " itself (actor contexts and their stacks)");
  }
  char* end = nullptr;
  const double x = std::strtod(value.c_str(), &end);
  const bool number = end == value.c_str() + value.size() && std::isfinite(x);
  if (key.find("precision") != std::string::npos && !(number && x > 0)) {
    throw ConfigError("simgrid_cfg", setting + ": expected a precision > 0, e.g. " + key + ":1e-9");
  }
  if (key.starts_with("network/") && key.ends_with("-factor") && !(number && x > 0)) {
    throw ConfigError("simgrid_cfg", setting + ": expected a factor > 0, e.g. " + key + ":0.97");
  }
  if (key.ends_with("concurrency-limit") && !(number && (x == -1 || x >= 1))) {
    throw ConfigError("simgrid_cfg", setting +
                      ": expected -1 (no limit) or a limit >= 1 (0 deadlocks every transfer)");
  }
}

namespace {

// What both verbs check before SimGrid starts.
struct ValidatedRun {
  platforms::PlatformSpec platform;
  CollectiveChooser chooser;
  TopologyHints hints;  // all but what needs the built platform
};

// Checks `run`, and that its algorithm can run `request` (if given) as far as is known before the
// platform is built.
// `ranks_from` names where run.ranks came from, for messages (default: the --ranks flag).
ValidatedRun validate_run(const RunOptions& run, const CollectiveRequest* request,
                          const std::string& ranks_from = "") {
  if (run.ranks < 1) {
    throw ConfigError("ranks", std::to_string(run.ranks) + ": expected an integer >= 1");
  }
  if (run.chunk_bytes < 1) {
    throw ConfigError("chunk_bytes", ": expected a size >= 1 byte");
  }
  if (run.collapse_pipelines && !run.collapse) {
    throw ConfigError("collapse_pipelines", ": needs collapse (a fast replay is a collapsed one)");
  }
  if (run.ranks_per_node < 0) {
    throw ConfigError("ranks_per_node", std::to_string(run.ranks_per_node) +
                      ": expected an integer >= 1 (or 0: the platform's GPUs per node)");
  }
  if (!(run.collective_latency_sec >= 0) || !std::isfinite(run.collective_latency_sec)) {
    throw ConfigError("collective_latency_sec", ": expected a duration >= 0, e.g. 8.4us");
  }
  CollectiveChooser chooser(run.algorithm,
                            AlgorithmOptions{.collapse = run.collapse,
                                             .collapse_pipelines = run.collapse_pipelines,
                                             .chunk_bytes = run.chunk_bytes,
                                             .collective_latency_sec = run.collective_latency_sec});
  ValidatedRun v{.platform = platforms::read_platform_spec(run.platform_path),
                 .chooser = std::move(chooser)};
  const unsigned hosts = v.platform.host_count();
  if (hosts != 0 && static_cast<unsigned>(run.ranks) > hosts) {
    throw ConfigError(v.platform.file + ": the platform has " + std::to_string(hosts) +
                      " hosts, fewer than " +
                      (ranks_from.empty() ? "--ranks " + std::to_string(run.ranks)
                                          : "the " + std::to_string(run.ranks) + " ranks of " +
                                                ranks_from));
  }
  v.hints.ranks_per_node =
      run.ranks_per_node > 0 ? run.ranks_per_node : static_cast<int>(v.platform.gpus_per_node());
  v.hints.in_switch_reduction = v.platform.nvlink_sharp();
  if (hosts != 0) {  // an XML platform's hosts are known once SimGrid has loaded it
    const PlacementShape shape = placement_shape(v.platform, hosts);
    for (std::size_t host : place_ranks(run.placement, shape, run.ranks)) {
      v.hints.rank_nodes.push_back(static_cast<int>(host / shape.gpus_per_node));
    }
  }
  v.hints.grid = run.grid;
  const auto* torus = std::get_if<platforms::TorusSpec>(&v.platform.topology);
  if (v.hints.grid.empty() && torus != nullptr && torus->dims.size() == 2 &&
      static_cast<int>(torus->dims[0] * torus->dims[1]) == run.ranks) {
    v.hints.grid = {static_cast<int>(torus->dims[0]), static_cast<int>(torus->dims[1])};
  }
  if (request != nullptr) {
    v.chooser.check(*request, v.hints);
  }
  return v;
}

// The process's SimGrid engine, configured for `run`, with the platform built and ranks placed.
class EngineRun {
 public:
  EngineRun(const RunOptions& run, const platforms::PlatformSpec& spec, TopologyHints hints)
      : hints_(std::move(hints)) {
    // One actor per lane: a direct all-reduce on 512 ranks has 261,632. Stacks with guard pages
    // cost a memory mapping each (Linux allows 65,530 per process by default) and SimGrid aborts past it;
    // stacks without guard pages come from the heap (measured in
    // sim/SIMGRID_NOTES.md: no slower). 16 KiB: a lane actor's deepest call (a mailbox
    // put inside SimGrid) runs in 8 KiB (same results with 8 KiB for a 4,096-rank ring iteration
    // and for every all-reduce algorithm on 16 ranks of a DGX preset with LV08), and stacks are
    // most of the memory at scale (32,768 actors: 512 MiB at 16 KiB, 2 GiB at 64).
    // --cfg flags given by the user come later.
    args_ = {"dtsim", "--log=xbt_cfg.thres:warning", "--cfg=contexts/guard-size:0",
             "--cfg=contexts/stack-size:16"};
    for (const std::string& s : network_model_settings(run.network_model)) {
      args_.push_back("--cfg=" + s);
    }
    for (const std::string& s : run.simgrid_cfg) {
      args_.push_back("--cfg=" + s);
    }
    for (std::string& a : args_) {
      argv_.push_back(a.data());
    }
    argv_.push_back(nullptr);
    int argc = static_cast<int>(args_.size());
    try {
      engine_ = std::make_unique<sg4::Engine>(&argc, argv_.data());
    } catch (const std::exception& e) {  // only a user's --cfg can be refused
      std::string settings;
      for (const std::string& s : run.simgrid_cfg) {
        settings += (settings.empty() ? "--cfg " : ", --cfg ") + s;
      }
      const std::string what = e.what();
      throw ConfigError(settings + ": SimGrid refused it: " + what.substr(0, what.find('\n')));
    }
    platform_ = platforms::build_platform(spec);
    rank_hosts_ = place_ranks_on(platform_, placement_shape(spec, platform_.hosts.size()),
                                 run.placement, run.ranks, spec.file);
    if (std::holds_alternative<platforms::XmlSpec>(spec.topology)) {
      std::vector<platforms::HostPair> background;  // out-of-range hosts are reported below
      for (const platforms::BackgroundFlow& flow : spec.perturbations.background) {
        if (std::max(flow.from, flow.to) < platform_.hosts.size()) {
          background.emplace_back(platform_.hosts[flow.from], platform_.hosts[flow.to]);
        }
      }
      platforms::check_xml_routes(spec.file, rank_hosts_, background);
    }
    compute_factors_ = rank_compute_factors(spec, platform_, rank_hosts_);
    start_background_traffic(spec, platform_);
    has_background_traffic_ = !spec.perturbations.background.empty();
    hints_.route_latency_sec = [this](int src, int dst) {
      return platforms::route_latency_sec(rank_hosts_[static_cast<std::size_t>(src)],
                                          rank_hosts_[static_cast<std::size_t>(dst)]);
    };
    hints_.route_links = [this](int src, int dst) {
      std::vector<std::pair<int, double>> out;
      for (const sg4::Link* link :
           platforms::route_links(rank_hosts_[static_cast<std::size_t>(src)],
                                  rank_hosts_[static_cast<std::size_t>(dst)])) {
        auto [it, inserted] = link_ids_.emplace(link, static_cast<int>(link_ids_.size()));
        out.emplace_back(it->second, link->get_bandwidth());
      }
      return out;
    };
  }
  EngineRun(const EngineRun&) = delete;
  EngineRun& operator=(const EngineRun&) = delete;

  [[nodiscard]] const std::vector<sg4::Host*>& rank_hosts() const { return rank_hosts_; }
  [[nodiscard]] const TopologyHints& hints() const { return hints_; }
  [[nodiscard]] std::size_t host_count() const { return platform_.hosts.size(); }
  // Per rank, from the spec's slow GPUs (1: healthy).
  [[nodiscard]] const std::vector<double>& compute_factors() const { return compute_factors_; }
  // Background flows load the network: repeated collectives are then not alike (no memoizing).
  [[nodiscard]] bool has_background_traffic() const { return has_background_traffic_; }

 private:
  std::vector<std::string> args_;
  std::vector<char*> argv_;
  std::unique_ptr<sg4::Engine> engine_;
  platforms::Platform platform_;
  std::vector<sg4::Host*> rank_hosts_;
  std::vector<double> compute_factors_;
  bool has_background_traffic_ = false;
  std::map<const sg4::Link*, int> link_ids_;  // only groups loads: iteration order never matters
  TopologyHints hints_;
};

// nccl-tests' bus bandwidth factors: what each rank's link carries relative to S/t.
double bus_bandwidth_factor(CollectiveOp op, int p) {
  switch (op) {
    case CollectiveOp::kAllReduce:
      return 2.0 * (p - 1) / p;
    case CollectiveOp::kReduceScatter:
    case CollectiveOp::kAllGather:
    case CollectiveOp::kAllToAll:
      return static_cast<double>(p - 1) / p;
    default:
      return 1.0;
  }
}

RunInfo run_info(const char* verb, const RunOptions& run, const platforms::PlatformSpec& spec,
                 const TopologyHints& hints, std::size_t hosts) {
  RunInfo r{.verb = verb,
            .platform_file = spec.file,
            .topology = spec.topology_name(),
            .hosts = hosts,
            .ranks = run.ranks,
            .placement = placement_name(run.placement),
            .algorithm = run.algorithm,
            .replay = !run.collapse ? "step" : run.collapse_pipelines ? "fast" : "collapsed",
            .chunk_bytes = run.chunk_bytes,
            .collective_latency_sec = run.collective_latency_sec,
            .network_model = network_model_name(run.network_model),
            .simgrid_cfg = network_model_settings(run.network_model),
            .extra_cfg = run.simgrid_cfg};
  if (run.placement.kind == Placement::Kind::kRandom) {
    r.placement_seed = run.placement.seed;
  }
  if (run.algorithm == "hierarchical" || run.algorithm.starts_with("auto")) {
    r.ranks_per_node = hints.ranks_per_node;
  }
  return r;
}

}  // namespace

namespace {

// The iteration and compute figures of `t` (buckets, limiter and costs are added by the caller).
TrainingResult training_result(const TrainingTimes& t, int batch_per_device) {
  TrainingResult r{.iteration_time_sec = t.iteration_time_sec,
                   .compute_sec = t.compute_sec,
                   .forward_sec = t.forward_sec,
                   .backward_sec = t.backward_sec,
                   .optimizer_sec = t.optimizer_sec,
                   // Never negative: float sums of the same durations may differ in the last bit.
                   .exposed_comm_sec = std::max(0.0, t.iteration_time_sec - t.compute_sec),
                   .scaling_efficiency =
                       t.iteration_time_sec > 0 ? t.compute_sec / t.iteration_time_sec : 1.0,
                   .backward_end_sec = t.backward_end_sec,
                   .iteration_end_sec = t.iteration_end_sec};
  r.samples_per_sec_per_device =
      t.iteration_time_sec > 0 ? 1.0 * batch_per_device * t.micro_batches / t.iteration_time_sec
                               : 0.0;
  return r;
}

// Chooses every collective's algorithm on its communicator's hosts, once per distinct
// (communicator, op, bytes, root), and keeps each choice's alpha and beta terms for the limiter.
class GroupChooser {
 public:
  GroupChooser(const CollectiveChooser& chooser, const EngineRun& engine, int ranks)
      : chooser_(chooser), engine_(engine), ranks_(ranks) {}

  const CollectiveChoice& operator()(const CollectiveRequest& request, const Communicator& comm) {
    const Key key{comm.name, request.op, request.bytes, request.root};
    auto it = made_.find(key);
    if (it == made_.end()) {
      const TopologyHints hints = group_hints(engine_.hints(), comm.ranks, ranks_);
      CollectiveChoice choice = chooser_.choose(request, hints);
      const CommCost cost = comm_cost(choice.schedule, hints);
      it = made_.emplace(key, std::make_pair(std::move(choice), cost)).first;
    }
    DTSIM_CHECK(!released_, "no schedule is chosen after lowering");
    return it->second.first;
  }
  // Frees the schedules once the task graph holds them (the costs stay).
  void release_schedules() {
    for (auto& [key, made] : made_) {
      made.first.schedule = Schedule{};
    }
    released_ = true;
  }
  // The alpha and beta terms of the choice made for `node` of `rank`'s program.
  [[nodiscard]] const CommCost& cost(const ExecutionGraph& g, int rank, const Node& node) const {
    return made_.at({g.communicator_of(rank, node).name, node.op, node.bytes, node.root}).second;
  }

 private:
  using Key = std::tuple<std::string, CollectiveOp, std::uint64_t, int>;
  const CollectiveChooser& chooser_;
  const EngineRun& engine_;
  int ranks_;
  std::map<Key, std::pair<CollectiveChoice, CommCost>> made_;
  bool released_ = false;
};

}  // namespace

SimulateReport simulate_data_parallel(const SimulateConfig& config, SimulateOutputs* outputs) {
  if (config.iterations < 1) {
    throw ConfigError("iterations", std::to_string(config.iterations) +
                      ": expected an integer >= 1");
  }
  if (config.accumulation_steps < 1) {
    throw ConfigError("accumulation_steps", std::to_string(config.accumulation_steps) +
                      ": expected an integer >= 1");
  }
  if (config.bucket_cap_bytes < 1) {
    throw ConfigError("bucket_cap_bytes", ": expected a bucket size > 0");
  }
  const workloads::Workload workload = workloads::read_workload(config.workload_path);
  const CollectiveRequest all_reduce{
      .op = CollectiveOp::kAllReduce, .ranks = config.run.ranks, .bytes = 1};
  ValidatedRun v = validate_run(config.run, &all_reduce);

  EngineRun engine(config.run, v.platform, v.hints);
  const double slowest = std::ranges::max(engine.compute_factors());
  const double compute_sec =
      (workload.forward_sec() + workload.backward_sec()) * config.accumulation_steps +
      workload.optimizer_sec;
  if (!std::isfinite(slowest * compute_sec * config.iterations)) {
    throw ConfigError(v.platform.file + ": /perturbations/slow_gpus: a compute factor of " +
                      parsing::format_number("%g", slowest) + " makes " +
                      std::to_string(config.iterations) + " iterations of " + config.workload_path +
                      " last forever");
  }
  DataParallelJob job{.ranks = config.run.ranks,
                      .bucket_cap_bytes = config.bucket_cap_bytes,
                      .iterations = 1,
                      .accumulation_steps = config.accumulation_steps,
                      .overlap = config.overlap};
  const LoweringOptions options{
      .compute_factor = engine.compute_factors(),
      .fold = config.run.collapse,
      .memoize = config.run.collapse && !engine.has_background_traffic()};
  GroupChooser choose(v.chooser, engine, config.run.ranks);
  // The task limit, from the first two iterations (the second as every later one: memoized
  // repeats), before the graph of all of them, which could itself be too big, is built.
  constexpr double kMaxGraphTasks = 5e7;
  const double first = count_lowered_tasks(build_data_parallel(workload, job), options,
                                               std::ref(choose));
  job.iterations = std::min(2, config.iterations);
  const double first_two = count_lowered_tasks(build_data_parallel(workload, job), options,
                                               std::ref(choose));
  if (const double tasks = first + (config.iterations - 1) * (first_two - first);
      tasks > kMaxGraphTasks) {
    throw ConfigError("iterations", std::to_string(config.iterations) + ": about " +
                      parsing::format_number("%.3g", tasks) +
                      " tasks to replay (at most 5e7, ~10 GB); the last of 3 iterations is "
                      "already the steady state");
  }
  job.iterations = config.iterations;
  ExecutionGraph graph = build_data_parallel(workload, job);
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
  const Program& p0 = graph.program_of(0);
  for (const TrainingTimes::CollectiveTimes& c : t.collectives) {
    const Node& node = p0.nodes[static_cast<std::size_t>(c.node)];
    const CollectiveChoice& choice = lowered.choices[static_cast<std::size_t>(
        lowered.instances[static_cast<std::size_t>(c.instance)].choice)];
    report.result.buckets.push_back(
        {.bytes = node.bytes,
         .algorithm = choice.algorithm,
         .first_layer = graph.layers[static_cast<std::size_t>(node.layer)],
         .last_layer = graph.layers[static_cast<std::size_t>(node.last_layer)],
         .ready_sec = c.ready_sec,
         .start_sec = c.start_sec,
         .end_sec = c.end_sec});
    if (config.run.algorithm.starts_with("auto")) {
      report.result.buckets.back().auto_choice = choice;
    }
    report.result.comm_cost += choose.cost(graph, 0, node);
  }
  report.links =
      measure_link_loads(graph, lowered, engine.rank_hosts(), v.platform, t.iteration_time_sec);
  report.result.limiter = find_limiter(t.iteration_time_sec, report.result.compute_sec,
                                       report.result.comm_cost, report.links);
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
        sec += lowered.node(r, static_cast<std::int32_t>(i)).duration_sec;
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
  std::set<std::int32_t> instances;
  std::set<TaskId> transfers;
  for (int r = 0; r < g.rank_count(); ++r) {
    if (lowered.stands_for[static_cast<std::size_t>(r)] != r) {
      continue;
    }
    const Program& p = g.program_of(r);
    for (std::size_t i = 0; i < p.nodes.size(); ++i) {
      const Node& n = p.nodes[i];
      const NodeTasks& t = lowered.node(r, static_cast<std::int32_t>(i));
      if (n.iteration == last && n.kind == NodeKind::kCollective) {
        instances.insert(t.instance);
      } else if (n.iteration == last && n.kind == NodeKind::kSend) {
        transfers.insert(t.task);
      }
    }
  }
  for (std::int32_t index : instances) {
    const CollectiveInstance& c = lowered.instances[static_cast<std::size_t>(index)];
    CollectiveResult result{
        .communicator = g.communicators[static_cast<std::size_t>(c.communicator)].name,
        .op = std::string(op_name(c.op)),
        .bytes = c.bytes,
        .algorithm = lowered.choices[static_cast<std::size_t>(c.choice)].algorithm};
    result.start_sec = result.end_sec = 0;
    if (c.first != c.end) {
      result.start_sec = *std::min_element(times.start_sec.begin() + c.first,
                                           times.start_sec.begin() + c.end) -
                         start_sec;
      result.end_sec =
          *std::max_element(times.end_sec.begin() + c.first, times.end_sec.begin() + c.end) -
          start_sec;
    }
    report.collectives.push_back(std::move(result));
  }
  report.transfers = transfers.size();
  for (TaskId t : transfers) {
    report.transfer_bytes += lowered.tasks.tasks()[static_cast<std::size_t>(t)].bytes;
  }
}

}  // namespace

GraphReport simulate_graph(const GraphConfig& config, SimulateOutputs* outputs) {
  ExecutionGraph graph = read_execution_graph(config.graph_path);
  if (graph.rank_count() < 1) {
    throw ConfigError(config.graph_path + ": the graph has no ranks");
  }
  RunOptions run = config.run;
  if (run.ranks != 0 && run.ranks != graph.rank_count()) {
    throw ConfigError("ranks", std::to_string(run.ranks) + ": " + config.graph_path +
                      " has " + std::to_string(graph.rank_count()) + " ranks");
  }
  run.ranks = graph.rank_count();
  ValidatedRun v = validate_run(run, nullptr, config.graph_path);
  EngineRun engine(run, v.platform, v.hints);
  const LoweringOptions options{.compute_factor = engine.compute_factors(),
                                .fold = run.collapse,
                                .memoize = run.collapse && !engine.has_background_traffic()};
  GroupChooser choose(v.chooser, engine, run.ranks);
  const LoweredGraph lowered = lower(graph, options, std::ref(choose));
  choose.release_schedules();
  const ReplayTimes times = replay(lowered.tasks, engine.rank_hosts());
  if (outputs != nullptr && outputs->want_timeline) {
    outputs->timeline = timeline_json(graph, lowered, times);
  }
  const TrainingTimes t = measure_training(graph, lowered, times);
  GraphReport report{.run = run_info("simulate", run, v.platform, v.hints, engine.host_count()),
                     .graph_file = config.graph_path,
                     .programs = graph.programs.size(),
                     .communicators = graph.communicators.size(),
                     .iterations_simulated = static_cast<int>(t.iteration_end_sec.size()),
                     .tasks_replayed = lowered.tasks.tasks().size(),
                     .ranks_folded = lowered.ranks_folded,
                     .collectives_memoized = lowered.memoized,
                     .iteration_time_sec = t.iteration_time_sec,
                     .iteration_end_sec = t.iteration_end_sec};
  for (const Program& p : graph.programs) {
    report.nodes += p.nodes.size();
  }
  const auto last = static_cast<std::int32_t>(t.iteration_end_sec.size()) - 1;
  std::tie(report.compute_sec, report.busiest_rank) = busiest_compute(graph, lowered, last);
  report.exposed_comm_sec = std::max(0.0, t.iteration_time_sec - report.compute_sec);
  last_iteration_communication(graph, lowered, times, last,
                               t.iteration_end_sec.back() - t.iteration_time_sec, report);
  report.links =
      measure_link_loads(graph, lowered, engine.rank_hosts(), v.platform, t.iteration_time_sec);
  if (outputs != nullptr) {
    outputs->links = report.links;
    if (outputs->want_graph) {
      outputs->graph = std::move(graph);
    }
  }
  return report;
}

CollectiveReport simulate_collective(const CollectiveConfig& config) {
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
  const ReplayTimes times = replay(lowered.tasks, engine.rank_hosts());
  double time_sec = 0;
  for (double t : times.end_sec) {
    time_sec = std::max(time_sec, t);
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
  // nccl-tests conventions: algbw = S/t; busbw = algbw * factor(op, p).
  report.algorithm_bandwidth_bytes_per_sec =
      time_sec > 0 ? static_cast<double>(config.bytes) / time_sec : 0.0;
  report.bus_bandwidth_bytes_per_sec =
      report.algorithm_bandwidth_bytes_per_sec * bus_bandwidth_factor(*op, p);
  return report;
}

ordered_json describe_platform(const std::string& path) {
  const platforms::PlatformSpec spec = platforms::read_platform_spec(path);
  int argc = 1;
  std::string name = "dtsim";
  char* argv[] = {name.data(), nullptr};
  sg4::Engine engine(&argc, argv);
  const platforms::Platform platform = platforms::build_platform(spec);
  ordered_json d{{"file", spec.file},
                 {"topology", spec.topology_name()},
                 {"hosts", platform.hosts.size()},
                 {"simgrid_links", engine.get_link_count()}};
  if (!std::holds_alternative<platforms::XmlSpec>(spec.topology)) {
    const platforms::PlatformSummary s = platforms::summarize(spec);
    d["gpus_per_node"] = s.gpus_per_node;
    d["fabric_endpoints"] = s.endpoints;
    d["nvlink_sharp"] = spec.nvlink_sharp();
    ordered_json levels = ordered_json::array();
    for (const auto& level : s.levels) {
      levels.push_back({{"between", level.name},
                        {"links", level.links},
                        {"oversubscription", level.oversubscription}});
    }
    d["levels"] = std::move(levels);
    d["bisection_bytes_per_sec"] = s.bisection_bytes_per_sec;
  }
  const platforms::Perturbations& p = spec.perturbations;
  if (p != platforms::Perturbations{}) {
    d["perturbations"] = {{"slow_links", p.slow_links.size()},
                          {"failed_links", p.failed_links.size()},
                          {"slow_gpus", p.slow_gpus.size()},
                          {"background", p.background.size()}};
  }
  return d;
}

namespace {

// "  perturbations ...: 1 slow-link entries, ..." for a description that has them, else "".
std::string perturbations_line(const ordered_json& d) {
  if (!d.contains("perturbations")) {
    return "";
  }
  const auto& p = d["perturbations"];
  return "  perturbations (not counted above): " +
         std::to_string(p["slow_links"].get<std::size_t>()) + " slow-link entries, " +
         std::to_string(p["failed_links"].get<std::size_t>()) + " failed links, " +
         std::to_string(p["slow_gpus"].get<std::size_t>()) + " slow GPUs, " +
         std::to_string(p["background"].get<std::size_t>()) + " background flows\n";
}

}  // namespace

std::string platform_summary(const ordered_json& d) {
  std::string s = "platform " + d["file"].get<std::string>() + ": " +
                  d["topology"].get<std::string>() + ", " +
                  std::to_string(d["hosts"].get<std::size_t>()) + " hosts, " +
                  std::to_string(d["simgrid_links"].get<std::size_t>()) + " SimGrid links\n";
  if (!d.contains("levels")) {
    return s + "  (an XML platform: levels and bisection are not derived)\n" +
           perturbations_line(d);
  }
  if (d["gpus_per_node"].get<unsigned>() > 1) {
    s += "  " + std::to_string(d["fabric_endpoints"].get<unsigned long>()) + " nodes of " +
         std::to_string(d["gpus_per_node"].get<unsigned>()) + " GPUs" +
         (d["nvlink_sharp"].get<bool>() ? ", NVSwitch reducing in the network (nvls)" : "") + "\n";
  }
  for (const auto& level : d["levels"]) {
    s += "  " + level["between"].get<std::string>() + ": " +
         std::to_string(level["links"].get<unsigned long>()) + " links";
    if (const double ratio = level["oversubscription"].get<double>(); ratio > 0) {
      char text[48];
      std::snprintf(text, sizeof text, ", switches above %.3g:1 (down:up)", ratio);
      s += text;
    }
    s += "\n";
  }
  char bisection[64];
  std::snprintf(bisection, sizeof bisection, "%.4g GB/s",
                d["bisection_bytes_per_sec"].get<double>() / 1e9);
  return s + "  bisection bandwidth " + bisection + " per direction\n" + perturbations_line(d);
}

}  // namespace dtsim::sim
