// `dtsim simulate --model M --parallel ...`: a hybrid-parallel training job (sim/strategies/
// hybrid.h) on a transformer from the catalogue (workloads/transformer.h) or a workload trace,
// built, replayed and reported.
#ifndef DTSIM_SIM_RUN_HYBRID_RUN_H_
#define DTSIM_SIM_RUN_HYBRID_RUN_H_

#include <string>

#include "sim/report/hybrid_report.h"
#include "sim/run/simulation.h"
#include "sim/strategies/cnn_model.h"
#include "sim/strategies/hybrid.h"
#include "workloads/transformer.h"

namespace dtsim::sim {

struct HybridConfig {
  RunOptions run;  // run.ranks: tp * cp * dp * pp
  // The model: a transformer of the catalogue or a CNN of the zoo (their compute from the
  // generator's roofline on the sharded shapes), or else a workload trace (data parallelism and
  // ZeRO only, unless it is a zoo CNN's: then CNN splits too, its times scaled per shard).
  std::string model;
  std::string workload_path;
  std::string device = "h100";
  std::string precision = "bf16";
  int micro_batch = 1;   // sequences per micro-batch (a trace: its batch_per_device)
  int global_batch = 0;  // sequences per optimizer step over all replicas; 0: micro_batch * dp
  int seq_len = 0;       // tokens per sequence; 0: the model's max_seq_len
  workloads::Recompute recompute = workloads::Recompute::kNone;
  int recompute_every = 1;             // full recompute of every N-th block (TransformerShard)
  bool checkpoint_early_stop = false;  // PyTorch's non-reentrant early stop (TransformerShard)
  workloads::CrossEntropy cross_entropy = workloads::CrossEntropy::kFused;  // the loss's memory
  workloads::AttentionKernel attention = workloads::AttentionKernel::kFlash2;
  workloads::Fp8Recipe fp8_recipe = workloads::Fp8Recipe::kTorchao;  // with precision fp8
  // A CNN of the zoo (--model, or the model a trace names): its model-parallel split
  // (sim/strategies/CNN.md; filter or channel make job.degrees.tp, spatial job.degrees.cp) and
  // input side (0: the zoo's default, 224; cosmoflow 128).
  CnnSplit cnn;
  int image_size = 0;
  // Degrees, order, schedule, ZeRO, sequence parallelism, stage split, buckets, iterations.
  // job.micro_batches and job.full_recompute are derived from the fields above.
  HybridJob job;
};

// Throws ConfigError (naming the config field), workloads::GeneratorError,
// workloads::TraceError or platforms::PlatformError before the simulation starts. The report's
// `memory` is the memory model's for a transformer (empty for a trace).
[[nodiscard]] HybridReport simulate_hybrid(const HybridConfig& config,
                                           SimulateOutputs* outputs = nullptr);

// The memory model of `config` (sim/strategies/memory.h), checked as simulate_hybrid checks it,
// nothing simulated: the report's model and job fields and `memory`, no replay figures. Throws
// what simulate_hybrid throws, and ConfigError("model", ...) for a workload trace (it has no
// layer shapes). run.ranks may be 0 (the degrees' product).
[[nodiscard]] HybridReport hybrid_memory(const HybridConfig& config);

// The replay of `model` under `job` on `run`'s platform (run.ranks == job.degrees.ranks();
// check_hybrid(model, job) is empty), reported on `report`, whose model fields (model, device,
// FLOPs per token, peak, micro_batch, seq_len, recompute) the caller has filled. `origin` names
// the model in the report. What simulate_hybrid does once it built the model.
[[nodiscard]] HybridReport replay_hybrid(const HybridModel& model, const HybridJob& job,
                                         const RunOptions& run, const std::string& origin,
                                         HybridReport report, SimulateOutputs* outputs = nullptr);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_RUN_HYBRID_RUN_H_
