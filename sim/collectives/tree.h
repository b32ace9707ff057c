// Binary-tree all-reduce: reduce to the root, then broadcast, both pipelined in chunks.
// The tree is NCCL's in-order binary tree ("tree 0" of its double binary tree) over ranks:
// for r > 0 with lowest set bit b, parent(r) = (r ^ b) | 2b, or r ^ b if that is >= p; rank 0 is
// the root with a single child. Subtrees are contiguous rank ranges, so on a fat-tree with linear
// placement most tree edges stay under one leaf switch. Example, p = 14:
// 0 -> 8 -> {4, 12}, 4 -> {2, 6}, 2 -> {1, 3}, 12 -> {10, 13}.
// A chunk moves up once all of a node's children delivered it; the root broadcasts a chunk as
// soon as it is reduced, so reduction and broadcast overlap (as NCCL's tree does).
// With p = 2 and c chunks, uncontended: (c+1) * (alpha + (bytes/c)/B).
#ifndef DTSIM_SIM_COLLECTIVES_TREE_H_
#define DTSIM_SIM_COLLECTIVES_TREE_H_

#include <cstdint>

#include "sim/collectives/collective_algorithm.h"

namespace dtsim::sim {

// The parent of rank r > 0 in NCCL's in-order binary tree over p ranks.
[[nodiscard]] int tree_parent(int r, int p);

class TreeAlgorithm final : public CollectiveAlgorithm {
 public:
  // REQUIRES: chunk_bytes >= 1. The message is cut into ceil(bytes / chunk_bytes) chunks.
  explicit TreeAlgorithm(std::uint64_t chunk_bytes) : chunk_bytes_(chunk_bytes) {}

  [[nodiscard]] std::string_view name() const override { return "tree"; }
  [[nodiscard]] Schedule all_reduce(int ranks, std::uint64_t bytes,
                                    const TopologyHints& hints) const override;

 private:
  std::uint64_t chunk_bytes_;
};

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_COLLECTIVES_TREE_H_
