// A decoder-only transformer as hybrid parallelism shards it: the architecture (TransformerArch),
// a catalogue of published models, and what one rank runs of one micro-batch under tensor (TP),
// context (CP) and expert (EP) parallelism (TransformerShard -> TransformerPieces), each piece
// timed with the generator's roofline (roofline.h). Method and sources: workloads/TRANSFORMER.md.
//
//   const TransformerArch* arch = find_transformer("llama3.1-70b");
//   std::vector<TransformerPiece> pieces = transformer_pieces(
//       *arch, {.micro_batch = 1, .seq_len = 8192, .tp = 8, .sequence_parallel = true});
#ifndef DTSIM_WORKLOADS_TRANSFORMER_H_
#define DTSIM_WORKLOADS_TRANSFORMER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "workloads/generator_error.h"
#include "workloads/roofline.h"

namespace dtsim::workloads {

// GPT: 2 linears + GeLU; Llama/Mixtral: gate, up, down + SiLU (SwiGLU).
enum class MlpKind { kGelu, kSwiGlu };
// LayerNorm: a scale and a bias per channel; RMSNorm: a scale only.
enum class NormKind { kLayerNorm, kRmsNorm };

struct TransformerArch {
  std::string name;                                     // "gpt3-175b", "llama3-70b", ...
  int layers = 0, hidden = 0, heads = 0, kv_heads = 0;  // kv_heads < heads: GQA
  int ffn_hidden = 0;                                   // per expert for MoE
  int vocab = 0;                                        // as the tokenizer has it, unpadded
  int max_seq_len = 0;  // position table (learned) or trained context length (RoPE)
  MlpKind mlp = MlpKind::kGelu;
  NormKind norm = NormKind::kLayerNorm;
  bool learned_positions = false;      // GPT-3: learned position embedding; else RoPE (no params)
  bool tied_embeddings = false;        // output head shares the token embedding
  int experts = 1;                     // MoE: experts per MoE layer (1 = dense); every layer is MoE
  int experts_per_token = 1;           // MoE top-k
  std::uint64_t published_params = 0;  // parameter count the source states (for tests)
  std::string source;                  // paper / model card the numbers come from
  bool linear_biases = false;          // GPT: every linear has a bias; Llama/Mixtral: none
  // llm-foundry's MPT: the learned position table has as many rows as the run's sequence
  // (its yamls set max_seq_len per run); max_seq_len is the size its parameter count states.
  bool positions_per_run = false;
  // Training drops out on the residual stream after each block's attention and MLP (and in the
  // attention core): GPT-3 and Megatron-LM's GPTs (0.1). Llama, Mixtral, Nemotron and MPT train
  // without (their configurations set 0). Memory keeps the masks (sim/strategies/MEMORY.md).
  bool dropout = false;

  bool operator==(const TransformerArch&) const = default;
};

// Every catalogued model (GPT-3, Megatron-LM's GPTs, Llama 2/3/3.1, Mixtral), in a fixed order.
[[nodiscard]] const std::vector<TransformerArch>& transformer_catalog();
// The catalogue entry whose name equals `name` ignoring ASCII case ("LLAMA3-8B" finds
// "llama3-8b", as the validation rows spell it); nullptr if there is none. The pointer is into
// the catalogue, which lives as long as the program.
[[nodiscard]] const TransformerArch* find_transformer(std::string_view name);
// `arch` as a run of `seq_len` tokens builds it: with positions_per_run, a position table of
// seq_len rows (max_seq_len = seq_len); any other architecture as it is.
[[nodiscard]] TransformerArch for_sequence(const TransformerArch& arch, int seq_len);
// Parameters of the whole model, unsharded, with the vocabulary unpadded: embeddings, every block,
// final norm, and the output head unless tied. Throws GeneratorError for an inconsistent
// architecture (see transformer_pieces).
[[nodiscard]] std::uint64_t parameter_count(const TransformerArch& arch);

// kSelective: Megatron-LM's (the attention core); kSelectiveOp: torchtitan's op-level policy
// (every second matrix multiplication of a block and its elementwise work; TRANSFORMER.md).
enum class Recompute { kNone, kSelective, kSelectiveOp, kFull };
// Whether kSelectiveOp is modelled for `arch`: torchtitan's policy counts the bias-free matrix
// multiplications of Llama-style dense blocks (separate Q, K, V, gate and up projections).
[[nodiscard]] bool has_selective_op(const TransformerArch& arch);
// "none", "selective", "selective-op", "full"; nullopt for anything else.
[[nodiscard]] std::optional<Recompute> parse_recompute(std::string_view name);
[[nodiscard]] std::string_view recompute_name(Recompute recompute);

// The attention core's kernel (TRANSFORMER.md, "Attention kernels"): kFlash1, FlashAttention
// (v1) or its Triton port (MPT's `attn_impl: flash|triton` in llm-foundry's 2023 benchmarks);
// kFlash2, FlashAttention-2 (PyTorch's scaled_dot_product_attention, torchtitan); kCudnn,
// cuDNN's fused attention as Transformer Engine runs it (Megatron-LM, NeMo since mid-2024), or
// FlashAttention-3, which performs alike on Hopper.
enum class AttentionKernel { kFlash1, kFlash2, kCudnn };
// "flash1", "flash2", "cudnn"; nullopt for anything else.
[[nodiscard]] std::optional<AttentionKernel> parse_attention_kernel(std::string_view name);
[[nodiscard]] std::string_view attention_kernel_name(AttentionKernel kernel);
// The fraction of `device`'s dense 16-bit peak that `kernel` sustains on the attention core
// (under a power limit, times clock_scale).
[[nodiscard]] double attention_efficiency(AttentionKernel kernel, const DeviceSpec& device);

// How the training framework runs float8's casts (TRANSFORMER.md, "Float8"). kTorchao:
// torchao's dynamic tensorwise scaling, as torchtitan runs it: every forward casts each weight
// again, after an amax pass of its own. kTorchaoRowwise: its rowwise scaling, cast alike, whose
// tensor-parallel gathers stay bf16 (torchao's fp8 TP plan is tensorwise only). kTe: Transformer
// Engine's delayed scaling called once per micro-batch (llm-foundry): every forward casts each
// weight, its amax from the history. kMegatronTe: Transformer Engine as Megatron-LM and NeMo drive
// it, which cast a weight in a step's first micro-batch only (is_first_microbatch) and reuse it.
enum class Fp8Recipe { kTorchao, kTorchaoRowwise, kTe, kMegatronTe };
// "torchao", "torchao-rowwise", "te", "megatron-te"; nullopt for anything else.
[[nodiscard]] std::optional<Fp8Recipe> parse_fp8_recipe(std::string_view name);
[[nodiscard]] std::string_view fp8_recipe_name(Fp8Recipe recipe);

// The loss (sim/strategies/MEMORY.md, "The loss's backward"): kFused, Megatron-LM's fused
// vocab-parallel cross-entropy; kPyTorch, F.cross_entropy on an fp32 copy of the logits
// (torchtitan), which holds more while its backward runs; kCompiled, the same under
// torch.compile (torchtitan compiles its loss with the model since April 2025), which keeps the
// 16-bit logits and writes a 16-bit gradient.
enum class CrossEntropy { kFused, kPyTorch, kCompiled };
// "fused", "pytorch", "compiled"; nullopt for anything else.
[[nodiscard]] std::optional<CrossEntropy> parse_cross_entropy(std::string_view name);
[[nodiscard]] std::string_view cross_entropy_name(CrossEntropy loss);

struct TransformerShard {  // how one rank runs one micro-batch
  int micro_batch = 1;     // sequences per micro-batch
  int seq_len = 2048;
  int tp = 1, cp = 1, ep = 1;
  bool sequence_parallel = false;  // Megatron SP: norms/dropout sharded over TP along the sequence
  Recompute recompute = Recompute::kNone;
  // With kFull: every recompute_every-th block is recomputed whole (blocks recompute_every,
  // 2 * recompute_every, ... counted from 1), the others keep their activations: torchtitan's
  // layer-level selective checkpointing (selective_ac_option N). 1: every block.
  int recompute_every = 1;
  // With kFull: PyTorch's non-reentrant checkpoint (torch.utils.checkpoint, use_reentrant=False,
  // since PyTorch 2.1) stops recomputing a block once backward's last saved tensor is packed
  // again: without dropout, a dense block does not redo its down projection (in fp8 it does),
  // an MoE block its combine, and neither the TP collective and residual add after them; with
  // dropout the block is redone whole (TRANSFORMER.md, "Recompute"). false: the whole forward
  // again (Megatron-LM, NeMo, reentrant checkpoint).
  bool checkpoint_early_stop = false;
  AttentionKernel attention = AttentionKernel::kFlash2;
  CrossEntropy cross_entropy = CrossEntropy::kFused;  // the loss; changes memory only
  std::string device = "h100";                        // device_catalog() name
  std::string precision = "bf16";                     // fp32, tf32, fp16, bf16, fp8
  Fp8Recipe fp8_recipe = Fp8Recipe::kTorchao;         // with fp8: how its casts run
  // Megatron-LM's --make-vocab-size-divisible-by: the embedding and the head run a vocabulary
  // padded up to a multiple of vocab_divisible_by * tp (1: no padding beyond a multiple of tp).
  int vocab_divisible_by = 128;

  bool operator==(const TransformerShard&) const = default;
};

enum class PieceKind { kEmbedding, kAttention, kMlp, kMoe, kHead };

// One piece of the model as one rank runs it for one micro-batch: a stretch of compute that ends
// where tensor parallelism communicates. A dense block is two pieces (attention, mlp); an MoE
// block is attention + moe. Embedding first, head (final norm + output projection + loss) last.
//
// Its TP collectives (tp > 1), at nccl-tests sizes, are where Megatron-LM puts them (its "f" on a
// piece's input, its "g" on its output):
//   forward:  [SP: all-gather of tp_input_bytes]  compute
//             [tp_collectives x all-reduce of tp_bytes; with SP one reduce-scatter instead]
//   backward: [SP: all-gather of tp_bytes, except for the head]  compute
//             [all-reduce of tp_input_bytes; with SP a reduce-scatter instead]
// Attention, mlp and moe have tp_input_bytes == tp_bytes: backward mirrors forward. The
// embedding has no input collective (token ids have no gradient). The head's tp_bytes are its
// vocab-parallel cross-entropy's per-token scalars, all-reduced three times, with or without SP,
// and needing nothing in backward; its input (the hidden states) is gathered like any piece's.
struct TransformerPiece {
  std::string name;  // "embedding", "layers.3.attention", "layers.3.mlp", "head"
  PieceKind kind = PieceKind::kEmbedding;
  int block = -1;            // transformer block index, -1 for embedding and head
  double forward_sec = 0;    // this rank, one micro-batch, sharded shapes, roofline
  double backward_sec = 0;   // input + weight gradients
  double recompute_sec = 0;  // forward work redone before backward under shard.recompute
  // The recomputation stops before the TP collective after this piece's forward
  // (shard.checkpoint_early_stop, the mlp or moe piece of a block without dropout): it is not
  // redone; recompute_sec ends where the recomputation does.
  bool recompute_skips_output = false;
  // FLOPs this rank executes in forward (no recompute): matrix multiplications only (GEMMs and
  // the attention core's two, causal half), as model-FLOP counts do; elementwise work is timed by
  // its memory traffic and not counted.
  double forward_flops = 0;
  std::uint64_t params = 0;  // parameters this rank holds of this piece (sharded by TP; experts
                             // by EP); 0 for a tied head, whose weight the embedding holds
  // TP: the collective after this piece's forward (above): b*(s/cp)*h*element bytes for
  // embedding, attention, mlp and moe; 4*b*(s/cp) (fp32 scalars) for the head. 0 if tp == 1.
  std::uint64_t tp_bytes = 0;
  // The sequence-parallel all-gathers of a dense block's pieces (attention, mlp) move fp8 copies,
  // half the bytes: torchao's float8 TP plan (fp8 with the torchao recipe, TRANSFORMER.md).
  bool tp_gathers_fp8 = false;
  // CP (attention pieces, cp > 1): bytes of one key+value block passed to the ring neighbour
  // per ring step: 2*b*(s/cp)*(kv heads on this rank)*head_dim*element bytes. Forward: cp-1
  // steps; backward: cp-1 steps of the KV block and cp steps of its gradient dKV (same size).
  std::uint64_t cp_kv_bytes = 0;
  // EP (MoE pieces, ep > 1): nccl-tests size of each all-to-all (dispatch; combine is the same
  // size) in forward: b*(s/cp)*top_k*h*element bytes; backward has two of the same size.
  std::uint64_t ep_bytes = 0;
  // TP: the collective on this piece's input (above): b*(s/cp)*h*element bytes for attention,
  // mlp, moe and head; 0 for the embedding and if tp == 1.
  std::uint64_t tp_input_bytes = 0;
  int tp_collectives = 0;  // collectives of tp_bytes after forward: 1, the head 3, 0 if tp == 1
  // The forward time of the GEMM next to each TP collective of a dense block's piece: the one
  // that takes the gathered input (QKV; the up and gate projection) and the one whose output TP
  // reduces (the output projection; the down projection). Their input and weight gradients take
  // as long each (the same FLOPs; fp8's casts are not part of them). What overlapped TP
  // communication hides its transfers behind (HYBRID.md); 0 for the embedding, the head and MoE
  // pieces, which do not overlap.
  double tp_input_gemm_sec = 0;
  double tp_output_gemm_sec = 0;

  bool operator==(const TransformerPiece&) const = default;
};

// The pieces one rank runs of `arch` under `shard`, in forward order. Throws
// GeneratorError(field, detail) naming the TransformerShard field at fault: micro_batch or
// seq_len < 1, seq_len > arch.max_seq_len, tp/cp/ep/vocab_divisible_by < 1, tp not dividing
// heads or ffn_hidden (hidden = heads * head_dim follows), tp neither dividing kv_heads nor a
// multiple of it (tp > kv_heads replicates each KV head on tp/kv_heads ranks), cp > 1 with 2*cp
// not dividing seq_len (causal load balancing cuts it into 2*cp chunks), ep > 1 on a dense
// model, ep not dividing experts, an unknown device or precision; or naming the TransformerArch
// field at fault for an inconsistent architecture (layers, hidden, heads, kv_heads, ffn_hidden,
// vocab, max_seq_len < 1; heads not dividing hidden, kv_heads not dividing heads, top-k outside
// 1..experts). sequence_parallel with tp == 1 is allowed and changes nothing.
[[nodiscard]] std::vector<TransformerPiece> transformer_pieces(const TransformerArch& arch,
                                                               const TransformerShard& shard);

// Bytes of the activation one pipeline stage sends the next per micro-batch:
// b * (s/cp) * h * element bytes, divided by tp with sequence parallelism (Megatron scatters it).
// Throws as transformer_pieces.
[[nodiscard]] std::uint64_t boundary_activation_bytes(const TransformerArch& arch,
                                                      const TransformerShard& shard);

// Model FLOPs of one training step (forward + backward, no recompute) per token of a
// `seq_len`-token sequence, two published ways; each throws GeneratorError for seq_len < 1 or
// an inconsistent architecture:
//  - 6 * N + 12 * layers * hidden * seq_len (PaLM, Chowdhery et al. 2022, App. B; torchtitan),
//    N the parameters a token's matrix multiplications use: all but the embedding tables, the
//    output head counted even when tied, only top-k experts of an MoE layer;
//  - Megatron-LM's 72*l*h^2*(1 + s/(6h) + V/(12*l*h)) (Korthikanti et al. 2022), generalised for
//    GQA, SwiGLU and top-k experts as megatron/training/training.py's
//    num_floating_point_operations does (its form before the causal halving: full s^2
//    attention; the vocabulary unpadded).
[[nodiscard]] double model_flops_per_token_6n(const TransformerArch& arch, int seq_len);
[[nodiscard]] double megatron_flops_per_token(const TransformerArch& arch, int seq_len);

}  // namespace dtsim::workloads

#endif  // DTSIM_WORKLOADS_TRANSFORMER_H_
