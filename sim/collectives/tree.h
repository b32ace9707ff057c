// Tree algorithms, pipelined in chunks, on NCCL's trees over ranks.
//
// NCCL's in-order binary tree ("tree 0"): for position r > 0 with lowest set bit b,
// parent(r) = (r ^ b) | 2b, or r ^ b if that is >= p; position 0 is the root, with a single
// child. Subtrees are contiguous ranges, so on a fat-tree with linear placement most tree edges
// stay under one leaf switch. Example, p = 14: 0 -> 8 -> {4, 12}, 4 -> {2, 6}, 2 -> {1, 3},
// 12 -> {10, 13}.
//  - tree (all-reduce): reduce to the root, then broadcast; a chunk moves up once all of a
//    node's children delivered it and the root broadcasts a chunk as soon as it is reduced, so
//    the two overlap (as NCCL's tree does). With p = 2 and c chunks, uncontended:
//    (c + 1) (alpha + (bytes/c)/B).
//  - tree (broadcast / reduce): the tree rotated so that position 0 is the root rank.
//  - double binary tree (all-reduce): NCCL's two complementary trees, each carrying half of the
//    data; tree 1 is tree 0 mirrored (rank p-1-r) for even p, shifted by one for odd p, so
//    that ranks that are leaves in one tree are interior in the other.
// With options.collapse_pipelines (--replay fast), tree and double-tree all-reduces are one
// transfer per tree edge and direction carrying all the tree's bytes, all started on entry, then
// one wait for the pipeline's fill (the first chunk up to the root and back down the deepest
// path, each hop paying its latency and its parent's children's chunks over its link), after
// which every rank exits together, so data-parallel ranks fold and repeats memoize. Equal to the
// chunked replay on an idle star for two ranks (any chunk count) and for one chunk when every
// node's children have equally deep subtrees (p = 2, 3, 4, 5, 8, 16; tests/sim); otherwise an
// estimate of it: one chunk on 6 and 13 ranks +10 % and +7 %; on a 16-host fat-tree a 100 MB
// all-reduce -1.7 % (tree) and -6.3 % (double tree), a 1 MB tree (2 chunks) on 3 ranks +18 %;
// data-parallel iterations within 0.1 % there and within 4 % on 8-1024 ranks (BERT-large up to
// 256; experiments/scaling/README.md). Under contention flows share links for their whole
// length rather than chunk by chunk. `--algorithm auto` weighs the schedule it would replay, so
// with --replay fast it ranks trees by their collapsed schedule (whose estimate is close to the
// simulated time; the chunked schedule's critical path underestimates it).
#ifndef DTSIM_SIM_COLLECTIVES_TREE_H_
#define DTSIM_SIM_COLLECTIVES_TREE_H_

#include <cstdint>

#include "sim/collectives/collective_algorithm.h"

namespace dtsim::sim {

// The parent position of position r > 0 in NCCL's in-order binary tree over p positions.
[[nodiscard]] int tree_parent(int r, int p);

class TreeAlgorithm final : public CollectiveAlgorithm {
 public:
  // REQUIRES: options.chunk_bytes >= 1. Messages are cut into ceil(bytes / chunk) chunks.
  explicit TreeAlgorithm(AlgorithmOptions options) : options_(options) {}

  [[nodiscard]] std::string_view name() const override { return "tree"; }
  [[nodiscard]] std::string unsupported(const CollectiveRequest& request,
                                        const TopologyHints& hints) const override;
  [[nodiscard]] Schedule build(const CollectiveRequest& request,
                               const TopologyHints& hints) const override;

 private:
  AlgorithmOptions options_;
};

class DoubleTreeAlgorithm final : public CollectiveAlgorithm {
 public:
  explicit DoubleTreeAlgorithm(AlgorithmOptions options) : options_(options) {}

  [[nodiscard]] std::string_view name() const override { return "double-tree"; }
  [[nodiscard]] std::string unsupported(const CollectiveRequest& request,
                                        const TopologyHints& hints) const override;
  [[nodiscard]] Schedule build(const CollectiveRequest& request,
                               const TopologyHints& hints) const override;

 private:
  AlgorithmOptions options_;
};

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_COLLECTIVES_TREE_H_
