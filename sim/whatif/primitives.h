// The what-if primitives on an execution graph (Daydream, Zhu et al., ATC 2020, section 4.3):
// scale a duration, change a collective's bytes, insert a node before or after another with its
// dependencies, remove nodes with their dependencies rejoined. Each is a pure function: it takes
// a graph by value and returns the rewritten one, which the validator
// (sim/graph/graph_validate.h) has checked. Named optimizations (optimizations.h) compose them;
// WHATIF.md says what each does to the order of a stream.
//
//   g = scale_durations(std::move(g), select_nodes(g, {.phase = Phase::kBackward}), 0.5);
//
// Priorities and a stream's ready-node policy are in priority.h.
#ifndef DTSIM_SIM_WHATIF_PRIMITIVES_H_
#define DTSIM_SIM_WHATIF_PRIMITIVES_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "sim/graph/execution_graph.h"
#include "sim/whatif/select.h"

namespace dtsim::sim {

// Throws ConfigError("what_if", ...) naming `pass` and listing the validator's problems, unless
// `g` is valid. Every primitive ends with it.
void require_valid(const ExecutionGraph& g, const std::string& pass);

// Node `ref` of `g`. Throws ConfigError("what_if", ...) naming `pass` if it is not in the graph.
[[nodiscard]] Node& node_at(ExecutionGraph& g, NodeRef ref, const std::string& pass);

// `g` with the duration of every compute node of `nodes` multiplied by `factor`.
// Throws ConfigError("what_if", ...) if a node is not a compute node or factor is not a finite
// number >= 0.
[[nodiscard]] ExecutionGraph scale_durations(ExecutionGraph g, std::span<const NodeRef> nodes,
                                             double factor);

// `g` with the bytes of every collective, send and receive of `nodes` multiplied by `factor`
// (rounded to the nearest byte). The members of a communicator must agree on their collectives
// and a send with its receive, so select every side (the validator refuses a graph where they
// differ). Throws ConfigError("what_if", ...) for a compute node or a factor not finite >= 0.
[[nodiscard]] ExecutionGraph scale_bytes(ExecutionGraph g, std::span<const NodeRef> nodes,
                                         double factor);

// `g` with every collective of `nodes` run by `algorithm` (a --algorithm value: a name,
// file:PATH, auto or auto:A,B; checked when the graph is lowered) instead of the run's. Select
// every member's side: the members of a communicator must agree. Throws
// ConfigError("what_if", ...) for a node that is not a collective or an empty name.
[[nodiscard]] ExecutionGraph set_algorithm(ExecutionGraph g, std::span<const NodeRef> nodes,
                                           const std::string& algorithm);

enum class Where : std::uint8_t { kBefore, kAfter };

// One node to insert next to `anchor` (a node of anchor.program).
struct Insertion {
  NodeRef anchor;
  Where where = Where::kBefore;
  Node node;  // its dep range is ignored: the insertion sets its dependencies
};

// `g` with every insertion made (indices of anchors are those of `g` before the call).
//  - kBefore: the new node waits for what the anchor waited for, and the anchor waits for the
//    new node only. In issue order it goes right before the anchor when both run on one stream
//    (the compute stream, or one communicator's); on different streams, right after the last of
//    those dependencies (or first in the program), so a compute node inserted before a gradient
//    all-reduce runs as soon as the gradients are ready, not after the rest of the backward pass.
//  - kAfter: the new node waits for the anchor, and every node that waited for the anchor waits
//    for the new node instead; in issue order it goes right after the anchor.
// Several insertions at one anchor go in the order given. Throws ConfigError("what_if", ...)
// for an anchor outside the graph.
[[nodiscard]] ExecutionGraph insert_nodes(ExecutionGraph g, std::span<const Insertion> insertions);

// `g` without `nodes`; a node that waited for a removed node waits for what that one waited for
// (transitively, through removed chains). Removing a collective or a send on some members only
// leaves a graph the validator refuses.
[[nodiscard]] ExecutionGraph remove_nodes(ExecutionGraph g, std::span<const NodeRef> nodes);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_WHATIF_PRIMITIVES_H_
