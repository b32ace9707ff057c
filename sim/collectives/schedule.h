// A collective operation as a small dependency graph of point-to-point transfers: the value that
// collective algorithms return and the replay engine executes (style guide G4).
#ifndef DTSIM_SIM_COLLECTIVES_SCHEDULE_H_
#define DTSIM_SIM_COLLECTIVES_SCHEDULE_H_

#include <cstdint>
#include <optional>
#include <vector>

namespace dtsim::sim {

// The buffers a rank's part of a collective uses: what it starts with, what it ends with, and
// temporary space. An in-place algorithm names only kInput (schedule_check.h says what each
// operation's buffers hold before and after).
enum class Buffer : std::uint8_t { kInput, kOutput, kScratch };

// What a transfer carries, for the correctness checker (schedule_check.h) and the algorithm file
// writer (algorithm_file.h): the bytes [src_offset, src_offset + bytes) of the sender's
// `src_buffer` arrive at [dst_offset, dst_offset + bytes) of the receiver's `dst_buffer`, where
// they replace (copy) or are added to (reduce) what it holds.
struct DataMove {
  std::uint64_t src_offset = 0;
  std::uint64_t dst_offset = 0;
  Buffer src_buffer = Buffer::kInput;
  Buffer dst_buffer = Buffer::kInput;
  bool reduce = false;

  bool operator==(const DataMove&) const = default;
};

// One operation of a schedule.
//  - kTransfer: `bytes` from rank `src` to rank `dst` on connection `channel`. Transfers on the
//    same (src, dst, channel) run one after another, in schedule order (a FIFO connection, as
//    one of NCCL's channels); different channels between the same ranks are independent.
//  - kWait: a pure delay of `wait_sec` that uses no resource (latency terms of collapsed steps;
//    0 for a join point). A wait with `data` is a local copy or reduction on rank `src` (= dst)
//    between its own buffers (an imported MSCCL program's receive step), in no time.
// An operation starts once all `deps` (indices of earlier operations) have finished and every
// rank in `entry_ranks` has entered the collective.
struct ScheduleOp {
  enum class Kind { kTransfer, kWait };
  Kind kind = Kind::kTransfer;
  int src = 0;
  int dst = 0;
  int channel = 0;
  std::uint64_t bytes = 0;
  double wait_sec = 0;
  std::vector<int> deps;
  std::vector<int> entry_ranks;
  // Set by step-level algorithms and algorithm files; unset on a collapsed transfer (one that
  // stands for several steps) and on waits.
  std::optional<DataMove> data;

  bool operator==(const ScheduleOp&) const = default;
};

struct Schedule {
  int ranks = 0;
  std::vector<ScheduleOp> ops;  // in a topological order: deps point backwards
  // exit_ops[r]: operations after which rank r is done with the collective (its stream is free).
  // Empty for a rank that takes part in no operation (e.g. a single rank).
  std::vector<std::vector<int>> exit_ops;
  // Whether the output is the input buffer (every op names kInput), as for NCCL's in-place calls.
  bool in_place = true;

  // Sum of the bytes of all transfers.
  [[nodiscard]] std::uint64_t total_bytes() const {
    std::uint64_t total = 0;
    for (const ScheduleOp& op : ops) {
      total += op.bytes;
    }
    return total;
  }
};

// Splits `bytes` into `parts` near-equal whole pieces; the first `bytes % parts` are one larger.
// REQUIRES: parts >= 1.
[[nodiscard]] inline std::uint64_t piece_bytes(std::uint64_t bytes, std::uint64_t parts,
                                               std::uint64_t index) {
  return bytes / parts + (index < bytes % parts ? 1 : 0);
}

// Offset of piece `index` when `bytes` is split as piece_bytes does (index may equal parts).
[[nodiscard]] inline std::uint64_t piece_offset(std::uint64_t bytes, std::uint64_t parts,
                                                std::uint64_t index) {
  return index * (bytes / parts) + (index < bytes % parts ? index : bytes % parts);
}

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_COLLECTIVES_SCHEDULE_H_
