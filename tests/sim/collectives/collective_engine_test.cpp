// One collective on SimGrid against closed-form alpha-beta times, on the exact network model
// (CM02, no cross-traffic): each step costs alpha + bytes / B, alpha = the route's latency.
// Every TEST runs in its own process (one SimGrid engine per process).
#include <string>

#include <gtest/gtest.h>

#include "sim/run/simulation.h"

namespace dtsim::sim {
namespace {

constexpr double kLinkSec = 1e-6;      // every test platform: 1 us per link
constexpr double kBytesPerSec = 25e9;  // and "25GBps" = 25e9 bytes/s

double collective_sec(const std::string& platform, int ranks, std::uint64_t bytes,
                      const std::string& algorithm, bool collapse,
                      std::uint64_t chunk_bytes = 512 * 1024) {
  CollectiveConfig config{.run = {.platform_path = "tests/testdata/" + platform,
                                  .ranks = ranks,
                                  .algorithm = algorithm,
                                  .collapse = collapse,
                                  .chunk_bytes = chunk_bytes},
                          .bytes = bytes};
  return simulate_collective(config).time_sec;
}

// Ring all-reduce: 2(p-1) steps of alpha + (n/p)/B.
double ring_closed_form(int p, double alpha_sec, double n_bytes) {
  return 2.0 * (p - 1) * (alpha_sec + n_bytes / p / kBytesPerSec);
}

class RingOnStar : public testing::TestWithParam<std::tuple<int, bool>> {};

TEST_P(RingOnStar, MatchesAlphaBeta) {
  const auto [p, collapse] = GetParam();
  const std::uint64_t n = 1'000'000ull * static_cast<std::uint64_t>(p);  // n/p = 1 MB
  // Star: a route crosses the sender's link and the receiver's link: alpha = 2 us.
  const double expected = ring_closed_form(p, 2 * kLinkSec, static_cast<double>(n));
  EXPECT_NEAR(collective_sec("sim_star16_25GBps.json", p, n, "ring", collapse), expected,
              1e-6 * expected + 1e-15);
}

INSTANTIATE_TEST_SUITE_P(Ranks, RingOnStar,
                         testing::Combine(testing::Values(1, 2, 3, 4, 7, 8, 16), testing::Bool()));

class CollectiveLatency : public testing::TestWithParam<std::tuple<std::string, bool>> {};

TEST_P(CollectiveLatency, AddsOnceToAnIdleNetwork) {
  // Every rank waits L before its first transfer; all start together, so the collective ends
  // exactly L later than without it: ring 8 ranks, n/p = 1 MB, alpha = 2 us, plus L = 8.4 us.
  const auto [algorithm, collapse] = GetParam();
  const int p = 8;
  const std::uint64_t n = 8'000'000;
  CollectiveConfig config{.run = {.platform_path = "tests/testdata/sim_star16_25GBps.json",
                                  .ranks = p,
                                  .algorithm = algorithm,
                                  .collapse = collapse,
                                  .collective_latency_sec = 8.4e-6},
                          .bytes = n};
  const double got = simulate_collective(config).time_sec;
  if (algorithm == "ring") {
    const double expected = 8.4e-6 + ring_closed_form(p, 2 * kLinkSec, static_cast<double>(n));
    EXPECT_NEAR(got, expected, 1e-6 * expected);
  } else {
    // Recursive doubling, log2 8 = 3 whole-vector exchanges of alpha + n/B each.
    const double expected = 8.4e-6 + 3 * (2 * kLinkSec + n / kBytesPerSec);
    EXPECT_NEAR(got, expected, 1e-6 * expected);
  }
}

INSTANTIATE_TEST_SUITE_P(Algorithms, CollectiveLatency,
                         testing::Values(std::make_tuple("ring", true),
                                         std::make_tuple("ring", false),
                                         std::make_tuple("recursive-doubling", true)));

class RingOnFatTree : public testing::TestWithParam<bool> {};

TEST_P(RingOnFatTree, PaysTheLongestEdgeLatencyEveryStep) {
  // 4 leaves of 4 hosts, 4 spines. Ring edges 3->4, 7->8, 11->12 and 15->0 cross a spine:
  // host-leaf-spine-leaf-host = 4 links, alpha_max = 4 us; every step waits for them.
  const int p = 16;
  const std::uint64_t n = 100'000'000;
  const double expected = ring_closed_form(p, 4 * kLinkSec, static_cast<double>(n));
  EXPECT_NEAR(collective_sec("sim_fat_tree16.json", p, n, "ring", GetParam()), expected,
              1e-6 * expected);
}

INSTANTIATE_TEST_SUITE_P(Replay, RingOnFatTree, testing::Bool());

TEST(RingOnXmlFatTree, MatchesTheJsonFatTree) {
  // The same fat-tree written as a SimGrid XML cluster: ranks follow the radical order, so the
  // ring has the same four spine-crossing edges and the same time as RingOnFatTree.
  const int p = 16;
  const std::uint64_t n = 100'000'000;
  const double expected = ring_closed_form(p, 4 * kLinkSec, static_cast<double>(n));
  EXPECT_NEAR(collective_sec("sim_fat_tree16.xml", p, n, "ring", true), expected, 1e-6 * expected);
}

class RingOnTorus : public testing::TestWithParam<bool> {};

TEST_P(RingOnTorus, PaysTheLongestEdgeLatencyEveryStep) {
  // 4x4x4 torus, ranks in index order (x fastest), dimension-order routing. The edge 15 -> 16 goes
  // (3,3,0) -> (0,0,1): one wrap-around hop in x, one in y, one step in z = 3 links; no ring edge
  // is longer. alpha_max = 3 us (the SimGrid notes measured the same 126 * (3 + 62.5) us).
  const int p = 64;
  const std::uint64_t n = 100'000'000;
  const double expected = ring_closed_form(p, 3 * kLinkSec, static_cast<double>(n));
  EXPECT_NEAR(collective_sec("sim_torus64.json", p, n, "ring", GetParam()), expected,
              1e-6 * expected);
}

INSTANTIATE_TEST_SUITE_P(Replay, RingOnTorus, testing::Bool());

class RingOnStarUneven : public testing::TestWithParam<bool> {};

TEST_P(RingOnStarUneven, LiesBetweenTheSmallAndLargeChunkBounds) {
  // 1,000,003 bytes over 7 ranks: chunks of 142,858 (4 of them) and 142,857 bytes. Every step
  // lasts alpha plus one chunk's time, so the ring takes between 2(p-1) small-chunk steps and
  // 2(p-1) large-chunk steps: a window of 12 bytes / 25 GB/s = 0.48 ns.
  const double t = collective_sec("sim_star16_25GBps.json", 7, 1'000'003, "ring", GetParam());
  EXPECT_GE(t, ring_closed_form(7, 2 * kLinkSec, 7 * 142'857.0) * (1 - 1e-9));
  EXPECT_LE(t, ring_closed_form(7, 2 * kLinkSec, 7 * 142'858.0) * (1 + 1e-9));
}

INSTANTIATE_TEST_SUITE_P(Replay, RingOnStarUneven, testing::Bool());

// Tree on a star, alpha = 2 us, n = 100 MB, hand-derived schedules.
constexpr std::uint64_t kTreeBytes = 100'000'000;
constexpr double kTreeAlpha = 2 * kLinkSec;
constexpr double kTreeStep = 100e6 / kBytesPerSec;  // n/B = 4 ms

// The chunked replay (--replay collapsed) and the collapsed pipeline (--replay fast) on the
// same hand-derived times: the fast tree's fill wait is built to be exact on these uncontended
// cases (tree.h).
class TreeOnStar : public testing::TestWithParam<bool> {
 protected:
  double tree_sec(int p, std::uint64_t chunk_bytes) {
    CollectiveConfig config{.run = {.platform_path = "tests/testdata/sim_star16_25GBps.json",
                                    .ranks = p,
                                    .algorithm = "tree",
                                    .collapse_pipelines = GetParam(),
                                    .chunk_bytes = chunk_bytes},
                            .bytes = kTreeBytes};
    return simulate_collective(config).time_sec;
  }
};

TEST_P(TreeOnStar, TwoRanksOneChunkIsUpThenDown) {
  // 1 -> 0 (alpha + n/B), then 0 -> 1 (alpha + n/B).
  EXPECT_NEAR(tree_sec(2, 1ull << 40), 2 * (kTreeAlpha + kTreeStep), 1e-9);
}

TEST_P(TreeOnStar, TwoRanksPipelineChunks) {
  // 8 chunks of n/8: the reduce of chunk k (1 -> 0) and the broadcast of chunk k-1 (0 -> 1) use
  // different link directions, so the pipeline takes (c + 1) stages of alpha + (n/c)/B.
  const int c = 8;
  EXPECT_NEAR(tree_sec(2, kTreeBytes / c), (c + 1) * (kTreeAlpha + kTreeStep / c), 1e-9);
}

TEST_P(TreeOnStar, ThreeRanksFormAChain) {
  // NCCL's tree for 3 ranks is the chain 0 -> 2 -> 1: 1 -> 2, 2 -> 0, 0 -> 2, 2 -> 1, one after
  // another, each alpha + n/B.
  EXPECT_NEAR(tree_sec(3, 1ull << 40), 4 * (kTreeAlpha + kTreeStep), 1e-9);
}

TEST_P(TreeOnStar, FourRanksShareTheMiddleRanksLinks) {
  // Tree 0 -> 2 -> {1, 3}. 1 -> 2 and 3 -> 2 share 2's incoming link: a + 2n/B. Then 2 -> 0 and
  // 0 -> 2: 2(a + n/B). Then 2 -> 1 and 2 -> 3 share 2's outgoing link: a + 2n/B.
  // Total 4a + 6n/B.
  EXPECT_NEAR(tree_sec(4, 1ull << 40), 4 * kTreeAlpha + 6 * kTreeStep, 1e-9);
}

INSTANTIATE_TEST_SUITE_P(CollapsePipelines, TreeOnStar, testing::Bool());

}  // namespace
}  // namespace dtsim::sim
