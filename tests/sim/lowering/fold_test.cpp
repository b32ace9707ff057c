// Symmetry folding and memoized collectives in the lowered task graph, without an engine.
// (Equality of their predicted times with the step-level replay: tests/cli/scale_cli_test.cpp.)
#include "sim/lowering/fold.h"

#include <deque>
#include <memory>

#include <gtest/gtest.h>

#include "sim/collectives/ring.h"
#include "sim/collectives/tree.h"
#include "sim/lowering/lowering.h"
#include "sim/strategies/data_parallel.h"

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

// Chooses `algorithm` for every collective; keeps the choices (lowering copies none).
class With {
 public:
  explicit With(const CollectiveAlgorithm& algorithm) : algorithm_(algorithm) {}
  const CollectiveChoice& operator()(const CollectiveRequest& request, const Communicator&) {
    return made_.emplace_back(CollectiveChoice{.algorithm = std::string(algorithm_.name()),
                                               .schedule = algorithm_.build(request, {})});
  }

 private:
  const CollectiveAlgorithm& algorithm_;
  std::deque<CollectiveChoice> made_;
};

ChooseCollective with(const CollectiveAlgorithm& algorithm) {
  return
      [chooser = std::make_shared<With>(algorithm)](
          const CollectiveRequest& request, const Communicator& comm) -> const CollectiveChoice& {
        return (*chooser)(request, comm);
      };
}

LoweredGraph lower_data_parallel(const CollectiveAlgorithm& algorithm, int p) {
  const DataParallelJob job{
      .ranks = p, .bucket_cap_bytes = 2 * kMiB, .first_bucket_cap_bytes = kMiB, .iterations = 3};
  return lower(build_data_parallel(four_layers(), job), {.fold = FoldMode::kExact, .memoize = true},
               with(algorithm));
}

std::vector<bool> ranks_computing(const LoweredGraph& lowered, int p) {
  std::vector<bool> computes(static_cast<std::size_t>(p), false);
  for (const Task& t : lowered.tasks.tasks()) {
    if (t.kind == TaskKind::kCompute) {
      computes[static_cast<std::size_t>(t.rank)] = true;
    }
  }
  return computes;
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
  const RingAlgorithm ring({.collapse = true});
  const LoweredGraph lowered = lower_data_parallel(ring, p);
  ASSERT_TRUE(lowered.ranks_folded);
  EXPECT_EQ(lowered.stands_for, std::vector<int>(p, 0));
  // Compute tasks only on rank 0: per iteration forward, the backward pass cut where each of the
  // 3 buckets becomes ready (the last one at l0, the first layer), the optimizer step.
  int compute = 0;
  for (const Task& t : lowered.tasks.tasks()) {
    if (t.kind == TaskKind::kCompute) {
      EXPECT_EQ(t.rank, 0);
      ++compute;
    }
  }
  EXPECT_EQ(compute, 3 * (1 + 3 + 1));
  // Two sizes (2.5 and 2 MiB) over 3 iterations x 3 buckets: 2 replayed, 7 memoized waits, and
  // the replayed ones are the first of their size (iteration 0, buckets 0 and 1).
  ASSERT_EQ(lowered.instances.size(), 9u);
  EXPECT_EQ(lowered.memoized, 7);
  EXPECT_EQ(lowered.instances[0].repeats, -1);
  EXPECT_EQ(lowered.instances[1].repeats, -1);
  EXPECT_EQ(lowered.instances[2].repeats, 1);  // 2 MiB again: repeats bucket 1
  EXPECT_EQ(lowered.instances[3].repeats, 0);
  EXPECT_EQ(lowered.choices.size(), 2u);
}

TEST(FoldRanks, TreesKeepEveryRanksComputeStream) {
  const TreeAlgorithm tree({});
  const LoweredGraph lowered = lower_data_parallel(tree, 4);
  EXPECT_FALSE(lowered.ranks_folded);
  EXPECT_EQ(lowered.memoized, 0);
  EXPECT_EQ(ranks_computing(lowered, 4), std::vector<bool>(4, true));
}

// Two data-parallel jobs side by side in one graph: ranks 0-1 on communicator "a", 2-3 on "b".
ExecutionGraph side_by_side() {
  ExecutionGraph g = build_data_parallel(four_layers(), {.ranks = 4, .iterations = 2});
  g.communicators = {{.name = "a", .ranks = {0, 1}}, {.name = "b", .ranks = {2, 3}}};
  g.ranks = {{0, {0}}, {0, {0}}, {0, {1}}, {0, {1}}};
  return g;
}

// Each pair is a class of its own; both fold (every collective spans exactly its class), but
// nothing is memoized: the two classes' all-reduces may overlap on the network.
TEST(FoldRanks, EachClassFoldsOnItsOwnAndTwoClassesAreNotMemoized) {
  const ExecutionGraph g = side_by_side();
  const RingAlgorithm ring({.collapse = true});
  const LoweredGraph lowered = lower(g, {.fold = FoldMode::kExact, .memoize = true}, with(ring));
  EXPECT_EQ(lowered.stands_for, (std::vector<int>{0, 0, 2, 2}));
  EXPECT_EQ(lowered.memoized, 0);
  EXPECT_EQ(ranks_computing(lowered, 4), (std::vector<bool>{true, false, true, false}));
}

// The same side by side jobs, verified (fold.h): one class of all four ranks on rank 0's compute
// stream; rank 2's pair ("b") is a shadow, entered when rank 0's compute says, whose exits are
// checked after the run. With routes whose links no two pairs share (a made-up route: one link
// per ordered pair), both communicators are private: each memoizes its repeats, and b's repeats
// are left out once its first replay of each size is in.
TEST(FoldRanks, VerifiedClassesFoldAcrossCommunicatorsAndCheckTheirShadows) {
  const ExecutionGraph g = side_by_side();
  const RingAlgorithm ring({.collapse = true});
  const LoweredGraph plain = lower(g, {.fold = FoldMode::kVerified}, with(ring));
  EXPECT_EQ(plain.stands_for, std::vector<int>(4, 0));
  EXPECT_EQ(ranks_computing(plain, 4), (std::vector<bool>{true, false, false, false}));
  // Its shadows: every all-reduce of b (as the exact fold, where b is its own class, has them).
  const LoweredGraph exact = lower(g, {.fold = FoldMode::kExact}, with(ring));
  int per_pair = 0;
  for (const CollectiveInstance& c : exact.instances) {
    per_pair += c.communicator == 1 ? 1 : 0;
  }
  EXPECT_EQ(plain.shadows, per_pair);
  ASSERT_EQ(plain.fold_checks.size(), static_cast<std::size_t>(per_pair));
  EXPECT_EQ(plain.fold_checks.front().rank, 2);
  EXPECT_TRUE(plain.left_out.empty());

  const LoweredGraph memo = lower(g,
                                  {.fold = FoldMode::kVerified,
                                   .memoize = true,
                                   .route_links =
                                       [](int src, int dst) {
                                         return std::vector<int>{src * 4 + dst};
                                       }},
                                  with(ring));
  // Two bucket sizes: each pair replays each size once; a memoizes the rest, b leaves them out.
  int left_out = 0;
  for (const LeftOutRepeats& l : memo.left_out) {
    left_out += l.count;
  }
  EXPECT_EQ(memo.memoized, per_pair - 2);
  EXPECT_EQ(left_out, per_pair - 2);
  EXPECT_EQ(memo.shadows, 2);
}

// The check while a replay runs (check_fold_so_far) on the verified fold above (rank 2 a shadow
// of rank 0), with times made up by hand: nothing ended, nothing compared; everything ended at
// 0 s, every check compared once and found equal; rank 2's first exit 1 s late, a mismatch.
TEST(FoldRanks, AFoldIsCheckedOnlyWhereItsTasksHaveEnded) {
  const ExecutionGraph g = side_by_side();
  const RingAlgorithm ring({.collapse = true});
  const LoweredGraph lowered = lower(g, {.fold = FoldMode::kVerified}, with(ring));
  ASSERT_FALSE(lowered.fold_checks.empty());
  const std::size_t tasks = lowered.tasks.tasks().size();
  ReplayTimes times{.start_sec = std::vector<double>(tasks, 0.0),
                    .end_sec = std::vector<double>(tasks, 0.0),
                    .ended = std::vector<std::uint8_t>(tasks, 0)};
  std::vector<std::uint8_t> compared;
  FoldVerdict v = check_fold_so_far(g, lowered, times, 1e-9, compared);
  EXPECT_EQ(v.checked, 0U);
  EXPECT_EQ(v.mismatch, "");

  times.ended.assign(tasks, 1);
  v = check_fold_so_far(g, lowered, times, 1e-9, compared);
  EXPECT_EQ(v.checked, lowered.fold_checks.size());
  EXPECT_EQ(v.mismatch, "");
  EXPECT_EQ(check_fold_so_far(g, lowered, times, 1e-9, compared).checked, 0U);  // each once

  times.end_sec[static_cast<std::size_t>(lowered.fold_checks.front().exits.front())] = 1.0;
  std::vector<std::uint8_t> afresh;
  v = check_fold_so_far(g, lowered, times, 1e-9, afresh);
  EXPECT_EQ(v.max_difference_sec, 1.0);
  EXPECT_NE(v.mismatch.find("rank 2's node"), std::string::npos) << v.mismatch;
  EXPECT_EQ(check_fold(g, lowered, times, 1e-9).mismatch, v.mismatch);
}

// A slow GPU makes its own class: nothing folds, since every class's collectives span more.
TEST(FoldRanks, ASlowRankBreaksTheClass) {
  const ExecutionGraph g = build_data_parallel(four_layers(), {.ranks = 4, .iterations = 1});
  const RingAlgorithm ring({.collapse = true});
  const LoweredGraph lowered = lower(
      g, {.compute_factor = {1, 1, 1.5, 1}, .fold = FoldMode::kExact, .memoize = true}, with(ring));
  EXPECT_FALSE(lowered.ranks_folded);
  EXPECT_EQ(ranks_computing(lowered, 4), std::vector<bool>(4, true));
}

}  // namespace
}  // namespace dtsim::sim
