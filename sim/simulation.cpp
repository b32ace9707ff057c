#include "sim/simulation.h"

#include <memory>

#include <simgrid/s4u.hpp>

#include "platforms/build_platform.h"
#include "platforms/platform_spec.h"
#include "sim/collectives/registry.h"
#include "sim/config_error.h"
#include "sim/data_parallel.h"
#include "sim/rank_mapping.h"
#include "sim/replay.h"
#include "sim/report.h"
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

namespace {

// What both verbs check before SimGrid starts.
struct ValidatedRun {
  platforms::PlatformSpec platform;
  std::unique_ptr<CollectiveAlgorithm> algorithm;
};

ValidatedRun validate_run(const RunOptions& run) {
  if (run.ranks < 1) {
    throw ConfigError("--ranks " + std::to_string(run.ranks) + ": expected an integer >= 1");
  }
  if (run.tree_chunk_bytes < 1) {
    throw ConfigError("--tree-chunk: expected a size >= 1 byte");
  }
  auto algorithm = make_algorithm(
      run.algorithm,
      AlgorithmOptions{.collapse = run.collapse, .tree_chunk_bytes = run.tree_chunk_bytes});
  if (!algorithm) {
    std::string names;
    for (const std::string& n : algorithm_names()) {
      names += (names.empty() ? "" : ", ") + n;
    }
    throw ConfigError("--algorithm " + run.algorithm + ": unknown algorithm (expected one of " +
                      names + ")");
  }
  ValidatedRun v{.platform = platforms::read_platform_spec(run.platform_path),
                 .algorithm = std::move(algorithm)};
  const unsigned hosts = v.platform.host_count();
  if (hosts != 0 && static_cast<unsigned>(run.ranks) > hosts) {
    throw ConfigError(v.platform.file + ": the platform has " + std::to_string(hosts) +
                      " hosts, fewer than --ranks " + std::to_string(run.ranks));
  }
  return v;
}

// The process's SimGrid engine, configured for `run`, with the platform built and ranks placed.
class EngineRun {
 public:
  EngineRun(const RunOptions& run, const platforms::PlatformSpec& spec) {
    args_ = {"dtsim", "--log=xbt_cfg.thres:warning"};
    for (const std::string& s : network_model_settings(run.network_model)) {
      args_.push_back("--cfg=" + s);
    }
    args_.insert(args_.end(), run.simgrid_args.begin(), run.simgrid_args.end());
    for (std::string& a : args_) {
      argv_.push_back(a.data());
    }
    argv_.push_back(nullptr);
    int argc = static_cast<int>(args_.size());
    engine_ = std::make_unique<sg4::Engine>(&argc, argv_.data());
    platform_ = platforms::build_platform(spec);
    rank_hosts_ = place_ranks_linear(platform_, run.ranks, spec.file);
    hints_.route_latency_sec = [this](int src, int dst) {
      return platforms::route_latency_sec(rank_hosts_[static_cast<std::size_t>(src)],
                                          rank_hosts_[static_cast<std::size_t>(dst)]);
    };
  }
  EngineRun(const EngineRun&) = delete;
  EngineRun& operator=(const EngineRun&) = delete;

  [[nodiscard]] const std::vector<sg4::Host*>& rank_hosts() const { return rank_hosts_; }
  [[nodiscard]] const TopologyHints& hints() const { return hints_; }
  [[nodiscard]] std::size_t host_count() const { return platform_.hosts.size(); }

 private:
  std::vector<std::string> args_;
  std::vector<char*> argv_;
  std::unique_ptr<sg4::Engine> engine_;
  platforms::Platform platform_;
  std::vector<sg4::Host*> rank_hosts_;
  TopologyHints hints_;
};

ordered_json common_report(const char* verb, const RunOptions& run,
                           const platforms::PlatformSpec& spec, std::size_t hosts) {
  ordered_json r;
  r["dtsim_version"] = DTSIM_VERSION;
  r["verb"] = verb;
  r["platform"] = {{"file", spec.file}, {"topology", spec.topology_name()}, {"hosts", hosts}};
  r["ranks"] = run.ranks;
  r["rank_placement"] = "linear";
  r["algorithm"] = run.algorithm;
  r["replay"] = run.collapse ? "collapsed" : "step";
  if (run.algorithm == "tree") {
    r["tree_chunk_bytes"] = run.tree_chunk_bytes;
  }
  r["network_model"] = {{"name", network_model_name(run.network_model)},
                        {"simgrid_cfg", network_model_settings(run.network_model)}};
  return r;
}

}  // namespace

ordered_json simulate_data_parallel(const SimulateConfig& config) {
  if (config.iterations < 1) {
    throw ConfigError("--iterations " + std::to_string(config.iterations) +
                      ": expected an integer >= 1");
  }
  if (config.bucket_cap_bytes < 1) {
    throw ConfigError("--bucket-mb: expected a bucket size > 0");
  }
  const workloads::Workload workload = workloads::read_workload(config.workload_path);
  ValidatedRun v = validate_run(config.run);

  EngineRun engine(config.run, v.platform);
  const DataParallelJob job{.ranks = config.run.ranks,
                            .bucket_cap_bytes = config.bucket_cap_bytes,
                            .iterations = config.iterations};
  const DataParallelGraph dp = build_data_parallel(workload, job, *v.algorithm, engine.hints());
  const ReplayTimes times = replay(dp.graph, engine.rank_hosts());

  ordered_json report = common_report("simulate", config.run, v.platform, engine.host_count());
  report["workload"] = {{"file", config.workload_path},
                        {"model", workload.model},
                        {"device", workload.device},
                        {"precision", workload.precision},
                        {"batch_per_device", workload.batch_per_device},
                        {"param_bytes", workload.param_bytes()}};
  report["bucket_cap_bytes"] = config.bucket_cap_bytes;
  report["first_bucket_cap_bytes"] = job.first_bucket_cap_bytes;
  report["iterations_simulated"] = config.iterations;
  report["tasks_replayed"] = dp.graph.tasks().size();
  report["result"] = data_parallel_result(workload, dp, measure_data_parallel(dp, times));
  return report;
}

ordered_json simulate_collective(const CollectiveConfig& config) {
  if (config.op != "all-reduce") {
    throw ConfigError("--op " + config.op + ": unknown operation (expected all-reduce)");
  }
  ValidatedRun v = validate_run(config.run);
  EngineRun engine(config.run, v.platform);
  const int p = config.run.ranks;
  TaskGraph graph;
  const Schedule schedule = v.algorithm->all_reduce(p, config.bytes, engine.hints());
  graph.add_schedule(schedule, std::vector<std::vector<TaskId>>(static_cast<std::size_t>(p)));
  const ReplayTimes times = replay(graph, engine.rank_hosts());
  double time_sec = 0;
  for (double t : times.end_sec) {
    time_sec = std::max(time_sec, t);
  }

  ordered_json report = common_report("collective", config.run, v.platform, engine.host_count());
  report["op"] = config.op;
  report["bytes"] = config.bytes;
  report["time_sec"] = time_sec;
  // nccl-tests conventions: algbw = S/t; busbw = algbw * 2(p-1)/p for all-reduce.
  const double alg_bw = time_sec > 0 ? static_cast<double>(config.bytes) / time_sec : 0.0;
  report["algorithm_bandwidth_bytes_per_sec"] = alg_bw;
  report["bus_bandwidth_bytes_per_sec"] = alg_bw * 2.0 * (p - 1) / p;
  report["transfers"] = schedule.ops.size();
  return report;
}

}  // namespace dtsim::sim
