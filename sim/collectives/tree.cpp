#include "sim/collectives/tree.h"

#include <algorithm>

namespace dtsim::sim {

namespace {

int parent(int v) {
  return (v - 1) / 2;
}

}  // namespace

Schedule TreeAlgorithm::all_reduce(int ranks, std::uint64_t bytes,
                                   const TopologyHints& /*hints*/) const {
  const int p = ranks;
  Schedule schedule{.ranks = p, .exit_ops = std::vector<std::vector<int>>(p)};
  if (p <= 1) {
    return schedule;
  }
  const std::uint64_t chunks =
      std::max<std::uint64_t>(1, (bytes + chunk_bytes_ - 1) / chunk_bytes_);
  auto children = [p](int v) {
    std::vector<int> out;
    for (int c = 2 * v + 1; c <= 2 * v + 2 && c < p; ++c) {
      out.push_back(c);
    }
    return out;
  };
  // up[v] / down[v]: index of the latest reduce (v -> parent) and broadcast (parent -> v) ops.
  std::vector<int> up(p, -1);
  std::vector<int> down(p, -1);
  for (std::uint64_t k = 0; k < chunks; ++k) {
    const std::uint64_t size = piece_bytes(bytes, chunks, k);
    for (int v = p - 1; v >= 1; --v) {  // children before parents
      ScheduleOp op{.src = v, .dst = parent(v), .bytes = size};
      for (int c : children(v)) {
        op.deps.push_back(up[c]);
      }
      if (k == 0) {
        op.entry_ranks = {v, parent(v)};
      }
      up[v] = static_cast<int>(schedule.ops.size());
      schedule.ops.push_back(std::move(op));
    }
    for (int v = 1; v < p; ++v) {  // parents before children
      ScheduleOp op{.src = parent(v), .dst = v, .bytes = size};
      if (parent(v) == 0) {
        for (int c : children(0)) {
          op.deps.push_back(up[c]);  // chunk k fully reduced at the root
        }
      } else {
        op.deps.push_back(down[parent(v)]);
      }
      down[v] = static_cast<int>(schedule.ops.size());
      schedule.ops.push_back(std::move(op));
    }
  }
  for (int v = 0; v < p; ++v) {
    if (v != 0) {
      schedule.exit_ops[v].push_back(down[v]);
    }
    for (int c : children(v)) {
      schedule.exit_ops[v].push_back(down[c]);
    }
  }
  return schedule;
}

}  // namespace dtsim::sim
