// What the transformer's and the CNN's plans share (planner.cpp, cnn_planner.cpp): one
// configuration's outcome, and the ranking of them all.
#ifndef DTSIM_SIM_PLANNER_PLANNER_INTERNAL_H_
#define DTSIM_SIM_PLANNER_PLANNER_INTERNAL_H_

#include <optional>
#include <string>
#include <vector>

#include "sim/planner/planner.h"
#include "sim/strategies/memory.h"

namespace dtsim::sim::planner_internal {

// One candidate checked, its memory modelled and, if it fits, estimated; else why not.
struct Outcome {
  std::optional<PlannedCandidate> planned;
  std::string dropped;
};

// The largest part of a stage's memory: "parameters", "activations", ...
[[nodiscard]] const char* largest_part(const StageMemory& m);

// Moves `outcomes` into `result`: the dropped counted by reason, the rest with their throughput
// (`units_per_step` tokens or samples over the step and `gpus`) and MFU (result.flops_per_token
// per unit), by estimated step, then peak memory, then enumeration order.
void rank(std::vector<Outcome>& outcomes, double units_per_step, int gpus, PlanResult& result);

}  // namespace dtsim::sim::planner_internal

#endif  // DTSIM_SIM_PLANNER_PLANNER_INTERNAL_H_
