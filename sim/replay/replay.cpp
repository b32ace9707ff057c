#include "sim/replay/replay.h"

#include <stdexcept>

#include <simgrid/s4u.hpp>
#include <xbt/log.h>

#include "sim/replay/perturbations.h"

XBT_LOG_NEW_CATEGORY(dtsim, "DNN training simulator");
XBT_LOG_NEW_DEFAULT_SUBCATEGORY(dtsim_replay, dtsim, "Task graph replay");

namespace dtsim::sim {

namespace sg4 = simgrid::s4u;

namespace {

// Readiness bookkeeping shared by all lane actors. SimGrid actors are cooperative, so no locking:
// nothing runs between a check and the wait that follows it.
class ReplayState {
 public:
  ReplayState(const TaskGraph& graph, const std::vector<sg4::Host*>& rank_hosts,
              const ReplayWatch& watch)
      : graph_(graph),
        rank_hosts_(rank_hosts),
        watch_(watch),
        next_check_(watch.every_tasks),
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
    mailboxes_.resize(graph.lanes().size(), nullptr);
    times_.start_sec.assign(tasks.size(), 0);
    times_.end_sec.assign(tasks.size(), 0);
    times_.ended.assign(tasks.size(), 0);
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
        if (const double sec = duration_sec(task); sec > 0) {
          sg4::this_actor::sleep_for(sec);
        }
        break;
      case TaskKind::kTransfer:
        // Through the lane's mailbox, received by its ReceiverActor on the peer's host: SimGrid
        // 3.32 keeps every pending Comm::sendto in one list that each completion scans
        // (quadratic in concurrent transfers: 20 s for one round of 16,384 at once), while a
        // mailbox comm is listed only by its two actors.
        mailbox(task.lane)->put(&payload_, task.bytes);
        break;
    }
    times_.end_sec[static_cast<std::size_t>(id)] = sg4::Engine::get_clock();
    times_.ended[static_cast<std::size_t>(id)] = 1;
    finish(id);
    if (finished_ == next_check_) {
      next_check_ += watch_.every_tasks;
      if (!watch_.check(times_)) {
        times_.stopped = true;
        sg4::Actor::kill_all();   // every actor but this one,
        sg4::this_actor::exit();  // and this one: the engine returns
      }
    }
  }

  // A memoized wait lasts as long as the span it repeats (finished: it is a dependency).
  [[nodiscard]] double duration_sec(const Task& task) const {
    if (task.memo_to < 0) {
      return task.duration_sec;
    }
    return times_.end_sec[static_cast<std::size_t>(task.memo_to)] -
           times_.end_sec[static_cast<std::size_t>(task.memo_from)];
  }

  [[nodiscard]] sg4::Host* host(int rank) const {
    return rank_hosts_[static_cast<std::size_t>(rank)];
  }
  [[nodiscard]] ReplayTimes take_times() { return std::move(times_); }
  [[nodiscard]] std::size_t finished() const { return finished_; }
  [[nodiscard]] bool stopped() const { return times_.stopped; }
  [[nodiscard]] sg4::Mailbox* mailbox(int lane) {
    sg4::Mailbox*& m = mailboxes_[static_cast<std::size_t>(lane)];
    if (m == nullptr) {
      m = sg4::Mailbox::by_name("lane-" + std::to_string(lane));
    }
    return m;
  }

 private:
  void finish(TaskId id) {
    ++finished_;
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

  std::size_t finished_ = 0;  // tasks run to their end
  const TaskGraph& graph_;
  const std::vector<sg4::Host*>& rank_hosts_;
  const ReplayWatch& watch_;
  std::size_t next_check_;             // finished_ at which watch_ is checked next (0: never)
  std::vector<int> unmet_;             // per task: dependencies not finished yet
  std::vector<int> dependents_begin_;  // per task: offset into dependents_
  std::vector<TaskId> dependents_;
  std::vector<TaskId> waiting_for_;         // per lane: the task its actor is blocked on, or -1
  std::vector<sg4::SemaphorePtr> wakeups_;  // per lane
  std::vector<sg4::Mailbox*> mailboxes_;    // per lane with transfers, on first use
  int payload_ = 0;                         // what every put carries (nothing is copied)
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

// Receives a channel lane's transfers, in order, on the receiving host.
class ReceiverActor {
 public:
  ReceiverActor(ReplayState& state, int lane_index, std::size_t transfers)
      : state_(state), lane_index_(lane_index), transfers_(transfers) {}

  void operator()() const {
    sg4::Mailbox* m = state_.mailbox(lane_index_);
    for (std::size_t i = 0; i < transfers_; ++i) {
      m->get<int>();
    }
  }

 private:
  ReplayState& state_;
  int lane_index_;
  std::size_t transfers_;
};

// The transfers of a lane, and the rank receiving them (one peer per channel lane).
std::pair<std::size_t, int> lane_transfers(const TaskGraph& graph, const Lane& lane) {
  std::size_t count = 0;
  int peer = -1;
  for (TaskId id : lane.tasks) {
    const Task& t = graph.tasks()[static_cast<std::size_t>(id)];
    if (t.kind == TaskKind::kTransfer) {
      ++count;
      peer = t.peer;
    }
  }
  return {count, peer};
}

}  // namespace

ReplayTimes replay(const TaskGraph& graph, const std::vector<sg4::Host*>& rank_hosts,
                   const ReplayWatch& watch) {
  ReplayState state(graph, rank_hosts, watch);
  const auto& lanes = graph.lanes();
  for (std::size_t i = 0; i < lanes.size(); ++i) {
    if (lanes[i].tasks.empty()) {
      continue;
    }
    sg4::Actor::create("lane-" + std::to_string(i), state.host(lanes[i].rank),
                       LaneActor(state, lanes[i], static_cast<int>(i)));
    if (const auto [transfers, peer] = lane_transfers(graph, lanes[i]); transfers > 0) {
      sg4::Actor::create("recv-" + std::to_string(i), state.host(peer),
                         ReceiverActor(state, static_cast<int>(i), transfers));
    }
  }
  sg4::Engine::get_instance()->run();
  XBT_DEBUG("replayed %zu tasks on %zu lanes", graph.tasks().size(), lanes.size());
  if (state.stopped()) {
    return state.take_times();
  }
  check_background_budget();                       // a flow that stopped early unloaded the network
  if (state.finished() != graph.tasks().size()) {  // SimGrid stopped on a deadlock
    throw std::runtime_error("the replay stopped with " +
                             std::to_string(graph.tasks().size() - state.finished()) + " of " +
                             std::to_string(graph.tasks().size()) +
                             " tasks unfinished (SimGrid reported a deadlock)");
  }
  return state.take_times();
}

}  // namespace dtsim::sim
