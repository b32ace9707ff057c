// Selecting nodes of an execution graph by their tags, the first what-if primitive (WHATIF.md):
// a NodeSelector names the tags a node must have; select_nodes lists the nodes that have them.
//
//   const auto grads = select_nodes(g, {.kind = NodeKind::kCollective, .role = "dp"});
//   g = scale_bytes(std::move(g), grads, 0.5);
#ifndef DTSIM_SIM_WHATIF_SELECT_H_
#define DTSIM_SIM_WHATIF_SELECT_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "sim/graph/execution_graph.h"

namespace dtsim::sim {

// Node `node` of programs[program].
struct NodeRef {
  std::int32_t program = 0;
  std::int32_t node = 0;
  bool operator==(const NodeRef&) const = default;
  auto operator<=>(const NodeRef&) const = default;
};

// The tags a selected node must have; an unset field matches every node.
struct NodeSelector {
  std::optional<NodeKind> kind;
  std::optional<Phase> phase;
  std::optional<CollectiveOp> op;  // collectives only
  // A layer name: compute nodes of that layer, collectives whose [layer, last_layer] range
  // holds it.
  std::optional<std::string> layer;
  std::optional<std::string> op_class;  // a name of ExecutionGraph::op_classes
  std::optional<std::string> label;     // a name of ExecutionGraph::labels
  std::optional<std::string> role;      // communication nodes on this communicator role
  std::optional<std::int32_t> iteration;
  std::optional<std::int32_t> micro_batch;
  std::optional<std::string> program;  // the program's name (see isolate_ranks for ranks)

  bool operator==(const NodeSelector&) const = default;
};

// Whether node `n` of programs[program] has every tag of `s`.
[[nodiscard]] bool matches(const ExecutionGraph& g, std::int32_t program, const Node& n,
                           const NodeSelector& s);

// Every node that has the tags of `selector`, by program then issue order. A name that no table
// holds selects nothing.
[[nodiscard]] std::vector<NodeRef> select_nodes(const ExecutionGraph& g,
                                                const NodeSelector& selector);

// Selection by rank: gives `ranks` a program of their own, a copy of the one they run (named
// "<program>@<first rank>"), so that a pass on that program changes them only. Returns `g` with
// the copy, and sets `program` to its index (to the old program's, if `ranks` are all the ranks
// that run it). Throws ConfigError("what_if", ...) if `ranks` is empty, holds a rank outside the
// graph, or ranks that run different programs.
[[nodiscard]] ExecutionGraph isolate_ranks(ExecutionGraph g, std::span<const int> ranks,
                                           std::int32_t& program);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_WHATIF_SELECT_H_
