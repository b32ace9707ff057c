// One configuration the planner considers (sim/planner/PLANNER.md): the parallel degrees and
// every knob of a hybrid job that `dtsim simulate --model` takes, as a plain value. A CNN's
// configuration has its model-parallel split in `split` (its degree is tp or cp, as the hybrid
// engine runs it, sim/strategies/cnn_model.h) and no ZeRO, recomputation or sequence
// parallelism.
#ifndef DTSIM_SIM_PLANNER_CANDIDATE_H_
#define DTSIM_SIM_PLANNER_CANDIDATE_H_

#include <string>
#include <vector>

#include "sim/strategies/cnn_model.h"
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
  bool checkpoint_early_stop = false;  // with full recompute (workloads::TransformerShard)
  bool sequence_parallel = false;
  bool tp_overlap = false;  // with sequence parallelism (HYBRID.md, "Overlapped TP")
  bool cnn = false;         // a CNN of the model zoo: `split` holds its model parallelism
  CnnSplit split;
  bool operator==(const PlanCandidate&) const = default;
};

// A short, unique, stable label: "tp8 pp4 dp16 cp1 mb1 1f1b z1 sel sp" (recompute "none",
// "sel" or "full"; "sp" only with sequence parallelism, "sp ov" with TP overlapped too); a
// CNN's "dp16 pp2 spatial2x2 mb4 1f1b" ("data", "spatial2x2", "spatial2x2x2", "filter4" or
// "channel4" after the pipeline).
[[nodiscard]] std::string candidate_name(const PlanCandidate& c);

// The flags of `dtsim simulate` that run `c` (--parallel, --micro-batch, --schedule, --zero,
// --recompute, --checkpoint-early-stop, --sequence-parallel and --tp-overlap; a CNN's --parallel
// dp=D,pp=P[,spatial=HxW|filter=F|channel=C], --micro-batch and --schedule), without the model,
// batch, platform or ranks.
[[nodiscard]] std::vector<std::string> candidate_flags(const PlanCandidate& c);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_PLANNER_CANDIDATE_H_
