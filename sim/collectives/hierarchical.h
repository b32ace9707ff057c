// Multi-dimensional ring all-reduces, as ring phases (ring_steps.h) over groups of ranks.
//  - hierarchical (g = hints.ranks_per_node ranks per node, m = p/g nodes): reduce-scatter
//    inside each node; all-reduce of each rank's 1/g across nodes, between the ranks with the
//    same local index; all-gather inside each node. A node's ranks are those the placement puts
//    on it (hints.node_of) when every node holds g of them, else g consecutive ranks. Uncontended:
//    2(g-1) (alpha + bytes/(gB)) + 2(m-1) (alpha + bytes/(pB)).
//  - torus-2d (hints.grid = {X, Y}, rank = x + X y): reduce-scatter along x, all-reduce along y
//    of each rank's 1/X, all-gather along x. Uncontended:
//    2(X-1) (alpha + bytes/(XB)) + 2(Y-1) (alpha + bytes/(XYB)).
#ifndef DTSIM_SIM_COLLECTIVES_HIERARCHICAL_H_
#define DTSIM_SIM_COLLECTIVES_HIERARCHICAL_H_

#include "sim/collectives/collective_algorithm.h"

namespace dtsim::sim {

class HierarchicalAlgorithm final : public CollectiveAlgorithm {
 public:
  [[nodiscard]] std::string_view name() const override { return "hierarchical"; }
  [[nodiscard]] std::string unsupported(const CollectiveRequest& request,
                                        const TopologyHints& hints) const override;
  [[nodiscard]] Schedule build(const CollectiveRequest& request,
                               const TopologyHints& hints) const override;
};

class Torus2dAlgorithm final : public CollectiveAlgorithm {
 public:
  [[nodiscard]] std::string_view name() const override { return "torus-2d"; }
  [[nodiscard]] std::string unsupported(const CollectiveRequest& request,
                                        const TopologyHints& hints) const override;
  [[nodiscard]] Schedule build(const CollectiveRequest& request,
                               const TopologyHints& hints) const override;
};

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_COLLECTIVES_HIERARCHICAL_H_
