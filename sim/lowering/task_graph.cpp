#include "sim/lowering/task_graph.h"

#include <algorithm>
#include <map>
#include <vector>

namespace dtsim::sim {

TaskId TaskGraph::add_task(Task task, int lane, std::span<const TaskId> deps) {
  const TaskId id = static_cast<TaskId>(tasks_.size());
  task.lane = lane;
  task.dep_begin = static_cast<int>(deps_.size());
  for (TaskId d : deps) {
    DTSIM_CHECK(d >= 0 && d < id, "dependencies are added before their dependents");
    deps_.push_back(d);
  }
  task.dep_end = static_cast<int>(deps_.size());
  tasks_.push_back(task);
  lanes_[static_cast<std::size_t>(lane)].tasks.push_back(id);
  return id;
}

int TaskGraph::new_lane(int rank) {
  lanes_.push_back(Lane{.rank = rank});
  return static_cast<int>(lanes_.size()) - 1;
}

int TaskGraph::compute_lane(int rank) {
  auto [it, inserted] = compute_lanes_.emplace(rank, 0);
  if (inserted) {
    it->second = new_lane(rank);
  }
  return it->second;
}

int TaskGraph::stream_lane(int rank, int comm) {
  auto [it, inserted] = stream_lanes_.emplace(std::make_pair(rank, comm), 0);
  if (inserted) {
    it->second = new_lane(rank);
  }
  return it->second;
}

TaskId TaskGraph::add_stream_wait(int rank, double duration_sec, std::span<const TaskId> deps,
                                  int comm) {
  return add_task(Task{.kind = TaskKind::kWait, .rank = rank, .duration_sec = duration_sec},
                  stream_lane(rank, comm), deps);
}

TaskId TaskGraph::add_memo_wait(int rank, TaskId from, TaskId to, std::span<const TaskId> deps,
                                int comm) {
  DTSIM_CHECK(from <= to, "a memoized span ends after it starts");
  std::vector<TaskId> all(deps.begin(), deps.end());
  all.push_back(to);
  return add_task(Task{.kind = TaskKind::kWait, .rank = rank, .memo_from = from, .memo_to = to},
                  stream_lane(rank, comm), all);
}

TaskId TaskGraph::add_transfer(int src, int dst, std::uint64_t bytes, std::span<const TaskId> deps,
                               int comm) {
  return add_task(Task{.kind = TaskKind::kTransfer, .rank = src, .peer = dst, .bytes = bytes},
                  channel_lane(comm, src, dst, 0), deps);
}

int TaskGraph::channel_lane(int comm, int src, int dst, int channel) {
  auto [it, inserted] = channel_lanes_.emplace(std::make_tuple(comm, src, dst, channel), 0);
  if (inserted) {
    it->second = new_lane(src);
  }
  return it->second;
}

TaskId TaskGraph::add_compute(int rank, double duration_sec, std::span<const TaskId> deps) {
  return add_task(Task{.kind = TaskKind::kCompute, .rank = rank, .duration_sec = duration_sec},
                  compute_lane(rank), deps);
}

namespace {

// Whether every exit op of local rank `rank` is op `op` or depends on it, transitively. `memo`
// keeps, per rank, how many of its exits each op precedes.
bool before_every_exit(const Schedule& schedule, int rank, std::size_t op,
                       std::map<int, std::vector<int>>& memo) {
  const std::vector<int>& exits = schedule.exit_ops[static_cast<std::size_t>(rank)];
  if (exits.empty()) {
    return false;
  }
  auto [it, inserted] = memo.try_emplace(rank);
  std::vector<int>& reaches = it->second;
  if (inserted) {
    reaches.assign(schedule.ops.size(), 0);
    std::vector<char> seen(schedule.ops.size());
    std::vector<int> stack;
    for (int e : exits) {
      std::fill(seen.begin(), seen.end(), 0);
      stack.assign(1, e);
      seen[static_cast<std::size_t>(e)] = 1;
      while (!stack.empty()) {
        const int o = stack.back();
        stack.pop_back();
        ++reaches[static_cast<std::size_t>(o)];
        for (int d : schedule.ops[static_cast<std::size_t>(o)].deps) {
          if (!seen[static_cast<std::size_t>(d)]) {
            seen[static_cast<std::size_t>(d)] = 1;
            stack.push_back(d);
          }
        }
      }
    }
  }
  return reaches[op] == static_cast<int>(exits.size());
}

}  // namespace

CollectiveTasks TaskGraph::add_schedule(const Schedule& schedule,
                                        const std::vector<std::vector<TaskId>>& entry,
                                        std::span<const int> global_ranks, int comm) {
  DTSIM_CHECK(static_cast<int>(entry.size()) == schedule.ranks, "one entry per rank");
  DTSIM_CHECK(global_ranks.empty() || static_cast<int>(global_ranks.size()) == schedule.ranks,
              "one global rank per local rank");
  auto global = [&global_ranks](int local) {
    return global_ranks.empty() ? local : global_ranks[static_cast<std::size_t>(local)];
  };
  CollectiveTasks result{.first = static_cast<TaskId>(tasks_.size())};
  std::vector<TaskId> op_task(schedule.ops.size());
  std::map<int, std::vector<int>> exit_ancestors;  // per owner, computed on first use
  std::vector<TaskId> deps;
  for (std::size_t i = 0; i < schedule.ops.size(); ++i) {
    const ScheduleOp& op = schedule.ops[i];
    deps.clear();
    for (int d : op.deps) {
      deps.push_back(op_task[static_cast<std::size_t>(d)]);
    }
    const std::vector<TaskId>* previous = nullptr;
    for (int r : op.entry_ranks) {
      const auto& e = entry[static_cast<std::size_t>(r)];
      if (previous == nullptr || *previous != e) {  // folded ranks share one entry: add it once
        deps.insert(deps.end(), e.begin(), e.end());
      }
      previous = &e;
    }
    if (op.kind == ScheduleOp::Kind::kTransfer) {
      const int src = global(op.src);
      const int dst = global(op.dst);
      op_task[i] =
          add_task(Task{.kind = TaskKind::kTransfer, .rank = src, .peer = dst, .bytes = op.bytes},
                   channel_lane(comm, src, dst, op.channel), deps);
    } else {
      // A local copy (a wait with data) is its rank's; another wait its first entry rank's.
      const int owner = op.data ? op.src : op.entry_ranks.empty() ? 0 : op.entry_ranks.front();
      const int rank = global(owner);
      // A wait queues on its owner's communication stream, where that rank's collectives run
      // one after another anyway, when the owner cannot leave the collective before it ends: a
      // rank's entry latency (with_entry_latency: no deps, one entry rank), or a wait every exit
      // of the owner depends on (a collapsed ring's join and tail). Other waits get a lane of
      // their own. One actor per rank and communicator instead of one or two per collective.
      const bool entry_wait = op.deps.empty() && op.entry_ranks.size() == 1;
      const bool on_stream = entry_wait || before_every_exit(schedule, owner, i, exit_ancestors);
      op_task[i] =
          add_task(Task{.kind = TaskKind::kWait, .rank = rank, .duration_sec = op.wait_sec},
                   on_stream ? stream_lane(rank, comm) : new_lane(rank), deps);
    }
  }
  result.end = static_cast<TaskId>(tasks_.size());
  result.exits.resize(static_cast<std::size_t>(schedule.ranks));
  for (int r = 0; r < schedule.ranks; ++r) {
    const auto& exits = schedule.exit_ops[static_cast<std::size_t>(r)];
    auto& out = result.exits[static_cast<std::size_t>(r)];
    if (exits.empty()) {
      out = entry[static_cast<std::size_t>(r)];
    }
    for (int op : exits) {
      out.push_back(op_task[static_cast<std::size_t>(op)]);
    }
  }
  return result;
}

}  // namespace dtsim::sim
