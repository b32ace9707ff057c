// Multi-GPU nodes (platforms/FORMAT.md "node"): routes, and the NIC shared by a node's GPUs.
// tests/testdata/sim_two_nodes.json: 2 nodes of 4 GPUs; GPU links 300 GB/s and 0.5 us; one NIC
// link per node of 2 x 100 Gb/s = 25 GB/s and 2 us; fabric links 100 GB/s and 1 us (a single
// switch). Every TEST runs in its own process.
#include <gtest/gtest.h>

#include "sim/simulation.h"

namespace dtsim::sim {
namespace {

constexpr double kNicBytesPerSec = 2 * 100e9 / 8;  // 2 NICs of 100 Gb/s (bits!) = 25 GB/s
constexpr double kGpuBytesPerSec = 300e9;
constexpr double kIntraSec = 2 * 0.5e-6;                        // gpu link up, gpu link down
constexpr double kInterSec = 2 * 0.5e-6 + 2 * 2e-6 + 2 * 1e-6;  // + NIC links + fabric links

double time_sec(const std::string& op, int p, std::uint64_t n, const std::string& algorithm) {
  return simulate_collective({.run = {.platform_path = "tests/testdata/sim_two_nodes.json",
                                      .ranks = p,
                                      .algorithm = algorithm},
                              .op = op,
                              .bytes = n})["time_sec"]
      .get<double>();
}

TEST(Nodes, SendInsideANodeUsesOnlyGpuLinks) {
  // Ranks 0 and 1 share node 0.
  const std::uint64_t n = 30'000'000;
  EXPECT_NEAR(time_sec("send-recv", 2, n, "direct"), kIntraSec + n / kGpuBytesPerSec, 1e-12);
}

TEST(Nodes, RingCrossingNodesRunsAtTheNicsSpeed) {
  // 8 ranks: edges 3 -> 4 and 7 -> 0 cross nodes, one flow per NIC direction; every step waits
  // for them: 2(p-1) (alpha_inter + (n/p) / B_nic).
  const int p = 8;
  const std::uint64_t n = 80'000'000;
  EXPECT_NEAR(time_sec("all-reduce", p, n, "ring"),
              2.0 * (p - 1) * (kInterSec + static_cast<double>(n) / p / kNicBytesPerSec), 1e-9);
}

TEST(Nodes, AllToAllSharesTheNicAmongTheNodesGpus) {
  // 8 ranks, 4 per node: each GPU sends n/8 to each of the 4 GPUs of the other node, so 16
  // flows of n/8 cross each NIC direction, sharing 25 GB/s: alpha_inter + 16 (n/8) / B_nic =
  // alpha_inter + 2n / B_nic. (Intra-node flows finish first on the 300 GB/s GPU links.)
  const std::uint64_t n = 8'000'000;
  EXPECT_NEAR(time_sec("all-to-all", 8, n, "direct"), kInterSec + 2.0 * n / kNicBytesPerSec, 1e-9);
}

}  // namespace
}  // namespace dtsim::sim
