#include "sim/strategies/transformer_model.h"

#include "workloads/generator.h"
#include "workloads/roofline.h"

namespace dtsim::sim {

HybridModel model_from_transformer(const workloads::TransformerArch& arch,
                                   const workloads::TransformerShard& shard) {
  using workloads::PieceKind;
  const std::vector<workloads::TransformerPiece> pieces =
      workloads::transformer_pieces(arch, shard);
  const workloads::Roofline roofline =
      workloads::make_roofline(workloads::find_device(shard.device), shard.precision);
  const auto element = static_cast<std::uint64_t>(roofline.element_bytes);
  const std::uint64_t boundary_bytes = workloads::boundary_activation_bytes(arch, shard);
  // Megatron-LM's default whenever TP ranks hold whole activations (its --no-scatter-gather-
  // tensors-in-pipeline turns it off); with sequence parallelism they hold 1/tp already.
  HybridModel model{.first_units = 1,
                    .last_units = 1,
                    .scatter_gather_boundary = shard.tp > 1 && !shard.sequence_parallel};
  std::uint64_t params = 0;
  for (const workloads::TransformerPiece& p : pieces) {
    ModelPiece piece{.name = p.name,
                     .unit = p.kind == PieceKind::kEmbedding ? 0
                             : p.kind == PieceKind::kHead    ? arch.layers + 1
                                                             : p.block + 1,
                     .forward_sec = p.forward_sec,
                     .backward_sec = p.backward_sec,
                     .recompute_sec = p.recompute_sec,
                     .recompute_skips_output = p.recompute_skips_output,
                     .grad_bytes = kGradientBytesPerParam * p.params,
                     .weight_bytes = element * p.params,
                     .expert = p.kind == PieceKind::kMoe,
                     .output_bytes = boundary_bytes,
                     .cp_kv_bytes = p.cp_kv_bytes,
                     .ep_bytes = p.ep_bytes};
    if (p.kind == PieceKind::kHead) {
      piece.tp_in_bytes = p.tp_input_bytes;  // the loss's all-reduces are not mirrored
      piece.tp_loss_bytes = p.tp_bytes;
      piece.tp_loss_collectives = p.tp_collectives;
    } else {
      piece.tp_in_bytes = p.tp_input_bytes;
      piece.tp_out_bytes = p.tp_collectives > 0 ? p.tp_bytes : 0;
      piece.tp_in_gemm_sec = p.tp_input_gemm_sec;
      piece.tp_out_gemm_sec = p.tp_output_gemm_sec;
      piece.tp_gathers_fp8 = p.tp_gathers_fp8;
    }
    if (p.kind == PieceKind::kEmbedding && arch.tied_embeddings) {
      model.tied_grad_bytes = piece.grad_bytes;
      model.tied_weight_bytes = piece.weight_bytes;
    }
    params += p.params;
    model.pieces.push_back(std::move(piece));
  }
  // AdamW at memory speed (GENERATOR.md): fp32 parameters, gradients and both moments.
  model.optimizer_sec =
      workloads::kAdamWBytesPerParam * static_cast<double>(params) / roofline.bytes_per_sec;
  return model;
}

}  // namespace dtsim::sim
