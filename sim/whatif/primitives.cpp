#include "sim/whatif/primitives.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "sim/config_error.h"
#include "sim/graph/graph_validate.h"
#include "workloads/parsing/units.h"

namespace dtsim::sim {

namespace {

void check_factor(double factor, const std::string& pass) {
  if (!std::isfinite(factor) || factor < 0) {
    throw ConfigError("what_if", pass + ": expected a finite factor >= 0, got " +
                                     parsing::format_number("%g", factor));
  }
}

// One node of a program being rebuilt: where it came from (or -1, a new one) and its deps as
// entries of the new order (filled in by rebuild).
struct Entry {
  Node node;
  std::int32_t old = -1;
  std::vector<std::int32_t> deps;  // indices into the entry list
};

// The program of `entries` (in issue order), each entry's deps pointing to earlier entries.
Program rebuild(const Program& p, const std::vector<Entry>& entries) {
  Program out{.name = p.name, .comms = p.comms, .nodes = {}, .deps = {}};
  for (const Entry& e : entries) {
    (void)out.add(e.node, std::span<const std::int32_t>(e.deps));
  }
  return out;
}

std::vector<std::int32_t> old_deps(const Program& p, std::int32_t i) {
  const auto d = p.deps_of(p.nodes[static_cast<std::size_t>(i)]);
  return {d.begin(), d.end()};
}

}  // namespace

Node& node_at(ExecutionGraph& g, NodeRef ref, const std::string& pass) {
  if (ref.program < 0 || static_cast<std::size_t>(ref.program) >= g.programs.size() ||
      ref.node < 0 ||
      static_cast<std::size_t>(ref.node) >=
          g.programs[static_cast<std::size_t>(ref.program)].nodes.size()) {
    throw ConfigError("what_if", pass + ": node " + std::to_string(ref.node) + " of program " +
                                     std::to_string(ref.program) + " is not in the graph");
  }
  return g.programs[static_cast<std::size_t>(ref.program)]
      .nodes[static_cast<std::size_t>(ref.node)];
}

void require_valid(const ExecutionGraph& g, const std::string& pass) {
  const std::vector<std::string> problems = validate_execution_graph(g);
  if (problems.empty()) {
    return;
  }
  std::string text = pass + ": the transformed graph is not valid:";
  for (const std::string& p : problems) {
    text += "\n  " + p;
  }
  throw ConfigError("what_if", text);
}

ExecutionGraph scale_durations(ExecutionGraph g, std::span<const NodeRef> nodes, double factor) {
  check_factor(factor, "scale_durations");
  for (NodeRef ref : nodes) {
    Node& n = node_at(g, ref, "scale_durations");
    if (n.kind != NodeKind::kCompute) {
      throw ConfigError("what_if",
                        "scale_durations: node " + std::to_string(ref.node) + " of program \"" +
                            g.programs[static_cast<std::size_t>(ref.program)].name + "\" is a " +
                            std::string(node_kind_name(n.kind)) + " node, not a compute node");
    }
    n.duration_sec *= factor;
  }
  require_valid(g, "scale_durations");
  return g;
}

ExecutionGraph scale_bytes(ExecutionGraph g, std::span<const NodeRef> nodes, double factor) {
  check_factor(factor, "scale_bytes");
  for (NodeRef ref : nodes) {
    Node& n = node_at(g, ref, "scale_bytes");
    if (n.kind == NodeKind::kCompute) {
      throw ConfigError("what_if", "scale_bytes: node " + std::to_string(ref.node) +
                                       " of program \"" +
                                       g.programs[static_cast<std::size_t>(ref.program)].name +
                                       "\" is a compute node: it moves no bytes");
    }
    n.bytes = static_cast<std::uint64_t>(std::llround(static_cast<double>(n.bytes) * factor));
  }
  require_valid(g, "scale_bytes");
  return g;
}

ExecutionGraph set_algorithm(ExecutionGraph g, std::span<const NodeRef> nodes,
                             const std::string& algorithm) {
  if (algorithm.empty()) {
    throw ConfigError("what_if", "set_algorithm: expected an algorithm name");
  }
  const std::int32_t index = ExecutionGraph::intern(g.algorithms, algorithm);
  for (NodeRef ref : nodes) {
    Node& n = node_at(g, ref, "set_algorithm");
    if (n.kind != NodeKind::kCollective) {
      throw ConfigError("what_if", "set_algorithm: node " + std::to_string(ref.node) +
                                       " of program \"" +
                                       g.programs[static_cast<std::size_t>(ref.program)].name +
                                       "\" is not a collective");
    }
    n.algorithm = index;
  }
  require_valid(g, "set_algorithm");
  return g;
}

namespace {

// Where the insertions of one program go: new node k is named n + k; placed_after[j] lists the
// new nodes that follow old node j in issue order (j = -1: first); deps are in these names.
struct InsertionPlan {
  std::map<std::int32_t, std::vector<std::int32_t>> placed_after;
  std::vector<std::vector<std::int32_t>> deps;      // of the old nodes
  std::vector<std::vector<std::int32_t>> new_deps;  // of the new nodes
};

InsertionPlan plan_insertions(const Program& p, const std::vector<const Insertion*>& list) {
  const auto n = static_cast<std::int32_t>(p.nodes.size());
  InsertionPlan plan{.placed_after = {}, .deps = {}, .new_deps = {}};
  for (std::int32_t i = 0; i < n; ++i) {
    plan.deps.push_back(old_deps(p, i));
  }
  plan.new_deps.resize(list.size());
  std::vector<std::int32_t> key(list.size());  // the old node each new one is placed after
  for (std::size_t k = 0; k < list.size(); ++k) {
    const auto id = static_cast<std::int32_t>(n + static_cast<std::int32_t>(k));
    const std::int32_t a = list[k]->anchor.node;
    auto& anchor_deps = plan.deps[static_cast<std::size_t>(a)];
    if (list[k]->where == Where::kBefore) {
      plan.new_deps[k] = anchor_deps;
      // On the anchor's own stream: right before it; on another: as early as the deps allow.
      std::int32_t after = a - 1;
      if (list[k]->node.comm != p.nodes[static_cast<std::size_t>(a)].comm) {
        after = -1;
        for (std::int32_t d : anchor_deps) {
          after = std::max(after, d < n ? d : key[static_cast<std::size_t>(d - n)]);
        }
      }
      anchor_deps = {id};
      key[k] = after;
    } else {
      plan.new_deps[k] = {a};
      for (auto& d : plan.deps) {
        std::replace(d.begin(), d.end(), a, id);
      }
      for (std::size_t j = 0; j < k; ++j) {
        std::replace(plan.new_deps[j].begin(), plan.new_deps[j].end(), a, id);
      }
      key[k] = a;
    }
    plan.placed_after[key[k]].push_back(id);
  }
  return plan;
}

// The program of `plan`: old nodes in order, each followed by what is placed after it. (A new
// node never waits for one placed later: a kBefore node waits only for nodes before its anchor,
// a kAfter node for its anchor.)
Program place(const Program& p, const std::vector<const Insertion*>& list,
              const InsertionPlan& plan) {
  const auto n = static_cast<std::int32_t>(p.nodes.size());
  std::vector<std::int32_t> order;
  const auto emit_after = [&](std::int32_t k) {
    if (const auto it = plan.placed_after.find(k); it != plan.placed_after.end()) {
      order.insert(order.end(), it->second.begin(), it->second.end());
    }
  };
  emit_after(-1);
  for (std::int32_t i = 0; i < n; ++i) {
    order.push_back(i);
    emit_after(i);
  }
  std::vector<std::int32_t> position(order.size());
  for (std::size_t k = 0; k < order.size(); ++k) {
    position[static_cast<std::size_t>(order[k])] = static_cast<std::int32_t>(k);
  }
  std::vector<Entry> entries;
  for (std::int32_t id : order) {
    const bool fresh = id >= n;
    Entry e{.node = fresh ? list[static_cast<std::size_t>(id - n)]->node
                          : p.nodes[static_cast<std::size_t>(id)],
            .old = fresh ? -1 : id,
            .deps = {}};
    for (std::int32_t d : fresh ? plan.new_deps[static_cast<std::size_t>(id - n)]
                                : plan.deps[static_cast<std::size_t>(id)]) {
      e.deps.push_back(position[static_cast<std::size_t>(d)]);
    }
    entries.push_back(std::move(e));
  }
  return rebuild(p, entries);
}

}  // namespace

ExecutionGraph insert_nodes(ExecutionGraph g, std::span<const Insertion> insertions) {
  std::map<std::int32_t, std::vector<const Insertion*>> by_program;
  for (const Insertion& ins : insertions) {
    (void)node_at(g, ins.anchor, "insert_nodes");
    by_program[ins.anchor.program].push_back(&ins);
  }
  for (const auto& [program, list] : by_program) {
    Program& p = g.programs[static_cast<std::size_t>(program)];
    p = place(p, list, plan_insertions(p, list));
  }
  require_valid(g, "insert_nodes");
  return g;
}

ExecutionGraph remove_nodes(ExecutionGraph g, std::span<const NodeRef> nodes) {
  std::map<std::int32_t, std::set<std::int32_t>> by_program;
  for (NodeRef ref : nodes) {
    (void)node_at(g, ref, "remove_nodes");
    by_program[ref.program].insert(ref.node);
  }
  for (const auto& [program, removed] : by_program) {
    Program& p = g.programs[static_cast<std::size_t>(program)];
    const auto n = static_cast<std::int32_t>(p.nodes.size());
    // What each old node waits for among the kept ones: a removed dep is replaced by its own
    // (already resolved, since deps point backwards).
    std::vector<std::vector<std::int32_t>> kept_deps(static_cast<std::size_t>(n));
    std::vector<std::int32_t> position(static_cast<std::size_t>(n), -1);
    std::vector<Entry> entries;
    for (std::int32_t i = 0; i < n; ++i) {
      std::set<std::int32_t> resolved;
      for (std::int32_t d : old_deps(p, i)) {
        if (removed.contains(d)) {
          const auto& inherited = kept_deps[static_cast<std::size_t>(d)];
          resolved.insert(inherited.begin(), inherited.end());
        } else {
          resolved.insert(d);
        }
      }
      kept_deps[static_cast<std::size_t>(i)].assign(resolved.begin(), resolved.end());
      if (removed.contains(i)) {
        continue;
      }
      position[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(entries.size());
      Entry e{.node = p.nodes[static_cast<std::size_t>(i)], .old = i, .deps = {}};
      for (std::int32_t d : kept_deps[static_cast<std::size_t>(i)]) {
        e.deps.push_back(position[static_cast<std::size_t>(d)]);
      }
      entries.push_back(std::move(e));
    }
    p = rebuild(p, entries);
  }
  require_valid(g, "remove_nodes");
  return g;
}

}  // namespace dtsim::sim
