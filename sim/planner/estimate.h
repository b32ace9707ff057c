// The planner's analytical estimate of one training step (PLANNER.md, "Estimate"): the pieces
// the hybrid graph is built from (their roofline compute, TP/CP byte counts, gradient and weight
// bytes; a CNN's per-piece collectives and halo exchanges), the pipeline's closed-form bubble
// and alpha-beta ring collectives on the platform's two path classes (network_model.h). No
// SimGrid; a few microseconds per configuration.
#ifndef DTSIM_SIM_PLANNER_ESTIMATE_H_
#define DTSIM_SIM_PLANNER_ESTIMATE_H_

#include <string>

#include "sim/planner/network_model.h"
#include "sim/strategies/hybrid.h"

namespace dtsim::sim {

// Seconds of one step, by term; iteration_sec is the sum of the terms after compute_sec.
struct Estimate {
  double iteration_sec = 0;
  // On the slowest device (the largest compute + TP + CP per micro-batch), times m:
  double compute_sec = 0;  // forward, backward and recomputation
  double tp_sec = 0;       // blocking TP collectives
  double cp_sec = 0;       // ring-attention transfers not hidden by the attention's compute
  double halo_sec = 0;     // a CNN's spatial split: halo exchanges with the grid neighbours
  double spatial_sec = 0;  // a CNN's spatial split: its collectives (statistics, gathers)
  double bubble_sec = 0;   // the pipeline's fill and drain
  double pp_sec = 0;       // activation and gradient transfers along the fill and drain
  double dp_sec = 0;       // gradient reduction (and ZeRO gathers) not hidden by the backward
  double optimizer_sec = 0;
  // "compute" when the terms other than compute_sec are under kComputeBoundFraction of the
  // step, else the largest of them: "tp", "cp", "halo", "spatial", "bubble", "pp", "dp" or
  // "optimizer". A CNN's filter or channel collectives count as "tp".
  std::string limiter;
  bool operator==(const Estimate&) const = default;
};

inline constexpr double kComputeBoundFraction = 0.10;

// The step of `job` on `model` over `net`. REQUIRES: check_hybrid(model, job) is empty,
// job.degrees.ranks() <= net.hosts.
[[nodiscard]] Estimate estimate_step(const HybridModel& model, const HybridJob& job,
                                     const PlannerNetwork& net);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_PLANNER_ESTIMATE_H_
