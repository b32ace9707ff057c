// The planner's network: path classes read from platform specs, and ring alpha-beta times.
#include "sim/planner/network_model.h"

#include <gtest/gtest.h>

namespace dtsim::sim {
namespace {

// 2 nodes of 8 GPUs: GPU links 240 GB/s and 1.7 us, NIC 200 GB/s and 4 us, one switch of
// 0.5 us links (PRESETS.md's DGX A100 numbers, written out).
PlannerNetwork two_nodes() {
  const platforms::PlatformSpec spec{
      .file = "two_nodes",
      .topology =
          platforms::StarSpec{.hosts = 2,  // nodes: 16 GPUs
                              .link = {.bandwidth_bytes_per_sec = 1e12, .latency_sec = 0.5e-6},
                              .node = platforms::NodeSpec{.gpus = 8,
                                                          .gpu_link_bandwidth_bytes_per_sec = 240e9,
                                                          .gpu_link_latency_sec = 1.7e-6,
                                                          .nic_bandwidth_bytes_per_sec = 200e9,
                                                          .nic_latency_sec = 4e-6}}};
  return planner_network(spec);
}

TEST(PlannerNetwork, ReadsNodePathsFromTheSpec) {
  const PlannerNetwork net = two_nodes();
  EXPECT_EQ(net.hosts, 16);
  EXPECT_EQ(net.gpus_per_node, 8);
  EXPECT_DOUBLE_EQ(net.intra.bandwidth_bytes_per_sec, 240e9);
  EXPECT_DOUBLE_EQ(net.intra.latency_sec, 3.4e-6);  // up and down a GPU link
  // GPU links 2 x 1.7, NIC links 2 x 4, the switch's links 2 x 0.5.
  EXPECT_NEAR(net.inter.latency_sec, 12.4e-6, 1e-15);
  EXPECT_DOUBLE_EQ(net.nic_bytes_per_sec, 200e9);
}

TEST(PlannerNetwork, SharesTheNicAmongTheGroupsLeavingANode) {
  const PlannerNetwork net = two_nodes();
  // A tp=8 group fits a node; a dp group of stride 8 has one member per node and every GPU of a
  // node in such a group: 8 flows on the NIC, 25 GB/s each; stride 2: 2 flows, 100 GB/s.
  EXPECT_DOUBLE_EQ(group_path(net, {.size = 8, .stride = 1}).bandwidth_bytes_per_sec, 240e9);
  EXPECT_DOUBLE_EQ(group_path(net, {.size = 2, .stride = 8}).bandwidth_bytes_per_sec, 25e9);
  EXPECT_DOUBLE_EQ(group_path(net, {.size = 8, .stride = 2}).bandwidth_bytes_per_sec, 100e9);
}

TEST(RingSec, IsTheAlphaBetaRing) {
  // 16 ranks, 1 GiB, 25 GB/s and 1 us per link on a star (2 us per route): all-reduce
  // 2(n-1) alpha + 2(n-1)/n S/B = 30 * 2 us + 30/16 * 2^30 / 25e9 s; all-gather half of it.
  const platforms::PlatformSpec spec{
      .file = "star",
      .topology = platforms::StarSpec{
          .hosts = 16, .link = {.bandwidth_bytes_per_sec = 25e9, .latency_sec = 1e-6}}};
  const PlannerNetwork net = planner_network(spec);
  const RankGroup all{.size = 16, .stride = 1};
  const double bytes = 1 << 30;
  EXPECT_DOUBLE_EQ(ring_sec(net, RingOp::kAllReduce, all, 1 << 30),
                   30 * 2e-6 + 30.0 / 16 * bytes / 25e9);
  EXPECT_DOUBLE_EQ(ring_sec(net, RingOp::kAllGather, all, 1 << 30),
                   15 * 2e-6 + 15.0 / 16 * bytes / 25e9);
  EXPECT_DOUBLE_EQ(transfer_sec(net, {.size = 2, .stride = 1}, 1000), 2e-6 + 1000 / 25e9);
  EXPECT_EQ(ring_sec(net, RingOp::kAllReduce, {.size = 1}, 1 << 30), 0);
}

TEST(PlannerNetwork, RefusesTopologiesItCannotRead) {
  const platforms::PlatformSpec spec{.file = "t.json", .topology = platforms::TorusSpec{}};
  try {
    (void)planner_network(spec);
    FAIL();
  } catch (const platforms::PlatformError& e) {
    EXPECT_STREQ(e.what(),
                 "t.json: the planner's estimate supports star and fat-tree platforms, not torus");
  }
}

}  // namespace
}  // namespace dtsim::sim
