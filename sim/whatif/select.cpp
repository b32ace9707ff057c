#include "sim/whatif/select.h"

#include <algorithm>
#include <set>

#include "sim/config_error.h"

namespace dtsim::sim {

namespace {

// Whether tag index `index` of `table` is named `name`.
bool names(const std::vector<std::string>& table, std::int32_t index, const std::string& name) {
  return index >= 0 && static_cast<std::size_t>(index) < table.size() &&
         table[static_cast<std::size_t>(index)] == name;
}

// Whether the node's layer, or its [layer, last_layer] range, holds the layer called `name`.
bool holds_layer(const ExecutionGraph& g, const Node& n, const std::string& name) {
  const auto it = std::find(g.layers.begin(), g.layers.end(), name);
  if (it == g.layers.end() || n.layer < 0) {
    return false;
  }
  const auto layer = static_cast<std::int32_t>(it - g.layers.begin());
  const std::int32_t last = n.last_layer >= 0 ? n.last_layer : n.layer;
  return n.layer <= layer && layer <= last;
}

}  // namespace

bool matches(const ExecutionGraph& g, std::int32_t program, const Node& n, const NodeSelector& s) {
  const Program& p = g.programs[static_cast<std::size_t>(program)];
  if ((s.kind && n.kind != *s.kind) || (s.phase && n.phase != *s.phase) ||
      (s.iteration && n.iteration != *s.iteration) ||
      (s.micro_batch && n.micro_batch != *s.micro_batch) || (s.program && p.name != *s.program)) {
    return false;
  }
  if (s.op && (n.kind != NodeKind::kCollective || n.op != *s.op)) {
    return false;
  }
  if ((s.op_class && !names(g.op_classes, n.op_class, *s.op_class)) ||
      (s.label && !names(g.labels, n.label, *s.label)) ||
      (s.role && !names(p.comms, n.comm, *s.role))) {
    return false;
  }
  return !s.layer || holds_layer(g, n, *s.layer);
}

std::vector<NodeRef> select_nodes(const ExecutionGraph& g, const NodeSelector& selector) {
  std::vector<NodeRef> out;
  for (std::size_t p = 0; p < g.programs.size(); ++p) {
    const auto& nodes = g.programs[p].nodes;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      if (matches(g, static_cast<std::int32_t>(p), nodes[i], selector)) {
        out.push_back({static_cast<std::int32_t>(p), static_cast<std::int32_t>(i)});
      }
    }
  }
  return out;
}

ExecutionGraph isolate_ranks(ExecutionGraph g, std::span<const int> ranks, std::int32_t& program) {
  if (ranks.empty()) {
    throw ConfigError("what_if", "a rank selection needs at least one rank");
  }
  std::set<int> chosen;
  for (int r : ranks) {
    if (r < 0 || r >= g.rank_count()) {
      throw ConfigError("what_if", "rank " + std::to_string(r) +
                                       " is outside the graph's ranks 0 to " +
                                       std::to_string(g.rank_count() - 1));
    }
    chosen.insert(r);
  }
  const std::int32_t old = g.ranks[static_cast<std::size_t>(*chosen.begin())].program;
  std::size_t runs_old = 0;
  for (int r = 0; r < g.rank_count(); ++r) {
    const bool same = g.ranks[static_cast<std::size_t>(r)].program == old;
    if (chosen.contains(r) && !same) {
      throw ConfigError("what_if", "ranks " + std::to_string(*chosen.begin()) + " and " +
                                       std::to_string(r) +
                                       " run different programs: select them one at a time");
    }
    runs_old += same ? 1 : 0;
  }
  program = old;
  if (runs_old == chosen.size()) {
    return g;
  }
  Program copy = g.programs[static_cast<std::size_t>(old)];
  copy.name += "@" + std::to_string(*chosen.begin());
  g.programs.push_back(std::move(copy));
  program = static_cast<std::int32_t>(g.programs.size() - 1);
  for (int r : chosen) {
    g.ranks[static_cast<std::size_t>(r)].program = program;
  }
  return g;
}

}  // namespace dtsim::sim
