#include "sim/whatif/op_classes.h"

#include <algorithm>

#include "sim/whatif/primitives.h"

namespace dtsim::sim {

std::vector<std::string> layer_op_classes(const workloads::Workload& w) {
  double fastest_flops_per_sec = 0;
  for (const workloads::Layer& l : w.layers) {
    if (l.forward_flops.value_or(0) > 0 && l.forward_sec > 0) {
      fastest_flops_per_sec = std::max(fastest_flops_per_sec, *l.forward_flops / l.forward_sec);
    }
  }
  if (fastest_flops_per_sec == 0) {
    return {};
  }
  std::vector<std::string> out;
  for (const workloads::Layer& l : w.layers) {
    const double flops = l.forward_flops.value_or(0);
    const bool bound = flops > 0 && l.forward_sec > 0 &&
                       flops / l.forward_sec >= kComputeBoundFraction * fastest_flops_per_sec;
    out.emplace_back(bound ? kMatmulOpClass : kMemoryOpClass);
  }
  return out;
}

ExecutionGraph tag_op_classes(ExecutionGraph g, std::span<const std::string> layer_classes) {
  for (Program& p : g.programs) {
    for (Node& n : p.nodes) {
      if (n.kind != NodeKind::kCompute || n.op_class >= 0) {
        continue;
      }
      if (n.layer >= 0 && static_cast<std::size_t>(n.layer) < layer_classes.size()) {
        n.op_class =
            ExecutionGraph::intern(g.op_classes, layer_classes[static_cast<std::size_t>(n.layer)]);
      } else if (n.layer < 0 && n.phase == Phase::kOptimizer) {
        n.op_class = ExecutionGraph::intern(g.op_classes, kMemoryOpClass);
      }
    }
  }
  require_valid(g, "tag_op_classes");
  return g;
}

}  // namespace dtsim::sim
