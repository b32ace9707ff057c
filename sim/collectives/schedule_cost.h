// Time estimates of a schedule without SimGrid: the alpha-beta critical path, and the cost model
// `--algorithm auto` ranks candidates by.
#ifndef DTSIM_SIM_COLLECTIVES_SCHEDULE_COST_H_
#define DTSIM_SIM_COLLECTIVES_SCHEDULE_COST_H_

#include <cstdint>

#include "sim/collectives/collective_algorithm.h"

namespace dtsim::sim {

// The finish time of `schedule` if every transfer took latency(src, dst) + bytes / b(src, dst)
// alone (b: the route's narrowest link), in dependency and channel order, all ranks entering at
// 0 (waits take their wait_sec). Exact on an alpha-beta network where no two concurrent
// transfers share a link (ring, butterflies, hierarchical rings on a star); an underestimate
// where they do.
[[nodiscard]] double critical_path_sec(const Schedule& schedule, const TopologyHints& hints);

struct ScheduleShape {
  int steps = 0;                // transfers on the longest dependency/channel chain
  double max_latency_sec = 0;   // longest route any transfer takes
  double busiest_link_sec = 0;  // max over links of (bytes routed through it / its bandwidth)
  double waits_sec = 0;         // sum of the waits
};

[[nodiscard]] ScheduleShape schedule_shape(const Schedule& schedule, const TopologyHints& hints);

// The cost model of `--algorithm auto`:
// max(critical path, steps * alpha_max + waits + busiest link's bytes / bandwidth).
// The second term charges what the critical path misses: transfers sharing a link (direct,
// trees, a node's NIC). NCCL's tuner uses the same latency-steps-plus-bus-bytes form.
[[nodiscard]] double estimate_sec(const Schedule& schedule, const TopologyHints& hints);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_COLLECTIVES_SCHEDULE_COST_H_
