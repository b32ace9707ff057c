// Ring algorithms over ranks 0 -> 1 -> ... -> p-1 -> 0.
//  - all-reduce: reduce-scatter then all-gather, 2(p-1) steps; in each, every rank sends one of
//    p chunks (bytes/p) to its successor. Uncontended: 2(p-1) (alpha_max + bytes/(pB)), alpha_max
//    the latency of the slowest edge (every step waits for it).
//  - reduce-scatter, all-gather: one half of that, (p-1) (alpha_max + bytes/(pB)).
//  - broadcast, reduce: a chain from (to) the root, pipelined in c chunks:
//    (c + p - 2) (alpha + (bytes/c)/B).
#ifndef DTSIM_SIM_COLLECTIVES_RING_H_
#define DTSIM_SIM_COLLECTIVES_RING_H_

#include "sim/collectives/collective_algorithm.h"

namespace dtsim::sim {

class RingAlgorithm final : public CollectiveAlgorithm {
 public:
  // options.collapse: all-reduce, reduce-scatter and all-gather send one transfer per ring edge
  // carrying all its steps' chunks after a join of all ranks, then wait (steps-1) * alpha_max for
  // the remaining per-step latencies. Equals the step-level schedule when edges are uncontended
  // and ranks enter together; ranks entering at different times are joined first (as the
  // step-level ring's first steps also wait for both ends).
  explicit RingAlgorithm(AlgorithmOptions options) : options_(options) {}

  [[nodiscard]] std::string_view name() const override { return "ring"; }
  [[nodiscard]] std::string unsupported(const CollectiveRequest& request,
                                        const TopologyHints& hints) const override;
  [[nodiscard]] Schedule build(const CollectiveRequest& request,
                               const TopologyHints& hints) const override;

 private:
  AlgorithmOptions options_;
};

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_COLLECTIVES_RING_H_
