// Perturbations of a platform spec (platforms/FORMAT.md, "Perturbations") against closed forms,
// exact model. Star test platforms: 4 hosts, links 25 GB/s and 1 us, so a transfer of n bytes
// from host a to b crosses link-a up and link-b down: 2 us + n / (its bandwidth share).
// Every TEST runs in its own process.
#include <string>

#include <gtest/gtest.h>

#include "sim/run/simulation.h"

namespace dtsim::sim {
namespace {

constexpr double kBytesPerSec = 25e9;

double collective_sec(const std::string& platform, const std::string& op, int ranks, int root,
                      std::uint64_t n, const std::string& algorithm,
                      const std::string& placement = "linear") {
  return simulate_collective({.run = {.platform_path = "tests/testdata/" + platform,
                                      .ranks = ranks,
                                      .placement = *parse_placement(placement),
                                      .algorithm = algorithm},
                              .op = op,
                              .bytes = n,
                              .root = root})
      .time_sec;
}

TEST(SlowLinks, NamedLinkRunsAtItsFactor) {
  // link-1 at 0.5 x 25 GB/s: 0 -> 1 crosses it (down): 2 us + n / 12.5 GB/s.
  const double n = 50e6;
  EXPECT_NEAR(collective_sec("sim_star4_slow_link.json", "send-recv", 2, 0, 50'000'000, "direct"),
              2e-6 + n / (0.5 * kBytesPerSec), 1e-12);
}

TEST(SlowLinks, OtherLinksKeepTheirBandwidth) {
  // 2 -> 3 does not touch link-1: 2 us + n / 25 GB/s.
  const double n = 50e6;
  EXPECT_NEAR(collective_sec("sim_star4_slow_link.json", "send-recv", 4, 2, 50'000'000, "direct"),
              2e-6 + n / kBytesPerSec, 1e-12);
}

TEST(SlowLinks, SlowSpineLevelBoundsTheRingEdgesBetweenLeaves) {
  // sim_fat_tree16 (4 leaves of 4 hosts, 4 spines) with level 1 (leaf-spine links) at
  // 0.25 x 25 GB/s. Linear ring: the 4 edges between leaves each have their own spine links
  // (one flow per link), now 6.25 GB/s; the others 25 GB/s. Every step waits for the slowest:
  // T = 2(p-1) (4 us + (n/p) / 6.25 GB/s).
  const double p = 16, n = 100e6;
  const double expected = 2 * (p - 1) * (4e-6 + n / p / (0.25 * kBytesPerSec));
  EXPECT_NEAR(
      collective_sec("sim_fat_tree16_slow_spines.json", "all-reduce", 16, 0, 100'000'000, "ring"),
      expected, 1e-6 * expected);
}

TEST(SlowLinks, HostsOwnLinkSlowsTheRingEdgesThroughIt) {
  // sim_fat_tree16 with host 4's link (to its leaf) at 0.5 x 25 GB/s. Linear ring: edge 3 -> 4
  // (between leaves, 4 us) ends on it and 4 -> 5 (2 us) starts on it, one flow each way, so
  // both get 12.5 GB/s; the slowest edge, 3 -> 4, has both the longest latency and that
  // bandwidth: T = 2(p-1) (4 us + (n/p) / 12.5 GB/s).
  const double p = 16, n = 100e6;
  const double expected = 2 * (p - 1) * (4e-6 + n / p / (0.5 * kBytesPerSec));
  EXPECT_NEAR(
      collective_sec("sim_fat_tree16_slow_host4.json", "all-reduce", 16, 0, 100'000'000, "ring"),
      expected, 1e-6 * expected);
}

// 4-GPU nodes in a star (a one-level fat-tree), a torus and a dragonfly (one SimGrid platform
// per process: one test each); GPU 1's link (to its node's switch) at 0.5 x 300 GB/s. The send
// 0 -> 1 stays in node 0: up GPU 0's link, down GPU 1's, 0.5 us each: T = 1 us + n / 150 GB/s.
constexpr double kSlowGpu1SendSec = 1e-6 + 300e6 / 150e9;

TEST(SlowLinks, AGpusOwnLinkInAStarNodeIsFoundByItsHost) {
  EXPECT_NEAR(
      collective_sec("sim_two_nodes_slow_gpu1_link.json", "send-recv", 2, 0, 300'000'000, "direct"),
      kSlowGpu1SendSec, 1e-12);
}

TEST(SlowLinks, AGpusOwnLinkInATorusNodeIsFoundByItsHost) {
  EXPECT_NEAR(collective_sec("sim_torus2_nodes_slow_gpu1_link.json", "send-recv", 2, 0, 300'000'000,
                             "direct"),
              kSlowGpu1SendSec, 1e-12);
}

TEST(SlowLinks, AGpusOwnLinkInADragonflyNodeIsFoundByItsHost) {
  EXPECT_NEAR(collective_sec("sim_dragonfly_nodes_slow_gpu1_link.json", "send-recv", 2, 0,
                             300'000'000, "direct"),
              kSlowGpu1SendSec, 1e-12);
}

TEST(Background, FlowBelowTheFairShareTakesItsRate) {
  // Host 2 -> 1 at 5 GB/s shares link-1 (down) with the send 0 -> 1. Max-min with equal route
  // latencies: the capped flow keeps 5 GB/s (< 12.5, the fair share), the send gets 20 GB/s.
  // Both start sending after their 2 us latency: T = 2 us + n / 20 GB/s.
  const double n = 50e6;
  EXPECT_NEAR(collective_sec("sim_star4_background5.json", "send-recv", 2, 0, 50'000'000, "direct"),
              2e-6 + n / (kBytesPerSec - 5e9), 1e-12);
}

TEST(Background, FlowAboveTheFairShareGetsHalf) {
  // Asking 20 GB/s > 12.5: max-min gives both flows 12.5 GB/s: T = 2 us + n / 12.5 GB/s.
  const double n = 50e6;
  EXPECT_NEAR(
      collective_sec("sim_star4_background20.json", "send-recv", 2, 0, 50'000'000, "direct"),
      2e-6 + n / (kBytesPerSec / 2), 1e-12);
}

TEST(Background, RepeatedTransferSharesTheLinkWhileItRuns) {
  // 25 MB from host 2 to 1 at t = 0 (then every 10 ms), and the send 0 -> 1 of n = 50 MB: both
  // start sending at 2 us and share link-1 (down) at 12.5 GB/s each until the background's 25 MB
  // are through (2 ms); the send then has 25 MB left, alone at 25 GB/s (1 ms), before the next
  // background transfer at 10 ms: T = 2 us + 2 ms + 1 ms.
  EXPECT_NEAR(
      collective_sec("sim_star4_background_periodic.json", "send-recv", 2, 0, 50'000'000, "direct"),
      2e-6 + 25e6 / 12.5e9 + 25e6 / kBytesPerSec, 1e-12);
}

double iteration_over_compute(const std::string& platform) {
  // 10^21 bytes/s, zero latency: the all-reduces take ~0, so a rank waits only for the others'
  // gradients. The slowest rank (factor k) computes forward, backward and optimizer k times as
  // long, every bucket's all-reduce ends when its gradients are ready there, and its next
  // forward starts after its own optimizer step: iteration = k x compute_sec.
  const TrainingResult r =
      simulate_data_parallel(
          {.run = {.platform_path = "tests/testdata/" + platform, .ranks = 8, .algorithm = "ring"},
           .workload_path = "tests/testdata/sim_three_layers.json"})
          .result;
  return r.iteration_time_sec / r.compute_sec;
}

TEST(SlowGpus, StragglerRankSetsTheIteration) {
  EXPECT_NEAR(iteration_over_compute("sim_star8_infinite_slow_rank2.json"), 1.5, 1e-9);
}

TEST(SlowGpus, SlowHostSlowsTheRankPlacedOnIt) {
  EXPECT_NEAR(iteration_over_compute("sim_star8_infinite_slow_host5.json"), 2.0, 1e-9);
}

// The message of what simulating a 2-rank all-reduce on `platform` throws.
std::string run_error(const std::string& platform) {
  try {
    (void)collective_sec(platform, "all-reduce", 2, 0, 1000, "ring");
  } catch (const std::exception& e) {
    return e.what();
  }
  return "<no error>";
}

TEST(SlowLinks, UnknownLinkNameIsAnErrorNamingTheEntry) {
  EXPECT_EQ(run_error("sim_star4_bad_link.json"),
            "tests/testdata/sim_star4_bad_link.json: /perturbations/slow_links/0/link: no "
            "SimGrid link named \"spine-9\" (link names: platforms/FORMAT.md, \"Perturbations\")");
}

TEST(SlowGpus, RankBeyondTheRunIsAnErrorNamingTheEntry) {
  EXPECT_EQ(run_error("sim_star8_infinite_slow_rank2.json"),
            "tests/testdata/sim_star8_infinite_slow_rank2.json: /perturbations/slow_gpus/0/rank: "
            "rank 2, but --ranks is 2");
}

}  // namespace
}  // namespace dtsim::sim
