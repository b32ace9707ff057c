// Dragonfly (SimGrid's DragonflyZone) against closed forms, exact model.
// tests/testdata/sim_dragonfly8.json: 2 groups of 1 chassis of 2 routers, 2 hosts per router;
// every link 25 GB/s and 1 us. Host index = node + 2 (router + 2 group):
//   hosts 0,1: group 0 router 0;  2,3: group 0 router 1;  4,5: group 1 router 0;  6,7: group 1
//   router 1. The blue link between groups 0 and 1 joins router 1 of group 0 (SimGrid attaches
//   group g's link to group h at router h) and router 0 of group 1.
// SimGrid's minimal route: host link up; if the groups differ, a green link to the router of
// the source chassis that holds the blue link (unless already there), the blue link; a green
// link to the destination router (unless there); host link down. Latency = links x 1 us.
// Every TEST runs in its own process.
#include <string>

#include <gtest/gtest.h>

#include "sim/run/simulation.h"

namespace dtsim::sim {
namespace {

constexpr double kLinkSec = 1e-6;
constexpr double kBytesPerSec = 25e9;

double time_sec(const std::string& op, int ranks, int root, std::uint64_t n,
                const std::string& algorithm, const std::string& platform = "sim_dragonfly8.json") {
  return simulate_collective({.run = {.platform_path = "tests/testdata/" + platform,
                                      .ranks = ranks,
                                      .algorithm = algorithm},
                              .op = op,
                              .bytes = n,
                              .root = root})
      .time_sec;
}

TEST(Dragonfly, RingInsideOneRouterCrossesTwoLinksPerEdge) {
  // Ranks 0, 1 share router 0: host link up, host link down, alpha = 2 us.
  // Ring all-reduce: 2(p-1) (alpha + (n/p) / B), p = 2.
  const double n = 100e6, p = 2;
  const double expected = 2 * (p - 1) * (2 * kLinkSec + n / p / kBytesPerSec);
  EXPECT_NEAR(time_sec("all-reduce", 2, 0, 100'000'000, "ring"), expected, 1e-6 * expected);
}

TEST(Dragonfly, BlueLinkJoinsRouterOneOfGroupZeroToRouterZeroOfGroupOne) {
  // Rank 3 (group 0, router 1) -> 4 (group 1, router 0): host, blue, host = 3 links.
  const double n = 50e6;
  EXPECT_NEAR(time_sec("send-recv", 5, 3, 50'000'000, "direct"), 3 * kLinkSec + n / kBytesPerSec,
              1e-12);
}

TEST(Dragonfly, RingAcrossGroupsPaysItsLongestEdge) {
  // Edges: 0->1, 2->3, 4->5, 6->7 same router (2 links); 1->2 and 5->6 green (3 links);
  // 3->4 blue (3 links); 7->0 from group 1 router 1: green to router 0, blue to group 0 router
  // 1, green to router 0: 5 links. No link carries two edges in one direction, so every flow
  // gets B: T = 2(p-1) (5 us + (n/p) / B), p = 8.
  const double n = 100e6, p = 8;
  const double expected = 2 * (p - 1) * (5 * kLinkSec + n / p / kBytesPerSec);
  EXPECT_NEAR(time_sec("all-reduce", 8, 0, 100'000'000, "ring"), expected, 1e-6 * expected);
}

// sim_dragonfly8_kinds.json: the same dragonfly with host links 25 GB/s and 1 us, green links
// 10 GB/s and 2 us, blue links 5 GB/s and 10 us (black: none in a one-chassis group).
TEST(Dragonfly, GreenLinkOfItsKindJoinsTwoRoutersOfAChassis) {
  // Rank 1 (router 0) -> 2 (router 1): host 1 us, green 2 us, host 1 us; bounded by 10 GB/s.
  const double n = 50e6;
  EXPECT_NEAR(time_sec("send-recv", 3, 1, 50'000'000, "direct", "sim_dragonfly8_kinds.json"),
              4e-6 + n / 10e9, 1e-12);
}

TEST(Dragonfly, BlueLinkOfItsKindJoinsTheGroups) {
  // Rank 3 -> 4: host 1 us, blue 10 us, host 1 us; bounded by 5 GB/s.
  const double n = 50e6;
  EXPECT_NEAR(time_sec("send-recv", 5, 3, 50'000'000, "direct", "sim_dragonfly8_kinds.json"),
              12e-6 + n / 5e9, 1e-12);
}

}  // namespace
}  // namespace dtsim::sim
