// Fat-tree shorthand and per-level links on SimGrid against closed forms (exact model: a
// transfer of n bytes alone on its route takes the sum of the link latencies + n / the slowest
// link). Every TEST runs in its own process.
#include <string>

#include <gtest/gtest.h>

#include "sim/run/simulation.h"

namespace dtsim::sim {
namespace {

double send_sec(const std::string& platform, int ranks, int root, std::uint64_t n) {
  return simulate_collective({.run = {.platform_path = "tests/testdata/" + platform,
                                      .ranks = ranks,
                                      .algorithm = "direct"},
                              .op = "send-recv",
                              .bytes = n,
                              .root = root})
      .time_sec;
}

// sim_fat_tree16_levels.json: 4 leaves of 4 hosts, 4 spines; host links 25 GB/s and 1 us,
// leaf-spine links 10 GB/s and 3 us.
TEST(PerLevelLinks, InsideALeafOnlyHostLinksCount) {
  // Rank 0 -> 1, both on leaf 0: host link up, host link down: 2 x 1 us + n / 25 GB/s.
  const double n = 50e6;
  EXPECT_NEAR(send_sec("sim_fat_tree16_levels.json", 2, 0, 50'000'000), 2e-6 + n / 25e9, 1e-12);
}

TEST(PerLevelLinks, AcrossLeavesTheSpineLinksSetLatencyAndBandwidth) {
  // Rank 3 (leaf 0) -> 4 (leaf 1): 1 + 3 + 3 + 1 us, and the 10 GB/s spine links bound it.
  const double n = 50e6;
  EXPECT_NEAR(send_sec("sim_fat_tree16_levels.json", 5, 3, 50'000'000), 8e-6 + n / 10e9, 1e-12);
}

TEST(KAryNTree, CrossingTheTopLevelTakesSixLinks) {
  // 2-ary 3-tree (sim_k2_n3.json): 8 hosts, level-2 subtrees of 2^2 = 4 hosts. Rank 3 -> 4
  // changes subtree: up 3 levels and down 3: 6 x 1 us + n / 25 GB/s.
  const double n = 50e6;
  EXPECT_NEAR(send_sec("sim_k2_n3.json", 5, 3, 50'000'000), 6e-6 + n / 25e9, 1e-12);
}

}  // namespace
}  // namespace dtsim::sim
