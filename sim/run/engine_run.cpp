#include "sim/run/engine_run.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>

#include <simgrid/s4u.hpp>

#include "platforms/xml_checks.h"
#include "sim/config_error.h"
#include "sim/invariant.h"
#include "sim/replay/perturbations.h"
#include "sim/replay/rank_mapping.h"
#include "sim/run/work_limits.h"
#include "sim/whatif/priority.h"

namespace dtsim::sim {

namespace sg4 = simgrid::s4u;

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
    throw ConfigError("simgrid_cfg",
                      setting + ": expected KEY:VALUE, e.g. network/maxmin-selective-update:yes");
  }
  const std::string key = setting.substr(0, colon);
  const std::string value = setting.substr(colon + 1);
  if (key.starts_with("network/model") || key == "network/crosstraffic" ||
      key == "network/TCP-gamma") {
    throw ConfigError("simgrid_cfg",
                      setting + ": dtsim sets " + key +
                          " itself; choose the network model with --network-model exact|lv08");
  }
  if (key.ends_with("/model")) {
    throw ConfigError("simgrid_cfg",
                      setting + ": dtsim sets " + key +
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
    throw ConfigError(
        "simgrid_cfg",
        setting + ": expected -1 (no limit) or a limit >= 1 (0 deadlocks every transfer)");
  }
}

ValidatedRun validate_run(const RunOptions& run, const CollectiveRequest* request,
                          const std::string& ranks_from) {
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
    throw ConfigError("ranks_per_node",
                      std::to_string(run.ranks_per_node) +
                          ": expected an integer >= 1 (or 0: the platform's GPUs per node)");
  }
  if (!(run.collective_latency_sec >= 0) || !std::isfinite(run.collective_latency_sec)) {
    throw ConfigError("collective_latency_sec", ": expected a duration >= 0, e.g. 8.4us");
  }
  CollectiveChooser chooser(run.algorithm,
                            AlgorithmOptions{.collapse = run.collapse,
                                             .collapse_pipelines = run.collapse_pipelines,
                                             .chunk_bytes = run.chunk_bytes,
                                             .collective_latency_sec = run.collective_latency_sec,
                                             .max_concurrent_transfers = run.max_concurrent});
  ValidatedRun v{.platform = platforms::read_platform_spec(run.platform_path),
                 .chooser = std::move(chooser)};
  apply_platform_what_ifs(v.platform, run.what_if);
  check_host_limit(v.platform, run.max_hosts);
  const unsigned hosts = v.platform.host_count();
  if (hosts != 0 && static_cast<unsigned>(run.ranks) > hosts) {
    throw ConfigError(
        v.platform.file + ": the platform has " + std::to_string(hosts) + " hosts, fewer than " +
        (ranks_from.empty() ? "--ranks " + std::to_string(run.ranks)
                            : "the " + std::to_string(run.ranks) + " ranks of " + ranks_from));
  }
  v.hints.ranks_per_node =
      run.ranks_per_node > 0 ? run.ranks_per_node : static_cast<int>(v.platform.gpus_per_node());
  v.hints.in_switch_reduction = v.platform.nvlink_sharp();
  v.hints.in_network_reduction = v.platform.network_sharp();
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

EngineRun::EngineRun(const RunOptions& run, const platforms::PlatformSpec& spec,
                     TopologyHints hints)
    : hints_(std::move(hints)) {
  // One actor per lane: a direct all-reduce on 512 ranks has 261,632. Stacks with guard pages
  // cost a memory mapping each (Linux allows 65,530 per process by default) and SimGrid aborts past
  // it; stacks without guard pages come from the heap (measured in sim/SIMGRID_NOTES.md: no
  // slower). 16 KiB: a lane actor's deepest call (a mailbox put inside SimGrid) runs in 8 KiB (same
  // results with 8 KiB for a 4,096-rank ring iteration and for every all-reduce algorithm on 16
  // ranks of a DGX preset with LV08), and stacks are most of the memory at scale (32,768 actors:
  // 512 MiB at 16 KiB, 2 GiB at 64).
  // --cfg flags given by the user come later. s4u_actor's INFO is off: it says, once per
  // actor, that a sub-nanosecond compute (a thin shard's) is below SimGrid's time precision,
  // a line per rank on stderr that no user can act on (hiding it changes no result).
  args_ = {"dtsim", "--log=xbt_cfg.thres:warning", "--log=s4u_actor.thres:warning",
           "--cfg=contexts/guard-size:0", "--cfg=contexts/stack-size:16"};
#if defined(__SANITIZE_ADDRESS__)
  // Under AddressSanitizer (.ci/sanitize) the actors run as threads: Debian's SimGrid has no
  // fiber annotations, so ASan cannot follow its stack switches (it warns, and "false positive
  // error reports may follow", google/sanitizers#189). Threads keep the system's stack size.
  args_ = {"dtsim", "--log=xbt_cfg.thres:warning", "--log=s4u_actor.thres:warning",
           "--cfg=contexts/factory:thread"};
#endif
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
  start_background_traffic(spec, platform_, run.max_events);
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

EngineRun::~EngineRun() = default;

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
            .replay = !run.collapse            ? "step"
                      : run.collapse_pipelines ? "fast"
                                               : "collapsed",
            .chunk_bytes = run.chunk_bytes,
            .collective_latency_sec = run.collective_latency_sec,
            .network_model = network_model_name(run.network_model),
            .simgrid_cfg = network_model_settings(run.network_model),
            .extra_cfg = run.simgrid_cfg};
  for (const WhatIf& w : run.what_if) {
    r.what_if.push_back(w.text);
  }
  if (run.placement.kind == Placement::Kind::kRandom) {
    r.placement_seed = run.placement.seed;
  }
  if (run.algorithm == "hierarchical" || run.algorithm.starts_with("auto")) {
    r.ranks_per_node = hints.ranks_per_node;
  }
  return r;
}

const CollectiveChoice& GroupChooser::operator()(const CollectiveRequest& request,
                                                 const Communicator& comm) {
  const Key key{comm.name, request.op, request.bytes, request.root, request.algorithm};
  auto it = made_.find(key);
  if (it == made_.end()) {
    DTSIM_CHECK(!released_, "no schedule is chosen after lowering");
    const TopologyHints hints = group_hints(engine_.hints(), comm.ranks, ranks_);
    const CollectiveChooser* chooser = &chooser_;
    try {
      chooser = &chooser_for(request);
      chooser->check(request, hints);
    } catch (const ConfigError& e) {  // say which collective of the graph cannot run
      throw ConfigError(e.field(), e.detail() + " (" + std::string(op_name(request.op)) + " of " +
                                       std::to_string(request.bytes) + " bytes on communicator \"" +
                                       comm.name + "\")");
    }
    CollectiveChoice choice = chooser->choose(request, hints);
    const CommCost cost = comm_cost(choice.schedule, hints);
    it = made_.emplace(key, std::make_pair(std::move(choice), cost)).first;
  }
  return it->second.first;
}

const CollectiveChooser& GroupChooser::chooser_for(const CollectiveRequest& request) {
  if (request.algorithm.empty()) {
    return chooser_;
  }
  auto it = named_.find(request.algorithm);
  if (it == named_.end()) {
    it = named_.emplace(request.algorithm, chooser_.with_algorithm(request.algorithm)).first;
  }
  return it->second;
}

void GroupChooser::release_schedules() {
  for (auto& [key, made] : made_) {
    made.first.schedule = Schedule{};
  }
  released_ = true;
}

std::vector<ErrorBar> what_if_error_bars(const std::vector<WhatIf>& what_ifs) {
  std::vector<ErrorBar> bars;
  for (const WhatIf& w : what_ifs) {
    ErrorBar bar = whatif_error_bar(w.name, w.kind == WhatIfKind::kFlag);
    if (std::none_of(bars.begin(), bars.end(),
                     [&](const ErrorBar& b) { return b.error_class == bar.error_class; })) {
      bars.push_back(std::move(bar));
    }
  }
  return bars;
}

bool spans_nodes(const TopologyHints& hints, int ranks) {
  for (int r = 1; r < ranks; ++r) {
    if (hints.node_of(r) != hints.node_of(0)) {
      return true;
    }
  }
  return false;
}

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

}  // namespace dtsim::sim
