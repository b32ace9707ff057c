#include "sim/graph/execution_graph.h"

#include <algorithm>
#include <array>
#include <utility>

#include "sim/invariant.h"

namespace dtsim::sim {

namespace {

constexpr std::array<std::pair<NodeKind, std::string_view>, 4> kKinds{{
    {NodeKind::kCompute, "compute"},
    {NodeKind::kCollective, "collective"},
    {NodeKind::kSend, "send"},
    {NodeKind::kRecv, "recv"},
}};

constexpr std::array<std::pair<Phase, std::string_view>, 5> kPhases{{
    {Phase::kForward, "forward"},
    {Phase::kBackward, "backward"},
    {Phase::kOptimizer, "optimizer"},
    {Phase::kRecompute, "recompute"},
    {Phase::kOther, "other"},
}};

template <typename E, std::size_t N>
std::string_view name_of(const std::array<std::pair<E, std::string_view>, N>& table, E value) {
  for (const auto& [v, name] : table) {
    if (v == value) {
      return name;
    }
  }
  return "?";
}

template <typename E, std::size_t N>
bool parse(const std::array<std::pair<E, std::string_view>, N>& table, std::string_view name,
           E& out) {
  for (const auto& [v, n] : table) {
    if (n == name) {
      out = v;
      return true;
    }
  }
  return false;
}

}  // namespace

std::string_view node_kind_name(NodeKind kind) {
  return name_of(kKinds, kind);
}
std::string_view phase_name(Phase phase) {
  return name_of(kPhases, phase);
}
bool parse_node_kind(std::string_view name, NodeKind& kind) {
  return parse(kKinds, name, kind);
}
bool parse_phase(std::string_view name, Phase& phase) {
  return parse(kPhases, name, phase);
}

std::int32_t Program::add(Node node, std::span<const std::int32_t> on) {
  const auto id = static_cast<std::int32_t>(nodes.size());
  node.dep_begin = static_cast<std::int32_t>(deps.size());
  for (std::int32_t d : on) {
    DTSIM_CHECK(d >= 0 && d < id, "a node depends only on earlier nodes of its program");
    deps.push_back(d);
  }
  node.dep_end = static_cast<std::int32_t>(deps.size());
  nodes.push_back(node);
  return id;
}

const Communicator& ExecutionGraph::communicator_of(int rank, const Node& node) const {
  const RankProgram& rp = ranks[static_cast<std::size_t>(rank)];
  return communicators[static_cast<std::size_t>(rp.comms[static_cast<std::size_t>(node.comm)])];
}

std::int32_t ExecutionGraph::intern(std::vector<std::string>& table, const std::string& name) {
  const auto it = std::find(table.begin(), table.end(), name);
  if (it != table.end()) {
    return static_cast<std::int32_t>(it - table.begin());
  }
  table.push_back(name);
  return static_cast<std::int32_t>(table.size()) - 1;
}

LocalRanks::LocalRanks(const ExecutionGraph& graph) {
  for (const Communicator& comm : graph.communicators) {
    auto& sorted = sorted_.emplace_back();
    for (std::size_t i = 0; i < comm.ranks.size(); ++i) {
      sorted.emplace_back(comm.ranks[i], static_cast<int>(i));
    }
    std::sort(sorted.begin(), sorted.end());
  }
}

int LocalRanks::of(std::int32_t comm, int rank) const {
  const auto& sorted = sorted_[static_cast<std::size_t>(comm)];
  const auto it = std::lower_bound(sorted.begin(), sorted.end(), std::make_pair(rank, -1));
  return it != sorted.end() && it->first == rank ? it->second : -1;
}

std::vector<int> LocalRanks::repeated(std::int32_t comm) const {
  const auto& sorted = sorted_[static_cast<std::size_t>(comm)];
  std::vector<int> out;
  for (std::size_t i = 1; i < sorted.size(); ++i) {
    if (sorted[i].first == sorted[i - 1].first && (out.empty() || out.back() != sorted[i].first)) {
      out.push_back(sorted[i].first);
    }
  }
  return out;
}

}  // namespace dtsim::sim
