#include "sim/collectives/collective_choice.h"

#include <bit>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <tuple>

#include "sim/collectives/registry.h"
#include "sim/collectives/schedule_builder.h"
#include "sim/collectives/schedule_cost.h"
#include "sim/config_error.h"
#include "workloads/parsing/units.h"

namespace dtsim::sim {

namespace {

// The transfers of `schedule` that may all run at once on entry: those after no other transfer
// (through waits too), one per channel (a channel runs its transfers one after another).
double transfers_at_once(const Schedule& schedule) {
  std::vector<bool> after_transfer(schedule.ops.size(), false);
  std::set<std::tuple<int, int, int>> channels;
  for (std::size_t i = 0; i < schedule.ops.size(); ++i) {
    const ScheduleOp& op = schedule.ops[i];
    for (int d : op.deps) {
      const auto dep = static_cast<std::size_t>(d);
      after_transfer[i] = after_transfer[i] || after_transfer[dep] ||
                          schedule.ops[dep].kind == ScheduleOp::Kind::kTransfer;
    }
    if (op.kind == ScheduleOp::Kind::kTransfer && !after_transfer[i]) {
      channels.emplace(op.src, op.dst, op.channel);
    }
  }
  return static_cast<double>(channels.size());
}

std::string names_list() {
  std::string names;
  for (const std::string& n : algorithm_names()) {
    names += (names.empty() ? "" : ", ") + n;
  }
  return names + ", file:PATH, auto, auto:NAME,NAME...";
}

// The names after "auto:" in `algorithm` (comma separated); every registry name for "auto".
std::vector<std::string> auto_candidates(const std::string& algorithm) {
  if (algorithm == "auto") {
    return auto_algorithm_names();
  }
  std::vector<std::string> names;
  std::string rest = algorithm.substr(5);
  for (std::size_t comma; (comma = rest.find(',')) != std::string::npos;) {
    names.push_back(rest.substr(0, comma));
    rest = rest.substr(comma + 1);
  }
  names.push_back(rest);
  return names;
}

bool is_auto(const std::string& algorithm) {
  return algorithm == "auto" || algorithm.starts_with("auto:");
}

// An upper bound of the operations `algorithm` would schedule, to skip the huge ones in auto.
double op_bound(const std::string& algorithm, const CollectiveRequest& r, const TopologyHints& h,
                const AlgorithmOptions& o) {
  const double p = r.ranks;
  const double chunks =
      std::ceil(static_cast<double>(r.bytes) / static_cast<double>(o.chunk_bytes)) + 1;
  const double log_p = std::bit_width(static_cast<unsigned>(r.ranks));
  // Two-level rings: 2(inner-1) steps inside, 2(outer-1) across, p transfers per step.
  auto two_level = [p](double inner) {
    return 2 * p * (inner - 1) + 2 * p * (p / inner - 1) + p;
  };
  if (algorithm.starts_with(kFilePrefix)) {
    return 0;  // as many as the file has, which it was read with
  }
  if (algorithm == "direct") {
    return 2 * p * p;
  }
  if (algorithm == "nvls" || algorithm == "nvls-tree") {
    return p * p + 1;
  }
  // Broadcast and reduce: a pipelined chain or tree, p - 1 edges, each carrying every chunk.
  const bool rooted = r.op == CollectiveOp::kBroadcast || r.op == CollectiveOp::kReduce;
  if (algorithm == "tree" || algorithm == "double-tree") {
    if (rooted) {
      return (p - 1) * chunks;
    }
    return o.collapse_pipelines ? 4 * p + 2 : 2 * p * chunks;
  }
  if (algorithm == "ring") {
    if (rooted) {
      return (p - 1) * chunks;
    }
    return o.collapse ? p + 2 : 2 * p * p;
  }
  if (algorithm == "hierarchical") {
    return two_level(std::max(1, h.ranks_per_node));
  }
  if (algorithm == "torus-2d") {
    return h.grid.size() == 2 ? two_level(h.grid[0]) : 0;
  }
  return 2 * p * (log_p + 2);  // butterflies: log2 p exchanges plus the fold and unfold
}

// What else shrinks a schedule that is too large, besides a larger --chunk or auto.
std::string rooted_or_tree_hint(const std::string& algorithm, CollectiveOp op) {
  if (op == CollectiveOp::kBroadcast || op == CollectiveOp::kReduce) {
    return "";  // a pipeline: only its chunks count
  }
  if (algorithm == "tree" || algorithm == "double-tree") {
    return op == CollectiveOp::kAllReduce ? "--replay fast, " : "";
  }
  return algorithm == "ring" ? "--replay collapsed, " : "";
}

}  // namespace

CollectiveChooser::CollectiveChooser(std::string algorithm, AlgorithmOptions options)
    : algorithm_(std::move(algorithm)), options_(options) {
  if (!is_auto(algorithm_)) {
    std::shared_ptr<const CollectiveAlgorithm> made = make_algorithm(algorithm_, options_);
    if (!made) {
      throw ConfigError("algorithm",
                        algorithm_ + ": unknown algorithm (expected one of " + names_list() + ")");
    }
    algorithms_.emplace(algorithm_, std::move(made));
    return;
  }
  candidates_ = auto_candidates(algorithm_);
  for (const std::string& name : candidates_) {
    std::shared_ptr<const CollectiveAlgorithm> made = make_algorithm(name, options_);
    if (!made) {
      throw ConfigError("algorithm", algorithm_ + ": unknown algorithm \"" + name +
                                         "\" (expected one of " + names_list() + ")");
    }
    algorithms_.emplace(name, std::move(made));
  }
}

const CollectiveAlgorithm& CollectiveChooser::algorithm(const std::string& name) const {
  return *algorithms_.at(name);
}

void CollectiveChooser::check(const CollectiveRequest& request, const TopologyHints& hints) const {
  if (!is_auto(algorithm_)) {
    const std::string why = algorithm(algorithm_).unsupported(request, hints);
    if (!why.empty()) {
      throw ConfigError("algorithm", algorithm_ + ": " + why);
    }
    return;
  }
  for (const std::string& name : candidates_) {
    if (algorithm(name).unsupported(request, hints).empty()) {
      return;
    }
  }
  throw ConfigError("algorithm",
                    algorithm_ + ": no algorithm can run " + std::string(op_name(request.op)));
}

CollectiveChoice CollectiveChooser::choose(const CollectiveRequest& request,
                                           const TopologyHints& hints) const {
  const double latency_sec = options_.collective_latency_sec;
  if (!is_auto(algorithm_)) {
    const double ops = op_bound(algorithm_, request, hints, options_);
    if (ops > kMaxScheduleOps) {
      throw ConfigError("algorithm",
                        algorithm_ + ": " + std::string(op_name(request.op)) + " of " +
                            std::to_string(request.bytes) + " bytes on " +
                            std::to_string(request.ranks) + " ranks: about " +
                            parsing::format_number("%.3g", ops) +
                            " transfers to schedule (at most 2e7, ~5 GB); use a larger --chunk, " +
                            (rooted_or_tree_hint(algorithm_, request.op)) + "or auto");
    }
    Schedule built = algorithm(algorithm_).build(request, hints);
    if (const double at_once = transfers_at_once(built);
        at_once > options_.max_concurrent_transfers) {
      throw ConfigError("algorithm",
                        algorithm_ + ": " + std::string(op_name(request.op)) + " on " +
                            std::to_string(request.ranks) + " ranks starts about " +
                            parsing::format_number("%.3g", at_once) +
                            " transfers at once, more than --max-concurrent " +
                            parsing::format_number("%.3g", options_.max_concurrent_transfers) +
                            " (the replay holds each, about 40 KB: " +
                            parsing::format_number("%.3g", at_once * 40e3 / 1e9) +
                            " GB); use ring, a tree or auto, or raise --max-concurrent");
    }
    return {.algorithm = algorithm_, .schedule = with_entry_latency(std::move(built), latency_sec)};
  }
  CollectiveChoice best{.algorithm = ""};
  double best_sec = std::numeric_limits<double>::infinity();
  for (const std::string& name : candidates_) {
    const CollectiveAlgorithm& candidate = algorithm(name);
    Candidate c{.algorithm = name, .skipped = candidate.unsupported(request, hints)};
    if (c.skipped.empty() && op_bound(name, request, hints, options_) > kMaxAutoCandidateOps) {
      c.skipped = "schedule too large to evaluate (over 4e6 operations)";
    }
    Schedule built;
    if (c.skipped.empty()) {
      built = candidate.build(request, hints);
      if (const double at_once = transfers_at_once(built); at_once > kMaxAutoConcurrentTransfers) {
        c.skipped = "about " + parsing::format_number("%.3g", at_once) +
                    " transfers would run at once (over 1e5: the replay holds each, about 40 KB)";
      }
    }
    if (c.skipped.empty()) {
      Schedule schedule = with_entry_latency(std::move(built), latency_sec);
      c.estimated_sec = estimate_sec(schedule, hints);
      if (*c.estimated_sec < best_sec) {  // ties keep the earlier (display) order
        best_sec = *c.estimated_sec;
        best.algorithm = name;
        best.schedule = std::move(schedule);
      }
    }
    best.candidates.push_back(std::move(c));
  }
  return best;
}

nlohmann::ordered_json choice_json(const CollectiveChoice& choice) {
  nlohmann::ordered_json candidates = nlohmann::ordered_json::array();
  for (const Candidate& c : choice.candidates) {
    nlohmann::ordered_json j{{"algorithm", c.algorithm}};
    if (c.estimated_sec) {
      j["estimated_sec"] = *c.estimated_sec;
    } else {
      j["skipped"] = c.skipped;
    }
    candidates.push_back(std::move(j));
  }
  return {{"chosen", choice.algorithm}, {"candidates", std::move(candidates)}};
}

TopologyHints group_hints(const TopologyHints& all, const std::vector<int>& ranks, int rank_count) {
  bool identity = static_cast<int>(ranks.size()) == rank_count;
  for (std::size_t i = 0; identity && i < ranks.size(); ++i) {
    identity = ranks[i] == static_cast<int>(i);
  }
  if (identity) {
    return all;
  }
  TopologyHints h = all;
  h.grid.clear();
  const auto members = std::make_shared<const std::vector<int>>(ranks);
  if (all.route_latency_sec) {
    h.route_latency_sec = [members, f = all.route_latency_sec](int src, int dst) {
      return f((*members)[static_cast<std::size_t>(src)],
               (*members)[static_cast<std::size_t>(dst)]);
    };
  }
  if (all.route_links) {
    h.route_links = [members, f = all.route_links](int src, int dst) {
      return f((*members)[static_cast<std::size_t>(src)],
               (*members)[static_cast<std::size_t>(dst)]);
    };
  } else {  // a star: keep each member's own link ids
    h.route_links = [members, bw = all.injection_bytes_per_sec](int src, int dst) {
      return std::vector<std::pair<int, double>>{
          {2 * (*members)[static_cast<std::size_t>(src)], bw},
          {2 * (*members)[static_cast<std::size_t>(dst)] + 1, bw}};
    };
  }
  h.rank_nodes.clear();
  std::map<int, int> per_node;
  for (int r : ranks) {
    const int node = all.node_of(r);
    h.rank_nodes.push_back(node);
    ++per_node[node];
  }
  int most = 1;
  for (const auto& [node, count] : per_node) {
    most = std::max(most, count);
  }
  h.ranks_per_node = std::min(most, std::max(1, all.ranks_per_node));
  return h;
}

}  // namespace dtsim::sim
