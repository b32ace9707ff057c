#include "sim/collectives/tree.h"

#include <algorithm>
#include <numeric>

namespace dtsim::sim {

int tree_parent(int r, int p) {
  const int b = r & -r;  // lowest set bit
  const int up = (r ^ b) | (b << 1);
  return up < p ? up : (r ^ b);
}

Schedule TreeAlgorithm::all_reduce(int ranks, std::uint64_t bytes,
                                   const TopologyHints& /*hints*/) const {
  const int p = ranks;
  Schedule schedule{.ranks = p, .exit_ops = std::vector<std::vector<int>>(p)};
  if (p <= 1) {
    return schedule;
  }
  std::vector<std::vector<int>> children(static_cast<std::size_t>(p));
  std::vector<int> depth(static_cast<std::size_t>(p), 0);
  for (int v = 1; v < p; ++v) {
    children[static_cast<std::size_t>(tree_parent(v, p))].push_back(v);
    for (int u = v; u != 0; u = tree_parent(u, p)) {
      ++depth[static_cast<std::size_t>(v)];
    }
  }
  // Reduce deepest nodes first and broadcast shallowest first: a topological order of the ops.
  std::vector<int> by_depth(static_cast<std::size_t>(p));
  std::iota(by_depth.begin(), by_depth.end(), 0);
  std::stable_sort(by_depth.begin(), by_depth.end(), [&depth](int a, int b) {
    return depth[static_cast<std::size_t>(a)] < depth[static_cast<std::size_t>(b)];
  });

  const std::uint64_t chunks =
      std::max<std::uint64_t>(1, (bytes + chunk_bytes_ - 1) / chunk_bytes_);
  // up[v] / down[v]: index of the latest reduce (v -> parent) and broadcast (parent -> v) ops.
  std::vector<int> up(static_cast<std::size_t>(p), -1);
  std::vector<int> down(static_cast<std::size_t>(p), -1);
  for (std::uint64_t k = 0; k < chunks; ++k) {
    const std::uint64_t size = piece_bytes(bytes, chunks, k);
    for (auto it = by_depth.rbegin(); it != by_depth.rend() && *it != 0; ++it) {
      const int v = *it;
      ScheduleOp op{.src = v, .dst = tree_parent(v, p), .bytes = size};
      for (int c : children[static_cast<std::size_t>(v)]) {
        op.deps.push_back(up[static_cast<std::size_t>(c)]);
      }
      if (k == 0) {
        op.entry_ranks = {v, op.dst};
      }
      up[static_cast<std::size_t>(v)] = static_cast<int>(schedule.ops.size());
      schedule.ops.push_back(std::move(op));
    }
    for (int v : by_depth) {
      if (v == 0) {
        continue;
      }
      const int parent = tree_parent(v, p);
      ScheduleOp op{.src = parent, .dst = v, .bytes = size};
      if (parent == 0) {
        for (int c : children[0]) {
          op.deps.push_back(up[static_cast<std::size_t>(c)]);  // chunk k fully reduced at the root
        }
      } else {
        op.deps.push_back(down[static_cast<std::size_t>(parent)]);
      }
      down[static_cast<std::size_t>(v)] = static_cast<int>(schedule.ops.size());
      schedule.ops.push_back(std::move(op));
    }
  }
  for (int v = 0; v < p; ++v) {
    if (v != 0) {
      schedule.exit_ops[static_cast<std::size_t>(v)].push_back(down[static_cast<std::size_t>(v)]);
    }
    for (int c : children[static_cast<std::size_t>(v)]) {
      schedule.exit_ops[static_cast<std::size_t>(v)].push_back(down[static_cast<std::size_t>(c)]);
    }
  }
  return schedule;
}

}  // namespace dtsim::sim
