// Replaying an execution graph that a verb built or read, shared by `simulate --graph` and the
// hybrid-parallel run (internal to sim/run).
#ifndef DTSIM_SIM_RUN_GRAPH_RUN_H_
#define DTSIM_SIM_RUN_GRAPH_RUN_H_

#include <functional>
#include <string>

#include "sim/graph/execution_graph.h"
#include "sim/lowering/lowering.h"
#include "sim/replay/replay.h"
#include "sim/report/measure.h"
#include "sim/report/report.h"
#include "sim/run/simulation.h"

namespace dtsim::sim {

// Called after the replay with what it produced, for measurements beyond GraphReport's.
using ReplayObserver = std::function<void(const ExecutionGraph&, const LoweredGraph&,
                                          const ReplayTimes&, const TrainingTimes&)>;

// Validates `run` against the platform, replays `graph` (run.ranks == graph.rank_count()) and
// reports it; `origin` names the graph in errors and the report (a file, or what built it).
// Fills `outputs` if given (moving the graph there if asked). Throws ConfigError or
// platforms::PlatformError before the simulation starts.
[[nodiscard]] GraphReport replay_graph(ExecutionGraph& graph, const RunOptions& run,
                                       const std::string& origin, SimulateOutputs* outputs,
                                       const ReplayObserver& observe);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_RUN_GRAPH_RUN_H_
