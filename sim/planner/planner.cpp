#include "sim/planner/planner.h"

#include <algorithm>
#include <array>
#include <optional>
#include <tuple>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include "sim/config_error.h"
#include "sim/planner/planner_internal.h"
#include "sim/strategies/memory.h"
#include "sim/strategies/transformer_model.h"
#include "workloads/roofline.h"

namespace dtsim::sim {

namespace {

using planner_internal::largest_part;
using planner_internal::Outcome;

// What the pieces depend on: the shard (tp, cp, micro-batch, SP, recompute, early stop).
using ShardKey = std::tuple<int, int, int, bool, workloads::Recompute, bool>;

ShardKey key_of(const PlanCandidate& c) {
  return {c.degrees.tp,        c.degrees.cp, c.micro_batch,
          c.sequence_parallel, c.recompute,  c.checkpoint_early_stop};
}

workloads::TransformerShard shard_of(const PlanRequest& r, const PlanCandidate& c) {
  return {.micro_batch = c.micro_batch,
          .seq_len = r.space.seq_len,
          .tp = c.degrees.tp,
          .cp = c.degrees.cp,
          .sequence_parallel = c.sequence_parallel,
          .recompute = c.recompute,
          .checkpoint_early_stop = c.checkpoint_early_stop,
          .attention = r.attention,
          .device = r.device,
          .precision = r.precision,
          .fp8_recipe = r.fp8_recipe};
}

// The pieces of every distinct shard, built once each (in parallel); nullopt where the
// transformer refuses the shard, with the reason.
struct ShardModels {
  std::map<ShardKey, std::size_t> index;
  std::vector<std::optional<HybridModel>> models;
  std::vector<std::string> refusals;
};

ShardModels build_models(const PlanRequest& r, const std::vector<PlanCandidate>& all) {
  ShardModels s;
  std::vector<const PlanCandidate*> firsts;
  for (const PlanCandidate& c : all) {
    if (s.index.try_emplace(key_of(c), firsts.size()).second) {
      firsts.push_back(&c);
    }
  }
  s.models.resize(firsts.size());
  s.refusals.resize(firsts.size());
  tbb::parallel_for(std::size_t{0}, firsts.size(), [&](std::size_t i) {
    try {
      s.models[i] = model_from_transformer(r.space.arch, shard_of(r, *firsts[i]));
    } catch (const workloads::GeneratorError& e) {
      s.refusals[i] = e.field() + ":" + e.detail();
    }
  });
  return s;
}

Outcome evaluate(const PlanRequest& r, const ShardModels& models, const PlanCandidate& c,
                 int index) {
  const std::size_t shard = models.index.at(key_of(c));
  if (!models.models[shard]) {
    return {.dropped = models.refusals[shard]};
  }
  const HybridModel& model = *models.models[shard];
  const HybridJob job = job_of(c, r.bucket_cap_bytes);
  if (std::string why = check_hybrid(model, job); !why.empty()) {
    return {.dropped = why.substr(0, why.find(':')) + ": cannot be built"};
  }
  const MemoryReport memory = memory_model(r.space.arch, shard_of(r, c), job);
  const StageMemory& worst = memory.stages[static_cast<std::size_t>(memory.worst_stage)];
  if (memory.oom) {
    return {.dropped = std::string("out of memory (largest part: ") + largest_part(worst) + ")"};
  }
  return {.planned = PlannedCandidate{.index = index,
                                      .candidate = c,
                                      .estimate = estimate_step(model, job, r.network),
                                      .peak_bytes = worst.peak_bytes}};
}

}  // namespace

HybridJob job_of(const PlanCandidate& c, std::uint64_t bucket_cap_bytes) {
  return {.degrees = c.degrees,
          .micro_batches = c.micro_batches,
          .schedule = c.schedule,
          .zero_stage = c.zero_stage,
          .sequence_parallel = c.sequence_parallel,
          .tp_overlap = c.tp_overlap,
          .spatial_grid = c.split.spatial,
          .full_recompute = c.recompute == workloads::Recompute::kFull,
          .bucket_cap_bytes = bucket_cap_bytes};
}

PlanResult plan(const PlanRequest& r) {
  workloads::Roofline roofline;
  try {
    roofline = workloads::make_roofline(workloads::find_device(r.device), r.precision);
  } catch (const workloads::GeneratorError& e) {
    throw ConfigError(e.field(), e.detail());
  }
  const std::vector<PlanCandidate> all = enumerate_candidates(r.space);
  PlanResult result{
      .enumerated = static_cast<int>(all.size()),
      .capacity_bytes =
          static_cast<std::uint64_t>(workloads::find_device(r.device).memory_capacity_bytes),
      .flops_per_token = workloads::model_flops_per_token_6n(r.space.arch, r.space.seq_len),
      .peak_flops_per_sec = roofline.peak_flops_per_sec};
  std::vector<Outcome> outcomes(all.size());
  tbb::task_arena arena(r.threads > 0 ? r.threads : tbb::task_arena::automatic);
  arena.execute([&] {
    const ShardModels models = build_models(r, all);
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, all.size()), [&](const auto& range) {
      for (std::size_t i = range.begin(); i != range.end(); ++i) {
        outcomes[i] = evaluate(r, models, all[i], static_cast<int>(i));
      }
    });
  });
  planner_internal::rank(outcomes, 1.0 * r.space.global_batch * r.space.seq_len, r.space.gpus,
                         result);
  return result;
}

namespace planner_internal {

const char* largest_part(const StageMemory& m) {
  const std::array<std::pair<const char*, std::uint64_t>, 6> parts{
      {{"parameters", m.parameters_bytes},
       {"gradients", m.gradients_bytes},
       {"optimizer states", m.optimizer_bytes},
       {"activations", m.activations_bytes},
       {"FSDP buffers", m.fsdp_buffers_bytes},
       {"communication buffers", m.communication_buffers_bytes}}};
  return std::max_element(parts.begin(), parts.end(),
                          [](auto& a, auto& b) { return a.second < b.second; })
      ->first;
}

void rank(std::vector<Outcome>& outcomes, double units_per_step, int gpus, PlanResult& result) {
  for (Outcome& o : outcomes) {
    if (!o.planned) {
      ++result.dropped[o.dropped];
      continue;
    }
    PlannedCandidate& p = *o.planned;
    p.tokens_per_sec_per_gpu = units_per_step / p.estimate.iteration_sec / gpus;
    p.mfu = result.flops_per_token * p.tokens_per_sec_per_gpu / result.peak_flops_per_sec;
    result.ranked.push_back(std::move(p));
  }
  // Faster first; of equal estimates (ZeRO-1 and -2 communicate alike), the smaller peak.
  std::stable_sort(result.ranked.begin(), result.ranked.end(), [](auto& a, auto& b) {
    return a.estimate.iteration_sec != b.estimate.iteration_sec
               ? a.estimate.iteration_sec < b.estimate.iteration_sec
               : a.peak_bytes < b.peak_bytes;
  });
}

}  // namespace planner_internal

}  // namespace dtsim::sim
