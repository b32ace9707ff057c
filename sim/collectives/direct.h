// Direct algorithms: every rank sends to every rank it must reach, all at once; the network
// shares the links. On a star with link bandwidth B, each of a rank's p-1 concurrent transfers
// gets B/(p-1):
//  - all-reduce = direct reduce-scatter (send the 1/p chunk each peer owns) then direct
//    all-gather: 2 (alpha + (p-1)/p bytes/B);
//  - reduce-scatter, all-gather, all-to-all: alpha + (p-1)/p bytes/B;
//  - broadcast (root to all), reduce (all to root): alpha + (p-1) bytes/B;
//  - send-recv (root to root+1): alpha + bytes/B.
#ifndef DTSIM_SIM_COLLECTIVES_DIRECT_H_
#define DTSIM_SIM_COLLECTIVES_DIRECT_H_

#include "sim/collectives/collective_algorithm.h"

namespace dtsim::sim {

class DirectAlgorithm final : public CollectiveAlgorithm {
 public:
  [[nodiscard]] std::string_view name() const override { return "direct"; }
  [[nodiscard]] std::string unsupported(const CollectiveRequest& request,
                                        const TopologyHints& hints) const override;
  [[nodiscard]] Schedule build(const CollectiveRequest& request,
                               const TopologyHints& hints) const override;
};

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_COLLECTIVES_DIRECT_H_
