// Pipeline-parallel schedules as per-device compute orders: which forward and backward steps each
// pipeline stage runs in one optimizer step, and in what order. Pure values, no SimGrid; the
// hybrid-parallel strategy turns these orders into execution-graph nodes and sends.
//
//   std::string why;
//   const auto schedule = parse_pipeline_schedule("interleaved:2", &why);  // nullopt: see why
//   if (check_pipeline(*schedule, 4, 8).empty()) {
//     for (const PipelineStep& s : stage_order(*schedule, 4, 8, /*stage=*/1)) { ... }
//   }
//
// Dependencies between devices (what makes an order a pipeline). Device `stage` holds model
// chunks 0 .. V-1; chunk c is virtual stage c * stages + stage of the V * stages the model is cut
// into. A forward step of virtual stage v on micro-batch j needs the forward output of virtual
// stage v - 1 (on device (v - 1) mod stages) for j; the first virtual stage reads the data. A
// backward step of v on j needs the input gradient of virtual stage v + 1 for j; the last
// virtual stage's backward starts from its own loss, after its own forward. Every order below
// runs to completion under these dependencies (no device waits forever).
#ifndef DTSIM_SIM_STRATEGIES_PIPELINE_SCHEDULE_H_
#define DTSIM_SIM_STRATEGIES_PIPELINE_SCHEDULE_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dtsim::sim {

enum class PipelineScheduleKind {
  // GPipe (Huang et al. 2019): all forwards, then all backwards (a pipeline flush per step).
  kGpipe,
  // 1F1B with a flush: PipeDream-Flush (Narayanan et al. 2021), Megatron-LM's
  // forward_backward_pipelining_without_interleaving.
  kOneFOneB,
  // Interleaved 1F1B (Narayanan et al. SC'21), Megatron-LM's
  // forward_backward_pipelining_with_interleaving: V model chunks per device.
  kInterleaved,
};

// Whose interleaved 1F1B: Megatron-LM's, or torch.distributed.pipelining's
// ScheduleInterleaved1F1B (torchtitan's "Interleaved1F1B"). They differ in one case: with as
// many micro-batches as stages Megatron-LM runs every forward first on every device, PyTorch
// only where its warm-up count reaches them all. (GPipe and 1F1B run the same orders in both.)
enum class PipelineRuntime { kMegatron, kTorch };

struct PipelineSchedule {
  PipelineScheduleKind kind = PipelineScheduleKind::kOneFOneB;
  int virtual_stages = 1;  // model chunks per device (interleaved only; >= 2 there)
  PipelineRuntime runtime = PipelineRuntime::kMegatron;  // interleaved only
  bool operator==(const PipelineSchedule&) const = default;
};

// "gpipe", "1f1b", "interleaved:V" (Megatron-LM's) or "interleaved-torch:V" (PyTorch's), V >= 2
// an integer. Returns nullopt and sets *why for bad text (why may be null).
[[nodiscard]] std::optional<PipelineSchedule> parse_pipeline_schedule(std::string_view text,
                                                                      std::string* why);
// The text parse_pipeline_schedule reads back as `schedule`.
[[nodiscard]] std::string pipeline_schedule_name(const PipelineSchedule& schedule);

// One step of a device's compute order.
struct PipelineStep {
  bool forward = true;
  int micro_batch = 0;  // 0 .. micro_batches-1
  int chunk = 0;  // model chunk on this device, 0 .. V-1; its virtual stage is chunk*stages + stage
  bool operator==(const PipelineStep&) const = default;
};

// The virtual stage (0 .. V*stages-1) that `step` of device `stage` runs.
[[nodiscard]] inline int virtual_stage(const PipelineStep& step, int stages, int stage) {
  return step.chunk * stages + stage;
}

// Empty string if (schedule, stages, micro_batches) is valid, else why not: stages >= 1 and
// micro_batches >= 1; GPipe and 1F1B have one chunk per device; interleaved needs
// virtual_stages >= 2, stages >= 2 and micro_batches % stages == 0 (Megatron-LM refuses the
// others; PyTorch's runs them in rounds dtsim does not model).
[[nodiscard]] std::string check_pipeline(const PipelineSchedule& schedule, int stages,
                                         int micro_batches);

// The order in which device `stage` (0 .. stages-1) runs forward and backward steps in one
// optimizer step: every (micro_batch, chunk) forward once and backward once, each backward after
// its forward. Every schedule runs in three phases, as Megatron-LM's loops do: W warm-up
// forwards, then steady pairs (forward W + k, backward k), then the cool-down backwards, over
// micro_batches * V "virtual micro-batches" k (for GPipe and 1F1B, k is the micro-batch):
//   GPipe:        W = micro_batches (all forwards, then the backwards in micro-batch order);
//   1F1B:         W = min(stages - stage - 1, micro_batches);
//   interleaved:  W = micro_batches * V if micro_batches == stages (Megatron-LM only), else
//                 min(2 * (stages - stage - 1) + (V - 1) * stages, micro_batches * V);
//                 forward k runs chunk (k mod (stages*V)) / stages on micro-batch
//                 (k / (stages*V)) * stages + k mod stages; backward k runs chunk V-1 minus that,
//                 same micro-batch (chunks in reverse).
// REQUIRES: check_pipeline(schedule, stages, micro_batches) is empty; 0 <= stage < stages.
[[nodiscard]] std::vector<PipelineStep> stage_order(const PipelineSchedule& schedule, int stages,
                                                    int micro_batches, int stage);

// Most chunk-micro-batches whose activations a device holds at once in `order` (forward done,
// backward not yet), for the memory model: each chunk's activations are 1/V of the device's.
// GPipe: micro_batches; 1F1B: min(micro_batches, stages - stage); interleaved: W + 1 capped at
// micro_batches * V (W the warm-up count above; W itself when every step is warm-up).
[[nodiscard]] int max_in_flight(const std::vector<PipelineStep>& order);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_STRATEGIES_PIPELINE_SCHEDULE_H_
