#include "workloads/transformer.h"

#include <algorithm>
#include <initializer_list>
#include <string>
#include <utility>

#include "workloads/roofline.h"

namespace dtsim::workloads {

namespace {

constexpr double kCausalFraction = 0.5;       // FlashAttention skips the masked half
constexpr double kFlashBackwardFactor = 2.5;  // FlashAttention-2: 5 matmuls against 2
// FlashAttention-2 on Hopper and later GPUs: 35 % of the dense 16-bit peak (Shah et al. 2024,
// FlashAttention-3, abstract: "FlashAttention-2 achieving only 35% utilization on H100"; Dao
// 2023 measured up to 335 TFLOP/s of the H100's 989, forward and backward). It was written for
// Ampere's mma.sync and uses none of Hopper's asynchronous tensor-core instructions.
constexpr double kFlash2HopperEfficiency = 0.35;
// FlashAttention (v1) and its Triton port run at half FlashAttention-2's rate on every GPU (Dao
// 2023, abstract: FlashAttention-2 yields "around 2x speedup compared to FlashAttention", which
// reached "only 25-40% of the theoretical maximum FLOPs/s" on an A100 against its 50-73 %).
constexpr double kFlash1SpeedRatio = 0.5;
constexpr int kHopperComputeCapability = 90;
// Float8's cast of a GEMM operand (TRANSFORMER.md, "Float8"): read it in bf16 and write two fp8
// copies, row- and column-major (Hopper's fp8 GEMMs take K-major operands only, and each operand
// meets two GEMMs along different dimensions): 2 + 1 + 1 bytes per element, as torchao's own
// float8 roofline (torchao/float8/roofline_utils.py) and Transformer Engine's cast-transpose
// kernel move. An activation's or gradient's amax is taken in the kernel that produced it
// (torch.compile's fusion, TE's fused norm and cast, or TE's amax history); a weight's, with
// torchao's dynamic scaling, in a pass of its own that reads it once more.
constexpr double kFp8CastBytes = 4;
constexpr double kFp8AmaxPassBytes = 2;
// With sequence parallelism an fp8 block gathers its input (and its output gradient) in fp8: the
// cast runs on the rank's 1/tp shard (read 2, write 1 byte) before the all-gather, and the
// gathered copy is transposed for the other GEMM (read 1, write 1): 3/tp + 2 bytes per gathered
// element (Transformer Engine's layernorm_linear.py and grad_output_preprocess; torchao's
// float8_tensor_parallel.py).
constexpr double kFp8ShardCastBytes = 3;
constexpr double kFp8TransposeBytes = 2;
constexpr std::uint64_t kLossScalarBytes = 4;  // the cross-entropy's fp32 per-token scalars
constexpr int kCrossEntropyAllReduces = 3;     // max logit, target logit, sum of exponentials

std::string text(int value) {
  return std::to_string(value);
}

void require_at_least_one(const char* field, int value) {
  if (value < 1) {
    throw GeneratorError(field, text(value) + ": expected an integer >= 1");
  }
}

void validate_arch(const TransformerArch& a) {
  require_at_least_one("layers", a.layers);
  require_at_least_one("hidden", a.hidden);
  require_at_least_one("heads", a.heads);
  require_at_least_one("kv_heads", a.kv_heads);
  require_at_least_one("ffn_hidden", a.ffn_hidden);
  require_at_least_one("vocab", a.vocab);
  require_at_least_one("max_seq_len", a.max_seq_len);
  require_at_least_one("experts", a.experts);
  require_at_least_one("experts_per_token", a.experts_per_token);
  if (a.hidden % a.heads != 0) {
    throw GeneratorError("heads", text(a.heads) + ": does not divide hidden " + text(a.hidden));
  }
  if (a.heads % a.kv_heads != 0) {
    throw GeneratorError("kv_heads", text(a.kv_heads) + ": does not divide heads " + text(a.heads));
  }
  if (a.experts_per_token > a.experts) {
    throw GeneratorError("experts_per_token",
                         text(a.experts_per_token) + ": above experts " + text(a.experts));
  }
}

void require_divides(const char* field, int value, const char* what, int of) {
  if (of % value != 0) {
    throw GeneratorError(field, text(value) + ": does not divide " + what + " " + text(of));
  }
}

void validate_tp(const TransformerArch& a, int tp) {
  require_divides("tp", tp, "heads", a.heads);
  const bool splits_kv = tp <= a.kv_heads ? a.kv_heads % tp == 0 : tp % a.kv_heads == 0;
  if (!splits_kv) {
    throw GeneratorError("tp", text(tp) + ": neither divides kv_heads " + text(a.kv_heads) +
                                   " nor is a multiple of it");
  }
  require_divides("tp", tp, "ffn_hidden", a.ffn_hidden);
}

// Checks `s` against `a` and returns the roofline it runs on.
Roofline validate(const TransformerArch& a, const TransformerShard& s) {
  validate_arch(a);
  require_at_least_one("micro_batch", s.micro_batch);
  require_at_least_one("seq_len", s.seq_len);
  // A learned position table has max_seq_len rows; rotary positions (RoPE) have no table, so a
  // longer sequence (long-context training) is only longer.
  if (a.learned_positions && s.seq_len > a.max_seq_len) {
    throw GeneratorError("seq_len", text(s.seq_len) + ": above " + a.name + "'s max_seq_len " +
                                        text(a.max_seq_len) + " (its learned position table)");
  }
  require_at_least_one("tp", s.tp);
  require_at_least_one("cp", s.cp);
  require_at_least_one("ep", s.ep);
  require_at_least_one("vocab_divisible_by", s.vocab_divisible_by);
  validate_tp(a, s.tp);
  if (s.cp > 1 && s.seq_len % (2 * s.cp) != 0) {
    throw GeneratorError("cp", text(s.cp) + ": 2*cp = " + text(2 * s.cp) +
                                   " does not divide seq_len " + text(s.seq_len) +
                                   " (causal load balancing cuts it into 2*cp chunks)");
  }
  if (s.ep > 1 && a.experts == 1) {
    throw GeneratorError("ep", text(s.ep) + ": " + a.name + " is dense (experts 1)");
  }
  require_divides("ep", s.ep, "experts", a.experts);
  if (s.recompute_every < 1 || (s.recompute_every > 1 && s.recompute != Recompute::kFull)) {
    throw GeneratorError("recompute", "full:" + text(s.recompute_every) +
                                          ": expected full:N with N >= 1 (every N-th block)");
  }
  if (s.recompute_every > a.layers) {
    throw GeneratorError("recompute", "full:" + text(s.recompute_every) + ": above " + a.name +
                                          "'s " + text(a.layers) + " layers");
  }
  if (s.checkpoint_early_stop && s.recompute != Recompute::kFull) {
    throw GeneratorError(
        "checkpoint_early_stop",
        "needs full recompute (recompute " + std::string(recompute_name(s.recompute)) + ")");
  }
  if (s.recompute == Recompute::kSelectiveOp && !has_selective_op(a)) {
    throw GeneratorError("recompute",
                         "selective-op: torchtitan's op-level policy is modelled for "
                         "dense, bias-free SwiGLU blocks (Llama); " +
                             a.name + " is not one (use selective or full)");
  }
  const DeviceSpec& device = find_device(s.device);
  Roofline r = make_roofline(device, s.precision);
  if (r.fp8_linears) {
    switch (s.fp8_recipe) {
      case Fp8Recipe::kTorchao:
      case Fp8Recipe::kTorchaoRowwise:
        r.fp8_weight_cast_bytes = kFp8CastBytes + kFp8AmaxPassBytes;
        break;
      case Fp8Recipe::kTe:
        r.fp8_weight_cast_bytes = kFp8CastBytes;
        break;
      case Fp8Recipe::kMegatronTe:
        r.fp8_weight_cast_bytes = 0;
        break;
    }
  }
  if (r.element_bytes == 2) {  // FlashAttention and cuDNN's fused attention are 16-bit kernels
    // the precision's peak times the kernel's share
    r.attention_flops_per_sec = r.peak_flops_per_sec * attention_efficiency(s.attention, device);
  }
  return r;
}

std::uint64_t head_dim(const TransformerArch& a) {
  return static_cast<std::uint64_t>(a.hidden / a.heads);
}
// KV heads one rank holds: kv_heads/tp, or 1 when tp > kv_heads replicates them.
std::uint64_t kv_heads_on_rank(const TransformerArch& a, int tp) {
  return static_cast<std::uint64_t>(tp <= a.kv_heads ? a.kv_heads / tp : 1);
}
std::uint64_t norm_params(const TransformerArch& a) {
  return (a.norm == NormKind::kLayerNorm ? 2u : 1u) * static_cast<std::uint64_t>(a.hidden);
}

// Column-parallel QKV (its bias split too), row-parallel output (its bias replicated), the norm.
std::uint64_t attention_params(const TransformerArch& a, int tp) {
  const auto h = static_cast<std::uint64_t>(a.hidden);
  const std::uint64_t q = h / static_cast<std::uint64_t>(tp);
  const std::uint64_t qkv = q + 2 * kv_heads_on_rank(a, tp) * head_dim(a);
  const std::uint64_t biases = a.linear_biases ? qkv + h : 0;
  return h * qkv + q * h + biases + norm_params(a);
}

// One dense MLP or expert: column-parallel up (and gate), row-parallel down.
std::uint64_t mlp_params(const TransformerArch& a, int tp) {
  const auto h = static_cast<std::uint64_t>(a.hidden);
  const auto f = static_cast<std::uint64_t>(a.ffn_hidden / tp);
  const std::uint64_t up = a.mlp == MlpKind::kSwiGlu ? 2 * f : f;
  return h * up + f * h + (a.linear_biases ? up + h : 0);
}

// The block's second piece: norm + MLP, or norm + router (replicated) + experts.
std::uint64_t ffn_params(const TransformerArch& a, int tp, int experts_held) {
  if (a.experts == 1) {
    return norm_params(a) + mlp_params(a, tp);
  }
  const auto h = static_cast<std::uint64_t>(a.hidden);
  return norm_params(a) + h * static_cast<std::uint64_t>(a.experts) +
         static_cast<std::uint64_t>(experts_held) * mlp_params(a, tp);
}

std::uint64_t embedding_params(const TransformerArch& a, std::uint64_t vocab_on_rank) {
  const auto h = static_cast<std::uint64_t>(a.hidden);
  return vocab_on_rank * h +
         (a.learned_positions ? static_cast<std::uint64_t>(a.max_seq_len) * h : 0);
}

std::uint64_t head_params(const TransformerArch& a, std::uint64_t vocab_on_rank) {
  return norm_params(a) +
         (a.tied_embeddings ? 0 : vocab_on_rank * static_cast<std::uint64_t>(a.hidden));
}

// One rank's shapes of one micro-batch, in elements.
struct Dims {
  double tokens = 0;        // t = b * s / cp: the queries this rank holds
  double keys = 0;          // b * s: the keys and values its queries see over the CP ring
  double seq = 0;           // s
  double hidden = 0;        // h
  double q_width = 0;       // (heads / tp) * head_dim
  double kv_width = 0;      // (KV heads on this rank) * head_dim
  double ffn = 0;           // ffn_hidden / tp
  double vocab = 0;         // padded vocab / tp
  double norm_tokens = 0;   // t / tp with sequence parallelism, else t
  double experts_held = 0;  // experts / ep
  double top_k = 0;
  double experts = 0;
};

std::uint64_t padded_vocab(const TransformerArch& a, const TransformerShard& s) {
  const auto multiple =
      static_cast<std::uint64_t>(s.vocab_divisible_by) * static_cast<std::uint64_t>(s.tp);
  return (static_cast<std::uint64_t>(a.vocab) + multiple - 1) / multiple * multiple;
}

Dims dims_of(const TransformerArch& a, const TransformerShard& s) {
  const double t = 1.0 * s.micro_batch * s.seq_len / s.cp;
  const double d = static_cast<double>(head_dim(a));
  return {.tokens = t,
          .keys = 1.0 * s.micro_batch * s.seq_len,
          .seq = 1.0 * s.seq_len,
          .hidden = 1.0 * a.hidden,
          .q_width = 1.0 * a.hidden / s.tp,
          .kv_width = static_cast<double>(kv_heads_on_rank(a, s.tp)) * d,
          .ffn = 1.0 * a.ffn_hidden / s.tp,
          .vocab = static_cast<double>(padded_vocab(a, s) / static_cast<std::uint64_t>(s.tp)),
          .norm_tokens = s.sequence_parallel ? t / s.tp : t,
          .experts_held = 1.0 * a.experts / s.ep,
          .top_k = 1.0 * a.experts_per_token,
          .experts = 1.0 * a.experts};
}

// Which of a GEMM's fp8 operands arrive by a sequence-parallel all-gather (cast before it).
enum class Gathered { kNone, kInput, kOutputGradient };

// The costs of one piece, kernel by kernel, on one roofline.
class PieceCost {
 public:
  // `linears_in_fp8`: whether this piece's linear layers take fp8 when the roofline has them
  // (the output head does not: torchtitan's float8 and Transformer Engine leave it in bf16).
  // `fp8_gather_tp`: the TP degree when the piece's sequence-parallel gathers move fp8 (the
  // casts of the gathered operands then run on a shard), else 0.
  explicit PieceCost(const Roofline& roofline, bool linears_in_fp8 = true, int fp8_gather_tp = 0)
      : r_(roofline),
        fp8_(roofline.fp8_linears && linears_in_fp8),
        gathered_cast_bytes_(fp8_gather_tp > 0
                                 ? kFp8ShardCastBytes / fp8_gather_tp + kFp8TransposeBytes
                                 : kFp8CastBytes) {}

  // `count` GEMMs (m x k) . (k x n); backward is two of the same shape (input and weight
  // gradients). In fp8 (workloads/TRANSFORMER.md, "Float8"): the operands are 1-byte, the
  // output 2, at the fp8 rate; each forward first casts its input to fp8 and, as the recipe
  // says, its weight; each backward the output gradient (kFp8CastBytes per element, an operand
  // that `gathered` names gathered_cast_bytes_).
  // `in_fp8`: false for a GEMM float8 training leaves in bf16 (the MoE router).
  // Returns the forward seconds of the GEMMs themselves, without the casts before them: what
  // overlapped TP runs chunk by chunk beside its collectives.
  double gemms(double count, double m, double k, double n, bool in_fp8 = true,
               Gathered gathered = Gathered::kNone) {
    const double flops = 2 * m * k * n;
    double gemm_sec = 0;
    if (!fp8_ || !in_fp8) {
      gemm_sec = r_.seconds(flops, (m * k + k * n + m * n) * r_.element_bytes);
      forward_sec_ += count * gemm_sec;
      backward_sec_ += 2 * count * gemm_sec;
    } else {
      gemm_sec =
          std::max(flops / r_.linear_flops_per_sec, (m * k + k * n + 2 * m * n) / r_.bytes_per_sec);
      const double input_bytes =
          gathered == Gathered::kInput ? gathered_cast_bytes_ : kFp8CastBytes;
      const double gradient_bytes =
          gathered == Gathered::kOutputGradient ? gathered_cast_bytes_ : kFp8CastBytes;
      forward_sec_ +=
          count *
          (gemm_sec + r_.seconds(0, input_bytes * m * k + r_.fp8_weight_cast_bytes * k * n));
      backward_sec_ += count * (2 * gemm_sec + r_.seconds(0, gradient_bytes * m * n));
    }
    forward_flops_ += count * flops;
    return count * gemm_sec;
  }
  double gemm(double m, double k, double n, Gathered gathered = Gathered::kNone) {
    return gemms(1, m, k, n, /*in_fp8=*/true, gathered);
  }
  // An elementwise kernel reading `in` and writing `out` elements; its backward reads the inputs
  // and the output gradient and writes one gradient per input.
  void elementwise(double in, double out) {
    forward_sec_ += r_.seconds(0, (in + out) * r_.element_bytes);
    backward_sec_ += r_.seconds(0, (2 * in + out) * r_.element_bytes);
  }
  // FlashAttention, causal: QK^T and PV over the unmasked half at the kernel's rate
  // (attention_efficiency); reads Q, K, V and writes O (no s^2 traffic); backward 2.5x the FLOPs,
  // reading Q, K, V, O, dO and writing dQ, dK, dV.
  void attention_core(const Dims& d) {
    const double flops = kCausalFraction * 4 * d.tokens * d.seq * d.q_width;
    const double q = d.tokens * d.q_width;
    const double kv = 2 * d.keys * d.kv_width;
    const double rate = r_.attention_flops_per_sec;
    core_sec_ = std::max(flops / rate, (2 * q + kv) * r_.element_bytes / r_.bytes_per_sec);
    forward_sec_ += core_sec_;
    backward_sec_ += std::max(kFlashBackwardFactor * flops / rate,
                              (4 * q + 2 * kv) * r_.element_bytes / r_.bytes_per_sec);
    forward_flops_ += flops;
  }

  // The piece of these costs, holding `params`, before its communication is set.
  [[nodiscard]] TransformerPiece piece(std::string name, PieceKind kind,
                                       std::uint64_t params) const {
    return {.name = std::move(name),
            .kind = kind,
            .forward_sec = forward_sec_,
            .backward_sec = backward_sec_,
            .forward_flops = forward_flops_,
            .params = params};
  }
  [[nodiscard]] double core_sec() const { return core_sec_; }
  [[nodiscard]] double forward_sec() const { return forward_sec_; }

 private:
  Roofline r_;
  bool fp8_;
  double gathered_cast_bytes_;
  double forward_sec_ = 0, backward_sec_ = 0, forward_flops_ = 0, core_sec_ = 0;
};

// A norm, on the tokens this rank holds of the sequence.
void add_norm(PieceCost& c, const Dims& d) {
  c.elementwise(d.norm_tokens * d.hidden, d.norm_tokens * d.hidden);
}
// Bias, dropout and residual add, one fused kernel (Megatron's bias_dropout_add); learned
// positions are added the same way.
void add_residual(PieceCost& c, const Dims& d) {
  c.elementwise(2 * d.norm_tokens * d.hidden, d.norm_tokens * d.hidden);
}

// Forward seconds of a piece's first and last GEMMs.
struct EdgeGemms {
  double first_sec = 0;
  double last_sec = 0;
};

// Up (and gate) GEMM, activation, down GEMM over `rows` tokens split among `count` experts.
// A dense MLP's (count 1) first GEMM takes the gathered input, its last one's output gradient is
// gathered; an MoE's experts take their tokens from the dispatch.
EdgeGemms mlp_kernels(PieceCost& c, const TransformerArch& a, const Dims& d, double count,
                      double rows) {
  const double per_gemm = rows / count;
  const bool gated = a.mlp == MlpKind::kSwiGlu;
  const bool dense = a.experts == 1;
  EdgeGemms e;
  e.first_sec = c.gemms(count, per_gemm, d.hidden, (gated ? 2 : 1) * d.ffn, /*in_fp8=*/true,
                        dense ? Gathered::kInput : Gathered::kNone);
  c.elementwise((gated ? 2 : 1) * rows * d.ffn, rows * d.ffn);  // GeLU, or SiLU(gate) * up
  e.last_sec = c.gemms(count, per_gemm, d.ffn, d.hidden, /*in_fp8=*/true,
                       dense ? Gathered::kOutputGradient : Gathered::kNone);
  return e;
}

// Whether `s`'s sequence-parallel gathers of a dense block move fp8: Transformer Engine and
// torchao's tensorwise TP plan cast before they gather; torchao's rowwise scaling gathers bf16.
bool gathers_fp8(const TransformerShard& s) {
  return s.precision == "fp8" && s.sequence_parallel && s.tp > 1 &&
         s.fp8_recipe != Fp8Recipe::kTorchaoRowwise;
}
// The TP degree when `s`'s gathers move fp8 (the gathered operands' casts run on a shard), else 0.
int fp8_gather_tp(const TransformerShard& s) {
  return gathers_fp8(s) ? s.tp : 0;
}

TransformerPiece attention_piece(const TransformerArch& a, const TransformerShard& s, const Dims& d,
                                 const Roofline& r) {
  PieceCost c(r, /*linears_in_fp8=*/true, fp8_gather_tp(s));
  const double qkv = d.q_width + 2 * d.kv_width;
  add_norm(c, d);
  const double qkv_sec = c.gemm(d.tokens, d.hidden, qkv, Gathered::kInput);
  if (!a.learned_positions) {  // RoPE rotates queries and keys
    c.elementwise(d.tokens * (d.q_width + d.kv_width), d.tokens * (d.q_width + d.kv_width));
  }
  c.attention_core(d);
  const double projection_sec = c.gemm(d.tokens, d.q_width, d.hidden, Gathered::kOutputGradient);
  add_residual(c, d);
  TransformerPiece p = c.piece("attention", PieceKind::kAttention, attention_params(a, s.tp));
  p.tp_input_gemm_sec = qkv_sec;
  p.tp_output_gemm_sec = projection_sec;
  p.recompute_sec = s.recompute == Recompute::kFull        ? p.forward_sec
                    : s.recompute == Recompute::kSelective ? c.core_sec()
                                                           : 0;
  if (s.recompute == Recompute::kSelectiveOp) {
    // torchtitan keeps the outputs of Q, V (its 1st and 3rd mm) and of the attention kernel;
    // it redoes the norm, K, RoPE, the output projection (its 4th mm) and the residual.
    PieceCost redo(r, /*linears_in_fp8=*/true, fp8_gather_tp(s));
    add_norm(redo, d);
    redo.gemm(d.tokens, d.hidden, d.kv_width, Gathered::kInput);
    redo.elementwise(d.tokens * (d.q_width + d.kv_width), d.tokens * (d.q_width + d.kv_width));
    redo.gemm(d.tokens, d.q_width, d.hidden);
    add_residual(redo, d);
    p.recompute_sec = redo.forward_sec();
  }
  return p;
}

// Dense: norm, MLP, residual. MoE: norm, router and top-k (replicated over TP), permutation of
// each token's top-k copies, the rank's experts on t * top_k rows on balance, weighted combine.
TransformerPiece ffn_piece(const TransformerArch& a, const TransformerShard& s, const Dims& d,
                           const Roofline& r) {
  const bool moe = a.experts > 1;
  PieceCost c(r, /*linears_in_fp8=*/true, moe ? 0 : fp8_gather_tp(s));
  add_norm(c, d);
  double before_combine_sec = 0;
  if (moe) {
    const double routed = d.tokens * d.top_k;
    c.gemms(1, d.tokens, d.hidden, d.experts, /*in_fp8=*/false);  // the router
    c.elementwise(d.tokens * d.experts, d.tokens * d.experts);
    c.elementwise(d.tokens * d.hidden, routed * d.hidden);
    mlp_kernels(c, a, d, d.experts_held, routed);
    before_combine_sec = c.forward_sec();
    c.elementwise(routed * d.hidden, d.tokens * d.hidden);
  }
  const EdgeGemms dense = moe ? EdgeGemms{} : mlp_kernels(c, a, d, 1, d.tokens);
  const double before_residual_sec = c.forward_sec();
  add_residual(c, d);
  TransformerPiece p = c.piece(moe ? "moe" : "mlp", moe ? PieceKind::kMoe : PieceKind::kMlp,
                               ffn_params(a, s.tp, a.experts / s.ep));
  p.tp_input_gemm_sec = dense.first_sec;
  p.tp_output_gemm_sec = dense.last_sec;
  p.recompute_sec = s.recompute == Recompute::kFull ? p.forward_sec : 0;
  if (s.recompute == Recompute::kFull && s.checkpoint_early_stop) {
    // PyTorch's early stop ends the recomputation as backward's last saved tensor is packed. An
    // ATen operation packs its saved inputs when dispatched, before its kernel runs; float8's
    // linear (a custom autograd Function) and dropout (which saves its mask, an output) pack
    // after theirs. So: with residual dropout, the whole piece (only the add after the dropout
    // is skipped, and dtsim's costs fuse it with the dropout), the output reduced again; else
    // the output not reduced again, and the compute up to the down GEMM, through it in fp8, or
    // up to an MoE's combine (a weighted sum that saves its inputs).
    p.recompute_skips_output = !a.dropout;
    p.recompute_sec = a.dropout               ? p.forward_sec
                      : !moe && r.fp8_linears ? before_residual_sec
                      : moe                   ? before_combine_sec
                                              : before_residual_sec - dense.last_sec;
  }
  if (s.recompute == Recompute::kSelectiveOp) {
    // torchtitan keeps the gate's and the down projection's outputs (its 5th and 7th mm); it
    // redoes the norm, the up projection (6th), SiLU(gate) * up and the residual.
    PieceCost redo(r, /*linears_in_fp8=*/true, fp8_gather_tp(s));
    add_norm(redo, d);
    redo.gemm(d.tokens, d.hidden, d.ffn, Gathered::kInput);
    redo.elementwise(2 * d.tokens * d.ffn, d.tokens * d.ffn);
    add_residual(redo, d);
    p.recompute_sec = redo.forward_sec();
  }
  return p;
}

// Vocab-parallel lookup: the rank reads the rows it owns (t/tp of them on average) and writes the
// whole (partial) output; learned positions are added after it.
TransformerPiece embedding_piece(const TransformerArch& a, const TransformerShard& s, const Dims& d,
                                 const Roofline& r) {
  PieceCost c(r);
  c.elementwise(d.tokens * d.hidden / s.tp, d.tokens * d.hidden);
  if (a.learned_positions) {
    add_residual(c, d);
  }
  return c.piece("embedding", PieceKind::kEmbedding,
                 embedding_params(a, static_cast<std::uint64_t>(d.vocab)));
}

// Final norm, vocab-parallel output projection, cross-entropy over the rank's logits (reads them,
// writes the softmax backward needs).
TransformerPiece head_piece(const TransformerArch& a, const Dims& d, const Roofline& r) {
  PieceCost c(r, /*linears_in_fp8=*/false);
  add_norm(c, d);
  c.gemm(d.tokens, d.hidden, d.vocab);
  c.elementwise(d.tokens * d.vocab, d.tokens * d.vocab);
  return c.piece("head", PieceKind::kHead, head_params(a, static_cast<std::uint64_t>(d.vocab)));
}

std::uint64_t tokens_on_rank(const TransformerShard& s) {
  return static_cast<std::uint64_t>(s.micro_batch) * static_cast<std::uint64_t>(s.seq_len / s.cp);
}

// The communication sizes of `p` under `s` (transformer.h says where each collective goes).
void set_communication(TransformerPiece& p, const TransformerArch& a, const TransformerShard& s,
                       std::uint64_t element_bytes) {
  const std::uint64_t t = tokens_on_rank(s);
  const std::uint64_t activation = t * static_cast<std::uint64_t>(a.hidden) * element_bytes;
  if (s.tp > 1) {
    const bool head = p.kind == PieceKind::kHead;
    p.tp_bytes = head ? t * kLossScalarBytes : activation;
    p.tp_collectives = head ? kCrossEntropyAllReduces : 1;
    p.tp_input_bytes = p.kind == PieceKind::kEmbedding ? 0 : activation;
    p.tp_gathers_fp8 =
        gathers_fp8(s) && (p.kind == PieceKind::kAttention || p.kind == PieceKind::kMlp);
  }
  if (s.cp > 1 && p.kind == PieceKind::kAttention) {
    p.cp_kv_bytes = 2 * t * kv_heads_on_rank(a, s.tp) * head_dim(a) * element_bytes;
  }
  if (s.ep > 1 && p.kind == PieceKind::kMoe) {
    p.ep_bytes = activation * static_cast<std::uint64_t>(a.experts_per_token);
  }
}

// The value of `values` whose `name_of` is `name`, if any: the parsers of the named choices.
template <typename Enum>
std::optional<Enum> parse_named(std::string_view name, std::initializer_list<Enum> values,
                                std::string_view (*name_of)(Enum)) {
  for (Enum v : values) {
    if (name_of(v) == name) {
      return v;
    }
  }
  return std::nullopt;
}

}  // namespace

std::uint64_t parameter_count(const TransformerArch& arch) {
  validate_arch(arch);
  const auto vocab = static_cast<std::uint64_t>(arch.vocab);
  const std::uint64_t block = attention_params(arch, 1) + ffn_params(arch, 1, arch.experts);
  return embedding_params(arch, vocab) + static_cast<std::uint64_t>(arch.layers) * block +
         head_params(arch, vocab);
}

std::optional<Recompute> parse_recompute(std::string_view name) {
  return parse_named(
      name, {Recompute::kNone, Recompute::kSelective, Recompute::kSelectiveOp, Recompute::kFull},
      recompute_name);
}

std::string_view recompute_name(Recompute recompute) {
  switch (recompute) {
    case Recompute::kSelective:
      return "selective";
    case Recompute::kSelectiveOp:
      return "selective-op";
    case Recompute::kFull:
      return "full";
    case Recompute::kNone:
      break;
  }
  return "none";
}

bool has_selective_op(const TransformerArch& arch) {
  return arch.mlp == MlpKind::kSwiGlu && arch.experts == 1 && !arch.linear_biases;
}

std::optional<CrossEntropy> parse_cross_entropy(std::string_view name) {
  return parse_named(name, {CrossEntropy::kFused, CrossEntropy::kPyTorch, CrossEntropy::kCompiled},
                     cross_entropy_name);
}

std::string_view cross_entropy_name(CrossEntropy loss) {
  switch (loss) {
    case CrossEntropy::kPyTorch:
      return "pytorch";
    case CrossEntropy::kCompiled:
      return "compiled";
    case CrossEntropy::kFused:
      break;
  }
  return "fused";
}

std::optional<Fp8Recipe> parse_fp8_recipe(std::string_view name) {
  return parse_named(
      name,
      {Fp8Recipe::kTorchao, Fp8Recipe::kTorchaoRowwise, Fp8Recipe::kTe, Fp8Recipe::kMegatronTe},
      fp8_recipe_name);
}

std::string_view fp8_recipe_name(Fp8Recipe recipe) {
  switch (recipe) {
    case Fp8Recipe::kTorchaoRowwise:
      return "torchao-rowwise";
    case Fp8Recipe::kTe:
      return "te";
    case Fp8Recipe::kMegatronTe:
      return "megatron-te";
    case Fp8Recipe::kTorchao:
      break;
  }
  return "torchao";
}

std::optional<AttentionKernel> parse_attention_kernel(std::string_view name) {
  return parse_named(name,
                     {AttentionKernel::kFlash1, AttentionKernel::kFlash2, AttentionKernel::kCudnn},
                     attention_kernel_name);
}

std::string_view attention_kernel_name(AttentionKernel kernel) {
  switch (kernel) {
    case AttentionKernel::kFlash1:
      return "flash1";
    case AttentionKernel::kFlash2:
      return "flash2";
    case AttentionKernel::kCudnn:
      return "cudnn";
  }
  return "flash2";
}

// On Ampere and Ada, FlashAttention-2 is "close to the efficiency of GEMM operations" (Dao 2023:
// 50-73 % of the A100's peak forward), and cuDNN's fused attention matches it; on Hopper cuDNN
// and FlashAttention-3 (Shah et al. 2024: 75 % of the H100's peak forward) use the asynchronous
// tensor cores as cuBLAS does. Both take the GEMMs' efficiency (kComputeEfficiency times the
// device's tensor_core_scale), except FlashAttention-2 on Hopper and later; all of them times
// the device's clock_scale under a power limit. B200 is taken as
// Hopper: no published FlashAttention-2 figure on it was found. FlashAttention (v1) runs at half
// FlashAttention-2's share.
double attention_efficiency(AttentionKernel kernel, const DeviceSpec& device) {
  const double clock = clock_scale(device);
  const double gemm = kComputeEfficiency * tensor_core_scale(device, false) * clock;
  if (kernel == AttentionKernel::kCudnn) {
    return gemm;
  }
  const double flash2 = device.compute_capability >= kHopperComputeCapability
                            ? kFlash2HopperEfficiency * clock
                            : gemm;
  return kernel == AttentionKernel::kFlash1 ? kFlash1SpeedRatio * flash2 : flash2;
}

std::vector<TransformerPiece> transformer_pieces(const TransformerArch& arch,
                                                 const TransformerShard& shard) {
  const Roofline roofline = validate(arch, shard);
  const Dims d = dims_of(arch, shard);
  const auto element_bytes = static_cast<std::uint64_t>(roofline.element_bytes);
  // Every block is the same two pieces.
  const TransformerPiece attention = attention_piece(arch, shard, d, roofline);
  const TransformerPiece ffn = ffn_piece(arch, shard, d, roofline);
  std::vector<TransformerPiece> pieces{embedding_piece(arch, shard, d, roofline)};
  for (int i = 0; i < arch.layers; ++i) {
    for (const TransformerPiece* kind : {&attention, &ffn}) {
      TransformerPiece& p = pieces.emplace_back(*kind);
      p.name = "layers." + text(i) + "." + kind->name;
      p.block = i;
      if ((i + 1) % shard.recompute_every != 0) {  // a block full:N keeps whole
        p.recompute_sec = 0;
        p.recompute_skips_output = false;
      }
    }
  }
  pieces.push_back(head_piece(arch, d, roofline));
  for (TransformerPiece& p : pieces) {
    set_communication(p, arch, shard, element_bytes);
  }
  return pieces;
}

std::uint64_t boundary_activation_bytes(const TransformerArch& arch,
                                        const TransformerShard& shard) {
  const Roofline roofline = validate(arch, shard);
  const std::uint64_t bytes = tokens_on_rank(shard) * static_cast<std::uint64_t>(arch.hidden) *
                              static_cast<std::uint64_t>(roofline.element_bytes);
  return shard.sequence_parallel ? bytes / static_cast<std::uint64_t>(shard.tp) : bytes;
}

double model_flops_per_token_6n(const TransformerArch& arch, int seq_len) {
  validate_arch(arch);
  require_at_least_one("seq_len", seq_len);
  const double h = arch.hidden;
  const double active_ffn = static_cast<double>(
      arch.experts == 1 ? ffn_params(arch, 1, 1) : ffn_params(arch, 1, arch.experts_per_token));
  const double n = arch.layers * (static_cast<double>(attention_params(arch, 1)) + active_ffn) +
                   static_cast<double>(norm_params(arch)) + h * arch.vocab;
  return 6 * n + 12.0 * arch.layers * h * seq_len;
}

double megatron_flops_per_token(const TransformerArch& arch, int seq_len) {
  validate_arch(arch);
  require_at_least_one("seq_len", seq_len);
  const double h = arch.hidden, l = arch.layers, s = seq_len;
  const double gated = arch.mlp == MlpKind::kSwiGlu ? 1.5 : 1.0;
  const double attention = 1 + 1.0 * arch.kv_heads / arch.heads + s / h;
  const double mlp = 1.0 * arch.ffn_hidden / h * arch.experts_per_token * gated;
  const double logit = arch.vocab / (2 * l * h);
  return 12 * l * h * h * (attention + mlp + logit);
}

}  // namespace dtsim::workloads
