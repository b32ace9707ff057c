#include "sim/strategies/pipeline_schedule.h"

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <system_error>
#include <utility>

#include "sim/invariant.h"

namespace dtsim::sim {
namespace {

constexpr std::string_view kInterleavedPrefix = "interleaved:";
constexpr std::string_view kTorchInterleavedPrefix = "interleaved-torch:";
constexpr std::string_view kExpected =
    "expected \"gpipe\", \"1f1b\", \"interleaved:V\" or \"interleaved-torch:V\"";

std::optional<PipelineSchedule> refuse(std::string* why, std::string reason) {
  if (why != nullptr) {
    *why = std::move(reason);
  }
  return std::nullopt;
}

std::string quoted(std::string_view text) {
  std::string out = "\"";
  out += text;
  out += '"';
  return out;
}

std::optional<PipelineSchedule> parse_interleaved(std::string_view text, std::string_view prefix,
                                                  PipelineRuntime runtime, std::string* why) {
  const std::string_view digits = text.substr(prefix.size());
  int chunks = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), chunks);
  if (digits.empty() || error != std::errc() || end != digits.data() + digits.size()) {
    return refuse(why, "pipeline schedule " + quoted(text) +
                           ": V (model chunks per device) must be an integer, got " +
                           quoted(digits));
  }
  if (chunks < 2) {
    return refuse(why, "pipeline schedule " + quoted(text) +
                           ": V (model chunks per device) must be >= 2, got " +
                           std::to_string(chunks));
  }
  return PipelineSchedule{
      .kind = PipelineScheduleKind::kInterleaved, .virtual_stages = chunks, .runtime = runtime};
}

// Megatron-LM (megatron/core/pipeline_parallel/schedules.py,
// forward_backward_pipelining_with_interleaving) counts "virtual micro-batches" k = 0 ..
// micro_batches * V - 1 and maps them in groups of stages * V: get_model_chunk_id gives chunk
// (k mod (stages*V)) / stages, reversed for backward; get_microbatch_id_in_model_chunk gives
// micro-batch (k / (stages*V)) * stages + k mod stages. Megatron computes the micro-batch for
// forward only; a backward pops the oldest forward of its chunk (input_tensors[chunk].pop(0)),
// whose micro-batch is the same formula of k. With V = 1 the mapping is the identity (chunk 0,
// micro-batch k), which is how GPipe and 1F1B use it.
PipelineStep virtual_micro_batch(int k, bool forward, int stages, int chunks) {
  const int group = stages * chunks;
  const int chunk = (k % group) / stages;
  return PipelineStep{.forward = forward,
                      .micro_batch = (k / group) * stages + k % stages,
                      .chunk = forward ? chunk : chunks - 1 - chunk};
}

// Forwards before the first steady 1F1B pair.
int warmup_forwards(const PipelineSchedule& schedule, int stages, int micro_batches, int stage) {
  switch (schedule.kind) {
    case PipelineScheduleKind::kGpipe:
      // Huang et al. 2019: every micro-batch's forward before any backward.
      return micro_batches;
    case PipelineScheduleKind::kOneFOneB:
      // Megatron-LM forward_backward_pipelining_without_interleaving: num_warmup_microbatches =
      // min(pipeline_parallel_size - pipeline_parallel_rank - 1, num_microbatches).
      return std::min(stages - stage - 1, micro_batches);
    case PipelineScheduleKind::kInterleaved:
      break;
  }
  // Megatron-LM forward_backward_pipelining_with_interleaving: all forwards first when
  // num_microbatches == pipeline_parallel_size, else (pipeline_parallel_size -
  // pipeline_parallel_rank - 1) * 2 + (num_model_chunks - 1) * pipeline_parallel_size, capped at
  // the total number of virtual micro-batches. torch.distributed.pipelining's
  // ScheduleInterleaved1F1B (_get_warmup_ops): (n_local_stages - 1) * microbatches_per_round +
  // 2 * (pp_group_size - 1 - rank), capped alike, with no all-forwards case; its
  // microbatches_per_round is pp_group_size when the micro-batches are a multiple of it (the
  // only case dtsim runs, check_pipeline), and its forward and backward chunks follow in groups
  // of that many, as Megatron-LM's.
  const int total = micro_batches * schedule.virtual_stages;
  if (micro_batches == stages && schedule.runtime == PipelineRuntime::kMegatron) {
    return total;
  }
  return std::min((stages - stage - 1) * 2 + (schedule.virtual_stages - 1) * stages, total);
}

// The three loops of Megatron-LM's schedules over `total` virtual micro-batches: `warmup`
// forwards; the steady state, whose iteration k runs forward warmup + k then backward k; the
// cool-down backwards. GPipe is all warm-up and cool-down, so its backwards run in micro-batch
// order 0, 1, ... (as PyTorch's torch.distributed.pipelining ScheduleGPipe does), not in the
// reverse order autograd over one concatenated batch gives. That is deadlock free: forwards
// wait only on earlier stages' forwards, which all come first; the last stage's backwards need
// only its own forwards; and backwards 0..j of stage s need backwards 0..j of stage s + 1, which
// that stage runs in the same order, so by induction from the last stage every step is reached.
std::vector<PipelineStep> three_phases(int total, int warmup, int stages, int chunks) {
  std::vector<PipelineStep> order;
  order.reserve(2 * static_cast<std::size_t>(total));
  for (int k = 0; k < warmup; ++k) {
    order.push_back(virtual_micro_batch(k, true, stages, chunks));
  }
  for (int k = 0; k < total - warmup; ++k) {
    order.push_back(virtual_micro_batch(warmup + k, true, stages, chunks));
    order.push_back(virtual_micro_batch(k, false, stages, chunks));
  }
  for (int k = total - warmup; k < total; ++k) {
    order.push_back(virtual_micro_batch(k, false, stages, chunks));
  }
  return order;
}

}  // namespace

std::optional<PipelineSchedule> parse_pipeline_schedule(std::string_view text, std::string* why) {
  if (text == "gpipe") {
    return PipelineSchedule{.kind = PipelineScheduleKind::kGpipe};
  }
  if (text == "1f1b") {
    return PipelineSchedule{.kind = PipelineScheduleKind::kOneFOneB};
  }
  if (text.starts_with(kInterleavedPrefix)) {
    return parse_interleaved(text, kInterleavedPrefix, PipelineRuntime::kMegatron, why);
  }
  if (text.starts_with(kTorchInterleavedPrefix)) {
    return parse_interleaved(text, kTorchInterleavedPrefix, PipelineRuntime::kTorch, why);
  }
  if (text.empty()) {
    return refuse(why, "empty pipeline schedule; " + std::string(kExpected));
  }
  return refuse(why, "unknown pipeline schedule " + quoted(text) + "; " + std::string(kExpected));
}

std::string pipeline_schedule_name(const PipelineSchedule& schedule) {
  switch (schedule.kind) {
    case PipelineScheduleKind::kGpipe:
      return "gpipe";
    case PipelineScheduleKind::kOneFOneB:
      return "1f1b";
    case PipelineScheduleKind::kInterleaved:
      break;
  }
  return std::string(schedule.runtime == PipelineRuntime::kTorch ? kTorchInterleavedPrefix
                                                                 : kInterleavedPrefix) +
         std::to_string(schedule.virtual_stages);
}

std::string check_pipeline(const PipelineSchedule& schedule, int stages, int micro_batches) {
  if (stages < 1) {
    return "pipeline stages must be >= 1, got " + std::to_string(stages);
  }
  if (micro_batches < 1) {
    return "micro-batches must be >= 1, got " + std::to_string(micro_batches);
  }
  const std::string name = pipeline_schedule_name(schedule);
  if (schedule.kind != PipelineScheduleKind::kInterleaved) {
    if (schedule.virtual_stages != 1) {
      return name + " runs one model chunk per device; virtual stages must be 1, got " +
             std::to_string(schedule.virtual_stages);
    }
    if (schedule.runtime != PipelineRuntime::kMegatron) {
      return name + " is the same in every runtime; only interleaved names one";
    }
    return "";
  }
  if (schedule.virtual_stages < 2) {
    return "interleaved needs >= 2 model chunks per device, got " +
           std::to_string(schedule.virtual_stages);
  }
  // Megatron-LM's parallel_state.initialize_model_parallel: "pipeline-model-parallel size
  // should be greater than 1 with interleaved schedule".
  if (stages < 2) {
    return name + " needs >= 2 pipeline stages, got " + std::to_string(stages);
  }
  // Megatron-LM's forward_backward_pipelining_with_interleaving: "number of microbatches is not
  // divisible by pipeline-model-parallel-size when using interleaved schedule". PyTorch's runs
  // other counts in "rounds" of its own size, which dtsim does not model: it is refused alike.
  if (micro_batches % stages != 0) {
    return name + " needs micro-batches divisible by pipeline stages, got " +
           std::to_string(micro_batches) + " micro-batches over " + std::to_string(stages) +
           " stages";
  }
  return "";
}

std::vector<PipelineStep> stage_order(const PipelineSchedule& schedule, int stages,
                                      int micro_batches, int stage) {
  const std::string invalid = check_pipeline(schedule, stages, micro_batches);
  DTSIM_CHECK(invalid.empty(), invalid);
  DTSIM_CHECK(stage >= 0 && stage < stages, "pipeline stage " + std::to_string(stage) +
                                                " out of 0.." + std::to_string(stages - 1));
  return three_phases(micro_batches * schedule.virtual_stages,
                      warmup_forwards(schedule, stages, micro_batches, stage), stages,
                      schedule.virtual_stages);
}

int max_in_flight(const std::vector<PipelineStep>& order) {
  int held = 0;
  int most = 0;
  for (const PipelineStep& step : order) {
    held += step.forward ? 1 : -1;
    most = std::max(most, held);
  }
  return most;
}

}  // namespace dtsim::sim
