#include "sim/collectives/tree.h"

#include <gtest/gtest.h>

namespace dtsim::sim {
namespace {

TEST(TreeAlgorithm, EveryEdgeCarriesTheMessageUpAndDownOnce) {
  // A tree all-reduce moves the whole message over each of the p-1 edges twice (reduce up,
  // broadcast down): 2(p-1)n bytes, whatever the chunking.
  for (int p : {2, 3, 4, 7}) {
    for (std::uint64_t chunk : {1ull << 30, 300ull, 7ull}) {
      const Schedule s = TreeAlgorithm(chunk).all_reduce(p, 1000, {});
      EXPECT_EQ(s.total_bytes(), 2u * (p - 1) * 1000) << "p=" << p << " chunk=" << chunk;
    }
  }
}

TEST(TreeAlgorithm, ChunkCountIsBytesOverChunkRoundedUp) {
  // 1000 bytes in chunks of 300: 4 chunks (300, 300, 300, 100 split evenly as 250 each).
  const Schedule s = TreeAlgorithm(300).all_reduce(2, 1000, {});
  ASSERT_EQ(s.ops.size(), 8u);  // per chunk: one reduce (1->0) and one broadcast (0->1)
  for (const ScheduleOp& op : s.ops) {
    EXPECT_EQ(op.bytes, 250u);
  }
}

TEST(TreeAlgorithm, ParentsWaitForAllChildrenAndTheRootBroadcastsReducedChunks) {
  // p = 4: heap tree 0 <- {1, 2}, 1 <- {3}. One chunk. Ops in order:
  // reduce 3->1, 2->0, 1->0 (after 3->1); broadcast 0->1, 0->2 (after both reduces into 0),
  // 1->3 (after 0->1).
  const Schedule s = TreeAlgorithm(1 << 20).all_reduce(4, 100, {});
  ASSERT_EQ(s.ops.size(), 6u);
  EXPECT_EQ(std::make_pair(s.ops[0].src, s.ops[0].dst), std::make_pair(3, 1));
  EXPECT_EQ(std::make_pair(s.ops[2].src, s.ops[2].dst), std::make_pair(1, 0));
  EXPECT_EQ(s.ops[2].deps, (std::vector<int>{0}));
  EXPECT_EQ(std::make_pair(s.ops[3].src, s.ops[3].dst), std::make_pair(0, 1));
  EXPECT_EQ(s.ops[3].deps, (std::vector<int>{2, 1}));
  EXPECT_EQ(std::make_pair(s.ops[5].src, s.ops[5].dst), std::make_pair(1, 3));
  EXPECT_EQ(s.ops[5].deps, (std::vector<int>{3}));
  // Rank 1 is done once it received the broadcast and forwarded it to 3.
  EXPECT_EQ(s.exit_ops[1], (std::vector<int>{3, 5}));
  EXPECT_EQ(s.exit_ops[0], (std::vector<int>{3, 4}));
}

TEST(TreeAlgorithm, SingleRankHasNothingToDo) {
  EXPECT_TRUE(TreeAlgorithm(1024).all_reduce(1, 1000, {}).ops.empty());
}

}  // namespace
}  // namespace dtsim::sim
