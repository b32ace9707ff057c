#include "platforms/presets.h"

#include <cmath>

namespace dtsim::platforms {

namespace {

constexpr double kGbps = 1e9 / 8;  // bytes/s per Gb/s
constexpr double kGBps = 1e9;
constexpr double kUs = 1e-6;

// Bandwidths and latencies as NCCL sees them (NVIDIA/nccl v2.30 src/graph/topo.h and tuning.cc;
// sim/collectives/NCCL_MODEL.md), the same for every preset:
//  - achievable NVLink bandwidth per link and direction: 20 GB/s on V100 and A100 (SM70/SM80),
//    20.6 GB/s on H100/H200 (SM90), about 80% of the 25 GB/s line rate;
//  - PCIe 3.0 x16: 12 GB/s (NCCL: 75% of the 16 GB/s signalling rate);
//  - NICs at line rate (NCCL, and measured 96-98% by nccl-tests);
//  - latency of one ring step (Simple protocol): 3.4 us over NVLink, 5.7 us over PCIe, 14 us
//    over the network; a GPU link carries half of its hop, the NIC links the rest of theirs.
constexpr double kNvlinkV100A100BytesPerSec = 20 * kGBps;
constexpr double kNvlinkH100BytesPerSec = 20.6 * kGBps;
constexpr double kNvlinkB200BytesPerSec = 40 * kGBps;  // SM100, of NVLink5's 50 GB/s line rate
constexpr double kPcie3x16BytesPerSec = 12 * kGBps;
// NCCL's PCIe bandwidth: 16 lanes of 6 (Gen3), 12 (Gen4), 24 (Gen5) Gb/s (topo.cc).
constexpr double kPcie4x16BytesPerSec = 24 * kGBps;
constexpr double kPcie5x16BytesPerSec = 48 * kGBps;
// NCCL's bandwidth between the two sockets of a Broadwell-era Xeon (BDW_QPI_BW).
constexpr double kQpiBytesPerSec = 6 * kGBps;
constexpr double kNvlinkHopSec = 3.4 * kUs;
constexpr double kPcieHopSec = 5.7 * kUs;
constexpr double kNetHopSec = 14 * kUs;
constexpr double kFabricLinkSec = 0.5 * kUs;

// Leaf switches of this many ports face the nodes (40-port HDR/EDR switches, 32 down).
constexpr unsigned kLeafDownPorts = 32;

// A non-blocking fat-tree of `nodes` endpoints: one switch up to kLeafDownPorts nodes, else two
// levels (leaves of kLeafDownPorts nodes, each wired to kLeafDownPorts spines).
FatTreeSpec fat_tree_of(unsigned nodes, LinkSpec link, NodeSpec node) {
  if (nodes <= kLeafDownPorts) {
    return {.levels = 1, .down = {nodes}, .up = {1}, .parallel = {1}, .link = link, .node = node};
  }
  const unsigned leaves = (nodes + kLeafDownPorts - 1) / kLeafDownPorts;
  return {.levels = 2,
          .down = {kLeafDownPorts, leaves},
          .up = {1, kLeafDownPorts},
          .parallel = {1, 1},
          .link = link,
          .node = node};
}

// A node whose GPUs reach each other in one hop of `hop_sec` (NVLink or PCIe). A GPU on another
// node is reached through two GPU links, two NIC links and two fabric links (one switch): the
// NIC links take what the network hop leaves, so that route costs kNetHopSec.
// A node whose GPU links are NVLink (their traffic to the NIC takes PCIe) when hop_sec is
// NVLink's.
NodeSpec node(unsigned gpus, double gpu_bytes_per_sec, double hop_sec, double nic_bytes_per_sec) {
  return {.gpus = gpus,
          .gpu_link_bandwidth_bytes_per_sec = gpu_bytes_per_sec,
          .gpu_link_latency_sec = hop_sec / 2,
          .nic_bandwidth_bytes_per_sec = nic_bytes_per_sec,
          .nic_latency_sec = (kNetHopSec - hop_sec - 2 * kFabricLinkSec) / 2,
          .nvlink = hop_sec == kNvlinkHopSec};
}

// Torus dimensions for `chips`: the most cubic X x Y x Z with X*Y*Z = chips.
std::vector<unsigned> cube_dims(unsigned chips) {
  std::vector<unsigned> best{chips, 1, 1};
  for (unsigned x = 1; x * x * x <= chips; ++x) {
    if (chips % x != 0) {
      continue;
    }
    for (unsigned y = x; x * y * y <= chips; ++y) {
      if ((chips / x) % y == 0) {
        best = {chips / x / y, y, x};  // largest first; x is the smallest
      }
    }
  }
  return best;
}

}  // namespace

const std::vector<PresetInfo>& preset_catalog() {
  static const std::vector<PresetInfo> kPresets{
      {"dgx1-v100",
       "DGX-1 (V100): 8 GPUs, NVLink2 hybrid cube-mesh, 4x100 Gb/s EDR InfiniBand, fat-tree",
       "NVIDIA DGX-1 with Tesla V100 system architecture white paper"},
      {"dgx2h", "DGX-2H: 16 V100 on NVSwitch, 8x100 Gb/s EDR InfiniBand, fat-tree",
       "NVIDIA DGX-2H datasheet"},
      {"dgx-a100",
       "DGX A100: 8 A100 on NVSwitch (600 GB/s per GPU), 8x200 Gb/s HDR InfiniBand, fat-tree",
       "NVIDIA DGX A100 datasheet and system architecture white paper"},
      {"hgx-h200",
       "HGX H200: 8 H200 on NVSwitch (900 GB/s per GPU), 8x400 Gb/s NDR InfiniBand, fat-tree",
       "NVIDIA H200 Tensor Core GPU datasheet; DGX H100/H200 user guide (8 ConnectX-7 NDR)"},
      {"dgx-h100",
       "DGX H100: 8 H100 on NVSwitch (900 GB/s per GPU), 8x400 Gb/s NDR InfiniBand, fat-tree",
       "NVIDIA DGX H100/H200 user guide (8 ConnectX-7 NDR)"},
      {"hgx-b200", "HGX B200: 8 B200 on NVLink5 NVSwitch (1.8 TB/s per GPU), 8x400 Gb/s, fat-tree",
       "NVIDIA DGX B200 datasheet (NVLink5, 8 ConnectX-7 400 Gb/s)"},
      {"aws-p4d", "AWS p4d.24xlarge: 8 A100-40GB on NVSwitch, 4x100 Gb/s EFA, fat-tree",
       "AWS EC2 P4d instance documentation (400 Gbps EFA, NVSwitch 600 GB/s)"},
      {"aws-p5", "AWS p5.48xlarge: 8 H100 on NVSwitch, 32x100 Gb/s EFA, fat-tree",
       "AWS EC2 P5 instance documentation (3200 Gbps EFAv2, NVSwitch 900 GB/s)"},
      {"pcie8-single-root",
       "8 GPUs on PCIe 3.0 under one CPU (PLX switches, peer-to-peer), 100 Gb/s NIC, fat-tree",
       "PCIe 3.0 specification; NCCL topo.h PCI_BW"},
      {"pcie8-dual-root",
       "8 GPUs on PCIe 3.0, 4 per CPU socket (QPI between them), 100 Gb/s NIC, fat-tree",
       "PCIe 3.0 specification; NCCL topo.h PCI_BW and BDW_QPI_BW"},
      {"pcie8-gen4-single-root",
       "8 GPUs on PCIe 4.0 switches under one CPU (peer-to-peer), 200 Gb/s NIC, fat-tree",
       "PCIe 4.0 specification; NCCL topo.cc PCIe lane rates (Gen4 x16: 24 GB/s)"},
      {"pcie8-gen5-single-root",
       "8 GPUs on PCIe 5.0 switches under one CPU (peer-to-peer), 400 Gb/s NIC, fat-tree",
       "PCIe 5.0 specification; NCCL topo.cc PCIe lane rates (Gen5 x16: 48 GB/s)"},
      {"pcie4-25gbe", "4 GPUs on PCIe 3.0 x16 per server, 25 GbE, one switch",
       "PCI Express 3.0 base specification (x16: 15.75 GB/s per direction); IEEE 802.3by"},
      {"pcie8-fdr", "8 GPUs on PCIe 3.0 per server, FDR InfiniBand (56 Gb/s), fat-tree",
       "Baidu DeepBench all-reduce machines; PCIe 3.0 and FDR InfiniBand specifications"},
      {"tpu-torus", "TPU-v4-like chips in a 3-D torus, 6 ICI links of 50 GB/s each",
       "Google Cloud TPU v4 documentation (2,400 Gb/s interchip interconnect per chip)"},
  };
  return kPresets;
}

namespace {

// A preset of nodes on a non-blocking fat-tree whose node links run at the nodes' NIC rate.
struct FatTreePreset {
  const char* name;
  unsigned gpus;                  // per node
  double gpu_link_bytes_per_sec;  // per GPU and direction, as NCCL sees it
  double hop_sec;                 // one ring step inside the node: kNvlinkHopSec or kPcieHopSec
  double nic_gbps;                // per node, line rate
  bool nvlink_sharp;              // the NVSwitch reduces in the network (H100 and later)
};

constexpr FatTreePreset kFatTreePresets[] = {
    // Each V100 has 6 NVLink2 links (25 GB/s line rate, 20 achievable, per direction); the
    // cube-mesh is modelled as a switch giving each GPU its 6 links. 4 EDR ports: 4 x 100 Gb/s.
    {"dgx1-v100", 8, 6 * kNvlinkV100A100BytesPerSec, kNvlinkHopSec, 400, false},
    {"dgx2h", 16, 6 * kNvlinkV100A100BytesPerSec, kNvlinkHopSec, 800, false},
    // NVLink3 through NVSwitch: 12 links, 600 GB/s bidirectional line rate, 240 achievable.
    {"dgx-a100", 8, 12 * kNvlinkV100A100BytesPerSec, kNvlinkHopSec, 1600, false},
    // NVLink4 through NVSwitch: 18 links, 900 GB/s bidirectional line rate, 370.8 achievable;
    // the third-generation NVSwitch reduces in the network (NVLink SHARP).
    {"hgx-h200", 8, 18 * kNvlinkH100BytesPerSec, kNvlinkHopSec, 3200, true},
    // HGX H100 board (18 NVLink4 links, NVLink SHARP) with eight 400 Gb/s NDR ports.
    {"dgx-h100", 8, 18 * kNvlinkH100BytesPerSec, kNvlinkHopSec, 3200, true},
    // NVLink5: 18 links, 1.8 TB/s bidirectional line rate; eight 400 Gb/s ConnectX-7.
    {"hgx-b200", 8, 18 * kNvlinkB200BytesPerSec, kNvlinkHopSec, 3200, true},
    // p4d.24xlarge: 8 A100-40GB on NVSwitch, 4 x 100 Gb/s EFA shared by the GPUs.
    {"aws-p4d", 8, 12 * kNvlinkV100A100BytesPerSec, kNvlinkHopSec, 400, false},
    // p5.48xlarge: 8 H100 on NVSwitch, 32 x 100 Gb/s EFA.
    {"aws-p5", 8, 18 * kNvlinkH100BytesPerSec, kNvlinkHopSec, 3200, true},
    // 8 GPUs under one CPU's PCIe root (PLX switches): peer-to-peer at NCCL's x16 rate.
    {"pcie8-single-root", 8, kPcie3x16BytesPerSec, kPcieHopSec, 100, false},
    // 4 GPUs under each socket: a ring crosses the socket link at NCCL's QPI rate.
    {"pcie8-dual-root", 8, kQpiBytesPerSec, kPcieHopSec, 100, false},
    // PCIe 4.0 boxes (A100 PCIe, A10, L40S): peer-to-peer through the switches at NCCL's Gen4
    // x16 rate; one 200 Gb/s HDR NIC per node (an assumption: rows say their own).
    {"pcie8-gen4-single-root", 8, kPcie4x16BytesPerSec, kPcieHopSec, 200, false},
    // PCIe 5.0 boxes (H100 PCIe, L40S on Gen5 hosts): NCCL's Gen5 x16 rate; one 400 Gb/s NDR NIC.
    {"pcie8-gen5-single-root", 8, kPcie5x16BytesPerSec, kPcieHopSec, 400, false},
    // DeepBench's dual-root PCIe boxes (pcie8-dual-root) on FDR InfiniBand.
    {"pcie8-fdr", 8, kQpiBytesPerSec, kPcieHopSec, 56, false},
};

}  // namespace

std::optional<Topology> make_preset(const std::string& name, unsigned nodes) {
  for (const FatTreePreset& p : kFatTreePresets) {
    if (name == p.name) {
      NodeSpec n = node(p.gpus, p.gpu_link_bytes_per_sec, p.hop_sec, p.nic_gbps * kGbps);
      n.nvlink_sharp = p.nvlink_sharp;
      return fat_tree_of(
          nodes, {.bandwidth_bytes_per_sec = p.nic_gbps * kGbps, .latency_sec = kFabricLinkSec}, n);
    }
  }
  if (name == "pcie4-25gbe") {
    return StarSpec{.hosts = nodes,
                    .link = {.bandwidth_bytes_per_sec = 25 * kGbps, .latency_sec = kFabricLinkSec},
                    .node = node(4, kPcie3x16BytesPerSec, kPcieHopSec, 25 * kGbps)};
  }
  if (name == "tpu-torus") {
    return TorusSpec{.dims = cube_dims(nodes),
                     .link = {.bandwidth_bytes_per_sec = 50 * kGBps, .latency_sec = 1 * kUs}};
  }
  return std::nullopt;
}

}  // namespace dtsim::platforms
