// The network as the planner's estimate sees it (PLANNER.md, "Communication"): two classes of
// GPU-to-GPU path read from a platform spec (inside a node, across nodes), and the alpha-beta
// time of the ring collectives and transfers the hybrid graph issues on a group of ranks laid
// out as Megatron-LM numbers them (linear placement). No SimGrid.
#ifndef DTSIM_SIM_PLANNER_NETWORK_MODEL_H_
#define DTSIM_SIM_PLANNER_NETWORK_MODEL_H_

#include <cstdint>

#include "platforms/platform_spec.h"

namespace dtsim::sim {

struct PathClass {
  double bandwidth_bytes_per_sec = 0;  // the narrowest link of the path
  double latency_sec = 0;              // the sum of its links' latencies
  bool operator==(const PathClass&) const = default;
};

struct PlannerNetwork {
  int hosts = 0;          // GPUs of the platform
  int gpus_per_node = 1;  // 1: every GPU is its own node (a platform without "node")
  PathClass intra;        // GPU -> node switch -> GPU
  PathClass inter;        // GPU -> NIC -> fabric -> NIC -> GPU, the NIC link left out
  // A node's NIC link (all its NICs; with rails, one GPU's), shared by the node's GPUs that
  // send across nodes at once unless rails. Without nodes: the host's link.
  double nic_bytes_per_sec = 0;
  bool rails = false;
  bool operator==(const PlannerNetwork&) const = default;
};

// The paths of `spec`: a star or a fat-tree, with or without multi-GPU nodes. The inter-node
// latency counts the longest route (up to the top level and down). Throws
// platforms::PlatformError("<file>: the planner's estimate supports star and fat-tree
// platforms, not <topology>") for a torus, dragonfly or XML platform.
[[nodiscard]] PlannerNetwork planner_network(const platforms::PlatformSpec& spec);

enum class RingOp { kAllReduce, kReduceScatter, kAllGather };

// A group of `size` ranks `stride` ranks apart (a Megatron-LM group: tp groups stride 1, cp
// groups stride tp, data x context groups stride tp, pipeline neighbours stride tp*cp*dp), with
// every other group of its kind communicating at the same time.
struct RankGroup {
  int size = 1;
  int stride = 1;
};

// The path a member of `group` sends on and its share of it: inside a node when the group fits
// one (stride * size <= gpus_per_node); else across nodes, the node's NIC shared by the flows
// of every group leaving the node at once (min(stride, gpus_per_node) of them, 1 with rails):
// min(inter bandwidth, NIC / sharing).
[[nodiscard]] PathClass group_path(const PlannerNetwork& net, RankGroup group);

// Ring alpha-beta time of `op` of `bytes` (nccl-tests sizes, collective_algorithm.h) on `group`:
// all-reduce 2(n-1)*alpha + 2(n-1)/n * bytes/B, reduce-scatter and all-gather half of that
// (NCCL_MODEL.md section 4, the bus-bandwidth identity). 0 for one rank or no bytes.
[[nodiscard]] double ring_sec(const PlannerNetwork& net, RingOp op, RankGroup group,
                              std::uint64_t bytes);

// One point-to-point transfer of `bytes` between members of `group` (size 2 for a pipeline
// boundary): alpha + bytes / B.
[[nodiscard]] double transfer_sec(const PlannerNetwork& net, RankGroup group, std::uint64_t bytes);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_PLANNER_NETWORK_MODEL_H_
