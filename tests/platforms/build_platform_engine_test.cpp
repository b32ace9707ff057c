// Built platforms: canonical host order and routes, checked on a live SimGrid engine.
// Every TEST runs in its own process (one SimGrid engine per process).
#include <gtest/gtest.h>
#include <simgrid/s4u.hpp>

#include "platforms/build_platform.h"

namespace dtsim::platforms {
namespace {

namespace sg4 = simgrid::s4u;

Platform build(const std::string& file) {
  static int argc = 1;
  static char name[] = "test";
  static char* argv[] = {name, nullptr};
  static sg4::Engine engine(&argc, argv);
  return build_platform(read_platform_spec(file));
}

TEST(BuildPlatform, FatTreeHostsAreLeafMajor) {
  // 4 leaves of 4 hosts: hosts 0-3 share a leaf (2 links of 1 us between them), host 3 -> 4
  // crosses a spine (4 links).
  const Platform p = build("tests/testdata/sim_fat_tree16.json");
  ASSERT_EQ(p.hosts.size(), 16u);
  EXPECT_DOUBLE_EQ(route_latency_sec(p.hosts[0], p.hosts[3]), 2e-6);
  EXPECT_DOUBLE_EQ(route_latency_sec(p.hosts[3], p.hosts[4]), 4e-6);
  EXPECT_DOUBLE_EQ(route_latency_sec(p.hosts[12], p.hosts[15]), 2e-6);
}

TEST(BuildPlatform, XmlHostsFollowDeclarationOrderNotNames) {
  // SimGrid lists hosts by name (node-0, node-1, node-10, ...); the canonical order is the
  // cluster's radical order, so hosts[2] is node-2 and hosts[10] is node-10.
  const Platform p = build("tests/testdata/sim_fat_tree16.xml");
  ASSERT_EQ(p.hosts.size(), 16u);
  for (std::size_t i = 0; i < p.hosts.size(); ++i) {
    EXPECT_EQ(p.hosts[i]->get_name(), "node-" + std::to_string(i));
  }
  EXPECT_DOUBLE_EQ(route_latency_sec(p.hosts[0], p.hosts[3]), 2e-6);
  EXPECT_DOUBLE_EQ(route_latency_sec(p.hosts[3], p.hosts[4]), 4e-6);
}

TEST(BuildPlatform, TorusHostsAreRowMajor) {
  // 4x4x4, index = x + 4y + 16z: host 1 is (1,0,0), one hop from host 0; host 3 is (3,0,0), one
  // wrap-around hop; host 21 is (1,1,1), three hops.
  const Platform p = build("tests/testdata/sim_torus64.json");
  ASSERT_EQ(p.hosts.size(), 64u);
  EXPECT_DOUBLE_EQ(route_latency_sec(p.hosts[0], p.hosts[1]), 1e-6);
  EXPECT_DOUBLE_EQ(route_latency_sec(p.hosts[0], p.hosts[3]), 1e-6);
  EXPECT_DOUBLE_EQ(route_latency_sec(p.hosts[0], p.hosts[21]), 3e-6);
}

TEST(BuildPlatform, StarRoutesCrossTwoLinks) {
  const Platform p = build("tests/testdata/sim_star16_25GBps.json");
  ASSERT_EQ(p.hosts.size(), 16u);
  EXPECT_DOUBLE_EQ(route_latency_sec(p.hosts[0], p.hosts[15]), 2e-6);
}

}  // namespace
}  // namespace dtsim::platforms
