// Symmetry folding: the one optional pass that lets thousands of identical ranks be replayed as
// few. Ranks of a *class* run one program at the same speed, and only the class's lowest rank,
// its representative, gets compute tasks: they stand for every member's. Communication is never
// folded away: every member's collectives and transfers run their whole schedule in SimGrid,
// entered when the representative's compute says, contending with all other traffic.
//
// Exact classes (FoldMode::kExact). If every collective of the class's program runs on a
// communicator whose members are exactly the class, its schedule releases all of them after the
// same operations, and the program has no send or receive, then by induction over the tasks
// every member's compute starts and ends when the representative's does: members enter each
// collective together and leave it together.
//
// Verified classes (FoldMode::kVerified). Ranks with the same program, speed and communicator
// sizes form a class even where their communicators differ (the ranks of one pipeline stage:
// each in its own tensor- and data-parallel group, each sending to its own peer), provided
// their sends, receives and collective transfers take routes of the same shapes (latency, and
// each link's bandwidth in order: on a fat-tree of several levels a stage's ranks whose pipeline
// peer shares their leaf switch and those whose peer does not form two classes, whose transfers
// could not end together), and, split until it holds, that they receive from ranks of one class
// and their collectives' communicators hold ranks of the same classes (fold_classes.h). A member's
// communication whose communicator holds none of the representatives it would release is a
// *shadow*: entered when the representatives' compute says, its exits release nothing, and
// lowering records them (LoweredGraph::fold_checks). While the replay runs (check_fold_so_far) and
// after it (check_fold), each is compared with the representative's exit from the same node: if all
// are equal, the folded replay ran the same transfers at the same times as the unfolded one would
// (by induction over time: every member's compute started when its own communication ended, which
// is when the representative's did), so its times are every rank's. If one differs, the fold did
// not hold and the caller stops the replay there and replays again without it. Classes whose
// collectives' schedules do not release every rank together are not formed: their members' exits
// differ by construction.
//
// Memoization, under stronger preconditions, turns a repeat of a collective into a wait as long
// as its first replay:
//  - globally, when one exact class holds every rank and its collectives all run on one
//    communicator stream: each then runs on an otherwise idle network (compute uses none);
//  - per communicator, for a collective whose members all stand for one representative, when
//    the links its transfers cross carry no other communicator's (`private_links`): its
//    collectives never overlap each other (they enter one after another, and all members leave
//    together), so each runs on idle links of its own. A shadow's repeat is then left out
//    altogether: its first replay matched the representative's (checked), and both repeat
//    their first replay's time from the same entry.
// Background traffic (a perturbation) breaks "idle": the caller then disallows memoizing.
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

// kNode: verified classes whose ranks share a node (LoweringOptions::rank_nodes): where traffic
// loads the fabric unevenly, their communication still matches (one node's GPUs share its NIC
// and see the same contention beyond it), where a stage-wide class's may not.
enum class FoldMode { kOff, kExact, kVerified, kNode };

struct FoldPlan {
  std::vector<int> stands_for;  // per rank: the rank whose tasks it shares (itself if unfolded)
  // Per representative: the ranks it stands for, ascending (itself first); empty for others.
  std::vector<std::vector<int>> members;
  bool memoize = false;  // repeated collectives become waits (see above)
  // Per communicator: 1 if the links its transfers cross carry no other communicator's (empty:
  // unknown, none is).
  std::vector<std::uint8_t> private_links;

  [[nodiscard]] bool folded() const;
  [[nodiscard]] bool is_private(std::int32_t comm) const {
    return !private_links.empty() && private_links[static_cast<std::size_t>(comm)] != 0;
  }
};

// Whether every rank of `schedule` exits after the same operations (a collapsed ring's common
// tail, a collapsed tree's final wait); a step-level ring or a chunked tree does not.
[[nodiscard]] bool ranks_exit_together(const Schedule& schedule);

// The schedule the collective `node` of `rank`'s program would run (on rank's communicator).
using ScheduleOf = std::function<const Schedule&(int rank, std::int32_t node)>;
// The ids of the links of the route from global rank `src` to `dst`.
using RouteLinks = std::function<std::vector<int>(int src, int dst)>;
// The shape of that route: its latency in seconds, then each link's bandwidth in bytes/s, in
// order.
using RouteShape = std::function<std::vector<double>(int src, int dst)>;

// What plan_fold knows of the platform. `compute_factor[r]` scales rank r's compute (a slow GPU;
// empty: 1 for all); `rank_nodes[r]` is rank r's node (kNode; empty: one node); `route_shape`
// separates verified classes by their transfers' routes (sends, receives, collectives'; unset:
// all alike); with
// `route_links`, communicators whose links are private are marked (and memoized where they
// fold).
struct FoldPlatform {
  std::span<const double> compute_factor;
  std::span<const int> rank_nodes;
  RouteShape route_shape;
  RouteLinks route_links;
};

// Which ranks fold under `mode`, checking the preconditions above.
// REQUIRES: `graph` is valid (validate_execution_graph).
[[nodiscard]] FoldPlan plan_fold(const ExecutionGraph& graph, const FoldPlatform& platform,
                                 FoldMode mode, bool allow_memoize, const ScheduleOf& schedule_of);

// One communicator that members of a class use in one role.
struct ClassComm {
  std::int32_t comm = 0;
  bool single = false;       // all its members are in the class: one folded instance
  std::vector<int> members;  // the class's members in it, ascending
};

// Per role of the program of representative `rep`: the communicators its class's members use,
// the representative's own first.
[[nodiscard]] std::vector<std::vector<ClassComm>> class_comms(const ExecutionGraph& graph,
                                                              const FoldPlan& plan, int rep);

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
