#include "platforms/presets.h"

#include <fstream>

#include <gtest/gtest.h>

namespace dtsim::platforms {
namespace {

TEST(Presets, EveryPresetBuildsASpecWithItsGpus) {
  // GPUs per node and NIC bandwidth from platforms/PRESETS.md (datasheets).
  struct Expected {
    const char* name;
    unsigned gpus;
    double nic_bytes_per_sec;
  };
  for (const Expected& e :
       {Expected{"dgx1-v100", 8, 4 * 100e9 / 8}, Expected{"dgx2h", 16, 8 * 100e9 / 8},
        Expected{"dgx-a100", 8, 8 * 200e9 / 8}, Expected{"hgx-h200", 8, 8 * 400e9 / 8},
        Expected{"pcie4-25gbe", 4, 25e9 / 8}, Expected{"pcie8-fdr", 8, 56e9 / 8},
        // 8 x 400 Gb/s NDR ConnectX-7; p5: 32 x 100 Gb/s EFA.
        Expected{"dgx-h100", 8, 8 * 400e9 / 8}, Expected{"hgx-b200", 8, 8 * 400e9 / 8},
        Expected{"aws-p5", 8, 32 * 100e9 / 8}, Expected{"aws-p4d", 8, 4 * 100e9 / 8},
        Expected{"pcie8-single-root", 8, 100e9 / 8}, Expected{"pcie8-dual-root", 8, 100e9 / 8},
        // One HDR (200 Gb/s) and one NDR (400 Gb/s) NIC: the presets' stated assumption.
        Expected{"pcie8-gen4-single-root", 8, 200e9 / 8},
        Expected{"pcie8-gen5-single-root", 8, 400e9 / 8}}) {
    const PlatformSpec spec{.file = "x", .topology = *make_preset(e.name, 4)};
    EXPECT_EQ(spec.gpus_per_node(), e.gpus) << e.name;
    EXPECT_EQ(spec.host_count(), 4 * e.gpus) << e.name;
    const auto* tree = std::get_if<FatTreeSpec>(&spec.topology);
    const auto* star = std::get_if<StarSpec>(&spec.topology);
    const auto& node = tree != nullptr ? tree->node : star->node;
    ASSERT_TRUE(node.has_value()) << e.name;
    EXPECT_DOUBLE_EQ(node->nic_bandwidth_bytes_per_sec, e.nic_bytes_per_sec) << e.name;
  }
}

TEST(Presets, GpuLinksCarryNcclsAchievableNvlinkBandwidth) {
  // NCCL topo.h: 20 GB/s per NVLink on SM70/SM80, 20.6 on SM90 (~80% of the 25 GB/s line rate).
  // DGX A100: 12 links (600 GB/s bidirectional line rate) -> 240 GB/s per direction.
  const auto a100 = std::get<FatTreeSpec>(*make_preset("dgx-a100", 2));
  EXPECT_DOUBLE_EQ(a100.node->gpu_link_bandwidth_bytes_per_sec, 12 * 20e9);
  // DGX-1 V100: 6 links (300 GB/s bidirectional line rate) -> 120 GB/s.
  const auto v100 = std::get<FatTreeSpec>(*make_preset("dgx1-v100", 2));
  EXPECT_DOUBLE_EQ(v100.node->gpu_link_bandwidth_bytes_per_sec, 6 * 20e9);
}

TEST(Presets, DualRootPcieRingsCrossTheSocketLink) {
  // NCCL topo.h: BDW_QPI_BW 6.0 GB/s between sockets, PCI_BW 12.0 for PCIe 3.0 x16.
  for (const char* dual : {"pcie8-fdr", "pcie8-dual-root"}) {
    const auto spec = std::get<FatTreeSpec>(*make_preset(dual, 2));
    EXPECT_DOUBLE_EQ(spec.node->gpu_link_bandwidth_bytes_per_sec, 6e9) << dual;
    EXPECT_FALSE(spec.node->nvlink) << dual;
  }
  const auto single = std::get<FatTreeSpec>(*make_preset("pcie8-single-root", 2));
  EXPECT_DOUBLE_EQ(single.node->gpu_link_bandwidth_bytes_per_sec, 12e9);
}

TEST(Presets, NewerPcieGenerationsDoubleTheGpuLink) {
  // NCCL topo.cc: a PCIe link is width x lane rate, 6 / 12 / 24 Gb/s per lane for Gen3 / Gen4
  // / Gen5: x16 = 12, 24, 48 GB/s (the lanes' Gb/s over 8: bits to bytes).
  const std::pair<const char*, double> generations[] = {{"pcie8-single-root", 16 * 6e9 / 8},
                                                        {"pcie8-gen4-single-root", 16 * 12e9 / 8},
                                                        {"pcie8-gen5-single-root", 16 * 24e9 / 8}};
  for (const auto& [name, bytes_per_sec] : generations) {
    const auto spec = std::get<FatTreeSpec>(*make_preset(name, 2));
    EXPECT_DOUBLE_EQ(spec.node->gpu_link_bandwidth_bytes_per_sec, bytes_per_sec) << name;
    EXPECT_FALSE(spec.node->nvlink) << name;
  }
}

TEST(Presets, HopperAndBlackwellNodesReduceInTheSwitch) {
  // NCCL topo.h: SM90 20.6 GB/s and SM100 40.0 GB/s per NVLink; 18 links on both.
  const auto h100 = std::get<FatTreeSpec>(*make_preset("dgx-h100", 2));
  EXPECT_DOUBLE_EQ(h100.node->gpu_link_bandwidth_bytes_per_sec, 18 * 20.6e9);
  const auto b200 = std::get<FatTreeSpec>(*make_preset("hgx-b200", 2));
  EXPECT_DOUBLE_EQ(b200.node->gpu_link_bandwidth_bytes_per_sec, 18 * 40e9);
  for (const char* hopper : {"dgx-h100", "hgx-b200", "aws-p5"}) {
    const auto spec = std::get<FatTreeSpec>(*make_preset(hopper, 2));
    EXPECT_TRUE(spec.node->nvlink_sharp) << hopper;
    EXPECT_TRUE(spec.node->nvlink) << hopper;
    EXPECT_FALSE(spec.node->rails) << hopper;  // PRESETS.md: one NIC link, as NCCL's rings see it
  }
  // p4d: A100 (second-generation NVSwitch, no NVLink SHARP).
  const auto p4d = std::get<FatTreeSpec>(*make_preset("aws-p4d", 2));
  EXPECT_FALSE(p4d.node->nvlink_sharp);
  EXPECT_DOUBLE_EQ(p4d.node->gpu_link_bandwidth_bytes_per_sec, 12 * 20e9);
}

TEST(Presets, RoutesCostNcclsPerHopLatency) {
  // NCCL tuning.cc, Ring/Simple: 3.4 us per NVLink hop, 14 us per network hop. An intra-node
  // route crosses two GPU links; an inter-node one two GPU links, two NICs, two fabric links.
  const auto spec = std::get<FatTreeSpec>(*make_preset("dgx-a100", 2));
  EXPECT_NEAR(2 * spec.node->gpu_link_latency_sec, 3.4e-6, 1e-15);
  EXPECT_NEAR(
      2 * (spec.node->gpu_link_latency_sec + spec.node->nic_latency_sec + spec.link.latency_sec),
      14e-6, 1e-15);
}

TEST(Presets, HgxH200GpusGetEighteenNvlink4Links) {
  // 18 links x 20.6 GB/s (NCCL topo.h, SM90), of 900 GB/s bidirectional line rate.
  const auto spec = std::get<FatTreeSpec>(*make_preset("hgx-h200", 1));
  EXPECT_DOUBLE_EQ(spec.node->gpu_link_bandwidth_bytes_per_sec, 18 * 20.6e9);
  // Its third-generation NVSwitch reduces in the network (NVLink SHARP); A100's does not.
  EXPECT_TRUE(spec.node->nvlink_sharp);
  EXPECT_FALSE(std::get<FatTreeSpec>(*make_preset("dgx-a100", 1)).node->nvlink_sharp);
}

TEST(Presets, LargeClustersGetATwoLevelNonBlockingFatTree) {
  // 100 nodes: 4 leaves of 32 (128 endpoints >= 100), each leaf wired to 32 spines.
  const auto spec = std::get<FatTreeSpec>(*make_preset("dgx-a100", 100));
  EXPECT_EQ(spec.levels, 2u);
  EXPECT_EQ(spec.down, (std::vector<unsigned>{32, 4}));
  EXPECT_EQ(spec.up, (std::vector<unsigned>{1, 32}));
  // Up to 32 nodes: one switch.
  EXPECT_EQ(std::get<FatTreeSpec>(*make_preset("dgx-a100", 32)).levels, 1u);
}

TEST(Presets, TpuTorusIsTheMostCubicGrid) {
  EXPECT_EQ(std::get<TorusSpec>(*make_preset("tpu-torus", 64)).dims,
            (std::vector<unsigned>{4, 4, 4}));
  EXPECT_EQ(std::get<TorusSpec>(*make_preset("tpu-torus", 128)).dims,
            (std::vector<unsigned>{8, 4, 4}));
  EXPECT_EQ(std::get<TorusSpec>(*make_preset("tpu-torus", 7)).dims,
            (std::vector<unsigned>{7, 1, 1}));
}

TEST(Presets, ShippedPresetFilesLoad) {
  for (const char* f :
       {"dgx1-v100", "dgx2h", "dgx-a100", "hgx-h200", "dgx-h100", "hgx-b200", "aws-p4d", "aws-p5",
        "pcie8-single-root", "pcie8-dual-root", "pcie8-gen4-single-root", "pcie8-gen5-single-root",
        "pcie4-25gbe", "pcie8-fdr", "tpu-torus"}) {
    const PlatformSpec spec =
        read_platform_spec(std::string("platforms/files/presets/") + f + ".json");
    EXPECT_GT(spec.host_count(), 0u) << f;
  }
}

TEST(Presets, UnknownPresetListsTheKnownOnes) {
  const std::string path = testing::TempDir() + "preset.json";
  std::ofstream(path) << R"({"preset": "dgx-z", "nodes": 2})";
  try {
    (void)read_platform_spec(path);
    FAIL();
  } catch (const PlatformError& e) {
    EXPECT_EQ(std::string(e.what()),
              path +
                  ": /preset: unknown preset \"dgx-z\" (expected one of dgx1-v100, dgx2h, "
                  "dgx-a100, hgx-h200, dgx-h100, hgx-b200, aws-p4d, aws-p5, "
                  "pcie8-single-root, pcie8-dual-root, pcie8-gen4-single-root, "
                  "pcie8-gen5-single-root, pcie4-25gbe, pcie8-fdr, tpu-torus)");
  }
}

}  // namespace
}  // namespace dtsim::platforms
