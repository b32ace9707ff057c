// Where a rank's compute stream waits in one iteration, and for what: the communication whose
// end let each compute node start. It splits exposed communication by kind (tensor, context,
// expert, pipeline, data parallelism) from the replay itself, no formula.
#ifndef DTSIM_SIM_REPORT_EXPOSURE_H_
#define DTSIM_SIM_REPORT_EXPOSURE_H_

#include <map>
#include <string>
#include <string_view>

#include "sim/graph/execution_graph.h"
#include "sim/lowering/lowering.h"
#include "sim/replay/replay.h"

namespace dtsim::sim {

// The kind of communication on communicator `name`: its name up to the first '.', with the
// pipeline's pair communicators ("pp_act", "pp_grad") as "pp" and gradient and parameter
// traffic ("dp_gather", "edp", "emb": tied embeddings) as "dp", and a CNN's halo exchanges
// ("halo_h+", "halo_w-", ...) as "halo".
[[nodiscard]] std::string communication_kind(std::string_view name);

struct RankExposure {
  int rank = 0;
  double compute_sec = 0;  // its compute nodes' durations in the iteration
  // Per kind: the time its compute stream waited for communication of that kind (a compute node
  // started after the previous one ended, because a dependency of that kind ended later). A
  // communication node that itself waited for another of the rank's communication nodes passes
  // that part of the wait on to it (a TP gather behind a pipeline receive: "pp").
  std::map<std::string, double> waiting_sec;
  // The rest of the iteration: waiting with no communication of its own to blame (a pipeline
  // stage that finished before the others, a rank waiting at the iteration's end).
  double idle_sec = 0;
};

// `rank`'s exposure in iteration `iteration`, which ran from start_sec to end_sec (absolute
// simulated times). REQUIRES: `rank` stands for itself in `lowered`.
[[nodiscard]] RankExposure measure_exposure(const ExecutionGraph& graph,
                                            const LoweredGraph& lowered, const ReplayTimes& times,
                                            int rank, std::int32_t iteration, double start_sec,
                                            double end_sec);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_REPORT_EXPOSURE_H_
