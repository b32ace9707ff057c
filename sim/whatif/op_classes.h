// Op classes of compute nodes for the what-if passes that treat compute-bound and memory-bound
// work differently (mixed precision, another GPU; WHATIF.md, "Op classes"): "matmul" for work
// bounded by the tensor cores' (or the ALUs') FLOP/s, "memory" for work bounded by memory
// bandwidth.
#ifndef DTSIM_SIM_WHATIF_OP_CLASSES_H_
#define DTSIM_SIM_WHATIF_OP_CLASSES_H_

#include <span>
#include <string>
#include <vector>

#include "sim/graph/execution_graph.h"
#include "workloads/trace.h"

namespace dtsim::sim {

inline constexpr const char* kMatmulOpClass = "matmul";
inline constexpr const char* kMemoryOpClass = "memory";

// A layer counts as compute-bound when its forward pass achieves at least this fraction of the
// FLOP/s of the trace's fastest layer (the roofline's ridge, read off the trace itself).
inline constexpr double kComputeBoundFraction = 0.5;

// Per layer of `w` (forward order): kMatmulOpClass if it is compute-bound by the rule above,
// kMemoryOpClass if it is not or has no forward_flops. Empty if no layer has forward_flops > 0
// (a trace that cannot tell).
[[nodiscard]] std::vector<std::string> layer_op_classes(const workloads::Workload& w);

// `g` with an op class on every compute node that has none: layer_classes[node.layer] for a
// node of a layer, kMemoryOpClass for an optimizer node without a layer (an optimizer step
// streams parameters and states through memory). REQUIRES: layer_classes is empty or has one
// entry per layer of g.
[[nodiscard]] ExecutionGraph tag_op_classes(ExecutionGraph g,
                                            std::span<const std::string> layer_classes);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_WHATIF_OP_CLASSES_H_
