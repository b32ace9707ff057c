#include "sim/collectives/ring.h"

#include <algorithm>

namespace dtsim::sim {

namespace {

int mod(int a, int p) {
  return ((a % p) + p) % p;
}

// The chunk rank r sends at step s of 2(p-1): reduce-scatter steps forward chunk r-s, all-gather
// steps forward chunk r+1-s (the one completed, then received, in the previous step).
int chunk_sent(int r, int s, int p) {
  return s < p - 1 ? mod(r - s, p) : mod(r + 1 - s, p);
}

Schedule step_level(int p, std::uint64_t bytes) {
  Schedule schedule{.ranks = p, .exit_ops = std::vector<std::vector<int>>(p)};
  const int steps = 2 * (p - 1);
  auto op_index = [p](int step, int rank) {
    return step * p + rank;
  };
  for (int s = 0; s < steps; ++s) {
    for (int r = 0; r < p; ++r) {
      ScheduleOp op{
          .src = r,
          .dst = mod(r + 1, p),
          .bytes = piece_bytes(bytes, p, static_cast<std::uint64_t>(chunk_sent(r, s, p)))};
      if (s == 0) {
        op.entry_ranks = {r, mod(r + 1, p)};
      } else {
        op.deps = {op_index(s - 1, mod(r - 1, p))};  // the chunk r forwards arrived
      }
      schedule.ops.push_back(std::move(op));
    }
  }
  for (int r = 0; r < p; ++r) {
    schedule.exit_ops[r] = {op_index(steps - 1, r), op_index(steps - 1, mod(r - 1, p))};
  }
  return schedule;
}

Schedule collapsed(int p, std::uint64_t bytes, const TopologyHints& hints) {
  Schedule schedule{.ranks = p, .exit_ops = std::vector<std::vector<int>>(p)};
  const int steps = 2 * (p - 1);
  ScheduleOp join{.kind = ScheduleOp::Kind::kWait};
  for (int r = 0; r < p; ++r) {
    join.entry_ranks.push_back(r);
  }
  schedule.ops.push_back(std::move(join));
  double alpha_max_sec = 0;
  ScheduleOp tail{.kind = ScheduleOp::Kind::kWait};
  for (int r = 0; r < p; ++r) {
    std::uint64_t edge_bytes = 0;
    for (int s = 0; s < steps; ++s) {
      edge_bytes += piece_bytes(bytes, p, static_cast<std::uint64_t>(chunk_sent(r, s, p)));
    }
    alpha_max_sec = std::max(alpha_max_sec, hints.latency_sec(r, mod(r + 1, p)));
    tail.deps.push_back(static_cast<int>(schedule.ops.size()));
    schedule.ops.push_back({.src = r, .dst = mod(r + 1, p), .bytes = edge_bytes, .deps = {0}});
  }
  // The aggregated transfer paid one latency; a step-level ring pays one per step, and each step
  // waits for its slowest edge.
  tail.wait_sec = (steps - 1) * alpha_max_sec;
  const int tail_index = static_cast<int>(schedule.ops.size());
  schedule.ops.push_back(std::move(tail));
  for (int r = 0; r < p; ++r) {
    schedule.exit_ops[r] = {tail_index};
  }
  return schedule;
}

}  // namespace

Schedule RingAlgorithm::all_reduce(int ranks, std::uint64_t bytes,
                                   const TopologyHints& hints) const {
  if (ranks <= 1) {
    return Schedule{.ranks = ranks, .exit_ops = std::vector<std::vector<int>>(ranks)};
  }
  return collapse_ ? collapsed(ranks, bytes, hints) : step_level(ranks, bytes);
}

}  // namespace dtsim::sim
