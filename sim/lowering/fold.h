// Symmetry folding: the one optional pass that lets thousands of identical ranks be replayed as
// one. Ranks of a *class* run one program with the same communicators and compute at the same
// speed; if every collective of that program runs on a communicator whose members are exactly
// the class, and its schedule releases all of them after the same operations, then by induction
// over the tasks every member's compute starts and ends when the representative's (the class's
// lowest rank) does: members enter each collective together and leave it together. So only the
// representative's compute tasks are built, and they stand for every member's. Collectives of a
// folded class still run their whole schedule in SimGrid, every transfer contending with all
// other traffic: only compute streams are shared.
//
// Memoization goes further, under a stronger precondition: when one folded class holds every
// rank and its collectives all run on one communicator stream (so they never overlap), each
// collective runs on an otherwise idle network (compute uses none), so two collectives of the
// same op, bytes and root take the same time whenever they run: only the first is replayed,
// later ones wait as long as it took, from the moment the class entered. Background traffic
// (a perturbation) breaks "idle": the caller then disallows memoizing.
//
// Nothing outside this pass and lowering knows that folding exists: reports read a rank's times
// through LoweredGraph::stands_for.
#ifndef DTSIM_SIM_LOWERING_FOLD_H_
#define DTSIM_SIM_LOWERING_FOLD_H_

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "sim/collectives/schedule.h"
#include "sim/graph/execution_graph.h"
#include "sim/lowering/task_graph.h"

namespace dtsim::sim {

struct FoldPlan {
  std::vector<int> stands_for;  // per rank: the rank whose tasks it shares (itself if unfolded)
  bool memoize = false;         // repeated collectives become waits (see above)

  [[nodiscard]] bool folded() const;
};

// Whether every rank of `schedule` exits after the same operations (a collapsed ring's common
// tail, a collapsed tree's final wait); a step-level ring or a chunked tree does not.
[[nodiscard]] bool ranks_exit_together(const Schedule& schedule);

// Which ranks fold, checking the preconditions above. `compute_factor[r]` scales rank r's compute
// (a slow GPU; empty: 1 for all); `schedule_of(rank, node)` is the schedule the collective `node`
// of `rank`'s program would run. With fold false, every rank stands for itself.
// REQUIRES: `graph` is valid (validate_execution_graph).
[[nodiscard]] FoldPlan plan_fold(
    const ExecutionGraph& graph, std::span<const double> compute_factor, bool fold,
    bool allow_memoize,
    const std::function<const Schedule&(int rank, std::int32_t node)>& schedule_of);

// A collective of a folded class in the task graph: a join of the representative `rank`'s
// `entry` on its stream of `comm`, then either the whole schedule (every member entering at the
// join) and a join of its exits, or, with `repeat` (the tasks of an earlier replay of the same
// collective), one memoized wait as long as that replay. Every member exits at the returned
// tasks' last one.
struct FoldedTasks {
  TaskId first = 0;  // tasks [first, end)
  TaskId end = 0;
  TaskId exit = 0;
};
[[nodiscard]] FoldedTasks add_folded_collective(TaskGraph& graph, const Schedule& schedule,
                                                int rank, int comm, std::span<const int> members,
                                                const std::vector<TaskId>& entry,
                                                const FoldedTasks* repeat);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_LOWERING_FOLD_H_
