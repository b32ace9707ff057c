// Rank placement on SimGrid against closed forms (exact model: CM02, no cross-traffic): where
// the ranks sit decides which links a ring shares. Every TEST runs in its own process.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sim/run/simulation.h"
#include "tests/sim/ring_on_hosts.h"

namespace dtsim::sim {
namespace {

constexpr double kLinkSec = 1e-6;      // every test platform: 1 us per link
constexpr double kBytesPerSec = 25e9;  // and "25GBps" = 25e9 bytes/s

// Rank r on leaf r mod 4, position r div 4: host 4 (r mod 4) + r div 4.
std::vector<std::size_t> strided16() {
  std::vector<std::size_t> order;
  for (std::size_t r = 0; r < 16; ++r) {
    order.push_back(4 * (r % 4) + r / 4);
  }
  return order;
}

std::vector<std::size_t> linear16() {
  std::vector<std::size_t> order(16);
  for (std::size_t r = 0; r < 16; ++r) {
    order[r] = r;
  }
  return order;
}

// The fat-trees: 4 leaves of 4 hosts, 4/k spines (up [1, 4/k]), so each leaf has 4 links down
// and 4/k up: k:1 oversubscription (sim_fat_tree16.json: k = 1; _taper2: k = 2; _taper4: k = 4).
std::string tapered(int k) {
  return k == 1 ? "sim_fat_tree16.json" : "sim_fat_tree16_taper" + std::to_string(k) + ".json";
}

class RingOnTaperedFatTree : public testing::TestWithParam<int> {};

// Ring all-reduce, alpha-beta: 2(p-1) steps, each step every rank sends n/p bytes to the next
// and the step ends when the slowest edge is done: T = 2(p-1) (alpha_max + (n/p) / b_min), with
// alpha_max the longest edge's route latency and b_min the smallest bandwidth share of an edge.
// An edge between leaves crosses host-leaf-spine-leaf-host: alpha_max = 4 us in both cases.
//
// Linear: only edges 3->4, 7->8, 11->12, 15->0 leave their leaf, one flow up out of each leaf and
// one down into each: every flow has its links alone, b_min = B, for any k:
//   T_linear = 2(p-1) (4 us + (n/p) / B).
TEST_P(RingOnTaperedFatTree, LinearPlacementLeavesEachLeafOnce) {
  const int k = GetParam();
  const int p = 16;
  const double n = 100e6;
  const double expected = 2.0 * (p - 1) * (4 * kLinkSec + n / p / kBytesPerSec);
  EXPECT_NEAR(ring_sec(tapered(k), linear16(), 100'000'000), expected, 1e-6 * expected);
}

// Strided (rank r on leaf r mod 4): every edge r -> r+1 goes from leaf r mod 4 to the next leaf,
// so each leaf sends 4 flows up, to the 4 hosts of the next leaf (consecutive host indices).
// SimGrid's D-mod-K routing picks the up link by destination index mod (4/k), so the 4 flows
// split evenly: k flows on each of the 4/k up links, and likewise k on each spine -> leaf link.
// Host links carry one flow each way. Max-min sharing with equal route latencies gives each
// flow B/k:  T_strided = 2(p-1) (4 us + k (n/p) / B), i.e. the bandwidth term is k times
// linear's (k = 1: the same time, the tree is non-blocking).
TEST_P(RingOnTaperedFatTree, StridedPlacementSharesEveryUplinkKWays) {
  const int k = GetParam();
  const int p = 16;
  const double n = 100e6;
  const double expected = 2.0 * (p - 1) * (4 * kLinkSec + k * n / p / kBytesPerSec);
  EXPECT_NEAR(ring_sec(tapered(k), strided16(), 100'000'000), expected, 1e-6 * expected);
}

INSTANTIATE_TEST_SUITE_P(Oversubscription, RingOnTaperedFatTree, testing::Values(1, 2, 4));

// tests/testdata/sim_two_nodes.json: 2 nodes of 4 GPUs behind one 25 GB/s NIC link each
// (2 x 100 Gb/s, 2 us), GPU links 300 GB/s and 0.5 us, fabric links 100 GB/s and 1 us.
constexpr double kNicBytesPerSec = 2 * 100e9 / 8;
constexpr double kInterNodeSec = 2 * 0.5e-6 + 2 * 2e-6 + 2 * 1e-6;

double two_nodes_ring_sec(const std::string& placement) {
  return simulate_collective({.run = {.platform_path = "tests/testdata/sim_two_nodes.json",
                                      .ranks = 8,
                                      .placement = *parse_placement(placement),
                                      .algorithm = "ring"},
                              .bytes = 80'000'000})
      .time_sec;
}

TEST(PlacementOnNodes, RoundRobinRingCrossesTheNicFourTimesPerDirection) {
  // Round-robin over 2 nodes: rank r on node r mod 2, so all 8 ring edges cross nodes and the
  // 4 GPUs of a node send (and receive) through their NIC at once: b_min = B_nic / 4 (the
  // fabric link carries the same 4 flows at 100 GB/s, GPU links one each).
  // T = 2(p-1) (alpha_inter + 4 (n/p) / B_nic).
  const double p = 8, n = 80e6;
  const double expected = 2 * (p - 1) * (kInterNodeSec + 4 * n / p / kNicBytesPerSec);
  EXPECT_NEAR(two_nodes_ring_sec("round-robin"), expected, 1e-6 * expected);
}

TEST(PlacementOnNodes, TopologyAwareRingCrossesEachNicOnceLikeLinear) {
  // As linear (Nodes.RingCrossingNodesRunsAtTheNicsSpeed): edges 3->4 and 7->0 cross nodes,
  // one flow per NIC direction:
  // T = 2(p-1) (alpha_inter + (n/p) / B_nic).
  const double p = 8, n = 80e6;
  const double expected = 2 * (p - 1) * (kInterNodeSec + n / p / kNicBytesPerSec);
  EXPECT_NEAR(two_nodes_ring_sec("topology-aware"), expected, 1e-6 * expected);
}

TEST(PlacementOnTorus, TopologyAwareRingHasOnlyOneHopEdges) {
  // sim_torus64.json: 4x4x4 torus, 25 GB/s and 1 us links. Snake order: every consecutive pair
  // differs by 1 in one coordinate, and the walk ends at (0,0,3), one z wrap-around from (0,0,0)
  // (platforms/FORMAT.md, "Rank placement"). 64 edges over 64 distinct node pairs, each a single
  // link in its own direction: no sharing, alpha = 1 us (linear pays 3 us: RingOnTorus).
  // T = 2(p-1) (1 us + (n/p) / B).
  const double p = 64, n = 100e6;
  const double expected = 2 * (p - 1) * (kLinkSec + n / p / kBytesPerSec);
  const double time_sec =
      simulate_collective({.run = {.platform_path = "tests/testdata/sim_torus64.json",
                                   .ranks = 64,
                                   .placement = {.kind = Placement::Kind::kTopologyAware},
                                   .algorithm = "ring"},
                           .bytes = 100'000'000})
          .time_sec;
  EXPECT_NEAR(time_sec, expected, 1e-6 * expected);
}

}  // namespace
}  // namespace dtsim::sim
