// Ring steps as building blocks: the ring algorithm, and the phases of the hierarchical and 2-D
// torus all-reduces, are sequences of these steps over a list of member ranks.
#ifndef DTSIM_SIM_COLLECTIVES_RING_STEPS_H_
#define DTSIM_SIM_COLLECTIVES_RING_STEPS_H_

#include <cstdint>
#include <vector>

#include "sim/collectives/collective_algorithm.h"
#include "sim/collectives/schedule_builder.h"

namespace dtsim::sim {

// A range of the 2(q-1) steps of a ring all-reduce over q members: reduce-scatter is steps
// [0, q-1), all-gather [q-1, 2(q-1)). At step s, member i sends chunk (i - s - 1) mod q to member
// i+1 (which adds it to its own during reduce-scatter, and keeps it during all-gather); after
// reduce-scatter member i holds the reduced chunk i, which all-gather's first step sends on.
struct RingSteps {
  int first = 0;
  int count = 0;
};

// The steps `op` takes on a ring of q members (all-reduce, reduce-scatter or all-gather).
[[nodiscard]] RingSteps ring_steps_of(CollectiveOp op, int q);

// The chunk member i sends at step s of a ring of q members.
[[nodiscard]] inline int ring_chunk_sent(int i, int s, int q) {
  return ((i - s - 1) % q + q) % q;
}

// Adds `steps` of a ring over `members` (ring order) moving a vector of `bytes` cut into
// |members| chunks, which lies at `offset` of every member's (input) buffer. Member i starts
// once before[i] finished (before may be empty: no constraint). Returns, per member, the ops
// after which it is done.
std::vector<std::vector<int>> add_ring_steps(ScheduleBuilder& b, const std::vector<int>& members,
                                             std::uint64_t bytes, RingSteps steps,
                                             const std::vector<std::vector<int>>& before,
                                             std::uint64_t offset = 0);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_COLLECTIVES_RING_STEPS_H_
