// NVLS: NCCL's NVLink SHARP all-reduce, for ranks on one node whose NVSwitch reduces in the
// network (NVSwitch of the third generation or later: H100, H200, B200 HGX/DGX nodes; not V100
// or A100): platforms whose "node" says
// "nvlink_sharp": true (the hgx-h200 preset does).
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
// Across nodes NCCL needs SHARP network switches (CollNet), which dtsim does not model.
// Limits: the ranks are assumed to share a node when they are no more than its GPUs (as the
// hierarchical algorithm assumes; random placement can break it). The link report counts the
// 1/0.85 padding as bytes.
#ifndef DTSIM_SIM_COLLECTIVES_NVLS_H_
#define DTSIM_SIM_COLLECTIVES_NVLS_H_

#include "sim/collectives/collective_algorithm.h"

namespace dtsim::sim {

inline constexpr double kNvlsLatencySec = 25e-6;
inline constexpr double kNvlsEfficiency = 0.85;

class NvlsAlgorithm final : public CollectiveAlgorithm {
 public:
  [[nodiscard]] std::string_view name() const override { return "nvls"; }
  // All-reduce only, on ranks that share one node (hints.ranks_per_node).
  [[nodiscard]] std::string unsupported(const CollectiveRequest& request,
                                        const TopologyHints& hints) const override;
  [[nodiscard]] Schedule build(const CollectiveRequest& request,
                               const TopologyHints& hints) const override;
};

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_COLLECTIVES_NVLS_H_
