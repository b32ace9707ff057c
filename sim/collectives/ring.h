// Ring all-reduce: reduce-scatter then all-gather around ranks 0 -> 1 -> ... -> p-1 -> 0.
// 2(p-1) steps; in each, every rank sends one of p chunks (bytes/p) to its successor.
// Uncontended time: 2(p-1) * (alpha_max + bytes/(p*B)), alpha_max = latency of the slowest edge.
#ifndef DTSIM_SIM_COLLECTIVES_RING_H_
#define DTSIM_SIM_COLLECTIVES_RING_H_

#include "sim/collectives/collective_algorithm.h"

namespace dtsim::sim {

class RingAlgorithm final : public CollectiveAlgorithm {
 public:
  // collapse: one transfer per ring edge carrying all 2(p-1) chunks after a join of all ranks,
  // then a wait of (2(p-1)-1) * alpha_max for the remaining per-step latencies. Equals the
  // step-level schedule when edges are uncontended and ranks enter together; ranks entering at
  // different times are joined first (as the step-level ring's first steps also wait).
  explicit RingAlgorithm(bool collapse) : collapse_(collapse) {}

  [[nodiscard]] std::string_view name() const override { return "ring"; }
  [[nodiscard]] Schedule all_reduce(int ranks, std::uint64_t bytes,
                                    const TopologyHints& hints) const override;

 private:
  bool collapse_;
};

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_COLLECTIVES_RING_H_
