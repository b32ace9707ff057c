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

TEST(TaskGraph, RankWithoutOperationsExitsWhenItEnters) {
  TaskGraph g;
  const TaskId ready = g.add_compute(0, 1.0, {});
  const CollectiveTasks c = g.add_schedule(Schedule{.ranks = 1, .exit_ops = {{}}}, {{ready}});
  EXPECT_EQ(c.first, c.end);
  EXPECT_EQ(c.exits[0], (std::vector<TaskId>{ready}));
}

}  // namespace
}  // namespace dtsim::sim
