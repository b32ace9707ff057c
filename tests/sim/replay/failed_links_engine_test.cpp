// Failed fat-tree links, routed around (platforms/FORMAT.md, "Perturbations"), against closed
// forms, exact model. Test platforms: 2 leaves of 2 hosts, links 25 GB/s and 1 us; a route
// between leaves is host-leaf-top-leaf-host, 4 links, 4 us. Every TEST runs in its own process.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/sim/ring_on_hosts.h"

namespace dtsim::sim {
namespace {

constexpr double kBytesPerSec = 25e9;

// Ring all-reduce: 2(p-1) (alpha_max + (n/p) / b_min); here every edge crosses the leaves.
double ring_closed_form(double p, double n, double b_min) {
  return 2 * (p - 1) * (4e-6 + n / p / b_min);
}

// Strided: ranks 0..3 on hosts 0, 2, 1, 3, so ring edges 0->2, 2->1, 1->3, 3->0 all cross, two
// flows leaving and two entering each leaf.
const std::vector<std::size_t> kStrided{0, 2, 1, 3};

TEST(FailedLinks, SpineLinkLostTwoFlowsShareTheOtherSpine) {
  // sim_fat_tree4_spine_failed.json: 2 spines (up [1, 2]); leaf 0's link to spine 0 failed. Both
  // flows out of leaf 0 (to hosts 2, 3) must climb to spine 1, and both flows into leaf 0 must
  // come down from spine 1: each of those links carries 2 flows, b_min = B / 2.
  const double n = 100e6;
  const double expected = ring_closed_form(4, n, kBytesPerSec / 2);
  EXPECT_NEAR(ring_sec("sim_fat_tree4_spine_failed.json", kStrided, 100'000'000), expected,
              1e-6 * expected);
}

TEST(FailedLinks, ParallelLinkLostTwoFlowsShareItsTwin) {
  // sim_fat_tree4_parallel_failed.json: 1 spine, 2 parallel links per leaf (parallel [1, 2]);
  // one of leaf 0's failed: its 2 flows up and 2 down share the other link: b_min = B / 2.
  const double n = 100e6;
  const double expected = ring_closed_form(4, n, kBytesPerSec / 2);
  EXPECT_NEAR(ring_sec("sim_fat_tree4_parallel_failed.json", kStrided, 100'000'000), expected,
              1e-6 * expected);
}

TEST(FailedLinks, ReroutedFlowsWithoutContentionKeepTheirSpeed) {
  // Linear ring on the spine-failed tree: only 1 -> 2 and 3 -> 0 cross, one flow each way per
  // leaf, both over spine 1 in different directions: b_min = B, as if nothing failed. (Only
  // edges 1->2 and 3->0 take 4 us; the step waits for them.)
  const double n = 100e6;
  const double expected = ring_closed_form(4, n, kBytesPerSec);
  EXPECT_NEAR(ring_sec("sim_fat_tree4_spine_failed.json", {0, 1, 2, 3}, 100'000'000), expected,
              1e-6 * expected);
}

TEST(FailedLinks, CutLeafIsAnErrorNamingTheHosts) {
  // sim_fat_tree4_cut.json: one spine, leaf 0's only link to it failed.
  try {
    (void)ring_sec("sim_fat_tree4_cut.json", {0, 1, 2, 3}, 1000);
    FAIL() << "no error";
  } catch (const platforms::PlatformError& e) {
    EXPECT_STREQ(e.what(),
                 "tests/testdata/sim_fat_tree4_cut.json: /perturbations/failed_links: host 0 "
                 "cannot reach host 2 without the failed links");
  }
}

}  // namespace
}  // namespace dtsim::sim
