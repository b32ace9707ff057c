#include "sim/lowering/task_graph.h"

#include <gtest/gtest.h>

#include "sim/collectives/schedule_builder.h"

namespace dtsim::sim {
namespace {

TEST(TaskGraph, ComputeTasksOfARankShareOneLaneInOrder) {
  TaskGraph g;
  const TaskId a = g.add_compute(0, 1.0, {});
  const TaskId b = g.add_compute(1, 2.0, {});
  const TaskId c = g.add_compute(0, 3.0, std::vector<TaskId>{b});
  EXPECT_EQ(g.tasks()[static_cast<std::size_t>(a)].lane,
            g.tasks()[static_cast<std::size_t>(c)].lane);
  EXPECT_NE(g.tasks()[static_cast<std::size_t>(a)].lane,
            g.tasks()[static_cast<std::size_t>(b)].lane);
  const Lane& lane0 = g.lanes()[static_cast<std::size_t>(g.tasks()[0].lane)];
  EXPECT_EQ(lane0.tasks, (std::vector<TaskId>{a, c}));
  ASSERT_EQ(g.deps(g.tasks()[static_cast<std::size_t>(c)]).size(), 1u);
  EXPECT_EQ(g.deps(g.tasks()[static_cast<std::size_t>(c)])[0], b);
}

TEST(TaskGraph, ScheduleEntriesBecomeDependenciesAndChannelsAreReused) {
  TaskGraph g;
  const TaskId ready0 = g.add_compute(0, 1.0, {});
  const TaskId ready1 = g.add_compute(1, 1.0, {});
  Schedule s{.ranks = 2,
             .ops = {{.src = 0, .dst = 1, .bytes = 10, .entry_ranks = {0, 1}},
                     {.src = 0, .dst = 1, .bytes = 20, .deps = {0}}},
             .exit_ops = {{1}, {1}}};
  const CollectiveTasks c = g.add_schedule(s, {{ready0}, {ready1}});
  EXPECT_EQ(c.end - c.first, 2);
  const Task& first = g.tasks()[static_cast<std::size_t>(c.first)];
  EXPECT_EQ(first.kind, TaskKind::kTransfer);
  const auto deps = g.deps(first);
  EXPECT_EQ(std::vector<TaskId>(deps.begin(), deps.end()), (std::vector<TaskId>{ready0, ready1}));
  // Both transfers use the one 0 -> 1 channel.
  EXPECT_EQ(first.lane, g.tasks()[static_cast<std::size_t>(c.first + 1)].lane);
  EXPECT_EQ(c.exits[1], (std::vector<TaskId>{c.first + 1}));
}

TEST(TaskGraph, EntryLatencyWaitsOfARankShareItsStreamLane) {
  // Two collectives one after the other, each with a per-rank entry latency: rank r's two waits
  // queue on one lane (its communication stream), not on one lane per collective.
  TaskGraph g;
  const Schedule s =
      with_entry_latency({.ranks = 2,
                          .ops = {{.src = 0, .dst = 1, .bytes = 10, .entry_ranks = {0, 1}}},
                          .exit_ops = {{0}, {0}}},
                         8.4e-6);
  const CollectiveTasks first = g.add_schedule(s, {{}, {}});
  const CollectiveTasks second = g.add_schedule(s, first.exits);
  for (TaskId r = 0; r < 2; ++r) {
    const Task& wait1 = g.tasks()[static_cast<std::size_t>(first.first + r)];
    const Task& wait2 = g.tasks()[static_cast<std::size_t>(second.first + r)];
    EXPECT_EQ(wait1.kind, TaskKind::kWait);
    EXPECT_EQ(wait1.duration_sec, 8.4e-6);
    EXPECT_EQ(wait1.lane, wait2.lane) << "rank " << r;
  }
  EXPECT_NE(g.tasks()[static_cast<std::size_t>(first.first)].lane,
            g.tasks()[static_cast<std::size_t>(first.first + 1)].lane);
}

TEST(TaskGraph, JoinsEveryExitNeedsQueueOnTheOwnersStream) {
  // A collapsed ring's shape: a join of all ranks, one transfer per edge, a latency tail every
  // rank exits after. Rank 0 owns the join and the tail, and cannot leave the collective before
  // they end, so both queue on its stream: ten collectives on 4 ranks use 4 channel lanes and
  // one stream lane, not two new lanes each. A wait that some exit of its owner does not need
  // keeps a lane of its own (it must not hold back the owner's next collective).
  Schedule ring = joined_schedule(4);
  ScheduleOp tail{.kind = ScheduleOp::Kind::kWait, .wait_sec = 1e-6};
  for (int r = 0; r < 4; ++r) {
    tail.deps.push_back(static_cast<int>(ring.ops.size()));
    ring.ops.push_back({.src = r, .dst = (r + 1) % 4, .bytes = 100, .deps = {0}});
  }
  end_with(ring, std::move(tail));
  TaskGraph g;
  CollectiveTasks c = g.add_schedule(ring, {{}, {}, {}, {}});
  const int stream = g.tasks()[static_cast<std::size_t>(c.first)].lane;
  for (int k = 1; k < 10; ++k) {
    c = g.add_schedule(ring, c.exits);
  }
  EXPECT_EQ(g.lanes().size(), 5u);
  EXPECT_EQ(g.tasks()[static_cast<std::size_t>(c.first)].lane, stream);    // the join
  EXPECT_EQ(g.tasks()[static_cast<std::size_t>(c.end - 1)].lane, stream);  // the tail
  // Rank 0 exits after its transfer only; the wait after rank 1's transfer is no exit of rank
  // 0's: it gets a lane of its own.
  const Schedule side{.ranks = 2,
                      .ops = {{.src = 0, .dst = 1, .bytes = 10, .entry_ranks = {0, 1}},
                              {.kind = ScheduleOp::Kind::kWait, .wait_sec = 1e-6, .deps = {0}}},
                      .exit_ops = {{0}, {1}}};
  TaskGraph h;
  const CollectiveTasks t = h.add_schedule(side, {{}, {}});
  EXPECT_EQ(h.lanes().size(), 2u);  // the channel and the wait's own lane
  EXPECT_NE(h.tasks()[static_cast<std::size_t>(t.first + 1)].lane,
            h.tasks()[static_cast<std::size_t>(t.first)].lane);
}

TEST(TaskGraph, RankWithoutOperationsExitsWhenItEnters) {
  TaskGraph g;
  const TaskId ready = g.add_compute(0, 1.0, {});
  const CollectiveTasks c = g.add_schedule(Schedule{.ranks = 1, .exit_ops = {{}}}, {{ready}});
  EXPECT_EQ(c.first, c.end);
  EXPECT_EQ(c.exits[0], (std::vector<TaskId>{ready}));
}

}  // namespace
}  // namespace dtsim::sim
