// The pieces hybrid parallelism shards (hybrid.h) from the transformer description
// (workloads/transformer.h): the sharded shapes of every piece under TP, CP and EP.
#ifndef DTSIM_SIM_STRATEGIES_TRANSFORMER_MODEL_H_
#define DTSIM_SIM_STRATEGIES_TRANSFORMER_MODEL_H_

#include "sim/strategies/hybrid.h"
#include "workloads/transformer.h"

namespace dtsim::sim {

// Gradient bytes per parameter: reduced in fp32 as mixed precision keeps fp32 master gradients
// (Megatron-LM's main_grad, FSDP's reduce_dtype in torchtitan's default).
inline constexpr std::uint64_t kGradientBytesPerParam = 4;

// The pieces of `arch` as one rank of `shard` runs them: the embedding (unit 0, with the first
// stage), each block's pieces (unit 1 + block), the head (the last unit, with the last stage).
// TP collectives by Megatron-LM's conjugate operators, as transformer_pieces places them: the
// embedding's output, every attention and MLP piece's input and output, the head's input and its
// loss's three all-reduces of per-token scalars. Throws workloads::GeneratorError as
// transformer_pieces does.
[[nodiscard]] HybridModel model_from_transformer(const workloads::TransformerArch& arch,
                                                 const workloads::TransformerShard& shard);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_STRATEGIES_TRANSFORMER_MODEL_H_
