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
        Expected{"pcie4-25gbe", 4, 25e9 / 8}, Expected{"pcie8-fdr", 8, 56e9 / 8}}) {
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

TEST(Presets, DualRootPcieGpusShareTheirSwitchUplink) {
  // PRESETS.md: 2 GPUs per PLX switch share its PCIe 3.0 x16 uplink (12 GB/s, NCCL's rate).
  const auto spec = std::get<FatTreeSpec>(*make_preset("pcie8-fdr", 2));
  EXPECT_DOUBLE_EQ(spec.node->gpu_link_bandwidth_bytes_per_sec, 12e9 / 2);
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
       {"dgx1-v100", "dgx2h", "dgx-a100", "hgx-h200", "pcie4-25gbe", "pcie8-fdr", "tpu-torus"}) {
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
                  "dgx-a100, hgx-h200, pcie4-25gbe, pcie8-fdr, tpu-torus)");
  }
}

}  // namespace
}  // namespace dtsim::platforms
