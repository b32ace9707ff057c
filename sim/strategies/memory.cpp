#include "sim/strategies/memory.h"

#include <algorithm>
#include <map>

#include "sim/strategies/hybrid_internal.h"
#include "sim/strategies/transformer_model.h"
#include "workloads/roofline.h"

namespace dtsim::sim {

using workloads::CrossEntropy;
using workloads::Recompute;
using workloads::TransformerArch;
using workloads::TransformerShard;

namespace {

using U64 = std::uint64_t;

U64 u64(int value) {
  return static_cast<U64>(value);
}

U64 ceil_div(U64 a, U64 b) {
  return (a + b - 1) / b;
}

// One rank's shapes, in elements (TRANSFORMER.md's notation), and what every term needs.
struct Shapes {
  U64 tokens = 0;  // T = b * s / cp
  U64 seq = 0;     // s: the keys a query meets
  // Per rank: hidden size, Q width, K (and V) width, FFN width, heads, padded vocabulary.
  U64 hidden = 0, q_width = 0, kv_width = 0, ffn = 0, heads = 0, vocab = 0;
  U64 element = 0;       // activation bytes
  U64 sp = 1;            // what sequence parallelism divides the replicated terms by
  bool dropout = false;  // the architecture drops out (TransformerArch::dropout, MEMORY.md)
};

// Validates arch and shard as transformer_pieces does (throws GeneratorError).
Shapes shapes_of(const TransformerArch& a, const TransformerShard& s) {
  (void)workloads::boundary_activation_bytes(a, s);
  const workloads::Roofline r =
      workloads::make_roofline(workloads::find_device(s.device), s.precision);
  const U64 tp = u64(s.tp);
  const U64 head_dim = u64(a.hidden / a.heads);
  const U64 multiple = u64(s.vocab_divisible_by) * tp;
  return {.tokens = u64(s.micro_batch) * u64(s.seq_len / s.cp),
          .seq = u64(s.seq_len),
          .hidden = u64(a.hidden),
          .q_width = u64(a.hidden) / tp,
          .kv_width = (s.tp <= a.kv_heads ? u64(a.kv_heads) / tp : 1) * head_dim,
          .ffn = u64(a.ffn_hidden) / tp,
          .heads = u64(a.heads) / tp,
          .vocab = ceil_div(u64(a.vocab), multiple) * multiple / tp,
          .element = static_cast<U64>(r.element_bytes),
          .sp = s.sequence_parallel ? tp : 1,
          .dropout = a.dropout};
}

// The block's bytes per micro-batch kept with no recomputation (Korthikanti et al. 2022,
// Sec. 4.1, generalised; MEMORY.md lists every term), or, with `selective`, without the
// attention core's.
U64 block_bytes(const TransformerArch& a, const Shapes& d, AttentionMemory attention,
                bool selective) {
  const U64 e = d.element;
  const U64 mask = d.dropout ? d.hidden : 0;  // 1 byte per element
  // Replicated over TP unless sequence parallel: two norm inputs, the QKV and first-MLP
  // inputs (the norms' outputs), two residual dropout masks.
  const U64 replicated = 4 * e * d.hidden + 2 * mask;
  // Split by TP: Q, K, V; the attention output (the output projection's input).
  U64 sharded = e * (d.q_width + 2 * d.kv_width) + e * d.q_width;
  const U64 mlp_tensors = a.mlp == workloads::MlpKind::kSwiGlu ? 3 : 2;  // see MEMORY.md
  if (a.experts == 1) {
    sharded += mlp_tensors * e * d.ffn;
  } else {  // router probabilities; each token's top-k copies: expert input and MLP tensors
    const U64 k = u64(a.experts_per_token);
    sharded += 4 * u64(a.experts) + k * (e * d.hidden + mlp_tensors * e * d.ffn);
  }
  U64 core = 0;
  if (!selective && attention == AttentionMemory::kFlash) {
    sharded += 4 * d.heads;  // the log-sum-exp, fp32
  } else if (!selective) {
    // Softmax output, dropout mask (1 byte) and dropout output, per head, query and key.
    core = d.heads * d.tokens * d.seq * (e + (d.dropout ? 1 + e : 0));
  }
  return d.tokens * sharded + ceil_div(d.tokens * replicated, d.sp) + core;
}

U64 block_input_bytes(const Shapes& d) {
  return ceil_div(d.tokens * d.element * d.hidden, d.sp);
}

// torchtitan's op-level selective checkpointing (MEMORY.md): the block's input and the outputs
// it saves, Q and V (the 1st and 3rd matrix multiplication), the attention kernel's output and
// log-sum-exp, the gate (5th) and the down projection (7th, before TP reduces it: h wide), and
// with sequence parallelism the two reduce-scatters' outputs.
U64 op_policy_bytes(const Shapes& d) {
  const U64 e = d.element;
  const U64 sharded = e * (d.q_width + d.kv_width + d.q_width + d.ffn + d.hidden) + 4 * d.heads;
  const U64 scattered = d.sp > 1 ? 2 * e * d.hidden : 0;
  return d.tokens * sharded + block_input_bytes(d) + ceil_div(d.tokens * scattered, d.sp);
}

}  // namespace

U64 block_activation_bytes(const TransformerArch& arch, const TransformerShard& shard,
                           AttentionMemory attention) {
  const Shapes d = shapes_of(arch, shard);
  switch (shard.recompute) {
    case Recompute::kNone:
      return block_bytes(arch, d, attention, false);
    case Recompute::kSelective:
      return block_bytes(arch, d, attention, true);
    case Recompute::kSelectiveOp:
      return op_policy_bytes(d);
    case Recompute::kFull:
      return block_input_bytes(d);
  }
  return 0;
}

U64 embedding_activation_bytes(const TransformerArch& arch, const TransformerShard& shard) {
  const Shapes d = shapes_of(arch, shard);
  return d.dropout ? ceil_div(d.tokens * d.hidden, d.sp) : 0;
}

U64 head_activation_bytes(const TransformerArch& arch, const TransformerShard& shard) {
  const Shapes d = shapes_of(arch, shard);
  // The loss keeps fp32 logits (its softmax), or compiled, the 16-bit logits it was given.
  const U64 logit = shard.cross_entropy == CrossEntropy::kCompiled ? d.element : 4;
  return ceil_div(d.tokens * 2 * d.element * d.hidden, d.sp) + d.tokens * logit * d.vocab;
}

U64 loss_backward_bytes(const TransformerArch& arch, const TransformerShard& shard) {
  const Shapes d = shapes_of(arch, shard);
  switch (shard.cross_entropy) {
    case CrossEntropy::kPyTorch:  // the loss's gradient and log_softmax's, fp32
      return d.tokens * 8 * d.vocab;
    case CrossEntropy::kCompiled:  // one fused kernel writes the logits' 16-bit gradient
      return d.tokens * d.element * d.vocab;
    case CrossEntropy::kFused:  // the gradient written over the saved softmax
      break;
  }
  return 0;
}

U64 peak_held_bytes(const std::vector<PipelineStep>& order, const std::vector<U64>& chunk_bytes) {
  U64 held = 0;
  U64 peak = 0;
  for (const PipelineStep& step : order) {
    const U64 bytes = chunk_bytes[static_cast<std::size_t>(step.chunk)];
    held = step.forward ? held + bytes : held - bytes;
    peak = std::max(peak, held);
  }
  return peak;
}

namespace {

// What the memory of a stage is computed from: the model's pieces and per-unit activations.
struct Inputs {
  const TransformerArch& arch;
  const HybridModel& model;
  const HybridJob& job;
  std::vector<hybrid::PieceRange> ranges;  // per virtual stage
  U64 element = 0;
  U64 block_stored = 0;  // per micro-batch, under the shard's recompute mode
  U64 block_kept = 0;    // per micro-batch, of a block full:N does not recompute (none's)
  int recompute_every = 1;
  U64 block_rebuilt = 0;  // what one block's backward rebuilds (its recompute dropped)
  U64 embedding = 0, head = 0;
  U64 loss_backward = 0;  // what the loss's backward adds for one micro-batch
  U64 boundary = 0;       // the activation a stage sends the next
};

U64 unit_activation(const Inputs& in, int unit) {
  if (unit == 0) {
    return in.embedding;
  }
  if (unit == in.arch.layers + 1) {
    return in.head;
  }
  return unit % in.recompute_every == 0 ? in.block_stored : in.block_kept;  // unit k: block k-1
}

// Parameters on the stage's ranks, dense and expert, and per unit in execution order.
struct StageParams {
  U64 dense = 0, expert = 0;
  std::vector<U64> units;
  bool rebuilds_block = false;  // holds a block its backward recomputes (full:N: not every one)
  bool has_head = false;
};

StageParams stage_params(const Inputs& in, int stage) {
  StageParams p;
  const int pp = in.job.degrees.pp;
  std::map<int, U64> units;
  for (int v = stage; v < static_cast<int>(in.ranges.size()); v += pp) {
    const hybrid::PieceRange& r = in.ranges[static_cast<std::size_t>(v)];
    for (int i = r.begin; i < r.end; ++i) {
      const ModelPiece& piece = in.model.pieces[static_cast<std::size_t>(i)];
      const U64 params = piece.grad_bytes / kGradientBytesPerParam;
      (piece.expert ? p.expert : p.dense) += params;
      units[piece.unit] += params;
      p.rebuilds_block = p.rebuilds_block || (piece.unit > 0 && piece.unit <= in.arch.layers &&
                                              piece.unit % in.recompute_every == 0);
      p.has_head = p.has_head || piece.unit == in.arch.layers + 1;
    }
  }
  if (pp > 1 && stage == pp - 1) {  // the head's copy of tied embeddings (HYBRID.md)
    p.dense += in.model.tied_grad_bytes / kGradientBytesPerParam;
  }
  for (const auto& [unit, params] : units) {
    p.units.push_back(params);
  }
  return p;
}

U64 shard(U64 params, bool sharded, U64 group) {
  return sharded ? ceil_div(params, group) : params;
}

// Parameters, gradients and optimizer states by precision and ZeRO stage (MEMORY.md).
void add_states(const Inputs& in, const StageParams& p, StageMemory& m) {
  const ParallelDegrees& d = in.job.degrees;
  const int zero = in.job.zero_stage;
  const U64 group = zero == 3 && in.job.dp_shard > 0 ? u64(in.job.dp_shard) : u64(d.dp) * u64(d.cp);
  const U64 expert_group = u64(d.dp / d.ep) * u64(d.cp);
  const auto held = [&](int from_stage) {
    return shard(p.dense, zero >= from_stage, group) +
           shard(p.expert, zero >= from_stage, expert_group);
  };
  const bool mixed = in.element == 2;
  // Not re-sharded after forward, every unit of the stage is gathered at the peak; kept all
  // step, so are their gradients, accumulated unsharded in fp32 (FSDP2's reduce_dtype).
  const FsdpUnshard unshard = fsdp_unshard(in.job);
  const bool gathered = zero == 3 && unshard != FsdpUnshard::kUnit;
  const U64 whole = p.dense + p.expert;
  m.parameters_bytes = in.element * (gathered ? whole : held(3));
  m.gradients_bytes =
      kGradientBytesPerParam * (zero == 3 && unshard == FsdpUnshard::kStep ? whole : held(2));
  m.optimizer_bytes = (mixed ? 12 : 8) * held(1);  // fp32 master + m + v, or m + v
}

// The largest pair of consecutive units: one computing while the next is gathered.
U64 largest_pair(const std::vector<U64>& units) {
  U64 best = units.empty() ? 0 : units.front();
  for (std::size_t i = 1; i < units.size(); ++i) {
    best = std::max(best, units[i - 1] + units[i]);
  }
  return best;
}

U64 communication_buffers(const Inputs& in, const StageParams& p, int stage) {
  const ParallelDegrees& d = in.job.degrees;
  U64 bytes = 0;
  if (in.job.zero_stage == 2) {  // a bucket filling while the previous one is reduced
    bytes += std::min(2 * in.job.bucket_cap_bytes, kGradientBytesPerParam * p.dense);
  }
  if (in.job.zero_stage == 3) {  // a unit's gradient before its reduce-scatter or its fp32 copy
    U64 largest = 0;
    for (const U64 unit : p.units) {
      largest = std::max(largest, unit);
    }
    bytes += kGradientBytesPerParam * largest;
  }
  if (d.pp > 1) {  // an activation and a gradient in transit
    bytes += 2 * in.boundary;
  }
  U64 kv = 0;
  U64 ep = 0;
  for (const ModelPiece& piece : in.model.pieces) {
    kv = std::max(kv, piece.cp_kv_bytes);
    ep = std::max(ep, piece.ep_bytes);
  }
  bytes += 2 * kv + 2 * ep;  // CP's block sent and received; EP's dispatch and combine
  // The stage's communicators (hybrid.cpp), those of one rank left out: NCCL needs no buffer.
  std::vector<bool> roles = hybrid::stage_roles(in.model, in.job, stage);
  if (d.dp * d.cp == 1) {
    roles[hybrid::kDp] = roles[hybrid::kDpGather] = false;
  }
  if (d.dp / d.ep * d.cp == 1) {
    roles[hybrid::kEdp] = roles[hybrid::kEdpGather] = false;
  }
  const auto communicators = static_cast<U64>(std::count(roles.begin(), roles.end(), true));
  return bytes + kNcclBytesPerCommunicator * communicators;
}

StageMemory stage_memory(const Inputs& in, int stage) {
  const int pp = in.job.degrees.pp;
  const StageParams p = stage_params(in, stage);
  const std::vector<PipelineStep> order =
      stage_order(in.job.schedule, pp, in.job.micro_batches, stage);
  std::vector<U64> chunk_bytes;
  for (int v = stage; v < static_cast<int>(in.ranges.size()); v += pp) {
    const hybrid::PieceRange& r = in.ranges[static_cast<std::size_t>(v)];
    U64 bytes = 0;
    for (int i = r.begin; i < r.end; ++i) {
      const int unit = in.model.pieces[static_cast<std::size_t>(i)].unit;
      const bool first_of_unit =
          i == r.begin || in.model.pieces[static_cast<std::size_t>(i - 1)].unit != unit;
      bytes += first_of_unit ? unit_activation(in, unit) : 0;
    }
    chunk_bytes.push_back(bytes);
  }
  StageMemory m{.stage = stage, .micro_batches_in_flight = max_in_flight(order)};
  add_states(in, p, m);
  // One block's rebuilt tensors and the loss's backward are transients of one micro-batch at a
  // time, on top of what the stage holds (MEMORY.md).
  m.activations_bytes = peak_held_bytes(order, chunk_bytes) +
                        (p.rebuilds_block ? in.block_rebuilt : 0) +
                        (p.has_head ? in.loss_backward : 0);
  if (in.job.zero_stage == 3 && fsdp_unshard(in.job) == FsdpUnshard::kUnit) {
    m.fsdp_buffers_bytes = in.element * largest_pair(p.units);
  }
  m.communication_buffers_bytes = communication_buffers(in, p, stage);
  m.framework_reserve_bytes = kCudaContextBytes;
  m.peak_bytes = m.parameters_bytes + m.gradients_bytes + m.optimizer_bytes + m.activations_bytes +
                 m.fsdp_buffers_bytes + m.communication_buffers_bytes + m.framework_reserve_bytes;
  return m;
}

}  // namespace

MemoryReport memory_model(const TransformerArch& arch, const TransformerShard& shard,
                          const HybridJob& job, AttentionMemory attention) {
  const HybridModel model = model_from_transformer(arch, shard);
  TransformerShard none = shard;
  none.recompute = Recompute::kNone;
  none.recompute_every = 1;
  none.checkpoint_early_stop = false;  // rebuilds the same tensors: memory does not change
  const U64 rebuilt_from = block_activation_bytes(arch, none, attention);
  Inputs in{.arch = arch,
            .model = model,
            .job = job,
            .ranges = hybrid::virtual_stage_pieces(model, job),
            .element = shapes_of(arch, shard).element,
            .block_stored = block_activation_bytes(arch, shard, attention),
            .block_kept = rebuilt_from,
            .recompute_every = shard.recompute_every,
            .embedding = embedding_activation_bytes(arch, shard),
            .head = head_activation_bytes(arch, shard),
            .loss_backward = loss_backward_bytes(arch, shard),
            .boundary = workloads::boundary_activation_bytes(arch, shard)};
  // torchtitan's policy keeps tensors Korthikanti's count has not (the down projection's
  // unreduced output): it can keep more than `none`, and then rebuilds at most nothing more.
  in.block_rebuilt = rebuilt_from > in.block_stored ? rebuilt_from - in.block_stored : 0;
  const workloads::DeviceSpec& device = workloads::find_device(shard.device);
  MemoryReport report{.device = device.full_name,
                      .capacity_bytes = static_cast<U64>(device.memory_capacity_bytes)};
  for (int s = 0; s < job.degrees.pp; ++s) {
    report.stages.push_back(stage_memory(in, s));
    if (report.stages.back().peak_bytes >
        report.stages[static_cast<std::size_t>(report.worst_stage)].peak_bytes) {
      report.worst_stage = s;
    }
  }
  report.oom = report.stages[static_cast<std::size_t>(report.worst_stage)].peak_bytes >
               report.capacity_bytes;
  return report;
}

}  // namespace dtsim::sim
