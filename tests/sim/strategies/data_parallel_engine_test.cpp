// Data-parallel iterations on SimGrid against hand-computed timelines.
// Every TEST runs in its own process (one SimGrid engine per process).
#include <string>

#include <gtest/gtest.h>

#include "sim/run/simulation.h"

namespace dtsim::sim {
namespace {

using nlohmann::ordered_json;

ordered_json simulate(const std::string& workload, const std::string& platform, int ranks,
                      const std::string& algorithm, bool collapse) {
  SimulateConfig config{.run = {.platform_path = platform,
                                .ranks = ranks,
                                .algorithm = algorithm,
                                .collapse = collapse,
                                .chunk_bytes = 1ull << 40},  // tree: one chunk
                        .workload_path = workload};
  return report_json(simulate_data_parallel(config))["result"];
}

TEST(DataParallel, OneRankIterationIsTheSumOfCompute) {
  // Nothing to reduce: forward + backward + optimizer of the trace (0.097 s by construction).
  const auto r = simulate("workloads/traces/resnet50_v100_b32.json",
                          "tests/testdata/sim_star16_25GBps.json", 1, "ring", true);
  EXPECT_NEAR(r["iteration_time_sec"].get<double>(), r["compute_sec"].get<double>(), 1e-12);
  EXPECT_NEAR(r["compute_sec"].get<double>(), 0.097, 1e-9);
  EXPECT_NEAR(r["scaling_efficiency"].get<double>(), 1.0, 1e-9);
}

class InfinitelyFastNetwork : public testing::TestWithParam<std::string> {};

TEST_P(InfinitelyFastNetwork, IterationIsCompute) {
  // 10^21 bytes/s and zero latency: every all-reduce takes ~1e-13 s, so nothing is exposed.
  const auto r = simulate("workloads/traces/resnet50_v100_b32.json",
                          "tests/testdata/sim_star8_infinite.json", 8, GetParam(), true);
  EXPECT_NEAR(r["iteration_time_sec"].get<double>(), r["compute_sec"].get<double>(), 1e-9);
  EXPECT_NEAR(r["exposed_comm_sec"].get<double>(), 0.0, 1e-9);
}

INSTANTIATE_TEST_SUITE_P(Algorithms, InfinitelyFastNetwork, testing::Values("ring", "tree"));

// tests/testdata/sim_three_layers.json on 2 ranks of a star with 1 GB/s links and 1 us per link
// (alpha = 2 us per route). Layers l0, l1, l2: forward 1 ms each; backward 0.3, 0.5, 2 ms;
// gradients 3 MiB, none, 1 MiB; optimizer 0.5 ms.
// Buckets (DDP rule, walking backward): l2's 1 MiB reaches the 1 MiB first cap -> bucket 0 = {l2};
// l0's 3 MiB -> bucket 1 = {l0}.
// Timeline of one iteration, from its start:
//   forward ends at F = 3 ms; l2's backward ends at 5 ms: bucket 0 ready, its all-reduce starts;
//   the backward pass ends at 5.8 ms, but bucket 1 waits for bucket 0 (one stream) to end at
//   5 ms + T(1 MiB); then T(3 MiB); then the 0.5 ms optimizer step.
constexpr double kAlpha = 2e-6;
constexpr double kBytesPerSec = 1e9;
constexpr double kMiB = 1048576;

struct HandTimeline {
  double t0_sec;  // all-reduce time of bucket 0 (1 MiB)
  double t1_sec;  // and of bucket 1 (3 MiB)
};

void expect_timeline(const ordered_json& r, HandTimeline hand) {
  const double bucket0_start = 5e-3;
  const double bucket0_end = bucket0_start + hand.t0_sec;
  ASSERT_GT(bucket0_end, 5.8e-3) << "the example needs bucket 1 to wait for bucket 0";
  const double bucket1_end = bucket0_end + hand.t1_sec;
  const double iteration = bucket1_end + 0.5e-3;
  EXPECT_NEAR(r["iteration_time_sec"].get<double>(), iteration, 1e-12);
  EXPECT_NEAR(r["compute_sec"].get<double>(), 6.3e-3, 1e-12);
  EXPECT_NEAR(r["exposed_comm_sec"].get<double>(), iteration - 6.3e-3, 1e-12);
  EXPECT_NEAR(r["scaling_efficiency"].get<double>(), 6.3e-3 / iteration, 1e-9);
  const auto& b = r["buckets"];
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[0]["bytes"].get<std::uint64_t>(), 1048576u);
  EXPECT_EQ(b[1]["bytes"].get<std::uint64_t>(), 3145728u);
  EXPECT_NEAR(b[0]["ready_sec"].get<double>(), 5e-3, 1e-12);
  EXPECT_NEAR(b[0]["start_sec"].get<double>(), bucket0_start, 1e-12);
  EXPECT_NEAR(b[0]["end_sec"].get<double>(), bucket0_end, 1e-12);
  EXPECT_NEAR(b[1]["ready_sec"].get<double>(), 5.8e-3, 1e-12);
  EXPECT_NEAR(b[1]["start_sec"].get<double>(), bucket0_end, 1e-12);
  EXPECT_NEAR(b[1]["end_sec"].get<double>(), bucket1_end, 1e-12);
}

class ThreeLayersTwoRanksRing : public testing::TestWithParam<bool> {};

TEST_P(ThreeLayersTwoRanksRing, OverlapMatchesHandTimeline) {
  // Ring on 2 ranks: 2 steps of alpha + (n/2)/B = 2 alpha + n/B.
  const auto r = simulate("tests/testdata/sim_three_layers.json",
                          "tests/testdata/sim_star2_1GBps.json", 2, "ring", GetParam());
  expect_timeline(r, {.t0_sec = 2 * kAlpha + kMiB / kBytesPerSec,
                      .t1_sec = 2 * kAlpha + 3 * kMiB / kBytesPerSec});
}

INSTANTIATE_TEST_SUITE_P(Replay, ThreeLayersTwoRanksRing, testing::Bool());

class ThreeLayersTwoRanksTree : public testing::TestWithParam<bool> {};

TEST_P(ThreeLayersTwoRanksTree, OverlapMatchesHandTimeline) {
  // Tree on 2 ranks, one chunk: up then down, 2 (alpha + n/B). With --replay fast (GetParam) the
  // pipeline is collapsed, which is exact for two ranks (tree.h), and the ranks are folded onto
  // one compute stream: the same hand timeline through the folded path. (One chunk on two ranks
  // leaves both ranks after the same last transfer, so the chunked tree folds here too.)
  SimulateConfig config{.run = {.platform_path = "tests/testdata/sim_star2_1GBps.json",
                                .ranks = 2,
                                .algorithm = "tree",
                                .collapse_pipelines = GetParam(),
                                .chunk_bytes = 1ull << 40},
                        .workload_path = "tests/testdata/sim_three_layers.json"};
  const auto report = report_json(simulate_data_parallel(config));
  EXPECT_EQ(report["replay"].get<std::string>(), GetParam() ? "fast" : "collapsed");
  EXPECT_TRUE(report["ranks_folded"].get<bool>());
  expect_timeline(report["result"], {.t0_sec = 2 * (kAlpha + kMiB / kBytesPerSec),
                                     .t1_sec = 2 * (kAlpha + 3 * kMiB / kBytesPerSec)});
}

INSTANTIATE_TEST_SUITE_P(CollapsePipelines, ThreeLayersTwoRanksTree, testing::Bool());

// --overlap none on the same example: communication waits for the whole backward pass, which
// ends at 3 + 0.3 + 0.5 + 2 = 5.8 ms on both ranks. Bucket 0 runs from 5.8 ms to
// 5.8 ms + T(1 MiB), bucket 1 follows it on the same stream for T(3 MiB), then the 0.5 ms
// optimizer step:
//   iteration = forward 3 ms + backward 2.8 ms + T(1 MiB) + T(3 MiB) + optimizer 0.5 ms,
// with the 2-rank ring's T(n) = 2 alpha + n/B (2 steps of alpha + (n/2)/B). Gradients are still
// ready at 5 ms (bucket 0) and 5.8 ms (bucket 1).
class ThreeLayersTwoRanksNoOverlap : public testing::TestWithParam<bool> {};

TEST_P(ThreeLayersTwoRanksNoOverlap, AllReducesStartAfterTheWholeBackwardPass) {
  SimulateConfig config{.run = {.platform_path = "tests/testdata/sim_star2_1GBps.json",
                                .ranks = 2,
                                .algorithm = "ring",
                                .collapse = GetParam()},
                        .workload_path = "tests/testdata/sim_three_layers.json",
                        .overlap = Overlap::kNone};
  const auto report = report_json(simulate_data_parallel(config));
  EXPECT_EQ(report["overlap"].get<std::string>(), "none");
  const auto& r = report["result"];
  const double t0 = 2 * kAlpha + kMiB / kBytesPerSec;
  const double t1 = 2 * kAlpha + 3 * kMiB / kBytesPerSec;
  const double iteration = 3e-3 + 2.8e-3 + t0 + t1 + 0.5e-3;
  EXPECT_NEAR(r["iteration_time_sec"].get<double>(), iteration, 1e-12);
  EXPECT_NEAR(r["compute_sec"].get<double>(), 6.3e-3, 1e-12);
  EXPECT_NEAR(r["exposed_comm_sec"].get<double>(), t0 + t1, 1e-12);
  EXPECT_NEAR(r["backward_end_sec"].get<double>(), 5.8e-3, 1e-12);
  const auto& b = r["buckets"];
  ASSERT_EQ(b.size(), 2u);
  EXPECT_NEAR(b[0]["ready_sec"].get<double>(), 5e-3, 1e-12);
  EXPECT_NEAR(b[0]["start_sec"].get<double>(), 5.8e-3, 1e-12);
  EXPECT_NEAR(b[0]["end_sec"].get<double>(), 5.8e-3 + t0, 1e-12);
  EXPECT_NEAR(b[1]["ready_sec"].get<double>(), 5.8e-3, 1e-12);
  EXPECT_NEAR(b[1]["start_sec"].get<double>(), 5.8e-3 + t0, 1e-12);
  EXPECT_NEAR(b[1]["end_sec"].get<double>(), 5.8e-3 + t0 + t1, 1e-12);
}

INSTANTIATE_TEST_SUITE_P(Replay, ThreeLayersTwoRanksNoOverlap, testing::Bool());

TEST(ThreeLayersTwoRanksRing, GradientAccumulationRunsMicroBatchesBeforeTheLastOne) {
  // 4 micro-batches per optimizer step: 3 x (forward 3 ms + backward 2.8 ms) = 17.4 ms of compute
  // with no communication, then the hand timeline above shifted by 17.4 ms.
  SimulateConfig config{.run = {.platform_path = "tests/testdata/sim_star2_1GBps.json",
                                .ranks = 2,
                                .algorithm = "ring"},
                        .workload_path = "tests/testdata/sim_three_layers.json",
                        .accumulation_steps = 4};
  const auto r = report_json(simulate_data_parallel(config))["result"];
  const double shift = 3 * 5.8e-3;
  const double t0 = 2 * kAlpha + kMiB / kBytesPerSec;
  const double t1 = 2 * kAlpha + 3 * kMiB / kBytesPerSec;
  const double iteration = shift + 5e-3 + t0 + t1 + 0.5e-3;
  EXPECT_NEAR(r["iteration_time_sec"].get<double>(), iteration, 1e-12);
  EXPECT_NEAR(r["compute_sec"].get<double>(), shift + 6.3e-3, 1e-12);
  EXPECT_NEAR(r["buckets"][0]["start_sec"].get<double>(), shift + 5e-3, 1e-12);
  // Samples per optimizer step: batch (1, from the trace) x 4 micro-batches.
  EXPECT_NEAR(r["samples_per_sec_per_device"].get<double>(), 1.0 * 4 / iteration, 1e-9);
}

}  // namespace
}  // namespace dtsim::sim
