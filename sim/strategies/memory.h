// The memory model of a hybrid-parallel transformer job (issue 16): what one rank of each
// pipeline stage holds at its peak, in bytes, from the same inputs the hybrid graph is built
// from. A pure function, no simulation. Every rule and its source: sim/strategies/MEMORY.md.
//
//   const workloads::TransformerArch& arch = *workloads::find_transformer("llama3-8b");
//   const MemoryReport m = memory_model(arch, shard, job);
//   const StageMemory& worst = m.stages[static_cast<std::size_t>(m.worst_stage)];
//   if (m.oom) { ... worst.peak_bytes > m.capacity_bytes ... }
#ifndef DTSIM_SIM_STRATEGIES_MEMORY_H_
#define DTSIM_SIM_STRATEGIES_MEMORY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "sim/strategies/hybrid.h"
#include "workloads/transformer.h"

namespace dtsim::sim {

// How the attention core keeps its intermediate results for the backward pass.
enum class AttentionMemory {
  // FlashAttention (Dao et al. 2022), the kernel the compute model times (TRANSFORMER.md): no
  // s x s matrix is kept, only the softmax's log-sum-exp (fp32, per head and token).
  kFlash,
  // The unfused core Korthikanti et al. 2022 count: the softmax output, its dropout mask and
  // the dropout's output, each heads x s x s per sequence.
  kMaterialized,
};

// The CUDA context and the kernels a PyTorch process loads: a cited constant (MEMORY.md,
// "Framework reserve"), the same for every job; not fitted to any measurement.
inline constexpr std::uint64_t kCudaContextBytes = 723ULL << 20;
// NCCL's buffers per communicator a rank belongs to: NCCL_BUFFSIZE (4 MiB) for each of 2 ring
// peers on each of 2 channels (MEMORY.md, "Communication buffers").
inline constexpr std::uint64_t kNcclBytesPerCommunicator = 16ULL << 20;

// Bytes one rank keeps of one micro-batch for the backward pass of one transformer block
// under `shard` (its tokens b*s/cp, TP with or without sequence parallelism, its recompute
// mode). For a GPT-style block (LayerNorm, GeLU MLP of 4h, dropout, as many KV heads as heads,
// 2-byte activations) this is Korthikanti et al. 2022's s*b*h*(34 + 5*a*s/h) with
// kMaterialized and no recomputation, 34*s*b*h with selective recomputation, both divided by
// tp with sequence parallelism (s*b*h*(10 + 24/t + 5*a*s/(h*t)) without it); 2*s*b*h (the
// block's input) with full recomputation. MEMORY.md generalises the terms to GQA, SwiGLU,
// RMSNorm and experts. Throws workloads::GeneratorError as transformer_pieces does.
[[nodiscard]] std::uint64_t block_activation_bytes(const workloads::TransformerArch& arch,
                                                   const workloads::TransformerShard& shard,
                                                   AttentionMemory attention);
// The same for the embedding (its output's dropout mask, models with dropout only) and for the
// head (the final norm's and the output projection's inputs, the fp32 logits of the loss over
// the rank's V'/tp vocabulary; a compiled loss's 16-bit logits). Neither is ever recomputed.
[[nodiscard]] std::uint64_t embedding_activation_bytes(const workloads::TransformerArch& arch,
                                                       const workloads::TransformerShard& shard);
[[nodiscard]] std::uint64_t head_activation_bytes(const workloads::TransformerArch& arch,
                                                  const workloads::TransformerShard& shard);
// What the loss's backward holds beyond head_activation_bytes while it runs, once per stage
// with the head: 0 for Megatron-LM's fused cross-entropy (it writes the gradient over the saved
// softmax); 8*T*V'/tp with PyTorch's F.cross_entropy on fp32 logits (the loss's gradient and
// log_softmax's, beside its saved output); e*T*V'/tp compiled (the logits' gradient in 16 bits,
// from one fused kernel; MEMORY.md).
[[nodiscard]] std::uint64_t loss_backward_bytes(const workloads::TransformerArch& arch,
                                                const workloads::TransformerShard& shard);

// One rank of one pipeline stage at its peak (the ranks of a stage hold the same amounts).
struct StageMemory {
  int stage = 0;
  // Chunk-micro-batches whose activations the stage holds at once (max_in_flight of its order).
  int micro_batches_in_flight = 0;
  std::uint64_t parameters_bytes = 0;  // in the compute precision (fp32 without mixed precision)
  std::uint64_t gradients_bytes = 0;   // fp32 main gradients
  std::uint64_t optimizer_bytes = 0;   // Adam's m and v, and fp32 master weights if mixed
  std::uint64_t activations_bytes = 0;
  std::uint64_t fsdp_buffers_bytes = 0;  // ZeRO-3: the gathered unit and the prefetched one
  std::uint64_t communication_buffers_bytes = 0;
  std::uint64_t framework_reserve_bytes = 0;
  std::uint64_t peak_bytes = 0;  // the sum of the above: all of them are held at the peak
  bool operator==(const StageMemory&) const = default;
};

struct MemoryReport {
  std::string device;                // the DeviceSpec's full name
  std::uint64_t capacity_bytes = 0;  // DeviceSpec::memory_capacity_bytes
  std::vector<StageMemory> stages;   // stage 0 .. pp-1
  int worst_stage = 0;               // the largest peak (the first of equal ones)
  bool oom = false;                  // the worst peak exceeds the capacity
  bool operator==(const MemoryReport&) const = default;
};

// The memory of every pipeline stage of `job` on `arch` as one rank runs it under `shard`.
// REQUIRES: shard's tp, cp, ep and sequence_parallel are job's; job.micro_batches >= 1 and
// check_hybrid(model_from_transformer(arch, shard), job) is empty. Throws
// workloads::GeneratorError as transformer_pieces does.
[[nodiscard]] MemoryReport memory_model(const workloads::TransformerArch& arch,
                                        const workloads::TransformerShard& shard,
                                        const HybridJob& job,
                                        AttentionMemory attention = AttentionMemory::kFlash);

// The most bytes `order` holds at once when a forward step of chunk c adds chunk_bytes[c] and
// its backward frees them: max_in_flight(order) * chunk_bytes[0] when there is one chunk.
// REQUIRES: every step's chunk indexes chunk_bytes.
[[nodiscard]] std::uint64_t peak_held_bytes(const std::vector<PipelineStep>& order,
                                            const std::vector<std::uint64_t>& chunk_bytes);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_STRATEGIES_MEMORY_H_
