#include "sim/cli/hybrid_flags.h"

#include <algorithm>
#include <charconv>

#include "sim/config_error.h"
#include "workloads/parsing/json_fields.h"
#include "workloads/roofline.h"

namespace dtsim::sim {

namespace po = boost::program_options;

po::options_description hybrid_flags(HybridFlags& f) {
  constexpr unsigned kColumns = 100;
  po::options_description d("Hybrid parallelism (sim/strategies/HYBRID.md)", kColumns,
                            kColumns / 2);
  auto add = d.add_options();
  add("model", po::value(&f.model)->value_name("NAME|FILE.json"),
      "a transformer of the catalogue (workloads/TRANSFORMER.md: gpt3-175b, llama3-70b, "
      "mixtral-8x7b, ...), a transformer architecture file (dtsim's keys or a Hugging Face "
      "config.json: TRANSFORMER.md, \"Your own model\") or a CNN of the zoo "
      "(workloads/GENERATOR.md: resnet50, vgg16, alexnet, cosmoflow, ...), its compute modelled "
      "on the sharded shapes; instead of --workload");
  add("device", po::value(&f.device)->default_value("h100")->value_name("GPU"),
      ("--model's GPU, from the generator's datasheets (" + workloads::device_names(", ") +
       "); GPU@WATTS, e.g. h100@500W, runs it under that power limit (workloads/COMPUTE.md, "
       "\"Power limit\")")
          .c_str());
  add("precision", po::value(&f.precision)->default_value("bf16")->value_name("P"),
      "--model's precision: fp32, tf32, fp16 or bf16 (mixed precision), or fp8 (bf16 with the "
      "layers' linear GEMMs in float8: workloads/TRANSFORMER.md)");
  add("fp8-recipe",
      po::value(&f.fp8_recipe)
          ->default_value("torchao")
          ->value_name("torchao|torchao-rowwise|te|megatron-te"),
      "with --precision fp8, how the framework casts (workloads/TRANSFORMER.md, \"Float8\"): "
      "torchao (torchtitan's float8: dynamic scaling, each weight cast in every forward after an "
      "amax pass of its own; torchao-rowwise: its rowwise scaling, whose TP gathers stay bf16), "
      "te (Transformer Engine called once per micro-batch, as llm-foundry "
      "does: each weight cast in every forward) or megatron-te (Transformer Engine as Megatron-LM "
      "and NeMo drive it: a weight cast in a step's first micro-batch only)");
  add("parallel", po::value(&f.parallel)->value_name("tp=T,pp=P,dp=D[,cp=C][,ep=E]"),
      "parallelism degrees; their product is --ranks (dp left out: --ranks / (tp*cp*pp)); a CNN "
      "takes one of spatial=HxW[xD], filter=F, channel=C in place of cp or tp "
      "(sim/strategies/CNN.md)");
  add("image-size", po::value(&f.image_size)->default_value(0)->value_name("PIXELS"),
      "a CNN's input side (0: the model's: 224, inception_v3 299, cosmoflow's cube 128)");
  add("rank-order", po::value(&f.rank_order)->default_value("tp-cp-dp-pp")->value_name("ORDER"),
      "how ranks are numbered, fastest dimension first (Megatron-LM's default: a tensor-parallel "
      "group on consecutive ranks, so on one node)");
  add("micro-batch", po::value(&f.micro_batch)->default_value(1)->value_name("B"),
      "sequences per micro-batch");
  add("global-batch", po::value(&f.global_batch)->default_value(0)->value_name("G"),
      "sequences per optimizer step over all replicas (0: micro-batch * dp); a multiple of "
      "micro-batch * dp");
  add("seq-len", po::value(&f.seq_len)->default_value(0)->value_name("S"),
      "tokens per sequence (0: the model's context length)");
  add("schedule",
      po::value(&f.schedule)
          ->default_value("1f1b")
          ->value_name("1f1b|gpipe|interleaved:V|interleaved-torch:V"),
      "pipeline schedule; interleaved:V is Megatron-LM's interleaved 1F1B, interleaved-torch:V "
      "torch.distributed.pipelining's (torchtitan's Interleaved1F1B), which differs when the "
      "micro-batches are as many as the stages (sim/strategies/HYBRID.md)");
  add("zero", po::value(&f.zero)->default_value(0)->value_name("0|1|2|3"),
      "ZeRO stage: 0 data parallel, 1 and 2 gradients reduce-scattered and parameters gathered "
      "after the step, 3 (FSDP) parameters gathered before every unit's forward and backward");
  add("dp-shard", po::value(&f.dp_shard)->default_value(0)->value_name("S"),
      "with --zero 3: shard parameters over groups of S consecutive data-parallel ranks and "
      "replicate across the groups (FSDP's HYBRID_SHARD; 0: one group of all)");
  add("fsdp-unshard",
      po::value(&f.fsdp_unshard)->default_value("auto")->value_name("auto|unit|micro-batch|step"),
      "with --zero 3, how long a unit's gathered weights are kept: unit (FSDP's default: gathered "
      "again for the backward), micro-batch (reshard_after_forward=False), step (torchtitan "
      "with pipeline stages: gathered once per step, gradients accumulated unsharded); auto: step "
      "with pp > 1, else unit");
  add("sequence-parallel", po::bool_switch(&f.sequence_parallel),
      "Megatron-LM's sequence parallelism: TP all-gathers and reduce-scatters in place of "
      "all-reduces");
  add("tp-overlap", po::bool_switch(&f.tp_overlap),
      "with --sequence-parallel, overlap each TP gather and reduce-scatter with the GEMM beside "
      "it, chunk by chunk around the TP ring (Transformer Engine's userbuffers, NeMo's "
      "tp_comm_overlap; torchtitan's async TP)");
  add("recompute",
      po::value(&f.recompute)
          ->default_value("none")
          ->value_name("none|selective|selective-op|full|full:N"),
      "activation recomputation: none, selective (Megatron-LM's: the attention core), "
      "selective-op (torchtitan's op-level policy: every second matrix multiplication of a "
      "block), full (every block's forward again before its backward), full:N (every N-th "
      "block's: torchtitan's layer-level selective checkpointing, selective_ac_option N)");
  add("checkpoint-early-stop", po::bool_switch(&f.checkpoint_early_stop),
      "with --recompute full or full:N, PyTorch's non-reentrant checkpoint (use_reentrant=False, "
      "PyTorch 2.1 and later: FSDP, torchtitan, llm-foundry): a block's recomputation stops once "
      "backward's last saved tensor is packed again, so without dropout the down projection (in "
      "fp8 not), an MoE's combine, the TP collective and the residual add after them are not "
      "redone (workloads/TRANSFORMER.md, \"Recompute\")");
  add("attention",
      po::value(&f.attention)->default_value("flash2")->value_name("flash1|flash2|cudnn"),
      "a transformer's attention kernel: flash2 (FlashAttention-2: PyTorch's "
      "scaled_dot_product_attention, torchtitan), flash1 (FlashAttention v1 or its Triton port, "
      "as MPT ran them in llm-foundry's 2023 benchmarks: half flash2's rate) or cudnn (cuDNN's "
      "fused attention as Transformer Engine runs it in Megatron-LM and NeMo since mid-2024, or "
      "FlashAttention-3); flash2 and cudnn differ on Hopper and later "
      "(workloads/TRANSFORMER.md)");
  add("cross-entropy",
      po::value(&f.cross_entropy)->default_value("fused")->value_name("fused|pytorch|compiled"),
      "the loss, for memory: fused (Megatron-LM's vocab-parallel cross-entropy), pytorch "
      "(F.cross_entropy on fp32 logits, as torchtitan: more held while its backward runs) or "
      "compiled (the same under torch.compile, as torchtitan since April 2025 with compile on: "
      "the 16-bit logits kept, a 16-bit gradient)");
  add("cp", po::value(&f.cp)->default_value(0)->value_name("C"), "context parallel degree");
  add("ep", po::value(&f.ep)->default_value(0)->value_name("E"), "expert parallel degree");
  add("stage-layers", po::value(&f.stage_layers)->value_name("N,N,..."),
      "transformer blocks per virtual pipeline stage (default: balanced, the first ones one more; "
      "the embedding goes with the first stage, the head with the last)");
  return d;
}

workloads::AttentionKernel attention_flag(const std::string& name) {
  const auto kernel = workloads::parse_attention_kernel(name);
  if (!kernel) {
    throw ConfigError("--attention " + name + ": expected flash1, flash2 or cudnn");
  }
  return *kernel;
}

workloads::Fp8Recipe fp8_recipe_flag(const std::string& name) {
  const auto recipe = workloads::parse_fp8_recipe(name);
  if (!recipe) {
    throw ConfigError("--fp8-recipe " + parsing::printable(name) +
                      ": expected torchao, torchao-rowwise, te or megatron-te");
  }
  return *recipe;
}

bool wants_hybrid(const HybridFlags& f) {
  return !f.model.empty() || !f.parallel.empty();
}

namespace {

std::vector<int> parse_counts(const std::string& text) {
  std::vector<int> counts;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(',', start), text.size());
    int n = 0;
    const auto [ptr, ec] = std::from_chars(text.data() + start, text.data() + end, n);
    if (ec != std::errc() || ptr != text.data() + end) {
      throw ConfigError("--stage-layers " + text + ": expected counts such as 10,11,11,10");
    }
    counts.push_back(n);
    start = end + 1;
  }
  return counts;
}

// Takes the CNN keys (spatial=, filter=, channel=) out of `text` into `split`; returns the rest
// for parse_parallel.
std::string take_cnn_keys(const std::string& text, CnnSplit& split) {
  std::string rest;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, end - start);
    const std::size_t eq = item.find('=');
    const std::string key = item.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : item.substr(eq + 1);
    std::string why;
    if (key == "spatial") {
      const auto grid = parse_spatial_grid(value, &why);
      if (!grid) {
        throw ConfigError("--parallel " + text + ": spatial=" + value + ": " + why);
      }
      split.spatial = *grid;
    } else if (key == "filter" || key == "channel") {
      int n = 0;
      const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
      if (ec != std::errc() || ptr != value.data() + value.size() || n < 1 || n > (1 << 24)) {
        throw ConfigError("--parallel " + text + ": " + key + "=" + value +
                          ": expected a degree in 1 .. 2^24");
      }
      (key == "filter" ? split.filter : split.channel) = n;
    } else {
      rest += (rest.empty() ? "" : ",") + item;
    }
    start = end + 1;
  }
  return rest;
}

// --cp or --ep beside --parallel: the same degree, or only one of them.
void merge_degree(const char* name, int flag, int& degree) {
  if (flag == 0) {
    return;
  }
  if (flag < 1) {
    throw ConfigError(std::string("--") + name + " " + std::to_string(flag) +
                      ": expected a degree >= 1");
  }
  if (degree != 1 && degree != flag) {
    throw ConfigError(std::string("--") + name + " " + std::to_string(flag) + ": --parallel says " +
                      name + "=" + std::to_string(degree));
  }
  degree = flag;
}

// The parallel degrees of --parallel, --cp and --ep (and a CNN's splits, into `cnn`), dp
// inferred from --ranks where --parallel does not give it.
ParallelDegrees parallel_degrees(const HybridFlags& f, int ranks, CnnSplit& cnn) {
  ParallelDegrees d;
  bool dp_given = false;
  if (!f.parallel.empty()) {
    const std::string rest = take_cnn_keys(f.parallel, cnn);
    if (!rest.empty()) {
      std::string why;
      const auto degrees = parse_parallel(rest, &dp_given, &why);
      if (!degrees) {
        throw ConfigError("--parallel " + f.parallel + ": " + why);
      }
      d = *degrees;
    }
    const int model_split = std::max(cnn.filter, cnn.channel);
    if (model_split > 1) {
      if (d.tp != 1) {
        throw ConfigError("--parallel " + f.parallel +
                          ": filter and channel splits are the tensor "
                          "dimension; give tp or them, not both");
      }
      d.tp = model_split;
    }
    if (cnn.spatial_ranks() > 1) {
      if (d.cp != 1) {
        throw ConfigError("--parallel " + f.parallel +
                          ": a spatial split is the context "
                          "dimension; give cp or spatial, not both");
      }
      d.cp = cnn.spatial_ranks();
    }
  }
  merge_degree("cp", f.cp, d.cp);
  merge_degree("ep", f.ep, d.ep);
  if (!dp_given && ranks > 0) {
    const long long others = 1LL * d.tp * d.cp * d.pp;
    if (ranks % others != 0) {
      throw ConfigError("--parallel " + f.parallel + ": tp*cp*pp = " + std::to_string(others) +
                        " does not divide --ranks " + std::to_string(ranks));
    }
    d.dp = static_cast<int>(ranks / others);
  }
  return d;
}

// The rank order and pipeline schedule of the flags, into `job`.
void set_schedule(const HybridFlags& f, HybridJob& job) {
  std::string why;
  const auto order = parse_order(f.rank_order, &why);
  if (!order) {
    throw ConfigError("--rank-order " + why);
  }
  job.order = *order;
  const auto schedule = parse_pipeline_schedule(f.schedule, &why);
  if (!schedule) {
    throw ConfigError("--schedule " + f.schedule + ": " + why);
  }
  job.schedule = *schedule;
}

// The ZeRO stage, FSDP and sequence-parallel knobs and the stage split of the flags, into `job`.
void set_sharding(const HybridFlags& f, HybridJob& job) {
  if (f.zero < 0 || f.zero > 3) {
    throw ConfigError("--zero " + std::to_string(f.zero) + ": expected 0, 1, 2 or 3");
  }
  job.zero_stage = f.zero;
  job.dp_shard = f.dp_shard;
  const auto unshard = parse_fsdp_unshard(f.fsdp_unshard);
  if (!unshard) {
    throw ConfigError("--fsdp-unshard " + f.fsdp_unshard +
                      ": expected auto, unit, micro-batch or step");
  }
  job.fsdp_unshard = *unshard;
  job.sequence_parallel = f.sequence_parallel;
  job.tp_overlap = f.tp_overlap;
  if (!f.stage_layers.empty()) {
    job.stage_units = parse_counts(f.stage_layers);
  }
}

}  // namespace

HybridConfig hybrid_config(const HybridFlags& f, const RunOptions& run,
                           const std::string& workload_path, std::uint64_t bucket_cap_bytes,
                           int iterations) {
  HybridConfig c{.run = run,
                 .model = f.model,
                 .workload_path = f.model.empty() ? workload_path : "",
                 .device = f.device,
                 .precision = f.precision,
                 .micro_batch = f.micro_batch,
                 .global_batch = f.global_batch,
                 .seq_len = f.seq_len};
  if (!f.model.empty() && !workload_path.empty()) {
    throw ConfigError("give only one of --model NAME or --workload W.json");
  }
  c.job.degrees = parallel_degrees(f, run.ranks, c.cnn);
  c.image_size = f.image_size;
  set_schedule(f, c.job);
  const std::size_t colon = f.recompute.find(':');
  const auto recompute = workloads::parse_recompute(f.recompute.substr(0, colon));
  int every = 1;
  const std::string_view n =
      colon == std::string::npos ? "" : std::string_view(f.recompute).substr(colon + 1);
  const auto [end, ec] = std::from_chars(n.data(), n.data() + n.size(), every);
  if (colon != std::string::npos &&
      (recompute != workloads::Recompute::kFull || ec != std::errc() ||
       end != n.data() + n.size() || every < 1)) {
    throw ConfigError("--recompute " + parsing::printable(f.recompute) +
                      ": expected full:N with N an integer >= 1 (every N-th block)");
  }
  if (!recompute) {
    throw ConfigError("--recompute " + parsing::printable(f.recompute) +
                      ": expected none, selective, selective-op, full or full:N");
  }
  c.recompute = *recompute;
  c.recompute_every = every;
  if (f.checkpoint_early_stop && c.recompute != workloads::Recompute::kFull) {
    throw ConfigError("--checkpoint-early-stop: needs --recompute full or full:N (--recompute " +
                      parsing::printable(f.recompute) + ")");
  }
  c.checkpoint_early_stop = f.checkpoint_early_stop;
  c.attention = attention_flag(f.attention);
  c.fp8_recipe = fp8_recipe_flag(f.fp8_recipe);
  const auto loss = workloads::parse_cross_entropy(f.cross_entropy);
  if (!loss) {
    throw ConfigError("--cross-entropy " + parsing::printable(f.cross_entropy) +
                      ": expected fused, pytorch or compiled");
  }
  c.cross_entropy = *loss;
  set_sharding(f, c.job);
  c.job.bucket_cap_bytes = bucket_cap_bytes;
  c.job.iterations = iterations;
  return c;
}

}  // namespace dtsim::sim
