// Lowering: an execution graph becomes the task graph SimGrid replays. Each collective is
// expanded into its algorithm's schedule of transfers (chosen per op, communicator and bytes),
// each matched send/recv pair into one transfer, and each run of consecutive compute nodes into
// one compute task; ranks fold where the symmetry pass (fold.h) allows, and a folded rank's
// communication that releases no representative (a shadow) is recorded for check_fold.
//
// Compute. Consecutive compute nodes of a rank merge into one task while they share iteration,
// micro-batch and phase, no other node depends on an earlier one of them, and none but the first
// has dependencies: durations add (in program order, times the rank's compute factor), so the
// replay is the same with fewer tasks.
//
// Streams. A rank's compute tasks share its compute lane; its collectives on communicator c enter
// one after another (the previous one's exits are dependencies of the next one's entry); transfers
// run on per-(communicator, src, dst, channel) lanes, so two communicators' traffic between the
// same ranks is independent, as NCCL's connections are.
//
// Order. Tasks are added in rounds: every rank in turn runs each of its streams ahead until the
// stream reaches a communication (it waits there for the other members), a node whose
// dependencies are not lowered yet, or a node of a later iteration; then the communications all
// of whose members arrived are added; when nothing moves, the next iteration begins. A
// deterministic topological order (and the order the data-parallel builder always used).
#ifndef DTSIM_SIM_LOWERING_LOWERING_H_
#define DTSIM_SIM_LOWERING_LOWERING_H_

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "sim/collectives/collective_choice.h"
#include "sim/config_error.h"
#include "sim/graph/execution_graph.h"
#include "sim/lowering/fold.h"
#include "sim/lowering/task_graph.h"

namespace dtsim::sim {

// The algorithm and schedule of one collective: `request` on local ranks 0..size-1 of `comm`.
// Called once per distinct (communicator, op, bytes, root), in the order lowering meets them;
// the choice must outlive the call to lower() (a chooser keeps what it chose: schedules can be
// large, and lowering copies none).
using ChooseCollective = std::function<const CollectiveChoice&(const CollectiveRequest& request,
                                                               const Communicator& comm)>;

struct LoweringOptions {
  std::vector<double> compute_factor;  // per rank: compute takes this many times (empty: 1)
  FoldMode fold = FoldMode::kOff;      // fold symmetric ranks (fold.h)
  bool memoize = false;                // and memoize repeats, where fold.h allows
  RouteLinks route_links;              // with memoize: memoize on private links too (fold.h)
  RouteShape route_shape;              // verified classes share their routes' shapes (fold.h)
  std::vector<int> rank_nodes;         // per rank: its node, for FoldMode::kNode (empty: one)
  double max_tasks = 5e7;              // refuse bigger task graphs (TaskLimitError)
};

// A task graph of more tasks than LoweringOptions::max_tasks (about 150 bytes a task); its
// message names the flag that sets the bound, --max-tasks.
class TaskLimitError : public ConfigError {
 public:
  TaskLimitError(double tasks, double limit);
  double tasks;
};

// Where one node of a rank ended up.
struct NodeTasks {
  TaskId task = -1;            // compute: the task running it; send, recv: the transfer
  std::int32_t instance = -1;  // collective: index into LoweredGraph::instances
};

// Where a program's compute nodes sit in their tasks: the same for every rank running it.
struct ProgramTasks {
  std::vector<double> offset_sec;       // per node: its start within the task, healthy device
  std::vector<std::uint8_t> ends_task;  // per node: 1 for a task's last node
};

// One collective as all its members run it.
struct CollectiveInstance {
  std::int32_t communicator = 0;
  std::int32_t iteration = 0;
  std::int32_t choice = 0;  // index into LoweredGraph::choices
  CollectiveOp op = CollectiveOp::kAllReduce;
  std::uint64_t bytes = 0;
  TaskId first = 0;  // tasks [first, end) implement it
  TaskId end = 0;
  // Per local rank, the tasks after which it is done; a single entry when all members share it.
  std::vector<std::vector<TaskId>> exits;
  std::int32_t repeats = -1;  // a memoized wait: the instance whose replay it repeats

  [[nodiscard]] const std::vector<TaskId>& exits_of(int local) const {
    return exits.size() == 1 ? exits.front() : exits[static_cast<std::size_t>(local)];
  }
};

// A folded rank's communication that releases no representative: after the replay, `exits`
// must end when node `node` of the rank's representative does (check_fold).
struct FoldCheck {
  int rank = 0;
  std::int32_t node = 0;
  std::vector<TaskId> exits;
};

// Repeats of a shadow collective left out of the task graph (fold.h): `count` more like
// `instance` in iteration `iteration`.
struct LeftOutRepeats {
  std::int32_t iteration = 0;
  std::int32_t instance = 0;
  int count = 0;
};

// One matched send and receive.
struct P2pTransfer {
  std::int32_t iteration = 0;
  TaskId task = 0;
};

struct LoweredGraph {
  TaskGraph tasks;
  std::vector<int> stands_for;                // per rank: whose tasks are its tasks
  std::vector<std::vector<NodeTasks>> nodes;  // [rank][node], for ranks standing for themselves
  std::vector<CollectiveInstance> instances;  // in the order they were added
  std::vector<P2pTransfer> transfers;         // in the order they were added
  std::vector<FoldCheck> fold_checks;
  std::vector<LeftOutRepeats> left_out;
  std::vector<CollectiveChoice> choices;  // in call order of ChooseCollective (no schedules)
  std::vector<ProgramTasks> programs;     // per program of the graph
  std::vector<double> compute_factor;     // per rank (empty: 1), as LoweringOptions'
  bool ranks_folded = false;
  int memoized = 0;  // instances that are memoized waits
  int shadows = 0;   // instances and transfers of folded ranks that release no representative

  [[nodiscard]] double factor(int rank) const {
    return compute_factor.empty() ? 1.0 : compute_factor[static_cast<std::size_t>(rank)];
  }

  [[nodiscard]] const NodeTasks& node(int rank, std::int32_t node) const {
    return nodes[static_cast<std::size_t>(stands_for[static_cast<std::size_t>(rank)])]
                [static_cast<std::size_t>(node)];
  }
};

// Lowers `graph`. Throws what `choose` throws (an algorithm that cannot run a collective) and
// TaskLimitError. REQUIRES: `graph` is valid (validate_execution_graph).
[[nodiscard]] LoweredGraph lower(const ExecutionGraph& graph, const LoweringOptions& options,
                                 const ChooseCollective& choose);

// The tasks lower() would add, without adding them (choose is called as by lower).
[[nodiscard]] double count_lowered_tasks(const ExecutionGraph& graph,
                                         const LoweringOptions& options,
                                         const ChooseCollective& choose);

// The communication of iteration `iteration`: its collectives (indices into
// lowered.instances, each once) and its send/recv transfers (task ids), in the order added; and
// how many more times collectives of it ran as repeats left out of the task graph.
struct IterationCommunication {
  std::set<std::int32_t> instances;
  std::set<TaskId> transfers;
  std::map<std::int32_t, int> left_out;  // instance -> repeats like it left out
};
[[nodiscard]] IterationCommunication iteration_communication(const ExecutionGraph& graph,
                                                             const LoweredGraph& lowered,
                                                             std::int32_t iteration);

// Simulated start and end of node `node` of `rank` (a compute node, send or recv) of `graph`,
// lowered as `lowered`; and a compute node's duration there (times the rank's compute factor).
[[nodiscard]] double node_start_sec(const ExecutionGraph& graph, const LoweredGraph& lowered,
                                    const ReplayTimes& times, int rank, std::int32_t node);
[[nodiscard]] double node_end_sec(const ExecutionGraph& graph, const LoweredGraph& lowered,
                                  const ReplayTimes& times, int rank, std::int32_t node);
[[nodiscard]] double node_duration_sec(const ExecutionGraph& graph, const LoweredGraph& lowered,
                                       int rank, std::int32_t node);

// Whether a verified fold held: every FoldCheck's exits ended within `tolerance_sec` of its
// representative's (fold.h). `mismatch` names the first that did not, empty if none.
struct FoldVerdict {
  std::size_t checked = 0;
  double max_difference_sec = 0;
  std::string mismatch;
};
[[nodiscard]] FoldVerdict check_fold(const ExecutionGraph& graph, const LoweredGraph& lowered,
                                     const ReplayTimes& times, double tolerance_sec);

// The same while the replay runs: compares only the checks whose tasks have all ended
// (ReplayTimes::ended) and that `compared` (one flag per FoldCheck, kept from call to call,
// all 0 at first) does not mark yet, and marks them. `checked` counts this call's.
[[nodiscard]] FoldVerdict check_fold_so_far(const ExecutionGraph& graph,
                                            const LoweredGraph& lowered, const ReplayTimes& times,
                                            double tolerance_sec,
                                            std::vector<std::uint8_t>& compared);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_LOWERING_LOWERING_H_
