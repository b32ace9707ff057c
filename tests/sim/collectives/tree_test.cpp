#include "sim/collectives/tree.h"

#include <gtest/gtest.h>

#include "sim/collectives/schedule_builder.h"
#include "sim/collectives/schedule_cost.h"

namespace dtsim::sim {
namespace {

TEST(TreeAlgorithm, EveryEdgeCarriesTheMessageUpAndDownOnce) {
  // A tree all-reduce moves the whole message over each of the p-1 edges twice (reduce up,
  // broadcast down): 2(p-1)n bytes, whatever the chunking.
  for (int p : {2, 3, 4, 7}) {
    for (std::uint64_t chunk : {1ull << 30, 300ull, 7ull}) {
      const Schedule s = TreeAlgorithm({.chunk_bytes = chunk}).all_reduce(p, 1000, {});
      EXPECT_EQ(s.total_bytes(), 2u * (p - 1) * 1000) << "p=" << p << " chunk=" << chunk;
    }
  }
}

TEST(TreeAlgorithm, ChunkCountIsBytesOverChunkRoundedUp) {
  // 1000 bytes in chunks of 300: 4 chunks (300, 300, 300, 100 split evenly as 250 each).
  const Schedule s = TreeAlgorithm({.chunk_bytes = 300}).all_reduce(2, 1000, {});
  ASSERT_EQ(s.ops.size(), 8u);  // per chunk: one reduce (1->0) and one broadcast (0->1)
  for (const ScheduleOp& op : s.ops) {
    EXPECT_EQ(op.bytes, 250u);
  }
}

TEST(TreeAlgorithm, ParentsFollowNcclsInOrderBinaryTree) {
  // NCCL's published example (trees.cc, tree 0) for 14 nodes:
  // 0 -> 8 -> {4, 12}, 4 -> {2, 6}, 2 -> {1, 3}, 12 -> {10, 13}; odd nodes are leaves.
  const std::vector<std::pair<int, int>> child_parent{{8, 0}, {4, 8}, {12, 8},  {2, 4},  {6, 4},
                                                      {1, 2}, {3, 2}, {10, 12}, {13, 12}};
  for (const auto& [child, parent] : child_parent) {
    EXPECT_EQ(tree_parent(child, 14), parent) << "child " << child;
  }
  EXPECT_EQ(tree_parent(5, 14), 6);
  EXPECT_EQ(tree_parent(11, 14), 10);
}

TEST(TreeAlgorithm, ParentsWaitForAllChildrenAndTheRootBroadcastsReducedChunks) {
  // p = 4: tree 0 -> 2 -> {1, 3}. One chunk. Ops in order: reduce 1->2 and 3->2 (deepest
  // first), 2->0 after both; broadcast 0->2 after 2->0 reached the root, then 2->1 and 2->3.
  const Schedule s = TreeAlgorithm({.chunk_bytes = 1 << 20}).all_reduce(4, 100, {});
  ASSERT_EQ(s.ops.size(), 6u);
  auto edge = [&s](int i) {
    return std::make_pair(s.ops[i].src, s.ops[i].dst);
  };
  EXPECT_EQ(edge(0), std::make_pair(3, 2));
  EXPECT_EQ(edge(1), std::make_pair(1, 2));
  EXPECT_EQ(edge(2), std::make_pair(2, 0));
  EXPECT_EQ(s.ops[2].deps, (std::vector<int>{1, 0}));
  EXPECT_EQ(edge(3), std::make_pair(0, 2));
  EXPECT_EQ(s.ops[3].deps, (std::vector<int>{2}));
  EXPECT_EQ(edge(4), std::make_pair(2, 1));
  EXPECT_EQ(s.ops[4].deps, (std::vector<int>{3}));
  EXPECT_EQ(edge(5), std::make_pair(2, 3));
  // Rank 2 is done once it forwarded the broadcast to both children (which needed it received).
  EXPECT_EQ(s.exit_ops[2], (std::vector<int>{4, 5}));
  EXPECT_EQ(s.exit_ops[0], (std::vector<int>{3}));
}

TEST(CollapsedTree, OneTransferPerEdgeAndDirectionWithTheChunkedBytes) {
  // The chunked tree moves n up and n down every one of the p-1 edges (per tree, n/2 each for
  // the double tree); the collapsed one moves the same bytes in one transfer per edge and
  // direction, and ends with one wait that every rank exits after.
  const AlgorithmOptions fast{.collapse_pipelines = true, .chunk_bytes = 300};
  for (int p : {2, 3, 8, 13}) {
    const Schedule tree = TreeAlgorithm(fast).all_reduce(p, 1000, {});
    const Schedule chunked = TreeAlgorithm({.chunk_bytes = 300}).all_reduce(p, 1000, {});
    const Schedule dtree = DoubleTreeAlgorithm(fast).all_reduce(p, 1000, {});
    EXPECT_EQ(tree.total_bytes(), chunked.total_bytes()) << "p=" << p;
    EXPECT_EQ(dtree.total_bytes(), 2u * (p - 1) * 1000) << "p=" << p;
    for (const Schedule* s : {&tree, &dtree}) {
      int transfers = 0;
      for (const ScheduleOp& op : s->ops) {
        transfers += op.kind == ScheduleOp::Kind::kTransfer ? 1 : 0;
      }
      EXPECT_EQ(transfers, (s == &tree ? 2 : 4) * (p - 1)) << "p=" << p;
      const int tail = static_cast<int>(s->ops.size()) - 1;
      EXPECT_EQ(s->ops.back().kind, ScheduleOp::Kind::kWait);
      for (int r = 0; r < p; ++r) {
        EXPECT_EQ(s->exit_ops[r], std::vector<int>{tail}) << "p=" << p << " rank " << r;
      }
    }
  }
}

TEST(CollapsedTree, AlphaBetaTimeOfTwoRanksIsThePipelines) {
  // p = 2 on a star (B per link direction, alpha per route), c chunks of n/c: the chunked
  // pipeline takes (c + 1)(alpha + (n/c)/B) (tree.h). The collapsed schedule's critical path:
  // alpha + n/B for the transfers, then the wait.
  TopologyHints star{.route_latency_sec = [](int, int) { return 2e-6; },
                     .injection_bytes_per_sec = 25e9};
  const double n = 100e6;
  for (int c : {1, 2, 8, 200}) {
    const Schedule s = TreeAlgorithm({.collapse_pipelines = true, .chunk_bytes = 100'000'000u / c})
                           .all_reduce(2, 100'000'000, star);
    const double expected = (c + 1) * (2e-6 + n / c / 25e9);
    EXPECT_NEAR(critical_path_sec(s, star), expected, 1e-9 * expected) << "c=" << c;
  }
}

TEST(CollapsedTree, EmptyMessageWaitsForEntryThenPaysTheHops) {
  // Zero bytes: the chunked tree pays its route latencies up and down one after another; the
  // collapsed one must too, after the ranks entered (here 20 us of entry latency), on the
  // alpha-beta critical path.
  TopologyHints star{.route_latency_sec = [](int, int) { return 2e-6; },
                     .injection_bytes_per_sec = 25e9};
  for (int p : {2, 7, 16}) {
    const Schedule fast = with_entry_latency(
        TreeAlgorithm({.collapse_pipelines = true}).all_reduce(p, 0, star), 20e-6);
    const Schedule chunked = with_entry_latency(TreeAlgorithm({}).all_reduce(p, 0, star), 20e-6);
    EXPECT_NEAR(critical_path_sec(fast, star), critical_path_sec(chunked, star), 1e-12)
        << "p=" << p;
    EXPECT_GT(critical_path_sec(fast, star), 20e-6);
  }
}

TEST(TreeAlgorithm, SingleRankHasNothingToDo) {
  EXPECT_TRUE(TreeAlgorithm({.chunk_bytes = 1024}).all_reduce(1, 1000, {}).ops.empty());
}

}  // namespace
}  // namespace dtsim::sim
