// plan_cnn (planner.h): a CNN's configurations through the pieces `dtsim simulate --model`
// builds for them (model_from_cnn on the generator's trace), its memory model (cnn_memory) and
// the same estimate and ranking as a transformer's.
#include <map>
#include <optional>
#include <tuple>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include "sim/config_error.h"
#include "sim/planner/planner.h"
#include "sim/planner/planner_internal.h"
#include "sim/strategies/cnn_model.h"
#include "workloads/generator.h"
#include "workloads/generator_error.h"
#include "workloads/model_zoo.h"
#include "workloads/roofline.h"

namespace dtsim::sim {

namespace {

using planner_internal::Outcome;

// What the pieces depend on: the split and the micro-batch.
using CnnKey = std::tuple<std::array<int, 3>, int, int, int>;

CnnKey key_of(const PlanCandidate& c) {
  return {c.split.spatial, c.split.filter, c.split.channel, c.micro_batch};
}

// The pieces of every distinct (split, micro-batch), built once each, in parallel.
struct CnnModels {
  std::map<CnnKey, std::size_t> index;
  std::vector<HybridModel> models;
};

CnnModels build_models(const CnnPlanRequest& r, const workloads::Roofline& roofline,
                       const std::vector<PlanCandidate>& all) {
  CnnModels s;
  std::vector<const PlanCandidate*> firsts;
  for (const PlanCandidate& c : all) {
    if (s.index.try_emplace(key_of(c), firsts.size()).second) {
      firsts.push_back(&c);
    }
  }
  s.models.resize(firsts.size());
  tbb::parallel_for(std::size_t{0}, firsts.size(), [&](std::size_t i) {
    const PlanCandidate& c = *firsts[i];
    const workloads::ModelShape shape{
        .model = r.space.model, .batch = c.micro_batch, .image_size = r.space.image_size};
    const workloads::Workload trace = workloads::generate_workload(
        {.shape = shape, .device = r.device, .precision = r.precision});
    s.models[i] = model_from_cnn(workloads::model_layers(shape), trace, roofline, c.split);
  });
  return s;
}

Outcome evaluate(const CnnPlanRequest& r, const CnnModels& models,
                 const workloads::DeviceSpec& device, const PlanCandidate& c, int index) {
  const HybridModel& model = models.models[models.index.at(key_of(c))];
  const HybridJob job = job_of(c, r.bucket_cap_bytes);
  if (std::string why = check_hybrid(model, job); !why.empty()) {
    return {.dropped = why.substr(0, why.find(':')) + ": cannot be built"};
  }
  const MemoryReport memory =
      cnn_memory(model, job, device, r.precision == "fp16" || r.precision == "bf16");
  const StageMemory& worst = memory.stages[static_cast<std::size_t>(memory.worst_stage)];
  if (memory.oom) {
    return {.dropped = std::string("out of memory (largest part: ") +
                       planner_internal::largest_part(worst) + ")"};
  }
  return {.planned = PlannedCandidate{.index = index,
                                      .candidate = c,
                                      .estimate = estimate_step(model, job, r.network),
                                      .peak_bytes = worst.peak_bytes}};
}

// Forward and backward FLOPs of one sample (GENERATOR.md: backward_factor times the forward).
double flops_per_sample(const CnnSearchSpace& s) {
  double flops = 0;
  for (const workloads::LayerCost& l :
       workloads::model_layers({.model = s.model, .batch = 1, .image_size = s.image_size})) {
    flops += l.forward_flops * (1 + l.backward_factor);
  }
  return flops;
}

}  // namespace

PlanResult plan_cnn(const CnnPlanRequest& r) {
  workloads::Roofline roofline;
  std::vector<PlanCandidate> all;
  try {
    roofline = workloads::make_roofline(workloads::find_device(r.device), r.precision);
    all = enumerate_cnn_candidates(r.space);
  } catch (const workloads::GeneratorError& e) {
    throw ConfigError(e.field(), e.detail());
  }
  const workloads::DeviceSpec& device = workloads::find_device(r.device);
  PlanResult result{.enumerated = static_cast<int>(all.size()),
                    .capacity_bytes = static_cast<std::uint64_t>(device.memory_capacity_bytes),
                    .flops_per_token = flops_per_sample(r.space),
                    .peak_flops_per_sec = roofline.peak_flops_per_sec};
  std::vector<Outcome> outcomes(all.size());
  tbb::task_arena arena(r.threads > 0 ? r.threads : tbb::task_arena::automatic);
  arena.execute([&] {
    const CnnModels models = build_models(r, roofline, all);
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, all.size()), [&](const auto& range) {
      for (std::size_t i = range.begin(); i != range.end(); ++i) {
        outcomes[i] = evaluate(r, models, device, all[i], static_cast<int>(i));
      }
    });
  });
  planner_internal::rank(outcomes, r.space.global_batch, r.space.gpus, result);
  return result;
}

}  // namespace dtsim::sim
