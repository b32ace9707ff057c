#include "platforms/describe.h"

#include <gtest/gtest.h>

namespace dtsim::platforms {
namespace {

PlatformSpec spec(Topology t) {
  return {.file = "p.json", .topology = std::move(t)};
}

const LinkSpec k100Gbps{.bandwidth_bytes_per_sec = 12.5e9, .latency_sec = 1e-6};

TEST(Describe, StarBisectionIsHalfTheHostLinks) {
  // 16 hosts at 12.5 GB/s: 8 can send to the other 8 at full speed: 100 GB/s.
  EXPECT_DOUBLE_EQ(summarize(spec(StarSpec{.hosts = 16, .link = k100Gbps})).bisection_bytes_per_sec,
                   100e9);
}

TEST(Describe, NonBlockingFatTreeBisectionIsHalfTheHosts) {
  // 16 leaves x 16 hosts, 16 spines: 256 up-links carry all 128 crossing flows: 1.6 TB/s.
  const auto s = summarize(spec(FatTreeSpec{
      .levels = 2, .down = {16, 16}, .up = {1, 16}, .parallel = {1, 1}, .link = k100Gbps}));
  EXPECT_DOUBLE_EQ(s.bisection_bytes_per_sec, 1600e9);
  ASSERT_EQ(s.levels.size(), 2u);
  EXPECT_EQ(s.levels[0].links, 256u);
  EXPECT_EQ(s.levels[1].links, 256u);
  EXPECT_DOUBLE_EQ(s.levels[0].oversubscription, 1.0);
}

TEST(Describe, TaperedFatTreeIsOversubscribed) {
  // 4 up-links per leaf for 16 hosts: 4:1; 64 up-links of 12.5 GB/s carry half the traffic:
  // 64 * 12.5 / 2 = 400 GB/s.
  const auto s = summarize(spec(FatTreeSpec{
      .levels = 2, .down = {16, 16}, .up = {1, 4}, .parallel = {1, 1}, .link = k100Gbps}));
  EXPECT_DOUBLE_EQ(s.levels[0].oversubscription, 4.0);
  EXPECT_EQ(s.levels[1].links, 64u);
  EXPECT_DOUBLE_EQ(s.bisection_bytes_per_sec, 400e9);
}

TEST(Describe, SlowerUpperLevelIsOversubscribed) {
  // 4 hosts per leaf at 25 GB/s down, 4 spine links of 12.5 GB/s up: 100 : 50 = 2:1.
  // Bisection: 16 hosts * 25 / 2 = 200 GB/s, but the 16 leaf-spine links carry
  // 16 * 12.5 / 2 = 100 GB/s across the cut.
  const LinkSpec host{.bandwidth_bytes_per_sec = 25e9, .latency_sec = 1e-6};
  const LinkSpec spine{.bandwidth_bytes_per_sec = 12.5e9, .latency_sec = 1e-6};
  const auto s = summarize(spec(FatTreeSpec{.levels = 2,
                                            .down = {4, 4},
                                            .up = {1, 4},
                                            .parallel = {1, 1},
                                            .link = host,
                                            .level_links = {host, spine}}));
  EXPECT_DOUBLE_EQ(s.levels[0].oversubscription, 2.0);
  EXPECT_DOUBLE_EQ(s.bisection_bytes_per_sec, 100e9);
}

TEST(Describe, DragonflyBisectionCutsTheBlueLinks) {
  // 4 groups: 2 on each side, joined pairwise by 2 x 2 = 4 blue links of 2 x 25 GB/s
  // (blue_links 2): 200 GB/s; the 4 x 2 x 4 x 2 = 64 hosts could send 64 / 2 x 25 = 800 GB/s.
  const auto s = summarize(
      spec(DragonflySpec{.groups = 4,
                         .chassis = 2,
                         .routers = 4,
                         .nodes = 2,
                         .blue_links = 2,
                         .link = {.bandwidth_bytes_per_sec = 25e9, .latency_sec = 1e-6}}));
  EXPECT_DOUBLE_EQ(s.bisection_bytes_per_sec, 4 * 2 * 25e9);
}

TEST(Describe, RailNodesInjectThroughEveryGpusNic) {
  // 2 nodes of 4 GPUs with a 25 GB/s NIC each (rails), fabric links 100 GB/s: a node injects
  // min(100, 4 x 25) = 100 GB/s; bisection of a 2-node star: 2 x 100 / 2 = 100 GB/s.
  NodeSpec node{.gpus = 4, .nic_bandwidth_bytes_per_sec = 25e9, .rails = true};
  const auto s = summarize(spec(StarSpec{
      .hosts = 2, .link = {.bandwidth_bytes_per_sec = 100e9, .latency_sec = 1e-6}, .node = node}));
  EXPECT_DOUBLE_EQ(s.bisection_bytes_per_sec, 100e9);
}

TEST(Describe, TorusBisectionCutsTheLongestDimensionTwice) {
  // 4x4x4: a plane of 16 links, crossed twice thanks to wrap-around: 32 x 25 GB/s.
  const auto s =
      summarize(spec(TorusSpec{.dims = {4, 4, 4}, .link = {.bandwidth_bytes_per_sec = 25e9}}));
  EXPECT_DOUBLE_EQ(s.bisection_bytes_per_sec, 800e9);
}

TEST(Describe, NodesAreLimitedByTheirNic) {
  // 4 nodes whose NIC (25 GB/s) is slower than their fabric link (50 GB/s): 2 * 25 GB/s.
  const auto s =
      summarize(spec(StarSpec{.hosts = 4,
                              .link = {.bandwidth_bytes_per_sec = 50e9},
                              .node = NodeSpec{.gpus = 8, .nic_bandwidth_bytes_per_sec = 25e9}}));
  EXPECT_EQ(s.gpus, 32u);
  EXPECT_EQ(s.endpoints, 4u);
  EXPECT_DOUBLE_EQ(s.bisection_bytes_per_sec, 50e9);
}

TEST(Describe, ExportsAFatTreeAsASimGridCluster) {
  const std::string xml = to_simgrid_xml(spec(FatTreeSpec{
      .levels = 2, .down = {4, 4}, .up = {1, 4}, .parallel = {1, 1}, .link = k100Gbps}));
  EXPECT_NE(xml.find("radical=\"0-15\""), std::string::npos);
  EXPECT_NE(xml.find("topology=\"FAT_TREE\" topo_parameters=\"2;4,4;1,4;1,1\""), std::string::npos);
  EXPECT_NE(xml.find("bw=\"12500000000Bps\""), std::string::npos);
}

TEST(Describe, RefusesToExportNodes) {
  EXPECT_THROW((void)to_simgrid_xml(spec(StarSpec{.hosts = 2, .node = NodeSpec{.gpus = 8}})),
               PlatformError);
}

}  // namespace
}  // namespace dtsim::platforms
