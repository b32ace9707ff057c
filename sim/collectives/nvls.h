// NVLS: NCCL's NVLink SHARP all-reduce, for ranks on one node whose NVSwitch reduces in the
// network (NVSwitch of the third generation or later: H100, H200, B200 HGX/DGX nodes; not V100
// or A100): platforms whose "node" says
// "nvlink_sharp": true (the hgx-h200 preset does), and across nodes with SHARP switches.
//
// NCCL runs it as a reduce-scatter where each GPU loads its 1/n shard through the switch, which
// reads that shard from every GPU and returns the sum (multimem.ld_reduce), then an all-gather
// where each GPU stores its shard once and the switch writes it to every GPU (multimem.st).
// Per GPU link and direction that is S + S/n bytes (S: the buffer), against a ring's
// 2 S (n-1)/n: the switch does the reductions and the copies. SimGrid's switches only forward,
// so the schedule puts the same bytes on every GPU link with GPU-to-GPU transfers: each rank
// sends S (n+1) / (n (n-1)) to every other rank, all at once.
//
// Two constants from NCCL's cost model (src/graph/tuning.cc, v2.30;
// sim/collectives/NCCL_MODEL.md), not fitted to any measurement:
//  - latency 25 us (NVLS over NVLink, Simple protocol), which replaces NCCL's base latency:
//    every rank first waits 25 us minus the slowest route's latency, so an idle node pays 25 us
//    in all (run NVLS with --collective-latency 0 to match NCCL);
//  - efficiency 0.85 on Hopper: the links carry 1/0.85 of those bytes (NCCL's NVLS bandwidth is
//    the NVLink bandwidth times 0.85).
// On an idle node with GPU links of B per direction: t = 25 us + S (n+1) / (0.85 n B).
//
// Across nodes NCCL runs NVLS with SHARP network switches (CollNet: the InfiniBand switches
// reduce too), on platforms whose fat-tree says "sharp": true: NVLS inside every node as above,
// and each GPU's reduced shard S/g (g GPUs per node) goes up to the switches once and comes back
// summed once, so a node's NIC carries S each way against a ring's 2 S (N g - 1) / (N g). NCCL
// pipelines the two in chunks, so the schedule starts both at once (collapsed): S / (g (N-1))
// from each GPU to the same-index GPU of each of the other N-1 nodes, beside the node's own
// transfers. Every node must hold as many ranks. Idle, on NVLink nodes (the NIC path apart from
// the GPU links), NIC links of B_nic per node, routes of L_in inside a node and L_out between:
// t = 25 us - L_out + max(L_in + S (g+1) / (0.85 g B), L_out + S / B_nic).
//
// nvls-tree is NCCL's NVLS_TREE, across nodes without SHARP: NVLS inside every node as above,
// and between nodes each GPU's reduced shard s = S/g all-reduced with the same-index GPUs of
// the other nodes over NCCL's double binary tree of the nodes (tree.h: two trees, each with half
// the shard, reduced up and broadcast down). NCCL pipelines all of it, so the schedule starts
// every part at once (collapsed): each tree edge carries its half shard up and down. A node
// interior in one tree and a leaf in the other (N >= 3) sends 2 s per GPU, so its NIC carries 2 S
// each way, as NCCL's tree bandwidth (half the bus bandwidth); on 2 nodes S, as NCCL's doubled
// inter-node bandwidth for N <= 2. Latency, NCCL's NVLSTree term: 25 us + 2 floor(log2 N)
// 20.9 us (inter-node hops), less the slowest route. Idle, on 2 nodes:
// t = 66.8 us - L_out + max(L_in + S (g+1) / (0.85 g B), L_out + S / B_nic). Not in `auto`:
// no measurement checks it yet.
//
// Limits: the ranks' nodes are the placement's (hints.node_of). The link report counts the
// 1/0.85 padding as bytes; SHARP's reduction in the switches is emulated by forwarding, so
// links above the leaves carry what a real in-network reduction would spare them.
#ifndef DTSIM_SIM_COLLECTIVES_NVLS_H_
#define DTSIM_SIM_COLLECTIVES_NVLS_H_

#include "sim/collectives/collective_algorithm.h"

namespace dtsim::sim {

inline constexpr double kNvlsLatencySec = 25e-6;
inline constexpr double kNvlsEfficiency = 0.85;
inline constexpr double kNvlsTreeNetHopSec = 20.9e-6;  // NCCL's hwLat[NET][NVLSTree][Simple]

class NvlsAlgorithm final : public CollectiveAlgorithm {
 public:
  [[nodiscard]] std::string_view name() const override { return "nvls"; }
  // All-reduce only, on ranks that share one node (hints.ranks_per_node).
  [[nodiscard]] std::string unsupported(const CollectiveRequest& request,
                                        const TopologyHints& hints) const override;
  [[nodiscard]] Schedule build(const CollectiveRequest& request,
                               const TopologyHints& hints) const override;
};

class NvlsTreeAlgorithm final : public CollectiveAlgorithm {
 public:
  [[nodiscard]] std::string_view name() const override { return "nvls-tree"; }
  // All-reduce only, on NVLink-SHARP nodes holding as many ranks each, two nodes or more.
  [[nodiscard]] std::string unsupported(const CollectiveRequest& request,
                                        const TopologyHints& hints) const override;
  [[nodiscard]] Schedule build(const CollectiveRequest& request,
                               const TopologyHints& hints) const override;
};

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_COLLECTIVES_NVLS_H_
