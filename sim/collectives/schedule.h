// A collective operation as a small dependency graph of point-to-point transfers: the value that
// collective algorithms return and the replay engine executes (style guide G4).
#ifndef DTSIM_SIM_COLLECTIVES_SCHEDULE_H_
#define DTSIM_SIM_COLLECTIVES_SCHEDULE_H_

#include <cstdint>
#include <vector>

namespace dtsim::sim {

// One operation of a schedule.
//  - kTransfer: `bytes` from rank `src` to rank `dst` on connection `channel`. Transfers on the
//    same (src, dst, channel) run one after another, in schedule order (a FIFO connection, as
//    one of NCCL's channels); different channels between the same ranks are independent.
//  - kWait: a pure delay of `wait_sec` that uses no resource (latency terms of collapsed steps;
//    0 for a join point).
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

  bool operator==(const ScheduleOp&) const = default;
};

struct Schedule {
  int ranks = 0;
  std::vector<ScheduleOp> ops;  // in a topological order: deps point backwards
  // exit_ops[r]: operations after which rank r is done with the collective (its stream is free).
  // Empty for a rank that takes part in no operation (e.g. a single rank).
  std::vector<std::vector<int>> exit_ops;

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
