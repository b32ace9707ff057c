// One configuration the planner considers (sim/planner/PLANNER.md): the parallel degrees and
// every knob of a hybrid job that `dtsim simulate --model` takes, as a plain value.
#ifndef DTSIM_SIM_PLANNER_CANDIDATE_H_
#define DTSIM_SIM_PLANNER_CANDIDATE_H_

#include <string>
#include <vector>

#include "sim/strategies/layout.h"
#include "sim/strategies/pipeline_schedule.h"
#include "workloads/transformer.h"

namespace dtsim::sim {

struct PlanCandidate {
  ParallelDegrees degrees;  // tp * cp * dp * pp = the GPUs planned for; ep = 1
  int micro_batch = 1;      // sequences per micro-batch
  int micro_batches = 1;    // per replica per step: global batch / (micro_batch * dp)
  PipelineSchedule schedule;
  int zero_stage = 0;
  workloads::Recompute recompute = workloads::Recompute::kNone;
  bool sequence_parallel = false;
  bool operator==(const PlanCandidate&) const = default;
};

// A short, unique, stable label: "tp8 pp4 dp16 cp1 mb1 1f1b z1 sel sp" (recompute "none",
// "sel" or "full"; "sp" only with sequence parallelism).
[[nodiscard]] std::string candidate_name(const PlanCandidate& c);

// The flags of `dtsim simulate` that run `c` (--parallel, --micro-batch, --schedule, --zero,
// --recompute and --sequence-parallel), without the model, batch, platform or ranks.
[[nodiscard]] std::vector<std::string> candidate_flags(const PlanCandidate& c);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_PLANNER_CANDIDATE_H_
