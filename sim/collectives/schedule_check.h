// The correctness checker: executes a schedule symbolically, byte range by byte range, and says
// whether it performs the collective it claims. A wrong schedule (a user's algorithm file, or a
// bug in a built-in algorithm) is refused before anything is simulated.
//
// What each rank holds is tracked as contributions: a byte of a buffer holds the sum of some
// ranks' values of one element of the operation's vector. A copy replaces what the receiver
// holds there; a reduce adds to it, and must add the same element (offsets that agree) and
// ranks not already counted. The buffers (Buffer in schedule.h) start and end as follows, for
// p ranks, `bytes` as CollectiveRequest counts it, and rank r's block [off_r, off_r + len_r)
// split as piece_offset / piece_bytes do (p blocks):
//   all-reduce      every rank starts with its own vector in input; ends with the sum of all p
//                   in output.
//   reduce          same start; the root ends with the sum.
//   reduce-scatter  same start; rank r ends with the sum of block r (in place: at its offset in
//                   the input; else output[0, len_r)).
//   all-gather      rank r starts with block r (in place: at its offset in the input; else
//                   input[0, len_r)); every rank ends with every block, each from its owner.
//   broadcast       the root starts with the vector; every rank ends with it.
//   all-to-all      rank s starts with its send vector in input, and its own block s already
//                   in output slot s (a local copy); rank d ends with s's block d in output
//                   slot s, [s len_d, (s + 1) len_d), for every s (never in place).
//   send-recv       the root starts with the vector; rank root + 1 ends with it.
// In place, the output is the input buffer. Scratch starts empty and is unbounded.
#ifndef DTSIM_SIM_COLLECTIVES_SCHEDULE_CHECK_H_
#define DTSIM_SIM_COLLECTIVES_SCHEDULE_CHECK_H_

#include <cstdint>
#include <optional>
#include <string>

#include "sim/collectives/collective_algorithm.h"

namespace dtsim::sim {

struct ScheduleFault {
  int op = -1;  // the operation where it goes wrong; -1: the contents after the last operation
  int rank = 0;
  Buffer buffer = Buffer::kInput;
  std::uint64_t offset = 0;  // the first byte concerned
  std::string what;          // e.g. "receives rank 2's contribution twice"
};

// "input", "output", "scratch".
[[nodiscard]] const char* buffer_name(Buffer buffer);

// The first fault of `schedule` as an implementation of `request`, executing its operations in
// order (a topological order: deps point backwards); nullopt if it is correct. Every transfer
// must say what it moves (ScheduleOp::data).
[[nodiscard]] std::optional<ScheduleFault> check_schedule(const Schedule& schedule,
                                                          const CollectiveRequest& request);

// "operation 12: rank 3, input byte 4096: receives rank 2's contribution twice".
[[nodiscard]] std::string describe(const ScheduleFault& fault);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_COLLECTIVES_SCHEDULE_CHECK_H_
