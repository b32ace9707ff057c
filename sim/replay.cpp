#include "sim/replay.h"

#include <simgrid/s4u.hpp>
#include <xbt/log.h>

XBT_LOG_NEW_CATEGORY(dtsim, "DNN training simulator");
XBT_LOG_NEW_DEFAULT_SUBCATEGORY(dtsim_replay, dtsim, "Task graph replay");

namespace dtsim::sim {

namespace sg4 = simgrid::s4u;

namespace {

// Readiness bookkeeping shared by all lane actors. SimGrid actors are cooperative, so no locking:
// nothing runs between a check and the wait that follows it.
class ReplayState {
 public:
  ReplayState(const TaskGraph& graph, const std::vector<sg4::Host*>& rank_hosts)
      : graph_(graph),
        rank_hosts_(rank_hosts),
        unmet_(graph.tasks().size()),
        dependents_begin_(graph.tasks().size() + 1),
        waiting_for_(graph.lanes().size(), -1) {
    const auto& tasks = graph.tasks();
    // Dependents in compressed-row form: for each task, the tasks waiting on it.
    for (const Task& t : tasks) {
      for (TaskId d : graph.deps(t)) {
        ++dependents_begin_[static_cast<std::size_t>(d) + 1];
      }
    }
    for (std::size_t i = 1; i < dependents_begin_.size(); ++i) {
      dependents_begin_[i] += dependents_begin_[i - 1];
    }
    dependents_.resize(static_cast<std::size_t>(dependents_begin_.back()));
    std::vector<int> fill(dependents_begin_.begin(), dependents_begin_.end() - 1);
    for (std::size_t id = 0; id < tasks.size(); ++id) {
      unmet_[id] = static_cast<int>(graph.deps(tasks[id]).size());
      for (TaskId d : graph.deps(tasks[id])) {
        dependents_[static_cast<std::size_t>(fill[static_cast<std::size_t>(d)]++)] =
            static_cast<TaskId>(id);
      }
    }
    for (std::size_t lane = 0; lane < graph.lanes().size(); ++lane) {
      wakeups_.push_back(sg4::Semaphore::create(0));
    }
    times_.start_sec.assign(tasks.size(), 0);
    times_.end_sec.assign(tasks.size(), 0);
  }

  // Blocks the calling lane actor until every dependency of `id` has finished.
  void wait_ready(TaskId id, int lane) {
    if (unmet_[static_cast<std::size_t>(id)] > 0) {
      waiting_for_[static_cast<std::size_t>(lane)] = id;
      wakeups_[static_cast<std::size_t>(lane)]->acquire();
      waiting_for_[static_cast<std::size_t>(lane)] = -1;
    }
  }

  void run(TaskId id) {
    const Task& task = graph_.tasks()[static_cast<std::size_t>(id)];
    times_.start_sec[static_cast<std::size_t>(id)] = sg4::Engine::get_clock();
    switch (task.kind) {
      case TaskKind::kCompute:
      case TaskKind::kWait:
        if (task.duration_sec > 0) {
          sg4::this_actor::sleep_for(task.duration_sec);
        }
        break;
      case TaskKind::kTransfer:
        sg4::Comm::sendto(host(task.rank), host(task.peer), task.bytes);
        break;
    }
    times_.end_sec[static_cast<std::size_t>(id)] = sg4::Engine::get_clock();
    finish(id);
  }

  [[nodiscard]] sg4::Host* host(int rank) const {
    return rank_hosts_[static_cast<std::size_t>(rank)];
  }
  [[nodiscard]] ReplayTimes take_times() { return std::move(times_); }

 private:
  void finish(TaskId id) {
    for (int i = dependents_begin_[static_cast<std::size_t>(id)];
         i < dependents_begin_[static_cast<std::size_t>(id) + 1]; ++i) {
      const TaskId next = dependents_[static_cast<std::size_t>(i)];
      if (--unmet_[static_cast<std::size_t>(next)] == 0) {
        const int lane = graph_.tasks()[static_cast<std::size_t>(next)].lane;
        if (waiting_for_[static_cast<std::size_t>(lane)] == next) {
          wakeups_[static_cast<std::size_t>(lane)]->release();
        }
      }
    }
  }

  const TaskGraph& graph_;
  const std::vector<sg4::Host*>& rank_hosts_;
  std::vector<int> unmet_;             // per task: dependencies not finished yet
  std::vector<int> dependents_begin_;  // per task: offset into dependents_
  std::vector<TaskId> dependents_;
  std::vector<TaskId> waiting_for_;         // per lane: the task its actor is blocked on, or -1
  std::vector<sg4::SemaphorePtr> wakeups_;  // per lane
  ReplayTimes times_;
};

// Runs the tasks of one lane in order.
class LaneActor {
 public:
  LaneActor(ReplayState& state, const Lane& lane, int lane_index)
      : state_(state), lane_(lane), lane_index_(lane_index) {}

  void operator()() const {
    for (TaskId id : lane_.tasks) {
      state_.wait_ready(id, lane_index_);
      state_.run(id);
    }
  }

 private:
  ReplayState& state_;
  const Lane& lane_;
  int lane_index_;
};

}  // namespace

ReplayTimes replay(const TaskGraph& graph, const std::vector<sg4::Host*>& rank_hosts) {
  ReplayState state(graph, rank_hosts);
  const auto& lanes = graph.lanes();
  for (std::size_t i = 0; i < lanes.size(); ++i) {
    if (lanes[i].tasks.empty()) {
      continue;
    }
    sg4::Actor::create("lane-" + std::to_string(i), state.host(lanes[i].rank),
                       LaneActor(state, lanes[i], static_cast<int>(i)));
  }
  sg4::Engine::get_instance()->run();
  XBT_DEBUG("replayed %zu tasks on %zu lanes", graph.tasks().size(), lanes.size());
  return state.take_times();
}

}  // namespace dtsim::sim
