// P3-style priority scheduling of gradient communication (Jayarajan et al., "Priority-based
// Parameter Propagation for Distributed DNN Training", SysML 2019), as a composition of what-if
// primitives on a data-parallel execution graph (WHATIF.md, "p3=SIZE").
//
//   g = priority_propagation(std::move(g), 4'000'000);   // 4 MB slices
//   g = order_by_priority(std::move(g), seconds);         // priority.h: the policy applied
#ifndef DTSIM_SIM_WHATIF_PRIORITY_PROPAGATION_H_
#define DTSIM_SIM_WHATIF_PRIORITY_PROPAGATION_H_

#include <cstdint>

#include "sim/graph/execution_graph.h"

namespace dtsim::sim {

// `g` rewritten so that the layers needed first by the next forward pass get their gradients
// reduced first:
//  - every backward all-reduce (a bucket of layers [layer, last_layer]) becomes ceil(bytes /
//    slice_bytes) all-reduces of near-equal bytes (the first ones one byte larger), with its
//    dependencies and tags, and priority = its first layer (forward order: lower runs first);
//  - each iteration's optimizer node becomes one update per bucket, after that bucket's slices,
//    lasting the optimizer's time x the bucket's share of the gradient bytes (an optimizer step
//    is elementwise over the parameters), priority = its first layer - the graph's layers
//    (below every forward node's 0, so it runs as soon as its gradients are, and in the order
//    of its bucket);
//  - the forward nodes of iteration k + 1 wait for the update of the bucket holding their layer
//    in iteration k, not for the whole optimizer step.
// A node that waited for a sliced all-reduce waits for all its slices, one that waited for the
// optimizer for all the updates. Priorities take effect through order_by_priority (priority.h).
// Throws ConfigError("what_if", ...) unless slice_bytes >= 1 and every iteration that has
// backward all-reduces has exactly one optimizer node after them and gradient bytes > 0.
[[nodiscard]] ExecutionGraph priority_propagation(ExecutionGraph g, std::uint64_t slice_bytes);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_WHATIF_PRIORITY_PROPAGATION_H_
