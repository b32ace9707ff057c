// Multi-GPU nodes (platforms/FORMAT.md "node"): routes, and the NIC shared by a node's GPUs.
// tests/testdata/sim_two_nodes.json: 2 nodes of 4 GPUs; GPU links 300 GB/s and 0.5 us; one NIC
// link per node of 2 x 100 Gb/s = 25 GB/s and 2 us; fabric links 100 GB/s and 1 us (a single
// switch); sim_two_nodes_nvls.json is the same with "nvlink_sharp": true, sim_two_nodes_nvlink.json
// with "nvlink": true. Every TEST runs in its own process.
#include <gtest/gtest.h>

#include "sim/run/simulation.h"

namespace dtsim::sim {
namespace {

constexpr double kNicBytesPerSec = 2 * 100e9 / 8;  // 2 NICs of 100 Gb/s (bits!) = 25 GB/s
constexpr double kGpuBytesPerSec = 300e9;
constexpr double kIntraSec = 2 * 0.5e-6;                        // gpu link up, gpu link down
constexpr double kInterSec = 2 * 0.5e-6 + 2 * 2e-6 + 2 * 1e-6;  // + NIC links + fabric links

double time_sec(const std::string& op, int p, std::uint64_t n, const std::string& algorithm,
                const std::string& platform = "sim_two_nodes.json",
                const std::string& placement = "linear") {
  return simulate_collective({.run = {.platform_path = "tests/testdata/" + platform,
                                      .ranks = p,
                                      .placement = *parse_placement(placement),
                                      .algorithm = algorithm},
                              .op = op,
                              .bytes = n})
      .time_sec;
}

TEST(Nodes, SendInsideANodeUsesOnlyGpuLinks) {
  // Ranks 0 and 1 share node 0.
  const std::uint64_t n = 30'000'000;
  EXPECT_NEAR(time_sec("send-recv", 2, n, "direct"), kIntraSec + n / kGpuBytesPerSec, 1e-12);
}

// Rank 0 sends 600 MB to rank 1 (same node) and 25 MB to rank 4 (the other node) at once. The
// second runs at the NIC's 25 GB/s for 25e6 / 25e9 = 1 ms, inside the first's 2 ms. Through one
// GPU link both share rank 0's 300 GB/s: the first gets 275 GB/s for that ms, so it carries 25 MB
// less then and ends at kIntraSec + (600e6 + 25e6) / 300e9. With NVLink GPU links the second
// takes a PCIe path of its own and the first ends at kIntraSec + 600e6 / 300e9.
double send_in_and_out_sec(const std::string& platform) {
  return simulate_graph({.run = {.platform_path = "tests/testdata/" + platform},
                         .graph_path = "tests/testdata/graph_send_in_and_out.json"})
      .iteration_time_sec;
}

TEST(Nodes, TrafficLeavingANodeSharesThePcieGpusLinkWithTrafficInsideIt) {
  EXPECT_NEAR(send_in_and_out_sec("sim_two_nodes.json"),
              kIntraSec + (600e6 + 25e6) / kGpuBytesPerSec, 1e-12);
}

TEST(Nodes, NvlinkGpusReachTheNicOverAPathOfTheirOwn) {
  EXPECT_NEAR(send_in_and_out_sec("sim_two_nodes_nvlink.json"), kIntraSec + 600e6 / kGpuBytesPerSec,
              1e-12);
}

TEST(Nodes, RingCrossingNodesRunsAtTheNicsSpeed) {
  // 8 ranks: edges 3 -> 4 and 7 -> 0 cross nodes, one flow per NIC direction; every step waits
  // for them: 2(p-1) (alpha_inter + (n/p) / B_nic).
  const int p = 8;
  const std::uint64_t n = 80'000'000;
  EXPECT_NEAR(time_sec("all-reduce", p, n, "ring"),
              2.0 * (p - 1) * (kInterSec + static_cast<double>(n) / p / kNicBytesPerSec), 1e-9);
}

TEST(Nodes, NvlinkNodesKeepTheRingsTimeAcrossNodes) {
  // The PCIe path has the GPU link's bandwidth and latency: the same closed form as above.
  const int p = 8;
  const std::uint64_t n = 80'000'000;
  EXPECT_NEAR(time_sec("all-reduce", p, n, "ring", "sim_two_nodes_nvlink.json"),
              2.0 * (p - 1) * (kInterSec + static_cast<double>(n) / p / kNicBytesPerSec), 1e-9);
}

TEST(Nodes, NvlsCarriesSPlusSOverNPerGpuLinkAfterNcclsLatency) {
  // NVLS on the 4 GPUs of node 0 (sim/collectives/nvls.h): 25 us of NCCL's NVLS latency, then
  // S (n+1)/n bytes on every GPU link direction at NCCL's 0.85 efficiency:
  // 25 us + S (n+1) / (0.85 n B_gpu).
  const int p = 4;
  const std::uint64_t n = 600'000'000;
  const double expected = 25e-6 + static_cast<double>(n) * (p + 1) / (0.85 * p * kGpuBytesPerSec);
  EXPECT_NEAR(time_sec("all-reduce", p, n, "nvls", "sim_two_nodes_nvls.json"), expected,
              1e-9 * expected);
}

TEST(Nodes, NvlsLatencyAddsToTheCollectiveLatency) {
  // The 25 us wait starts when the ranks enter, i.e. after --collective-latency: the two add.
  const int p = 4;
  const std::uint64_t n = 600'000'000;
  const double expected =
      10e-6 + 25e-6 + static_cast<double>(n) * (p + 1) / (0.85 * p * kGpuBytesPerSec);
  const double got =
      simulate_collective({.run = {.platform_path = "tests/testdata/sim_two_nodes_nvls.json",
                                   .ranks = p,
                                   .algorithm = "nvls",
                                   .collective_latency_sec = 10e-6},
                           .op = "all-reduce",
                           .bytes = n})
          .time_sec;
  EXPECT_NEAR(got, expected, 1e-9 * expected);
}

TEST(Nodes, NvlsWithoutInSwitchReductionIsAnError) {
  try {
    (void)time_sec("all-reduce", 4, 1000, "nvls");
    FAIL();
  } catch (const std::exception& e) {
    EXPECT_STREQ(e.what(),
                 "algorithm nvls: nvls needs nodes whose NVSwitch reduces in the network (node "
                 "\"nvlink_sharp\": true, as in the hgx-h200 preset)");
  }
}

TEST(Nodes, NvlsAcrossNodesIsAnError) {
  try {
    (void)time_sec("all-reduce", 8, 1000, "nvls", "sim_two_nodes_nvls.json");
    FAIL();
  } catch (const std::exception& e) {
    EXPECT_STREQ(e.what(),
                 "algorithm nvls: nvls needs every rank on one NVSwitch node, and 8 ranks do "
                 "not fit in a node of 4 GPUs (across nodes it needs SHARP switches: a fat-tree "
                 "with \"sharp\": true)");
  }
}

TEST(Nodes, NvlsAcrossSharpSwitchesReducesInTheNetwork) {
  // sim/collectives/nvls.h on 2 nodes of 4 GPUs whose fat-tree reduces (SHARP), both parts at
  // once: NVLS inside each node, and each GPU's shard S/g up to the switches and back, so the
  // node's NIC link (25 GB/s) carries g x S/g = S each way, the bottleneck here: the node's GPU
  // links carry S (g+1) / (0.85 g) + S/g = 1.72 S at 300 GB/s. The 25 us wait less the slowest
  // route, then that route: 25 us + S / B_nic.
  const double n = 600'000'000;
  const double expected = 25e-6 + n / kNicBytesPerSec;
  EXPECT_NEAR(time_sec("all-reduce", 8, 600'000'000, "nvls", "sim_two_nodes_sharp.json"), expected,
              1e-9 * expected);
}

TEST(Nodes, NvlsTreeRunsATreeBetweenNodesWithoutSharp) {
  // sim/collectives/nvls.h, nvls-tree on 2 nodes of 4 GPUs, no SHARP: NVLS inside each node and
  // each GPU's shard S/g all-reduced with its peer on the other node over NCCL's two trees of
  // 2 nodes (each edge: half the shard up, half down), so each GPU sends S/g and the node's NIC
  // link (25 GB/s) carries S each way, the bottleneck (the GPU links carry 1.47 S + S/g at
  // 300 GB/s). NCCL's NVLSTree latency, 25 us + 2 floor(log2 2) 20.9 us = 66.8 us, less the
  // slowest route, then that route: 66.8 us + S / B_nic.
  const double n = 600'000'000;
  const double expected = 25e-6 + 2 * 20.9e-6 + n / kNicBytesPerSec;
  EXPECT_NEAR(time_sec("all-reduce", 8, 600'000'000, "nvls-tree", "sim_two_nodes_nvls.json"),
              expected, 1e-9 * expected);
}

TEST(Nodes, NvlsTreeOnFourNodesLoadsTheInteriorNodesTwice) {
  // 4 nodes (sim_four_nodes_nvls.json: sim_two_nodes_nvls.json's node on a 4-host star). Tree 0
  // over the node positions is 0 -> 2 -> {1, 3}, tree 1 (mirrored) 3 -> 1 -> {2, 0}: nodes 1
  // and 2 have four tree edges, nodes 0 and 3 two. Each edge carries half a shard (S/2g) each
  // way, so a GPU of node 1 or 2 sends 2 S/g and their NICs carry 2 S each way: 16 flows of
  // S/2g sharing 25 GB/s, every flow of the job at that rate (each touches node 1 or 2), all
  // ending together. Latency 25 us + 2 floor(log2 4) 20.9 us = 108.6 us.
  const double n = 400'000'000;
  const double expected = 25e-6 + 4 * 20.9e-6 + 2 * n / kNicBytesPerSec;
  EXPECT_NEAR(time_sec("all-reduce", 16, 400'000'000, "nvls-tree", "sim_four_nodes_nvls.json"),
              expected, 1e-9 * expected);
}

TEST(Nodes, NvlsTreeNeedsTwoNodesOfNvlinkSharp) {
  const auto error = [](const std::string& op, int p, const std::string& platform) {
    try {
      (void)time_sec(op, p, 1000, "nvls-tree", platform);
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error("all-reduce", 4, "sim_two_nodes_nvls.json"),
            "algorithm nvls-tree: nvls-tree runs a tree between nodes, and every rank is on node "
            "0 (on one node use nvls)");
  EXPECT_EQ(error("all-gather", 8, "sim_two_nodes_nvls.json"),
            "algorithm nvls-tree: nvls-tree has only all-reduce");
  EXPECT_EQ(error("all-reduce", 8, "sim_two_nodes.json"),
            "algorithm nvls-tree: nvls-tree needs nodes whose NVSwitch reduces in the network "
            "(node \"nvlink_sharp\": true, as in the hgx-h200 preset)");
}

TEST(Nodes, AllToAllSharesTheNicAmongTheNodesGpus) {
  // 8 ranks, 4 per node: each GPU sends n/8 to each of the 4 GPUs of the other node, so 16
  // flows of n/8 cross each NIC direction, sharing 25 GB/s: alpha_inter + 16 (n/8) / B_nic =
  // alpha_inter + 2n / B_nic. (Intra-node flows finish first on the 300 GB/s GPU links.)
  const std::uint64_t n = 8'000'000;
  EXPECT_NEAR(time_sec("all-to-all", 8, n, "direct"), kInterSec + 2.0 * n / kNicBytesPerSec, 1e-9);
}

// Rail-optimized nodes (sim_two_nodes_rails.json): the same two nodes, but each GPU has its own
// NIC link of 200 Gb/s = 25 GB/s and 2 us ("rails": true); sim_two_nodes_4nics.json has the same
// 4 NICs as one shared link of 4 x 25 = 100 GB/s. Fabric links 100 GB/s. Latency across nodes
// is the same in all three: kInterSec.
constexpr double kRailBytesPerSec = 200e9 / 8;

TEST(Nodes, RailRingFlowUsesOnlyItsGpusNic) {
  // Linear ring, 8 ranks: edges 3 -> 4 and 7 -> 0 cross nodes, one flow each way per node.
  // With rails the flow from GPU 3 leaves through NIC 3 alone: b = 25 GB/s.
  // T = 2(p-1) (alpha_inter + (n/p) / B_rail).
  const int p = 8;
  const double n = 80e6;
  const double expected = 2.0 * (p - 1) * (kInterSec + n / p / kRailBytesPerSec);
  EXPECT_NEAR(time_sec("all-reduce", p, 80'000'000, "ring", "sim_two_nodes_rails.json"), expected,
              1e-6 * expected);
}

TEST(Nodes, SharedNicOfFourGivesOneFlowAllFour) {
  // The same ring with the 4 NICs as one 100 GB/s link: the crossing flow gets min(NIC 100,
  // fabric 100, GPU 300) = 100 GB/s, four times a rail. T = 2(p-1) (alpha_inter + (n/p) / 100e9).
  const int p = 8;
  const double n = 80e6;
  const double expected = 2.0 * (p - 1) * (kInterSec + n / p / (4 * kRailBytesPerSec));
  EXPECT_NEAR(time_sec("all-reduce", p, 80'000'000, "ring", "sim_two_nodes_4nics.json"), expected,
              1e-6 * expected);
}

TEST(Nodes, RailsCarryARoundRobinRingsFlowsSideBySide) {
  // Round-robin: every edge crosses nodes, 4 flows leave each node, GPU g's through rail g: each
  // has its NIC alone (25 GB/s), and the 100 GB/s fabric link gives each 100 / 4 = 25 GB/s too.
  // T = 2(p-1) (alpha_inter + (n/p) / B_rail), a quarter of the bandwidth term of the single
  // 25 GB/s NIC of sim_two_nodes.json (PlacementOnNodes.RoundRobinRing...: 4 (n/p) / B_nic).
  const int p = 8;
  const double n = 80e6;
  const double expected = 2.0 * (p - 1) * (kInterSec + n / p / kRailBytesPerSec);
  EXPECT_NEAR(
      time_sec("all-reduce", p, 80'000'000, "ring", "sim_two_nodes_rails.json", "round-robin"),
      expected, 1e-6 * expected);
}

TEST(Nodes, RailNodeGpusTalkOverGpuLinksOnly) {
  // Ranks 0 -> 1 on node 0: GPU link up, GPU link down; the NICs are not on the route.
  const double n = 30e6;
  EXPECT_NEAR(time_sec("send-recv", 2, 30'000'000, "direct", "sim_two_nodes_rails.json"),
              kIntraSec + n / kGpuBytesPerSec, 1e-12);
}

}  // namespace
}  // namespace dtsim::sim
