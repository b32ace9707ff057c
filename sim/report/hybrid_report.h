// The report of a hybrid-parallel run (README, "Hybrid parallelism"): the replay's figures
// (GraphReport) and what a user of Megatron-LM or torchtitan compares: tokens/s per GPU, model
// TFLOP/s per GPU and MFU, the pipeline bubble, compute per stage and exposed communication per
// kind.
#ifndef DTSIM_SIM_REPORT_HYBRID_REPORT_H_
#define DTSIM_SIM_REPORT_HYBRID_REPORT_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/report/report.h"
#include "sim/strategies/memory.h"

namespace dtsim::sim {

struct StageResult {
  int stage = 0;
  int rank = 0;  // the rank measured (the first of the stage)
  std::string first_layer;
  std::string last_layer;                     // of its last chunk
  double compute_sec = 0;                     // its compute in the last iteration
  std::map<std::string, double> waiting_sec;  // per communication kind (exposure.h)
  double idle_sec = 0;
};

struct HybridReport {
  GraphReport replay;
  // The job.
  std::string model;
  bool cnn = false;            // a CNN with its splits (sim/strategies/CNN.md), not a transformer
  std::string compute_source;  // "generator: ..." or the trace file
  std::string device;
  std::string precision;
  std::uint64_t parameters = 0;  // the whole model's (0: unknown, a trace)
  std::string parallel;          // "tp=8,cp=1,dp=8,pp=4,ep=1"
  std::string order;
  std::string schedule;
  int zero_stage = 0;
  std::string fsdp_unshard;  // ZeRO-3's: "unit", "micro-batch" or "step"; else empty
  bool sequence_parallel = false;
  bool tp_overlap = false;  // TP's gathers and reduce-scatters overlapped with their GEMMs
  std::string recompute;
  bool checkpoint_early_stop = false;  // full recompute stops at backward's last saved tensor
  int micro_batch = 0;
  int global_batch = 0;
  int micro_batches = 0;  // per replica per step
  int seq_len = 0;
  std::vector<int> stage_layers;  // balanced units per virtual stage
  // Results of the last iteration.
  // Rank 0's compute as data parallelism reports it (measure.h): forward and backward of the
  // last micro-batch, every micro-batch's compute plus the optimizer, the optimizer.
  double rank0_forward_sec = 0;
  double rank0_backward_sec = 0;
  double rank0_optimizer_sec = 0;
  double rank0_compute_sec = 0;
  double tokens_per_sec_per_gpu = 0;
  double flops_per_token_6n = 0;        // 6N + attention (PaLM's model FLOPs)
  double flops_per_token_megatron = 0;  // Megatron-LM's formula
  double tflops_per_gpu = 0;            // model TFLOP/s per GPU, 6N + attention
  double tflops_per_gpu_megatron = 0;
  double peak_flops_per_sec = 0;  // the device's dense peak at the precision
  double mfu = 0;
  double mfu_megatron = 0;
  // The pipeline's bubble: the stages' mean share of the iteration spent waiting for the
  // pipeline or idle (with an infinitely fast network, (p-1)/(m+p-1) for 1F1B).
  double bubble_fraction = 0;
  std::map<std::string, double> exposed_sec;  // mean over stages, per communication kind
  std::vector<StageResult> stages;
  // Per stage, one rank's memory at its peak (the memory model, sim/strategies/MEMORY.md);
  // no stages for a workload trace, which has no layer shapes.
  MemoryReport memory;
};

// The JSON report of `dtsim simulate` (with "memory" when the memory is modelled) and its
// summary (a line with the worst rank's peak memory then).
[[nodiscard]] nlohmann::ordered_json report_json(const HybridReport& report);
[[nodiscard]] std::string report_summary(const HybridReport& report);

// The same of `dtsim memory`, which simulates nothing: the model, the job and "memory"; the job
// in one line and the per-stage table (memory_report.h). REQUIRES: report.memory has stages.
[[nodiscard]] nlohmann::ordered_json memory_report_json(const HybridReport& report);
[[nodiscard]] std::string memory_summary(const HybridReport& report);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_REPORT_HYBRID_REPORT_H_
