// The planner (issue 16, PLANNER.md): every configuration of a search space, those that do not
// fit in memory dropped with the reason, the rest estimated analytically (estimate.h) in
// parallel with TBB and ranked by estimated step time. Simulating the best few is the command
// line's job (sim/cli/plan.h): SimGrid runs one engine per process.
//
//   const PlanResult r = plan({.space = space, .device = "h100", .network = net});
//   for (const PlannedCandidate& c : r.ranked) { ... c.estimate.iteration_sec ... }
#ifndef DTSIM_SIM_PLANNER_PLANNER_H_
#define DTSIM_SIM_PLANNER_PLANNER_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sim/planner/candidate.h"
#include "sim/planner/cnn_space.h"
#include "sim/planner/estimate.h"
#include "sim/planner/network_model.h"
#include "sim/planner/search_space.h"
#include "sim/strategies/buckets.h"

namespace dtsim::sim {

struct PlanRequest {
  SearchSpace space;
  std::string device = "h100";
  std::string precision = "bf16";
  workloads::AttentionKernel attention = workloads::AttentionKernel::kFlash2;
  workloads::Fp8Recipe fp8_recipe = workloads::Fp8Recipe::kTorchao;  // with precision fp8
  PlannerNetwork network;
  int threads = 0;  // TBB worker threads; 0: TBB's default (every core)
  std::uint64_t bucket_cap_bytes = kDefaultBucketCapBytes;
};

// A CNN's plan (PLANNER.md, "CNNs"): a zoo CNN's space, fp32 or mixed precision.
struct CnnPlanRequest {
  CnnSearchSpace space;
  std::string device = "v100";
  std::string precision = "fp32";
  PlannerNetwork network;
  int threads = 0;
  std::uint64_t bucket_cap_bytes = kDefaultBucketCapBytes;
};

struct PlannedCandidate {
  int index = 0;  // in enumerate_candidates order
  PlanCandidate candidate;
  Estimate estimate;
  std::uint64_t peak_bytes = 0;       // the memory model's worst stage
  double tokens_per_sec_per_gpu = 0;  // a CNN's: samples per second per GPU
  // Model FLOPs (6N + attention; a CNN's forward and backward FLOPs of its layers) over the
  // device's dense peak.
  double mfu = 0;
  bool operator==(const PlannedCandidate&) const = default;
};

struct PlanResult {
  int enumerated = 0;
  // Why configurations were dropped, with how many: "out of memory (largest part: activations)",
  // or the hybrid graph's refusal ("schedule: ...") for one it cannot build.
  std::map<std::string, int> dropped;
  // Those that fit, by estimated step, then peak memory, then index.
  std::vector<PlannedCandidate> ranked;
  std::uint64_t capacity_bytes = 0;
  double flops_per_token = 0;     // 6N + attention (PaLM); a CNN's per sample
  double peak_flops_per_sec = 0;  // the device's dense peak at the precision
  bool operator==(const PlanResult&) const = default;
};

// The plan of `request`: the same result for every thread count. Throws ConfigError("device"
// or "precision") for an unknown device or precision.
// REQUIRES: request.space.gpus <= request.network.hosts.
[[nodiscard]] PlanResult plan(const PlanRequest& request);

// The plan of a CNN: the same result for every thread count. Throws ConfigError("device",
// "precision" or "image_size") for an unknown device or precision or an image the model cannot
// take. REQUIRES: request.space.gpus <= request.network.hosts, space.model a zoo CNN.
[[nodiscard]] PlanResult plan_cnn(const CnnPlanRequest& request);

// The job `dtsim simulate` would build for `c` (degrees, micro-batches, schedule, ZeRO,
// sequence parallelism, full recomputation, a CNN's spatial grid), with `bucket_cap_bytes`.
[[nodiscard]] HybridJob job_of(const PlanCandidate& c, std::uint64_t bucket_cap_bytes);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_PLANNER_PLANNER_H_
