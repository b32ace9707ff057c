// The simulated timeline of a run as a Chrome / Perfetto trace (`--timeline`): open it in
// https://ui.perfetto.dev or chrome://tracing. Read from the execution graph's tags.
//
// Format (the Trace Event Format's JSON object form): {"traceEvents": [...],
// "displayTimeUnit": "ms"}. Each shown rank is a process (pid = rank, named "rank R") with a
// thread per stream: tid 0 "compute", then one per communicator the rank uses, in the order of
// the graph's communicators ("communication" when there is one, else "comm NAME"). Slices are
// complete events ("ph": "X") with "ts" and "dur" in microseconds of simulated time since the
// start of the run, both multiples of 2^-10 us (about 1 ns), so that ts + dur is exact and a
// slice that ends where the next starts never overlaps it:
//   - compute: one slice per compute node: "<phase> <layer>" (e.g. "forward conv1",
//     "backward conv1"), or the phase alone without a layer ("optimizer"); args: iteration,
//     micro_batch, layer;
//   - communication: one slice per collective ("<op> <label>", e.g. "all-reduce bucket 3", or
//     "<op> on <communicator>" without a label), from the rank's first operation of it to its
//     exit from it, and one per send or receive ("send to R", "recv from R"); args: iteration,
//     bytes, algorithm (collectives), communicator.
// Metadata events ("ph": "M") name the processes and threads.
#ifndef DTSIM_SIM_REPORT_TIMELINE_H_
#define DTSIM_SIM_REPORT_TIMELINE_H_

#include <vector>

#include <nlohmann/json.hpp>

#include "sim/graph/execution_graph.h"
#include "sim/lowering/lowering.h"
#include "sim/replay/replay.h"

namespace dtsim::sim {

// At most this many ranks are shown; more would make the trace unwieldy.
inline constexpr int kTimelineMaxRanks = 16;

// The ranks a timeline shows: all of them up to kTimelineMaxRanks, otherwise kTimelineMaxRanks
// ranks evenly spaced from the first to the last: floor(i * (ranks - 1) / (kTimelineMaxRanks -
// 1)) for i = 0 .. kTimelineMaxRanks - 1 (distinct, ascending). REQUIRES: ranks >= 1.
[[nodiscard]] std::vector<int> timeline_ranks(int ranks);

// The trace of every node of `graph` (lowered as `lowered`, timed by `times`) on the ranks that
// timeline_ranks(graph.rank_count()) selects. Deterministic: events in rank, track, node order.
[[nodiscard]] nlohmann::ordered_json timeline_json(const ExecutionGraph& graph,
                                                   const LoweredGraph& lowered,
                                                   const ReplayTimes& times);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_REPORT_TIMELINE_H_
