// The memory model (sim/strategies/memory.h) against Korthikanti et al. 2022's published
// per-layer activation formula and against breakdowns of a tiny transformer computed by hand
// (each calculation in the comments, from the rules of sim/strategies/MEMORY.md).
#include "sim/strategies/memory.h"

#include <map>

#include <gtest/gtest.h>

#include "sim/strategies/transformer_model.h"
#include "workloads/roofline.h"

namespace dtsim::sim {
namespace {

using workloads::CrossEntropy;
using workloads::Recompute;
using workloads::TransformerArch;
using workloads::TransformerShard;

constexpr std::uint64_t kMiB = 1ULL << 20;

// --- Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer Models",
// Sec. 4 and Table 2: per layer, 16-bit activations, bytes
//   no recompute, no TP:        s*b*h*(34 + 5*a*s/h)
//   TP t, no SP:                s*b*h*(10 + 24/t + 5*a*s/(h*t))
//   TP t with SP:               s*b*h*(34 + 5*a*s/h) / t
//   selective: the same without the a*s terms; full: 2*s*b*h (/t with SP).
// GPT-3 175B (h = 12288, a = 96) at s = 2048, b = 1: 5*a*s/h = 80 exactly.
class Korthikanti : public ::testing::Test {
 protected:
  const TransformerArch& gpt3 = *workloads::find_transformer("gpt3-175b");
  const std::uint64_t sbh = 2048ULL * 1 * 12288;
  TransformerShard shard(int tp, bool sp, Recompute recompute) const {
    return {.micro_batch = 1,
            .seq_len = 2048,
            .tp = tp,
            .sequence_parallel = sp,
            .recompute = recompute,
            .device = "h100",
            .precision = "bf16"};
  }
};

TEST_F(Korthikanti, NoRecomputeIs34PlusFiveAsOverH) {
  EXPECT_EQ(block_activation_bytes(gpt3, shard(1, false, Recompute::kNone),
                                   AttentionMemory::kMaterialized),
            sbh * (34 + 80));
}

TEST_F(Korthikanti, NoRecomputeWithTensorParallelismOnly) {
  // 10 + 24/8 + 80/8 = 23.
  EXPECT_EQ(block_activation_bytes(gpt3, shard(8, false, Recompute::kNone),
                                   AttentionMemory::kMaterialized),
            sbh * 23);
}

TEST_F(Korthikanti, NoRecomputeWithSequenceParallelismIsDividedByT) {
  EXPECT_EQ(block_activation_bytes(gpt3, shard(8, true, Recompute::kNone),
                                   AttentionMemory::kMaterialized),
            sbh * (34 + 80) / 8);
}

TEST_F(Korthikanti, SelectiveIs34Sbh) {
  for (const AttentionMemory a : {AttentionMemory::kMaterialized, AttentionMemory::kFlash}) {
    EXPECT_EQ(block_activation_bytes(gpt3, shard(1, false, Recompute::kSelective), a), sbh * 34);
    // 10 + 24/8 = 13 without SP; 34/8 with it.
    EXPECT_EQ(block_activation_bytes(gpt3, shard(8, false, Recompute::kSelective), a), sbh * 13);
    EXPECT_EQ(block_activation_bytes(gpt3, shard(8, true, Recompute::kSelective), a), sbh * 34 / 8);
  }
}

TEST_F(Korthikanti, FullRecomputeKeepsTheLayerInput) {
  EXPECT_EQ(block_activation_bytes(gpt3, shard(1, false, Recompute::kFull),
                                   AttentionMemory::kMaterialized),
            2 * sbh);
  EXPECT_EQ(block_activation_bytes(gpt3, shard(8, true, Recompute::kFull), AttentionMemory::kFlash),
            2 * sbh / 8);
}

// --- A tiny GPT-style transformer, by hand -------------------------------------------------
// h = 64, a = 4 heads (d = 16), as many KV heads, GeLU MLP of f = 256, V = 128 (no padding:
// vocab_divisible_by 1), LayerNorm (2h parameters), no biases, no learned positions, untied.
// Parameters: embedding V*h = 8192; attention h*(h + 2*h) + h*h + 2h = 12288 + 4096 + 128 =
// 16512; MLP 2h + 2*h*f = 128 + 32768 = 32896; a block 49408; head 2h + V*h = 8320.
// Two blocks: N = 8192 + 2 * 49408 + 8320 = 115328.
// Activations, b = 2, s = 16: T = 32 tokens, bf16 (e = 2), dropout masks (GPT-style):
//   block, per token: replicated 4*e*h (norm inputs, QKV and MLP inputs) + 2*h (masks) = 640;
//     split by TP: e*(h + 2h) (Q, K, V) + e*h (attention output) + 2*e*f (GeLU in, out) = 1536;
//     FlashAttention's log-sum-exp 4*a = 16 (no recompute only).
//     No recompute: 32 * (640 + 1536 + 16) = 70144; selective: 32 * 2176 = 69632 (= 34*s*b*h);
//     materialised core: + a*T*s*(2 + 1 + 2) = 4*32*16*5 = 10240 -> 79872; full: e*T*h = 4096.
//   embedding: its dropout mask T*h = 2048; head: 2*e*T*h = 8192 + fp32 logits 4*T*V = 16384,
//   24576.
constexpr std::uint64_t kParams = 115328;
constexpr std::uint64_t kBlock = 70144, kEmbedding = 2048, kHead = 24576;

TransformerArch tiny(int layers = 2) {
  return {.name = "tiny",
          .layers = layers,
          .hidden = 64,
          .heads = 4,
          .kv_heads = 4,
          .ffn_hidden = 256,
          .vocab = 128,
          .max_seq_len = 32,
          .dropout = true};
}

// The same, Llama-style: RMSNorm, SwiGLU, 2 KV heads of d = 16, no dropout.
TransformerArch tiny_llama() {
  TransformerArch a = tiny();
  a.kv_heads = 2;
  a.mlp = workloads::MlpKind::kSwiGlu;
  a.norm = workloads::NormKind::kRmsNorm;
  a.dropout = false;
  return a;
}

TransformerShard tiny_shard(Recompute recompute = Recompute::kNone) {
  return {.micro_batch = 2,
          .seq_len = 16,
          .recompute = recompute,
          .device = "h100",
          .precision = "bf16",
          .vocab_divisible_by = 1};
}

HybridJob tiny_job(ParallelDegrees degrees, int micro_batches = 1, int zero = 0) {
  return {.degrees = degrees, .micro_batches = micro_batches, .zero_stage = zero};
}

MemoryReport model_of(const TransformerArch& arch, const TransformerShard& shard,
                      const HybridJob& job, AttentionMemory attention = AttentionMemory::kFlash) {
  EXPECT_EQ(check_hybrid(model_from_transformer(arch, shard), job), "");
  return memory_model(arch, shard, job, attention);
}

// Which transformer shards scatter and gather their stage boundaries (HybridModel): TP ranks
// that hold whole activations (tp > 1, no sequence parallelism), as Megatron-LM's default.
TEST(MemoryModel, TransformersScatterTheirBoundariesWhereTpRanksHoldWholeActivations) {
  TransformerShard shard = tiny_shard();
  EXPECT_FALSE(model_from_transformer(tiny(), shard).scatter_gather_boundary);  // tp = 1
  shard.tp = 2;
  EXPECT_TRUE(model_from_transformer(tiny(), shard).scatter_gather_boundary);
  shard.sequence_parallel = true;  // each holds 1/tp already
  EXPECT_FALSE(model_from_transformer(tiny(), shard).scatter_gather_boundary);
}

TEST(MemoryModel, TinyTransformerPiecesByHand) {
  const TransformerArch a = tiny();
  EXPECT_EQ(workloads::parameter_count(a), kParams);
  EXPECT_EQ(block_activation_bytes(a, tiny_shard(), AttentionMemory::kFlash), kBlock);
  EXPECT_EQ(block_activation_bytes(a, tiny_shard(), AttentionMemory::kMaterialized), 79872u);
  EXPECT_EQ(block_activation_bytes(a, tiny_shard(Recompute::kSelective), AttentionMemory::kFlash),
            69632u);
  EXPECT_EQ(block_activation_bytes(a, tiny_shard(Recompute::kFull), AttentionMemory::kFlash),
            4096u);
  EXPECT_EQ(embedding_activation_bytes(a, tiny_shard()), kEmbedding);
  EXPECT_EQ(head_activation_bytes(a, tiny_shard()), kHead);
}

TEST(MemoryModel, LlamaStyleBlockHasNoDropoutAndThreeSwiGluTensors) {
  // RMSNorm, SwiGLU, 2 KV heads of d = 16, no dropout. Per token: replicated 4*e*h = 512;
  // split: e*(h + 2*32) = 256 (Q, K, V), e*h = 128, 3*e*f = 1536 (gate, up, their product).
  const TransformerArch a = tiny_llama();
  EXPECT_EQ(block_activation_bytes(a, tiny_shard(Recompute::kSelective), AttentionMemory::kFlash),
            32u * (512 + 256 + 128 + 1536));
  EXPECT_EQ(embedding_activation_bytes(a, tiny_shard()), 0u);
}

// torchtitan's op-level policy on the Llama-style tiny block (RMSNorm, SwiGLU, 2 KV heads of
// d = 16, no dropout), T = 32 tokens, bf16. Per token it keeps the block's input e*h = 128 and
// the outputs of Q (e*h = 128), V (e*32 = 64), the attention kernel (e*h = 128, log-sum-exp
// 4*a = 16), the gate (e*f = 512) and the down projection (e*h = 128): 1104, 35328 per block.
// With tp = 2 and SP: Q 64, V 32 (one KV head), attention 64 + 8, gate 256, down 128 (its
// unreduced output, h wide), the input 128/2, and the two reduce-scatters' outputs 2*128/2:
// 32 * (552 + 64 + 128) = 23808.
TEST(MemoryModel, SelectiveOpKeepsEverySecondGemmOutputByHand) {
  const TransformerArch a = tiny_llama();
  EXPECT_EQ(block_activation_bytes(a, tiny_shard(Recompute::kSelectiveOp), AttentionMemory::kFlash),
            35328u);
  TransformerShard tp2 = tiny_shard(Recompute::kSelectiveOp);
  tp2.tp = 2;
  tp2.sequence_parallel = true;
  EXPECT_EQ(block_activation_bytes(a, tp2, AttentionMemory::kFlash), 23808u);
}

// One stage, one micro-batch, selective-op: 2 blocks (70656) + the head (2*e*T*h = 8192 and
// fp32 logits 4*T*V = 16384) + what one block's backward rebuilds (no recompute's 32 * (512 +
// 256 + 128 + 1536 + 16) = 78336, less the 35328 kept: 43008) = 138240. PyTorch's
// cross-entropy adds, while its backward runs, the loss's gradient and log_softmax's (fp32,
// T*V each beside the saved output): 8*T*V = 32768 more.
TEST(MemoryModel, PytorchCrossEntropyHoldsTwoMoreLogitGradientsByHand) {
  TransformerShard shard = tiny_shard(Recompute::kSelectiveOp);
  EXPECT_EQ(model_of(tiny_llama(), shard, tiny_job({})).stages[0].activations_bytes, 138240u);
  shard.cross_entropy = CrossEntropy::kPyTorch;
  EXPECT_EQ(loss_backward_bytes(tiny_llama(), shard), 32768u);
  EXPECT_EQ(model_of(tiny_llama(), shard, tiny_job({})).stages[0].activations_bytes,
            138240u + 32768);
  // Only the stage with the head holds it: pp = 2, one block each; stage 0 has none of it.
  const MemoryReport pp2 = model_of(tiny_llama(), shard, tiny_job({.pp = 2}, 2));
  TransformerShard fused = shard;
  fused.cross_entropy = CrossEntropy::kFused;
  const MemoryReport pp2_fused = model_of(tiny_llama(), fused, tiny_job({.pp = 2}, 2));
  EXPECT_EQ(pp2.stages[0].activations_bytes, pp2_fused.stages[0].activations_bytes);
  EXPECT_EQ(pp2.stages[1].activations_bytes, pp2_fused.stages[1].activations_bytes + 32768);
}

// The same under torch.compile: the loss keeps the bf16 logits it was given (2*T*V = 8192, for
// the 16384 of fp32) and its backward writes their bf16 gradient (2*T*V = 8192): the stage holds
// 138240 - 8192 + 8192 = 138240 while it runs, 32768 less than eager PyTorch's, and as much as
// the fused loss (its fp32 softmax, 4*T*V, is the same 16384 bytes as the two bf16 tensors).
// (T*V = 32 tokens x 128 vocabulary = 4096, as above.)
TEST(MemoryModel, CompiledCrossEntropyKeepsSixteenBitLogitsAndGradient) {
  TransformerShard shard = tiny_shard(Recompute::kSelectiveOp);
  shard.cross_entropy = CrossEntropy::kCompiled;
  EXPECT_EQ(head_activation_bytes(tiny_llama(), shard),
            head_activation_bytes(tiny_llama(), tiny_shard(Recompute::kSelectiveOp)) - 8192);
  EXPECT_EQ(loss_backward_bytes(tiny_llama(), shard), 8192u);
  EXPECT_EQ(model_of(tiny_llama(), shard, tiny_job({})).stages[0].activations_bytes, 138240u);
  EXPECT_EQ(workloads::parse_cross_entropy("compiled"), CrossEntropy::kCompiled);
  EXPECT_EQ(workloads::cross_entropy_name(CrossEntropy::kPyTorch), "pytorch");
  EXPECT_EQ(workloads::parse_cross_entropy("torch"), std::nullopt);
}

// ZeRO by hand, dp = 4, one stage, one micro-batch: shards of ceil(N/4) = 28832 parameters.
// Stage 0: 2 bytes (bf16) + 4 (fp32 gradients) + 12 (fp32 master, m, v) per parameter.
// Activations: embedding + 2 blocks + head = 2048 + 140288 + 24576 = 166912, one in flight.
// Communicators: dp (16 MiB of NCCL buffers), and dp_gather under ZeRO-3.
TEST(MemoryModel, ZeroStagesShardStatesOverTheDataGroup) {
  const ParallelDegrees dp4{.dp = 4};
  constexpr std::uint64_t kShard = 28832;
  constexpr std::uint64_t kActivations = kEmbedding + 2 * kBlock + kHead;
  std::vector<StageMemory> m;
  for (int zero = 0; zero <= 3; ++zero) {
    const MemoryReport r = model_of(tiny(), tiny_shard(), tiny_job(dp4, 1, zero));
    ASSERT_EQ(r.stages.size(), 1u);
    m.push_back(r.stages[0]);
    EXPECT_EQ(m.back().activations_bytes, kActivations) << zero;
    EXPECT_EQ(m.back().framework_reserve_bytes, kCudaContextBytes) << zero;
    EXPECT_EQ(m.back().micro_batches_in_flight, 1) << zero;
  }
  EXPECT_EQ(m[0].parameters_bytes, 2 * kParams);
  EXPECT_EQ(m[0].gradients_bytes, 4 * kParams);
  EXPECT_EQ(m[0].optimizer_bytes, 12 * kParams);
  EXPECT_EQ(m[0].fsdp_buffers_bytes, 0u);
  EXPECT_EQ(m[0].communication_buffers_bytes, 16 * kMiB);
  EXPECT_EQ(m[0].peak_bytes, 18 * kParams + kActivations + 16 * kMiB + kCudaContextBytes);
  // ZeRO-1: the optimizer states sharded.
  EXPECT_EQ(m[1].gradients_bytes, 4 * kParams);
  EXPECT_EQ(m[1].optimizer_bytes, 12 * kShard);
  // ZeRO-2: the gradients too, with two buckets of unsharded gradients in flight (2 x 25 MiB,
  // capped at the 4 * N bytes there are).
  EXPECT_EQ(m[2].parameters_bytes, 2 * kParams);
  EXPECT_EQ(m[2].gradients_bytes, 4 * kShard);
  EXPECT_EQ(m[2].optimizer_bytes, 12 * kShard);
  EXPECT_EQ(m[2].communication_buffers_bytes, 16 * kMiB + 4 * kParams);
  // ZeRO-3: the parameters too; the largest consecutive pair of units (two blocks, 98816
  // parameters) gathered in bf16, and a block's unsharded fp32 gradient before its
  // reduce-scatter; two communicators.
  EXPECT_EQ(m[3].parameters_bytes, 2 * kShard);
  EXPECT_EQ(m[3].gradients_bytes, 4 * kShard);
  EXPECT_EQ(m[3].optimizer_bytes, 12 * kShard);
  EXPECT_EQ(m[3].fsdp_buffers_bytes, 2u * 98816);
  EXPECT_EQ(m[3].communication_buffers_bytes, 32 * kMiB + 4u * 49408);
}

// ZeRO-3 with pp = 2, dp = 2, 4 micro-batches (stage 0: embedding + block 0, 57600 parameters;
// stage 1: block 1 + head, 57728; shards of dp = 2, 28800 and 28864), by how long the gathered
// weights stay (MEMORY.md, "FSDP buffers"):
// - unit: bf16 shard 2 * 28800, fp32 gradient shard 4 * 28800, and the two consecutive units
//   gathered, stage 0's embedding (8192 parameters) and block 0 (49408): 2 * 57600 bytes.
// - micro-batch: every unit gathered, 2 * 57600 in bf16, no separate buffer; gradients sharded.
// - step (auto with pp > 1, torchtitan): the same, and the fp32 gradients unsharded, 4 * 57600.
// The optimizer's 12 bytes per parameter stay sharded in all three.
TEST(MemoryModel, FsdpKeptLongerHoldsTheStagesWholeWeightsAndGradients) {
  HybridJob job = tiny_job({.dp = 2, .pp = 2}, 4, 3);
  std::map<FsdpUnshard, StageMemory> m;
  for (FsdpUnshard u :
       {FsdpUnshard::kUnit, FsdpUnshard::kMicroBatch, FsdpUnshard::kStep, FsdpUnshard::kAuto}) {
    job.fsdp_unshard = u;
    m[u] = model_of(tiny(), tiny_shard(), job).stages[0];
    EXPECT_EQ(m[u].optimizer_bytes, 12u * 28800) << static_cast<int>(u);
  }
  EXPECT_EQ(m[FsdpUnshard::kUnit].parameters_bytes, 2u * 28800);
  EXPECT_EQ(m[FsdpUnshard::kUnit].gradients_bytes, 4u * 28800);
  EXPECT_EQ(m[FsdpUnshard::kUnit].fsdp_buffers_bytes, 2u * 57600);
  EXPECT_EQ(m[FsdpUnshard::kMicroBatch].parameters_bytes, 2u * 57600);
  EXPECT_EQ(m[FsdpUnshard::kMicroBatch].gradients_bytes, 4u * 28800);
  EXPECT_EQ(m[FsdpUnshard::kMicroBatch].fsdp_buffers_bytes, 0u);
  EXPECT_EQ(m[FsdpUnshard::kStep].parameters_bytes, 2u * 57600);
  EXPECT_EQ(m[FsdpUnshard::kStep].gradients_bytes, 4u * 57600);
  EXPECT_EQ(m[FsdpUnshard::kStep].fsdp_buffers_bytes, 0u);
  EXPECT_EQ(m[FsdpUnshard::kAuto], m[FsdpUnshard::kStep]);
  // Without a pipeline, auto is FSDP's default.
  HybridJob flat = tiny_job({.dp = 4}, 1, 3);
  const StageMemory unit_default = model_of(tiny(), tiny_shard(), flat).stages[0];
  flat.fsdp_unshard = FsdpUnshard::kUnit;
  EXPECT_EQ(model_of(tiny(), tiny_shard(), flat).stages[0], unit_default);
}

TEST(MemoryModel, Fp32KeepsNoMasterCopy) {
  // fp32: 4 + 4 + 8 (m, v) bytes per parameter; activations in 4 bytes.
  TransformerShard shard = tiny_shard();
  shard.precision = "fp32";
  const StageMemory m = model_of(tiny(), shard, tiny_job({})).stages[0];
  EXPECT_EQ(m.parameters_bytes, 4 * kParams);
  EXPECT_EQ(m.gradients_bytes, 4 * kParams);
  EXPECT_EQ(m.optimizer_bytes, 8 * kParams);
}

// Recompute modes, one stage, one micro-batch, the rebuilt part of one block during its
// backward on top: none 166912 + 0; selective 2048 + 2*69632 + 24576 = 165888, + 512 (the
// log-sum-exp the core's recompute rebuilds); full 2048 + 2*4096 + 24576 = 34816, + 70144 -
// 4096 = 66048; materialised, none: 2048 + 2*79872 + 24576 = 186368.
TEST(MemoryModel, EachRecomputeModeByHand) {
  const auto activations = [](Recompute r, AttentionMemory a) {
    return model_of(tiny(), tiny_shard(r), tiny_job({}), a).stages[0].activations_bytes;
  };
  EXPECT_EQ(activations(Recompute::kNone, AttentionMemory::kFlash), 166912u);
  EXPECT_EQ(activations(Recompute::kSelective, AttentionMemory::kFlash), 165888u + 512);
  EXPECT_EQ(activations(Recompute::kFull, AttentionMemory::kFlash), 34816u + 66048);
  EXPECT_EQ(activations(Recompute::kNone, AttentionMemory::kMaterialized), 186368u);
  // full:2 on tiny()'s two blocks: block 0 keeps its 70144 bytes, block 1 only its 4096-byte
  // input, and the backward rebuilds block 1 (66048 more): 2048 + 70144 + 4096 + 24576 +
  // 66048, as much as none at this peak (with two blocks the one rebuilt is the one saved).
  TransformerShard every2 = tiny_shard(Recompute::kFull);
  every2.recompute_every = 2;
  EXPECT_EQ(model_of(tiny(), every2, tiny_job({})).stages[0].activations_bytes,
            2048u + 70144 + 4096 + 24576 + 66048);
  // Over pp = 2 with 4 micro-batches (1F1B: 2 in flight on stage 0, 1 on stage 1): stage 0's
  // block 0 is not recomputed, so nothing is rebuilt there: 2 * (2048 + 70144); stage 1 holds
  // block 1's input and the head, and rebuilds block 1: 4096 + 24576 + 66048.
  const MemoryReport pp2 = model_of(tiny(), every2, tiny_job({.pp = 2}, 4));
  EXPECT_EQ(pp2.stages[0].activations_bytes, 2u * (2048 + 70144));
  EXPECT_EQ(pp2.stages[1].activations_bytes, 4096u + 24576 + 66048);
}

// pp = 2, 4 micro-batches: stage 0 holds the embedding and block 0 (2048 + 70144 = 72192 per
// micro-batch), stage 1 block 1 and the head (70144 + 24576 = 94720). GPipe holds all 4 on both;
// 1F1B p - stage: 2 on stage 0, 1 on stage 1.
TEST(MemoryModel, GpipeHoldsEveryMicroBatchOneFOneBPMinusStage) {
  const ParallelDegrees pp2{.pp = 2};
  HybridJob gpipe = tiny_job(pp2, 4);
  gpipe.schedule = {.kind = PipelineScheduleKind::kGpipe};
  const MemoryReport g = model_of(tiny(), tiny_shard(), gpipe);
  const MemoryReport f = model_of(tiny(), tiny_shard(), tiny_job(pp2, 4));
  ASSERT_EQ(g.stages.size(), 2u);
  EXPECT_EQ(g.stages[0].micro_batches_in_flight, 4);
  EXPECT_EQ(g.stages[1].micro_batches_in_flight, 4);
  EXPECT_EQ(g.stages[0].activations_bytes, 4u * 72192);
  EXPECT_EQ(g.stages[1].activations_bytes, 4u * 94720);
  EXPECT_EQ(f.stages[0].micro_batches_in_flight, 2);
  EXPECT_EQ(f.stages[1].micro_batches_in_flight, 1);
  EXPECT_EQ(f.stages[0].activations_bytes, 2u * 72192);
  EXPECT_EQ(f.stages[1].activations_bytes, 94720u);
  // Parameters: stage 0 the embedding and a block, 8192 + 49408 = 57600; stage 1 a block and
  // the head, 49408 + 8320 = 57728 (bf16).
  EXPECT_EQ(f.stages[0].parameters_bytes, 2u * 57600);
  EXPECT_EQ(f.stages[1].parameters_bytes, 2u * 57728);
  // Communicators: activations out and gradients in on stage 0, the mirror on stage 1 (no dp);
  // an activation and a gradient of b*s*h*e = 4096 bytes in transit.
  EXPECT_EQ(f.stages[0].communication_buffers_bytes, 32 * kMiB + 2 * 4096);
}

// Interleaved, V = 2, pp = 2, 4 micro-batches, 4 blocks: device 0 holds chunk 0 = embedding +
// block 0 (72192) and chunk 1 = block 2 (70144); device 1 chunk 0 = block 1 (70144) and chunk
// 1 = block 3 + head (94720). Device 0's order (pipeline_schedule.h; warm-up W = 4): forwards
// c0m0 c0m1 c1m0 c1m1, then f c0m2, b c1m0, f c0m3: c0 m0..m3 and c1m1 held, 5 in flight,
// 4 * 72192 + 70144 = 358912 (the most: later steps free chunk-0 micro-batches first).
// Device 1 (W = 2): f c0m0 c0m1, f c1m0 holds 2 * 70144 + 94720 = 235008, 3 in flight; after
// that each backward frees one before the next forward.
TEST(MemoryModel, InterleavedFirstStageHoldsMore) {
  HybridJob job = tiny_job({.pp = 2}, 4);
  job.schedule = {.kind = PipelineScheduleKind::kInterleaved, .virtual_stages = 2};
  const MemoryReport r = model_of(tiny(4), tiny_shard(), job);
  ASSERT_EQ(r.stages.size(), 2u);
  EXPECT_EQ(r.stages[0].micro_batches_in_flight, 5);
  EXPECT_EQ(r.stages[1].micro_batches_in_flight, 3);
  EXPECT_EQ(r.stages[0].activations_bytes, 358912u);
  EXPECT_EQ(r.stages[1].activations_bytes, 235008u);
}

// The same model with 2 micro-batches (m = p): Megatron-LM's interleaved schedule runs every
// forward first on both devices, so device 1 holds c0m0 c0m1 c1m0 c1m1, 2 * 70144 + 2 * 94720 =
// 329728; PyTorch's (interleaved-torch, warm-up (V - 1) p + 2 (p - 1 - 1) = 2) holds c0m0 c0m1
// and then c1m0 before c1m0's backward: 2 * 70144 + 94720 = 235008, 3 in flight. Device 0 runs
// all four forwards first in both (warm-up min(2 + 2, 4) = 4): 2 * 72192 + 2 * 70144 = 284672.
TEST(MemoryModel, PyTorchsInterleavedHoldsLessOnTheLastDeviceWhenMEqualsP) {
  HybridJob job = tiny_job({.pp = 2}, 2);
  job.schedule = {.kind = PipelineScheduleKind::kInterleaved, .virtual_stages = 2};
  const MemoryReport megatron = model_of(tiny(4), tiny_shard(), job);
  job.schedule.runtime = PipelineRuntime::kTorch;
  const MemoryReport torch = model_of(tiny(4), tiny_shard(), job);
  ASSERT_EQ(torch.stages.size(), 2u);
  EXPECT_EQ(megatron.stages[1].micro_batches_in_flight, 4);
  EXPECT_EQ(megatron.stages[1].activations_bytes, 329728u);
  EXPECT_EQ(torch.stages[1].micro_batches_in_flight, 3);
  EXPECT_EQ(torch.stages[1].activations_bytes, 235008u);
  for (const MemoryReport* r : {&megatron, &torch}) {
    EXPECT_EQ(r->stages[0].micro_batches_in_flight, 4);
    EXPECT_EQ(r->stages[0].activations_bytes, 284672u);
  }
}

TEST(MemoryModel, ContextParallelismDividesTheTokens) {
  // cp = 2: T = 2 * 16 / 2 = 16 tokens, so every per-token term halves; the materialised core
  // a * T * s * 5 = 4 * 16 * 16 * 5 = 5120 halves too (queries split, keys whole).
  TransformerShard cp2 = tiny_shard();
  cp2.cp = 2;
  EXPECT_EQ(block_activation_bytes(tiny(), cp2, AttentionMemory::kFlash), kBlock / 2);
  EXPECT_EQ(block_activation_bytes(tiny(), cp2, AttentionMemory::kMaterialized), 79872u / 2);
  EXPECT_EQ(head_activation_bytes(tiny(), cp2), kHead / 2);
}

TEST(MemoryModel, HybridShardingShardsOverItsGroupOnly) {
  // ZeRO-3 over dp = 4 with --dp-shard 2: states sharded 2 ways, ceil(115328 / 2) = 57664.
  HybridJob job = tiny_job({.dp = 4}, 1, 3);
  job.dp_shard = 2;
  const StageMemory m = model_of(tiny(), tiny_shard(), job).stages[0];
  EXPECT_EQ(m.parameters_bytes, 2u * 57664);
  EXPECT_EQ(m.gradients_bytes, 4u * 57664);
  EXPECT_EQ(m.optimizer_bytes, 12u * 57664);
}

// tiny() with 4 experts of f = 256, top-2, on dp = 4 with ep = 2, under ZeRO `zero`: its stage.
StageMemory tiny_moe_stage(int zero) {
  TransformerArch a = tiny();
  a.experts = 4;
  a.experts_per_token = 2;
  TransformerShard shard = tiny_shard();
  shard.ep = 2;
  return model_of(a, shard, tiny_job({.dp = 4, .ep = 2}, 1, zero)).stages[0];
}

TEST(MemoryModel, ExpertsShardOverTheExpertDataGroup) {
  // tiny() with 4 experts of f = 256, top-2, ep = 2, dp = 4, ZeRO-1. Per block: attention
  // 16512; the MoE piece: norm 128 + router h*E = 256 + E/ep = 2 experts of 2*h*f = 32768
  // each, 65920, all of it reduced over the expert-data group as the hybrid graph reduces the
  // piece (MEMORY.md). Dense: embedding 8192 + 2 * 16512 + head 8320 = 49536, sharded over
  // dp*cp = 4: 12384; MoE pieces 2 * 65920 = 131840 over (dp/ep)*cp = 2: 65920. Optimizer
  // 12 * (12384 + 65920) = 939648; parameters and gradients unsharded.
  const StageMemory m = tiny_moe_stage(1);
  EXPECT_EQ(m.parameters_bytes, 2u * (49536 + 131840));
  EXPECT_EQ(m.optimizer_bytes, 12u * (12384 + 65920));
}

TEST(MemoryModel, ZeroThreeShardsExpertsOverTheExpertDataGroupToo) {
  // The model of ExpertsShardOverTheExpertDataGroup under ZeRO-3 (FSDP's default unit
  // unsharding): parameters, gradients and optimizer states all sharded, the dense 49536 over
  // dp*cp = 4 (12384), the experts' 131840 over (dp/ep)*cp = 2 (65920): 78304 per rank. The
  // gathered buffers: the largest two consecutive units, the blocks of 16512 + 65920 = 82432
  // each, in bf16.
  const StageMemory m = tiny_moe_stage(3);
  EXPECT_EQ(m.parameters_bytes, 2u * 78304);
  EXPECT_EQ(m.gradients_bytes, 4u * 78304);
  EXPECT_EQ(m.optimizer_bytes, 12u * 78304);
  EXPECT_EQ(m.fsdp_buffers_bytes, 2u * 2 * 82432);
}

TEST(MemoryModel, PeakHeldIsInFlightTimesBytesWithOneChunk) {
  for (int stage = 0; stage < 4; ++stage) {
    const auto order = stage_order({}, 4, 8, stage);
    EXPECT_EQ(peak_held_bytes(order, {1000}), 1000u * static_cast<unsigned>(max_in_flight(order)));
  }
}

TEST(MemoryModel, WorstStageAndOomAgainstTheDatasheet) {
  const MemoryReport small = model_of(tiny(), tiny_shard(), tiny_job({.pp = 2}, 4));
  EXPECT_FALSE(small.oom);
  EXPECT_EQ(small.device, "NVIDIA H100-SXM5-80GB");
  EXPECT_EQ(small.worst_stage, 0);  // 2 micro-batches of 72192 against 1 of 94720
  // Llama 3 8B unsharded on one H100: 18 bytes x 8.03e9 parameters = 145 GB > 80 GiB.
  const TransformerShard shard{.micro_batch = 1, .seq_len = 1024, .device = "h100"};
  const MemoryReport big =
      memory_model(*workloads::find_transformer("llama3-8b"), shard, tiny_job({}));
  EXPECT_TRUE(big.oom);
  EXPECT_GT(big.stages[0].peak_bytes, big.capacity_bytes);
}

TEST(DeviceSpec, CapacityIsTheDatasheetGigabytesAsGibibytes) {
  // "80 GB" of HBM is 80 * 2^30 bytes (MEMORY.md), not 80 * 10^9.
  constexpr double kGiB = 1024.0 * 1024 * 1024;
  EXPECT_EQ(workloads::find_device("v100").memory_capacity_bytes, 32 * kGiB);
  EXPECT_EQ(workloads::find_device("a100").memory_capacity_bytes, 80 * kGiB);
  EXPECT_EQ(workloads::find_device("h100").memory_capacity_bytes, 80 * kGiB);
  EXPECT_EQ(workloads::find_device("h200").memory_capacity_bytes, 141 * kGiB);
  EXPECT_EQ(workloads::find_device("h100").memory_capacity_bytes, 85899345920.0);
}

}  // namespace
}  // namespace dtsim::sim
