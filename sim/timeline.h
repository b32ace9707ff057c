// The simulated timeline of a data-parallel run as a Chrome / Perfetto trace (`--timeline`):
// open it in https://ui.perfetto.dev or chrome://tracing.
//
// Format (the Trace Event Format's JSON object form): {"traceEvents": [...],
// "displayTimeUnit": "ms"}. Each shown rank is a process (pid = rank, named "rank R") with two
// threads: tid 0 "compute" and tid 1 "communication". Slices are complete events ("ph": "X")
// with "ts" and "dur" in microseconds of simulated time since the start of the run:
//   - compute: one slice per layer's forward ("forward <layer>") and backward
//     ("backward <layer>"), and "optimizer"; args: iteration, layer, param_bytes;
//   - communication: one slice per bucket's all-reduce on that rank ("all-reduce bucket B"),
//     from the rank's first operation of it to the rank's exit from it; args: iteration, bucket,
//     bytes, algorithm.
// Metadata events ("ph": "M") name the processes and threads.
#ifndef DTSIM_SIM_TIMELINE_H_
#define DTSIM_SIM_TIMELINE_H_

#include <vector>

#include <nlohmann/json.hpp>

#include "sim/data_parallel.h"
#include "sim/replay.h"
#include "workloads/trace.h"

namespace dtsim::sim {

// At most this many ranks are shown; more would make the trace unwieldy.
inline constexpr int kTimelineMaxRanks = 16;

// The ranks a timeline shows: all of them up to kTimelineMaxRanks, otherwise kTimelineMaxRanks
// ranks evenly spaced from the first to the last: floor(i * (ranks - 1) / (kTimelineMaxRanks -
// 1)) for i = 0 .. kTimelineMaxRanks - 1 (distinct, ascending). REQUIRES: ranks >= 1.
[[nodiscard]] std::vector<int> timeline_ranks(int ranks);

// The trace of every simulated iteration of `dp` (timed by `times`) on the ranks that
// timeline_ranks(ranks) selects. Deterministic: events in rank, track, time order.
[[nodiscard]] nlohmann::ordered_json timeline_json(const workloads::Workload& workload,
                                                   const DataParallelGraph& dp,
                                                   const ReplayTimes& times, int ranks);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_TIMELINE_H_
