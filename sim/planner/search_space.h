// The configurations a plan enumerates (PLANNER.md, "Enumeration"): every combination of tensor,
// context, pipeline and data parallelism, micro-batch, schedule and virtual stages, ZeRO stage,
// recomputation and sequence parallelism that the hybrid graph can build for a model on a number
// of GPUs. Pure: no memory model, no cost, no SimGrid.
//
//   SearchSpace space{.arch = *workloads::find_transformer("llama3-70b"), .gpus = 512,
//                     .global_batch = 512, .seq_len = 8192, .gpus_per_node = 8};
//   std::vector<PlanCandidate> all = enumerate_candidates(space);
#ifndef DTSIM_SIM_PLANNER_SEARCH_SPACE_H_
#define DTSIM_SIM_PLANNER_SEARCH_SPACE_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/planner/candidate.h"
#include "workloads/transformer.h"

namespace dtsim::sim {

// Which knobs may leave their default (data parallelism is always on: it takes the GPUs the
// others leave). Off: tp = 1, pp = 1, cp = 1, ZeRO 0, no recomputation, no sequence parallelism.
// A CNN's plan turns pp, spatial, filter and channel (off: no split, no pipeline). Overlapped TP
// is only tried when asked for (`tp-overlap`, with `sp`): dtsim's overlap costs the GEMMs
// nothing, so with it a configuration is usually faster (slower only where its ring steps' extra
// latencies exceed the GEMM), and a plan would otherwise assume the framework has it (HYBRID.md,
// "Overlapped TP").
struct StrategySet {
  bool tp = true, pp = true, cp = true, zero = true, recompute = true, sp = true;
  bool tp_overlap = false;
  bool spatial = true, filter = true, channel = true;
  bool operator==(const StrategySet&) const = default;
};

// "tp,pp,dp,cp,zero,recompute,sp,tp-overlap" or a CNN's "dp,pp,spatial,filter,channel" (any
// subset, any order; dp may be named and changes nothing). nullopt and *why for an unknown or
// repeated name.
[[nodiscard]] std::optional<StrategySet> parse_strategies(std::string_view text, std::string* why);

// The divisors of n >= 1, ascending (the degrees a plan tries).
[[nodiscard]] std::vector<int> divisors(int n);

struct SearchSpace {
  workloads::TransformerArch arch;
  int gpus = 1;
  int global_batch = 1;  // sequences per optimizer step
  int seq_len = 2048;
  int gpus_per_node = 1;         // tp fits a node unless tp_across_nodes
  bool tp_across_nodes = false;  // allow tp > gpus_per_node
  StrategySet strategies;
  // Full recompute as PyTorch's non-reentrant checkpoint runs it (TransformerShard's
  // checkpoint_early_stop): the candidates with full recompute stop early.
  bool checkpoint_early_stop = false;
  bool operator==(const SearchSpace&) const = default;
};

// Every configuration of `space`, in a fixed order (tp, cp, pp, micro-batch, schedule, ZeRO,
// recompute, sequence parallelism, each ascending). A configuration is listed when
//  - tp divides heads and ffn_hidden, divides kv_heads or is a multiple of it (what
//    transformer_pieces shards), and tp <= gpus_per_node unless tp_across_nodes;
//  - cp = 1, or 2 * cp divides seq_len (causal load balancing);
//  - pp divides layers; tp * cp * pp divides gpus, dp = gpus / (tp * cp * pp) divides
//    global_batch, and micro_batch divides global_batch / dp;
//  - pp = 1 runs 1f1b only (every schedule is the same without a pipeline); pp > 1 runs gpipe,
//    1f1b, and interleaved:V for every V >= 2 dividing layers / pp when pp divides the
//    micro-batches (Megatron-LM's rule, check_pipeline);
//  - ZeRO 1, 2, 3 only when dp * cp > 1 (nothing to shard otherwise); no ZeRO-3 with experts;
//  - sequence parallelism only with tp > 1; overlapped TP only with it, when asked for.
// REQUIRES: gpus, global_batch, seq_len, gpus_per_node >= 1.
[[nodiscard]] std::vector<PlanCandidate> enumerate_candidates(const SearchSpace& space);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_PLANNER_SEARCH_SPACE_H_
