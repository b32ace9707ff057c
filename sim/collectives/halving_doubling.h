// Butterfly algorithms (MPICH's), for any number of ranks p. With P = 2^floor(log2 p) and
// r = p - P, ranks 0..2r-1 first fold: each even rank 2i sends its whole vector to 2i+1, which
// takes part for both; the P participants run the power-of-two algorithm; then each odd rank
// 2i+1 sends the result back to 2i. Folding costs 2 (alpha + bytes/B) when p is not a power of 2.
//  - halving-doubling (Rabenseifner) all-reduce: reduce-scatter by recursive halving (step s
//    exchanges bytes / 2^(s+1) with the partner at distance 2^s, nearest first, as MPICH), then
//    all-gather by recursive doubling in the reverse order. Every exchange waits until both
//    partners finished their previous one (MPI_Sendrecv). Power of two:
//    2 log2(P) alpha + 2 (P-1)/P bytes/B.
//    Also reduce-scatter and all-gather alone, for powers of two only.
//  - recursive-doubling all-reduce: log2(P) steps exchanging the whole vector with the partner
//    at distance 2^s. Power of two: log2(P) (alpha + bytes/B). Best for small messages.
//    Also all-gather (as halving-doubling's second half), for powers of two only.
#ifndef DTSIM_SIM_COLLECTIVES_HALVING_DOUBLING_H_
#define DTSIM_SIM_COLLECTIVES_HALVING_DOUBLING_H_

#include "sim/collectives/collective_algorithm.h"

namespace dtsim::sim {

class HalvingDoublingAlgorithm final : public CollectiveAlgorithm {
 public:
  [[nodiscard]] std::string_view name() const override { return "halving-doubling"; }
  [[nodiscard]] std::string unsupported(const CollectiveRequest& request,
                                        const TopologyHints& hints) const override;
  [[nodiscard]] Schedule build(const CollectiveRequest& request,
                               const TopologyHints& hints) const override;
};

class RecursiveDoublingAlgorithm final : public CollectiveAlgorithm {
 public:
  [[nodiscard]] std::string_view name() const override { return "recursive-doubling"; }
  [[nodiscard]] std::string unsupported(const CollectiveRequest& request,
                                        const TopologyHints& hints) const override;
  [[nodiscard]] Schedule build(const CollectiveRequest& request,
                               const TopologyHints& hints) const override;
};

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_COLLECTIVES_HALVING_DOUBLING_H_
