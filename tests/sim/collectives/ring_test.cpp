#include "sim/collectives/ring.h"

#include <map>

#include <gtest/gtest.h>

namespace dtsim::sim {
namespace {

// Counts the transfers each rank sends, and checks every one goes to its ring successor.
std::map<int, int> sends_per_rank(const Schedule& s) {
  std::map<int, int> sends;
  for (const ScheduleOp& op : s.ops) {
    if (op.kind == ScheduleOp::Kind::kTransfer) {
      EXPECT_EQ(op.dst, (op.src + 1) % s.ranks);
      ++sends[op.src];
    }
  }
  return sends;
}

TEST(RingAlgorithm, EachRankSendsTwoPMinusOneChunksToItsSuccessor) {
  for (int p : {2, 3, 7, 8}) {
    const Schedule s = RingAlgorithm({.collapse = false}).all_reduce(p, 1000 * p, {});
    for (int r = 0; r < p; ++r) {
      EXPECT_EQ(sends_per_rank(s)[r], 2 * (p - 1)) << "p=" << p;
    }
    // Every chunk is n/p bytes: each rank sends 2(p-1)/p of the message (textbook ring volume).
    EXPECT_EQ(s.total_bytes(), static_cast<std::uint64_t>(p) * 2 * (p - 1) * 1000) << "p=" << p;
  }
}

TEST(RingAlgorithm, UnevenChunksStillMoveTwoPMinusOneOverPOfTheMessage) {
  // 10 bytes over 3 ranks: chunks 4, 3, 3. Over its 2(p-1) = 4 steps a rank forwards every chunk
  // but one (reduce-scatter) and every chunk but one (all-gather); summed over ranks each chunk
  // is sent 2(p-1) times in all: 4 * 10 = 40 bytes.
  const Schedule s = RingAlgorithm({.collapse = false}).all_reduce(3, 10, {});
  EXPECT_EQ(s.total_bytes(), 40u);
}

TEST(RingAlgorithm, StepDependsOnThePredecessorsPreviousStep) {
  const int p = 4;
  const Schedule s = RingAlgorithm({.collapse = false}).all_reduce(p, 400, {});
  ASSERT_EQ(s.ops.size(), static_cast<std::size_t>(2 * (p - 1) * p));
  // Step 0 waits for sender and receiver to enter; step 1 of rank 2 waits for step 0 of rank 1.
  EXPECT_EQ(s.ops[0].entry_ranks, (std::vector<int>{0, 1}));
  EXPECT_TRUE(s.ops[0].deps.empty());
  EXPECT_EQ(s.ops[p + 2].deps, (std::vector<int>{1}));
  // Rank 0 is done after its last send and its last receive (from rank 3).
  const int last_step = 2 * (p - 1) - 1;
  EXPECT_EQ(s.exit_ops[0], (std::vector<int>{last_step * p + 0, last_step * p + 3}));
}

TEST(RingAlgorithm, CollapsedSendsOneTransferPerEdgeAndWaitsForRemainingLatencies) {
  const int p = 5;
  TopologyHints hints{.route_latency_sec = [](int src, int /*dst*/) {
    return src == 3 ? 7e-6 : 2e-6;
  }};
  const Schedule s = RingAlgorithm({.collapse = true}).all_reduce(p, 5000, hints);
  // join, one transfer per edge, tail.
  ASSERT_EQ(s.ops.size(), static_cast<std::size_t>(p + 2));
  EXPECT_EQ(s.ops.front().kind, ScheduleOp::Kind::kWait);
  EXPECT_EQ(s.ops.front().entry_ranks.size(), static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r) {
    const ScheduleOp& op = s.ops[static_cast<std::size_t>(1 + r)];
    EXPECT_EQ(op.src, r);
    EXPECT_EQ(op.bytes, 2u * (p - 1) * 1000);  // 2(p-1) chunks of n/p = 1000 bytes
  }
  // The aggregated transfer paid one latency; 2(p-1) - 1 = 7 more, each the slowest edge's (7 us).
  EXPECT_DOUBLE_EQ(s.ops.back().wait_sec, 7 * 7e-6);
  EXPECT_EQ(s.exit_ops[2], (std::vector<int>{p + 1}));
}

// Per ring edge, the collapsed transfer carries exactly what the step-level ring sends on that
// edge, for every op and for sizes that do not divide evenly (chunks differ by one byte).
TEST(RingAlgorithm, CollapsedEdgeBytesEqualTheStepLevelEdgeSums) {
  for (CollectiveOp op :
       {CollectiveOp::kAllReduce, CollectiveOp::kReduceScatter, CollectiveOp::kAllGather}) {
    for (int p : {2, 3, 5, 8}) {
      for (std::uint64_t n : {1ull, 7ull, 1001ull, 65537ull}) {
        const CollectiveRequest request{.op = op, .ranks = p, .bytes = n};
        std::map<int, std::uint64_t> step_sums;
        for (const ScheduleOp& o : RingAlgorithm({.collapse = false}).build(request, {}).ops) {
          step_sums[o.src] += o.bytes;
        }
        for (const ScheduleOp& o : RingAlgorithm({.collapse = true}).build(request, {}).ops) {
          if (o.kind == ScheduleOp::Kind::kTransfer) {
            EXPECT_EQ(o.bytes, step_sums[o.src])
                << op_name(op) << " p=" << p << " n=" << n << " edge from " << o.src;
          }
        }
      }
    }
  }
}

TEST(RingAlgorithm, CollapsedCarriesTheSameBytesAsStepLevel) {
  for (int p : {2, 3, 7}) {
    for (std::uint64_t n : {1ull, 10ull, 1000003ull}) {
      EXPECT_EQ(RingAlgorithm({.collapse = true}).all_reduce(p, n, {}).total_bytes(),
                RingAlgorithm({.collapse = false}).all_reduce(p, n, {}).total_bytes())
          << "p=" << p << " n=" << n;
    }
  }
}

TEST(RingAlgorithm, SingleRankHasNothingToDo) {
  const Schedule s = RingAlgorithm({.collapse = true}).all_reduce(1, 1000, {});
  EXPECT_TRUE(s.ops.empty());
  ASSERT_EQ(s.exit_ops.size(), 1u);
  EXPECT_TRUE(s.exit_ops[0].empty());
}

}  // namespace
}  // namespace dtsim::sim
