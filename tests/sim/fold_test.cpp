// Folded ranks and memoized all-reduces in the data-parallel task graph, without an engine.
// (Equality of their predicted times with the step-level replay: tests/cli/scale_cli_test.cpp.)
#include <gtest/gtest.h>

#include "sim/collectives/ring.h"
#include "sim/collectives/tree.h"
#include "sim/data_parallel.h"

namespace dtsim::sim {
namespace {

constexpr std::uint64_t kMiB = 1024 * 1024;

// Four layers with 2, 2, 2 and 0.5 MiB of gradients; caps 1 MiB (first bucket), then 2 MiB. DDP's
// rule by hand, walking backward: l3 0.5 < 1, l2 -> 2.5 >= 1: close {l2, l3}; l1 2 >= 2: close
// {l1}; l0 2 >= 2: close {l0}. Buckets of 2.5, 2 and 2 MiB: two distinct sizes.
workloads::Workload four_layers() {
  workloads::Workload w{.model = "m", .batch_per_device = 1, .optimizer_sec = 1e-3};
  for (std::uint64_t bytes : {2 * kMiB, 2 * kMiB, 2 * kMiB, kMiB / 2}) {
    w.layers.push_back({.name = "l" + std::to_string(w.layers.size()),
                        .forward_sec = 1e-3,
                        .backward_sec = 2e-3,
                        .param_bytes = bytes});
  }
  return w;
}

DataParallelGraph build(const CollectiveAlgorithm& algorithm, int p) {
  const DataParallelJob job{.ranks = p,
                            .bucket_cap_bytes = 2 * kMiB,
                            .first_bucket_cap_bytes = kMiB,
                            .iterations = 3,
                            .fold_identical_ranks = true,
                            .memoize_repeats = true};
  return build_data_parallel(four_layers(), job, [&](std::uint64_t bytes) {
    return CollectiveChoice{.algorithm = std::string(algorithm.name()),
                            .schedule = algorithm.all_reduce(p, bytes, {})};
  });
}

TEST(FoldRanks, CollapsedRingRanksExitTogetherStepLevelAndTreesDoNot) {
  EXPECT_TRUE(ranks_exit_together(RingAlgorithm({.collapse = true}).all_reduce(8, 800, {})));
  EXPECT_FALSE(ranks_exit_together(RingAlgorithm({.collapse = false}).all_reduce(8, 800, {})));
  EXPECT_FALSE(ranks_exit_together(TreeAlgorithm({}).all_reduce(8, 800, {})));
}

TEST(FoldRanks, CollapsedTreesRanksExitTogether) {
  const AlgorithmOptions fast{.collapse_pipelines = true, .chunk_bytes = 100};
  EXPECT_TRUE(ranks_exit_together(TreeAlgorithm(fast).all_reduce(8, 800, {})));
  EXPECT_TRUE(ranks_exit_together(DoubleTreeAlgorithm(fast).all_reduce(8, 800, {})));
}

TEST(FoldRanks, OneComputeStreamAndEachSizeReplayedOnce) {
  const int p = 8;
  const DataParallelGraph dp = build(RingAlgorithm({.collapse = true}), p);
  ASSERT_TRUE(dp.ranks_folded);
  ASSERT_EQ(dp.buckets.size(), 3u);
  // Compute tasks only on rank 0: per iteration forward, 3 bucket segments, the rest of the
  // backward pass, the optimizer step.
  int compute = 0;
  for (const Task& t : dp.graph.tasks()) {
    if (t.kind == TaskKind::kCompute) {
      EXPECT_EQ(t.rank, 0);
      ++compute;
    }
  }
  EXPECT_EQ(compute, 3 * (1 + 3 + 1 + 1));
  // Two sizes (2.5 and 2 MiB) over 3 iterations x 3 buckets: 2 replayed, 7 memoized waits, and
  // the replayed ones are the first of their size (iteration 0, buckets 0 and 1).
  int memoized = 0;
  for (const auto& iter : dp.iterations) {
    for (const CollectiveTasks& c : iter.all_reduce) {
      memoized += c.memoized ? 1 : 0;
    }
    EXPECT_EQ(iter.forward, std::vector<TaskId>(p, iter.forward[0]));  // every rank is rank 0
  }
  EXPECT_EQ(memoized, 7);
  EXPECT_FALSE(dp.iterations[0].all_reduce[0].memoized);
  EXPECT_FALSE(dp.iterations[0].all_reduce[1].memoized);
  EXPECT_TRUE(dp.iterations[0].all_reduce[2].memoized);
  EXPECT_EQ(dp.simulated.size(), 2u);
}

TEST(FoldRanks, TreesKeepEveryRanksComputeStream) {
  const DataParallelGraph dp = build(TreeAlgorithm({}), 4);
  EXPECT_FALSE(dp.ranks_folded);
  EXPECT_TRUE(dp.simulated.empty());
  std::vector<bool> computes(4, false);
  for (const Task& t : dp.graph.tasks()) {
    if (t.kind == TaskKind::kCompute) {
      computes[static_cast<std::size_t>(t.rank)] = true;
    }
  }
  EXPECT_EQ(computes, std::vector<bool>(4, true));
}

}  // namespace
}  // namespace dtsim::sim
