// The per-rank task graph of one or more training iterations: compute tasks, transfers and
// waits, with dependencies and the lane (stream or channel) each runs on. Built by lowering an
// execution graph (sim/lowering/lowering.h), executed by replay.h. No SimGrid here.
#ifndef DTSIM_SIM_LOWERING_TASK_GRAPH_H_
#define DTSIM_SIM_LOWERING_TASK_GRAPH_H_

#include <cstdint>
#include <map>
#include <span>
#include <tuple>
#include <utility>
#include <vector>

#include "sim/collectives/schedule.h"
#include "sim/invariant.h"

namespace dtsim::sim {

using TaskId = int;

enum class TaskKind { kCompute, kTransfer, kWait };

struct Task {
  TaskKind kind = TaskKind::kCompute;
  int rank = 0;             // compute: the rank; transfer: the sender
  int peer = 0;             // transfer: the receiver
  std::uint64_t bytes = 0;  // transfer
  double duration_sec = 0;  // compute and wait
  int lane = 0;
  // A memoized wait: it lasts end(memo_to) - end(memo_from), both tasks finished before it
  // starts (see add_memo_wait). -1: a plain wait of duration_sec.
  TaskId memo_from = -1;
  TaskId memo_to = -1;
  int dep_begin = 0;  // deps are TaskGraph::deps()[dep_begin, dep_end)
  int dep_end = 0;
};

// A lane runs its tasks one after another, in the order they were added: a rank's compute
// stream, one (src, dst) network channel, or a private lane for one wait (a wait its owner
// can leave the collective without; the others queue on the owner's stream).
struct Lane {
  int rank = 0;  // where the lane's actor lives
  std::vector<TaskId> tasks;
};

// The per-rank entry and exit tasks of one collective, as the builder sees it.
struct CollectiveTasks {
  TaskId first = 0;  // tasks [first, end) implement the collective
  TaskId end = 0;
  std::vector<std::vector<TaskId>> exits;  // per rank: the rank is done once these are
  bool memoized = false;  // a wait repeating an identical earlier collective (no transfers)
};

// Simulated start and end time of every task, indexed by TaskId, in seconds (what the replay
// measures: sim/replay/replay.h).
struct ReplayTimes {
  std::vector<double> start_sec;
  std::vector<double> end_sec;
  std::vector<std::uint8_t> ended;  // per task: 1 once it ended
  bool stopped = false;             // a ReplayWatch stopped the replay before every task ended
};

class TaskGraph {
 public:
  // A compute task on `rank`'s compute stream.
  // REQUIRES: every dep was added before (tasks are added in a topological order).
  TaskId add_compute(int rank, double duration_sec, std::span<const TaskId> deps);

  // A wait of `duration_sec` on `rank`'s stream of communicator `comm` (one lane per rank and
  // communicator, in order).
  TaskId add_stream_wait(int rank, double duration_sec, std::span<const TaskId> deps, int comm = 0);

  // A wait on `rank`'s stream of `comm` lasting end(to) - end(from): a repeat of the work
  // between those two tasks, on the same idle resources. `to` (hence `from`) is made a dependency.
  TaskId add_memo_wait(int rank, TaskId from, TaskId to, std::span<const TaskId> deps,
                       int comm = 0);

  // Adds the operations of `schedule`, a collective of communicator `comm` whose local rank i
  // is global rank global_ranks[i] (empty: the identity). Local rank i enters the collective once
  // entry[i] have finished. Transfers go to the channel lanes of (comm, src, dst, channel), after
  // what is already queued there. A rank that takes part in no operation exits as soon as it
  // enters. REQUIRES: entry.size() == schedule.ranks, and so does global_ranks unless empty.
  CollectiveTasks add_schedule(const Schedule& schedule,
                               const std::vector<std::vector<TaskId>>& entry,
                               std::span<const int> global_ranks = {}, int comm = 0);

  // A transfer of `bytes` from global rank `src` to `dst` on communicator `comm`'s (src, dst)
  // channel (a send matched with its receive).
  TaskId add_transfer(int src, int dst, std::uint64_t bytes, std::span<const TaskId> deps,
                      int comm);

  [[nodiscard]] const std::vector<Task>& tasks() const { return tasks_; }
  [[nodiscard]] const std::vector<Lane>& lanes() const { return lanes_; }
  [[nodiscard]] std::span<const TaskId> deps(const Task& task) const {
    return {deps_.data() + task.dep_begin, deps_.data() + task.dep_end};
  }

 private:
  TaskId add_task(Task task, int lane, std::span<const TaskId> deps);
  int compute_lane(int rank);
  int stream_lane(int rank, int comm);
  int channel_lane(int comm, int src, int dst, int channel);
  int new_lane(int rank);

  std::vector<Task> tasks_;
  std::vector<TaskId> deps_;
  std::vector<Lane> lanes_;
  std::map<int, int> compute_lanes_;                             // rank -> lane
  std::map<std::pair<int, int>, int> stream_lanes_;              // (rank, comm) -> lane
  std::map<std::tuple<int, int, int, int>, int> channel_lanes_;  // (comm, src, dst, channel)
};

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_LOWERING_TASK_GRAPH_H_
