// The times a report gives, read from a replayed execution graph: iteration ends, compute per
// phase, and each collective of the last iteration, all from the nodes' tags.
#ifndef DTSIM_SIM_REPORT_MEASURE_H_
#define DTSIM_SIM_REPORT_MEASURE_H_

#include <cstdint>
#include <vector>

#include "sim/graph/execution_graph.h"
#include "sim/lowering/lowering.h"
#include "sim/replay/replay.h"

namespace dtsim::sim {

// Timing of the steady-state (last simulated) iteration of a training graph. Times of day are
// relative to the iteration's start: the moment the previous iteration's last node ended.
struct TrainingTimes {
  // Last iteration end - previous iteration end; iteration k ends when every node of an
  // iteration <= k has (for training graphs: its last optimizer step).
  double iteration_time_sec = 0;
  double backward_end_sec = 0;            // last rank's last backward node done
  std::vector<double> iteration_end_sec;  // absolute simulated time at which each iteration ended
  // Rank 0's compute in the last iteration, on a healthy device: per phase, summed in layer order.
  double forward_sec = 0;    // the last micro-batch's forward (and recompute) nodes
  double backward_sec = 0;   // and backward nodes
  double optimizer_sec = 0;  // the optimizer nodes
  double compute_sec = 0;    // every micro-batch's forward + backward, then the optimizer
  int micro_batches = 1;
  // Rank 0's collectives of the last iteration, in program order.
  struct CollectiveTimes {
    std::int32_t node = 0;      // in rank 0's program
    std::int32_t instance = 0;  // in LoweredGraph::instances
    double ready_sec = 0;       // last rank's backward node of the collective's first layer ended
    double start_sec = 0;       // first task of the collective started
    double end_sec = 0;         // last task of the collective ended
  };
  std::vector<CollectiveTimes> collectives;
};

// When node `i` of `rank` ended there: a compute node or a transfer when it ended, a collective
// when `rank` left it (its last task there). REQUIRES: `rank` stands for itself in `lowered`.
[[nodiscard]] double node_exit_sec(const ExecutionGraph& graph, const LoweredGraph& lowered,
                                   const ReplayTimes& times, const LocalRanks& local, int rank,
                                   std::int32_t i);

// Reads the times of `graph`'s nodes, lowered as `lowered`, from `times`.
// REQUIRES: `graph` has a node, and its iterations are numbered 0, 1, ... without a gap.
[[nodiscard]] TrainingTimes measure_training(const ExecutionGraph& graph,
                                             const LoweredGraph& lowered, const ReplayTimes& times);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_REPORT_MEASURE_H_
