#include "sim/run/hybrid_run.h"

#include <algorithm>

#include "sim/config_error.h"
#include "sim/graph/graph_validate.h"
#include "sim/invariant.h"
#include "sim/report/exposure.h"
#include "sim/run/engine_run.h"
#include "sim/run/graph_run.h"
#include "sim/strategies/hybrid_internal.h"
#include "sim/strategies/memory.h"
#include "sim/strategies/model_pieces.h"
#include "sim/strategies/transformer_model.h"
#include "workloads/generator.h"
#include "workloads/generator_error.h"
#include "workloads/model_zoo.h"
#include "workloads/parsing/units.h"
#include "workloads/roofline.h"
#include "workloads/trace_reader.h"
#include "workloads/transformer_file.h"

namespace dtsim::sim {

namespace {

// A problem with a job field (check_hybrid's "field: detail", or the transformer's) as a
// ConfigError on the HybridConfig field that sets it: the degrees on "parallel", the stage
// split on "stage_layers", the micro-batch count on "global_batch".
[[noreturn]] void refuse(const std::string& field, const std::string& detail) {
  if (field == "tp" || field == "cp" || field == "dp" || field == "pp" || field == "ep") {
    throw ConfigError("parallel", ": " + parsing::FieldProblem::join(field, detail));
  }
  const std::string renamed = field == "stage_units"     ? "stage_layers"
                              : field == "micro_batches" ? "global_batch"
                                                         : field;
  throw ConfigError(renamed, detail);
}

// check_hybrid's "field: what is wrong" (no value in front).
[[noreturn]] void refuse(const std::string& why) {
  const std::size_t colon = why.find(": ");
  refuse(why.substr(0, colon), why.substr(colon));
}

// --model's transformer: an architecture file, or a catalogue entry.
workloads::TransformerArch find_model(const std::string& model) {
  if (std::optional<workloads::TransformerArch> arch = workloads::find_or_read_transformer(model)) {
    return *std::move(arch);
  }
  std::string names;
  for (const workloads::TransformerArch& a : workloads::transformer_catalog()) {
    names += (names.empty() ? "" : ", ") + a.name;
  }
  throw ConfigError("model", model + ": not in the catalogue (" + names +
                                 ") nor an architecture file (a path ending in .json)");
}

// Why a transformer's pieces are beyond what the execution graph holds (a pass of at most
// kMaxDurationSec, a collective of at most kMaxBytes: sim/graph/graph_validate.cpp), or "": said
// here as bad input rather than by the graph's validator as an internal error. Conservative:
// the passes of all pieces and all their gradients summed, as one bucket or step could hold.
std::string beyond_graph(const HybridModel& model) {
  double pass_sec = 0;
  double gradient_bytes = 0;
  double largest_bytes = 0;  // any one piece's collective
  for (const ModelPiece& p : model.pieces) {
    pass_sec += p.forward_sec + p.backward_sec + p.recompute_sec;
    gradient_bytes += static_cast<double>(std::max(p.grad_bytes, p.weight_bytes));
    for (std::uint64_t bytes :
         {p.output_bytes, p.tp_in_bytes, p.tp_out_bytes, p.cp_kv_bytes, p.ep_bytes}) {
      largest_bytes = std::max(largest_bytes, static_cast<double>(bytes));
    }
  }
  if (!(pass_sec <= parsing::kMaxDurationSec)) {
    return "its passes take " + parsing::format_number("%.3g", pass_sec) +
           " s per micro-batch, and dtsim simulates passes of at most 1e9 s";
  }
  if (std::max(gradient_bytes, largest_bytes) > static_cast<double>(workloads::kMaxBytes)) {
    return "its gradients or activations take " +
           parsing::format_number("%.3g", std::max(gradient_bytes, largest_bytes)) +
           " bytes, and dtsim's collectives move at most 2^50";
  }
  return "";
}

// The model's pieces and what the report says about where their compute comes from.
struct BuiltModel {
  HybridModel model;
  HybridReport report;     // model fields only
  std::string cnn_device;  // a CNN's: the catalogue name of the device its memory is on
};

workloads::TransformerShard transformer_shard(const HybridConfig& c, int seq_len) {
  const ParallelDegrees& d = c.job.degrees;
  return {.micro_batch = c.micro_batch,
          .seq_len = seq_len,
          .tp = d.tp,
          .cp = d.cp,
          .ep = d.ep,
          .sequence_parallel = c.job.sequence_parallel,
          .recompute = c.recompute,
          .recompute_every = c.recompute_every,
          .checkpoint_early_stop = c.checkpoint_early_stop,
          .attention = c.attention,
          .cross_entropy = c.cross_entropy,
          .device = c.device,
          .precision = c.precision,
          .fp8_recipe = c.fp8_recipe};
}

BuiltModel transformer(const HybridConfig& c, const workloads::TransformerArch& model,
                       int seq_len) {
  const workloads::TransformerArch arch = workloads::for_sequence(model, seq_len);
  const workloads::TransformerShard shard = transformer_shard(c, seq_len);
  BuiltModel b;
  try {
    b.model = model_from_transformer(arch, shard);
  } catch (const workloads::GeneratorError& e) {
    refuse(e.field(), e.detail());
  }
  const workloads::DeviceSpec& device = workloads::find_device(c.device);
  const workloads::Roofline roofline = workloads::make_roofline(device, c.precision);
  b.report.model = arch.name;
  // The GEMMs' share of the peak: 0.5 on an H200, scaled by the GPU's measured matmul share.
  const std::string gemms =
      parsing::format_number("%.3g", roofline.flops_per_sec / roofline.peak_flops_per_sec) +
      " of peak" +
      (roofline.fp8_linears ? ", fp8 GEMMs at " +
                                  parsing::format_number("%.3g", roofline.linear_flops_per_sec /
                                                                     device.fp8_flops_per_sec) +
                                  " of the fp8 peak, " +
                                  std::string(workloads::fp8_recipe_name(c.fp8_recipe)) + " casts"
                            : "");
  b.report.compute_source = "generator (roofline of the sharded shapes on " + device.full_name +
                            ", GEMMs at " + gemms + ", attention " +
                            std::string(workloads::attention_kernel_name(c.attention)) +
                            ", workloads/TRANSFORMER.md)";
  b.report.device = device.full_name;
  b.report.precision = c.precision;
  b.report.parameters = workloads::parameter_count(arch);
  b.report.flops_per_token_6n = workloads::model_flops_per_token_6n(arch, seq_len);
  b.report.flops_per_token_megatron = workloads::megatron_flops_per_token(arch, seq_len);
  b.report.peak_flops_per_sec = roofline.peak_flops_per_sec;
  return b;
}

bool cnn_split(const HybridConfig& c) {
  return c.cnn != CnnSplit{};
}

// A CNN of the zoo on `w`'s times (generated or measured): the zoo's layers at its batch.
BuiltModel cnn(const HybridConfig& c, const workloads::Workload& w, const std::string& device_name,
               const std::string& source) {
  const workloads::ModelShape shape{
      .model = w.model,
      .batch = w.batch_per_device,
      .image_size = c.image_size > 0 ? c.image_size : workloads::default_image_size(w.model)};
  std::vector<workloads::LayerCost> layers;
  try {
    layers = workloads::model_layers(shape);
  } catch (const workloads::GeneratorError& e) {
    if (e.field() == "model") {
      throw ConfigError("parallel",
                        ": spatial, filter and channel splits need a CNN of the model "
                        "zoo, and " +
                            w.model + " is not one");
    }
    throw ConfigError(e.field() == "image_size" ? "image_size" : e.field(), e.detail());
  }
  if (std::string why = match_cnn_trace(layers, w); !why.empty()) {
    throw ConfigError("workload", ": " + why);
  }
  if (std::string why = check_cnn_split(layers, c.cnn); !why.empty()) {
    refuse("parallel", ": " + why);
  }
  const ParallelDegrees& d = c.job.degrees;
  if (d.cp != c.cnn.spatial_ranks()) {
    refuse("parallel",
           ": cp: a CNN's context dimension is its spatial split: give "
           "spatial=HxW[xD] in place of cp");
  }
  if (d.tp != std::max(c.cnn.filter, c.cnn.channel)) {
    refuse("parallel",
           ": tp: a CNN's tensor dimension is its filter or channel split: give "
           "filter=F or channel=C in place of tp");
  }
  const workloads::DeviceSpec& device = workloads::find_device(device_name);
  const workloads::Roofline roofline = workloads::make_roofline(device, w.precision);
  BuiltModel b{.model = model_from_cnn(layers, w, roofline, c.cnn), .cnn_device = device.name};
  b.report.model = w.model;
  b.report.cnn = true;
  b.report.compute_source = source;
  b.report.device = w.device;
  b.report.precision = w.precision;
  b.report.micro_batch = w.batch_per_device;
  b.report.peak_flops_per_sec = roofline.peak_flops_per_sec;
  for (const workloads::LayerCost& l : layers) {
    b.report.parameters += l.params;
  }
  return b;
}

// --model NAME of the zoo's CNNs: the generator's trace at the micro-batch, then split.
BuiltModel generated_cnn(const HybridConfig& c) {
  workloads::GeneratorConfig g{.shape = {.model = c.model, .batch = c.micro_batch},
                               .device = c.device,
                               .precision = c.precision};
  g.shape.image_size = c.image_size > 0 ? c.image_size : workloads::default_image_size(c.model);
  workloads::Workload w;
  try {
    w = workloads::generate_workload(g);
  } catch (const workloads::GeneratorError& e) {
    refuse(e.field(), e.detail());
  }
  return cnn(c, w, c.device,
             "generator (roofline of the sharded layer shapes on " + w.device +
                 ", workloads/GENERATOR.md and sim/strategies/CNN.md)");
}

// The catalogue entry of a trace's device (its full name, with the power limit a generated
// trace records), else --device's.
std::string trace_device(const HybridConfig& c, const workloads::Workload& w) {
  const auto [base, limit] = workloads::split_power_limit(w.device);
  for (const workloads::DeviceSpec& d : workloads::device_catalog()) {
    if (d.full_name == base || d.name == base) {
      return d.name + limit;
    }
  }
  return c.device;
}

BuiltModel trace(const HybridConfig& c) {
  const workloads::Workload w = workloads::read_workload(c.workload_path);
  if (cnn_split(c)) {
    return cnn(c, w, trace_device(c, w),
               c.workload_path +
                   " (each layer's time scaled by the roofline's ratio of its shard "
                   "to the whole layer, sim/strategies/CNN.md)");
  }
  BuiltModel b{.model = model_from_trace(w)};
  b.report.model = w.model;
  b.report.compute_source = c.workload_path;
  b.report.device = w.device;
  b.report.precision = w.precision;
  b.report.micro_batch = w.batch_per_device;
  return b;
}

// More micro-batches per step than any training job runs (README, "Limits"): every pipeline
// schedule, the memory model's included, lists each one's forward and backward.
constexpr long long kMaxMicroBatches = 1'000'000;

// The micro-batches per replica of `c`: global_batch / (micro_batch * dp), at most
// kMaxMicroBatches.
int micro_batches(const HybridConfig& c, int micro_batch) {
  const long long replica_batch = 1LL * micro_batch * c.job.degrees.dp;
  const long long global = c.global_batch == 0 ? replica_batch : c.global_batch;
  if (global < 1 || global % replica_batch != 0) {
    throw ConfigError("global_batch", std::to_string(global) +
                                          ": not a multiple of the micro-batch times dp (" +
                                          std::to_string(replica_batch) + ")");
  }
  if (global / replica_batch > kMaxMicroBatches) {
    throw ConfigError("global_batch",
                      std::to_string(global) + ": " + std::to_string(global / replica_batch) +
                          " micro-batches of " + std::to_string(micro_batch) + " per replica and " +
                          "step, more than " + std::to_string(kMaxMicroBatches) +
                          " (a larger --micro-batch makes fewer)");
  }
  return static_cast<int>(global / replica_batch);
}

// Every stage's compute and waits in the last iteration, measured on its first rank.
void measure_stages(const ExecutionGraph& g, const LoweredGraph& lowered, const ReplayTimes& times,
                    const TrainingTimes& t, const HybridModel& model, const HybridJob& job,
                    HybridReport& report) {
  const RankLayout layout(job.degrees, job.order);
  const std::vector<hybrid::PieceRange> ranges = hybrid::virtual_stage_pieces(model, job);
  const auto last = static_cast<std::int32_t>(t.iteration_end_sec.size()) - 1;
  const double end = t.iteration_end_sec.back();
  const double start = end - t.iteration_time_sec;
  const int pp = job.degrees.pp;
  double bubble = 0;
  for (int s = 0; s < pp; ++s) {
    const int rank = lowered.stands_for[static_cast<std::size_t>(layout.rank_at({0, 0, 0, s}))];
    const RankExposure e = measure_exposure(g, lowered, times, rank, last, start, end);
    const hybrid::PieceRange first = ranges[static_cast<std::size_t>(s)];
    const hybrid::PieceRange final_chunk = ranges[ranges.size() - static_cast<std::size_t>(pp - s)];
    report.stages.push_back(
        {.stage = s,
         .rank = rank,
         .first_layer = model.pieces[static_cast<std::size_t>(first.begin)].name,
         .last_layer = model.pieces[static_cast<std::size_t>(final_chunk.end - 1)].name,
         .compute_sec = e.compute_sec,
         .waiting_sec = e.waiting_sec,
         .idle_sec = e.idle_sec});
    for (const auto& [kind, sec] : e.waiting_sec) {
      report.exposed_sec[kind] += sec / pp;
    }
    const auto pipeline = e.waiting_sec.find("pp");
    bubble += (e.idle_sec + (pipeline == e.waiting_sec.end() ? 0.0 : pipeline->second)) /
              t.iteration_time_sec;
  }
  // No pipeline, no bubble: a stage's idle time is then waiting at the iteration's edges.
  report.bubble_fraction = pp > 1 && t.iteration_time_sec > 0 ? bubble / pp : 0.0;
  report.rank0_forward_sec = t.forward_sec;
  report.rank0_backward_sec = t.backward_sec;
  report.rank0_optimizer_sec = t.optimizer_sec;
  report.rank0_compute_sec = t.compute_sec;
}

void add_throughput(HybridReport& r) {
  const double time = r.replay.iteration_time_sec;
  if (r.seq_len == 0 || time <= 0) {
    return;  // a trace: no tokens
  }
  r.tokens_per_sec_per_gpu = 1.0 * r.global_batch * r.seq_len / time / r.replay.run.ranks;
  r.tflops_per_gpu = r.flops_per_token_6n * r.tokens_per_sec_per_gpu / 1e12;
  r.tflops_per_gpu_megatron = r.flops_per_token_megatron * r.tokens_per_sec_per_gpu / 1e12;
  if (r.peak_flops_per_sec > 0) {
    r.mfu = r.tflops_per_gpu * 1e12 / r.peak_flops_per_sec;
    r.mfu_megatron = r.tflops_per_gpu_megatron * 1e12 / r.peak_flops_per_sec;
  }
}

// The report's job fields: degrees, schedule, ZeRO, batch, stage split.
void describe_job(const HybridModel& model, const HybridJob& job, HybridReport& report) {
  const ParallelDegrees& d = job.degrees;
  report.parallel = parallel_name(d);
  report.order = order_name(job.order);
  report.schedule = pipeline_schedule_name(job.schedule);
  report.zero_stage = job.zero_stage;
  if (job.zero_stage == 3) {
    report.fsdp_unshard = fsdp_unshard_name(fsdp_unshard(job));
  }
  report.sequence_parallel = job.sequence_parallel;
  // Overlapped TP where a piece has a GEMM to run beside its collectives (a CNN's or a trace's
  // pieces have none).
  report.tp_overlap = job.tp_overlap && job.sequence_parallel && job.degrees.tp > 1 &&
                      std::ranges::any_of(model.pieces, [](const ModelPiece& p) {
                        return p.tp_in_gemm_sec > 0 || p.tp_out_gemm_sec > 0;
                      });
  report.micro_batches = job.micro_batches;
  report.global_batch = job.micro_batches * report.micro_batch * d.dp;
  const int units = model.pieces.back().unit + 1;
  report.stage_layers = job.stage_units.empty()
                            ? split_units(units - model.first_units - model.last_units,
                                          d.pp * job.schedule.virtual_stages)
                            : job.stage_units;
}

// A config checked and its model built, before anything is simulated.
struct PreparedJob {
  BuiltModel built;  // built.report: the model fields, and the memory of a transformer
  HybridJob job;
  RunOptions run;
};

// The ranks the run simulates: --ranks, else the degrees' product (capped just past the graph's
// limit, which then refuses it); they must agree.
int checked_ranks(const HybridConfig& config) {
  const ParallelDegrees& d = config.job.degrees;
  const int ranks = config.run.ranks != 0
                        ? config.run.ranks
                        : static_cast<int>(std::min<long long>(d.ranks(), kMaxGraphRanks + 1LL));
  if (d.ranks() != ranks) {
    throw ConfigError("parallel", ": " + parallel_name(d) + " makes " + std::to_string(d.ranks()) +
                                      " ranks, not " + std::to_string(ranks));
  }
  return ranks;
}

// The transformer `arch` as `config` runs it at `seq_len` tokens, refused where the graph cannot
// hold it.
BuiltModel checked_transformer(const HybridConfig& config, const workloads::TransformerArch& arch,
                               int seq_len) {
  BuiltModel b = transformer(config, arch, seq_len);
  if (std::string why = beyond_graph(b.model); !why.empty()) {
    throw ConfigError("model",
                      config.model + " in micro-batches of " + std::to_string(config.micro_batch) +
                          " x " + std::to_string(seq_len) +
                          " tokens is too large to simulate (--micro-batch, --seq-len): " + why);
  }
  return b;
}

// The recomputation as --recompute says it: "none", "selective", "full", "full:2", ...
std::string recompute_text(const HybridConfig& config) {
  return std::string(workloads::recompute_name(config.recompute)) +
         (config.recompute_every > 1 ? ":" + std::to_string(config.recompute_every) : "");
}

PreparedJob prepare(const HybridConfig& config) {
  if (config.model.empty() == config.workload_path.empty()) {
    throw ConfigError("model", ": give a model or a workload trace, one of them");
  }
  PreparedJob p{.job = config.job, .run = config.run};
  p.job.spatial_grid = config.cnn.spatial;
  p.run.ranks = checked_ranks(config);
  if (config.micro_batch < 1) {
    throw ConfigError("micro_batch", std::to_string(config.micro_batch) + ": expected 1 or more");
  }
  int seq_len = 0;
  int micro_batch = config.micro_batch;
  workloads::TransformerArch arch;  // a transformer's
  const bool zoo_cnn = !config.model.empty() && workloads::is_cnn(config.model);
  if (config.cross_entropy != workloads::CrossEntropy::kFused &&
      (zoo_cnn || config.model.empty())) {
    throw ConfigError("cross_entropy",
                      std::string(workloads::cross_entropy_name(config.cross_entropy)) +
                          ": the loss's memory is a transformer's (its vocabulary's logits); " +
                          (zoo_cnn ? config.model : std::string("a trace")) + " has none");
  }
  if (config.recompute != workloads::Recompute::kNone && (zoo_cnn || config.model.empty())) {
    // A trace's or a CNN's pieces have no recomputation time: the run would say it recomputes
    // and change nothing.
    throw ConfigError("recompute", recompute_text(config) +
                                       ": recomputation is modelled for a transformer's blocks; " +
                                       (zoo_cnn ? config.model : std::string("a trace")) +
                                       " has none");
  }
  if (zoo_cnn) {
    p.built = generated_cnn(config);
  } else if (!config.model.empty()) {
    if (cnn_split(config)) {
      throw ConfigError("parallel",
                        ": spatial, filter and channel splits need a CNN of the model zoo, and " +
                            config.model + " is a transformer");
    }
    arch = find_model(config.model);
    seq_len = config.seq_len == 0 ? arch.max_seq_len : config.seq_len;
    p.built = checked_transformer(config, arch, seq_len);
  } else {
    p.built = trace(config);
    micro_batch = std::max(1, p.built.report.micro_batch);
  }
  p.job.micro_batches = micro_batches(config, micro_batch);
  p.job.full_recompute = config.recompute == workloads::Recompute::kFull;
  if (std::string why = check_hybrid(p.built.model, p.job); !why.empty()) {
    refuse(why);
  }
  HybridReport& header = p.built.report;
  header.micro_batch = micro_batch;
  header.seq_len = seq_len;
  header.recompute = recompute_text(config);
  header.checkpoint_early_stop = config.checkpoint_early_stop;
  if (!p.built.cnn_device.empty()) {
    const std::string& precision = p.built.report.precision;
    header.memory = cnn_memory(p.built.model, p.job, workloads::find_device(p.built.cnn_device),
                               precision == "fp16" || precision == "bf16");
  } else if (!config.model.empty()) {
    header.memory = memory_model(workloads::for_sequence(arch, seq_len),
                                 transformer_shard(config, seq_len), p.job);
  }
  return p;
}

}  // namespace

HybridReport replay_hybrid(const HybridModel& model, const HybridJob& job, const RunOptions& run,
                           const std::string& origin, HybridReport report,
                           SimulateOutputs* outputs) {
  ExecutionGraph graph = build_hybrid(model, job);
  const std::vector<std::string> problems = validate_execution_graph(graph);
  DTSIM_CHECK(problems.empty(), "the hybrid graph is invalid: " + problems.front());
  describe_job(model, job, report);
  report.replay = replay_graph(
      graph, run, origin, outputs,
      [&](const ExecutionGraph& g, const LoweredGraph& lowered, const ReplayTimes& times,
          const TrainingTimes& t) { measure_stages(g, lowered, times, t, model, job, report); });
  add_throughput(report);
  report.replay.error_bars = hybrid_error_bars(!report.cnn);
  for (ErrorBar& bar : what_if_error_bars(run.what_if)) {
    report.replay.error_bars.push_back(std::move(bar));
  }
  if (!report.memory.stages.empty()) {  // a trace's transformer has no memory model
    report.replay.error_bars.push_back(memory_error_bar(!report.cnn));
  }
  return report;
}

HybridReport simulate_hybrid(const HybridConfig& config, SimulateOutputs* outputs) {
  PreparedJob p = prepare(config);
  return replay_hybrid(p.built.model, p.job, p.run,
                       config.model.empty() ? config.workload_path : config.model,
                       std::move(p.built.report), outputs);
}

HybridReport hybrid_memory(const HybridConfig& config) {
  if (config.model.empty()) {
    throw ConfigError("model",
                      ": the memory model needs a transformer of the catalogue or an "
                      "architecture file (a workload trace has no layer shapes)");
  }
  PreparedJob p = prepare(config);
  describe_job(p.built.model, p.job, p.built.report);
  return std::move(p.built.report);
}

}  // namespace dtsim::sim
