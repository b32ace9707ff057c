// A replay looked at while it runs (ReplayWatch, sim/replay/replay.h): ten compute tasks of 1 ms
// in a chain on one rank of a star, so task i ends at (i + 1) ms. Every TEST runs in its own
// process (one SimGrid engine each).
#include <numeric>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <simgrid/s4u.hpp>

#include "platforms/build_platform.h"
#include "platforms/platform_spec.h"
#include "sim/lowering/task_graph.h"
#include "sim/replay/replay.h"

namespace dtsim::sim {
namespace {

constexpr int kTasks = 10;
constexpr double kTaskSec = 1e-3;

// Replays the chain under `watch`.
ReplayTimes replay_chain(const ReplayWatch& watch) {
  std::vector<std::string> args{"test", "--log=root.thres:critical"};
  std::vector<char*> argv;
  for (std::string& a : args) {
    argv.push_back(a.data());
  }
  int argc = static_cast<int>(argv.size());
  simgrid::s4u::Engine engine(&argc, argv.data());
  const platforms::Platform built = platforms::build_platform(
      platforms::read_platform_spec("tests/testdata/sim_star16_25GBps.json"));
  TaskGraph graph;
  std::vector<TaskId> previous;
  for (int i = 0; i < kTasks; ++i) {
    previous = {graph.add_compute(0, kTaskSec, previous)};
  }
  return replay(graph, {built.hosts[0]}, watch);
}

int ended(const ReplayTimes& times) {
  return std::accumulate(times.ended.begin(), times.ended.end(), 0);
}

// Checked every 3 tasks, it sees 3, 6 and 9 ended (floor(10 / 3) = 3 looks), and lets the chain
// end at 10 ms.
TEST(ReplayWatch, AWatchThatAcceptsSeesEveryStepAndLetsTheReplayEnd) {
  std::vector<int> seen;
  const ReplayTimes times = replay_chain({.every_tasks = 3, .check = [&](const ReplayTimes& t) {
                                            seen.push_back(ended(t));
                                            return true;
                                          }});
  EXPECT_EQ(seen, (std::vector<int>{3, 6, 9}));
  EXPECT_FALSE(times.stopped);
  EXPECT_EQ(ended(times), kTasks);
  EXPECT_NEAR(times.end_sec.back(), kTasks * kTaskSec, 1e-12);
}

// Refusing at its second look (6 tasks ended, 6 ms), it stops the replay there: tasks 0..5 have
// their times, the other four never ran.
TEST(ReplayWatch, AWatchThatRefusesStopsTheReplayThere) {
  int looks = 0;
  const ReplayTimes times = replay_chain({.every_tasks = 3, .check = [&](const ReplayTimes&) {
                                            return ++looks < 2;
                                          }});
  EXPECT_EQ(looks, 2);
  EXPECT_TRUE(times.stopped);
  EXPECT_EQ(ended(times), 6);
  for (int i = 0; i < kTasks; ++i) {
    EXPECT_EQ(times.ended[static_cast<std::size_t>(i)], i < 6 ? 1 : 0) << i;
  }
  EXPECT_NEAR(times.end_sec[5], 6 * kTaskSec, 1e-12);
  EXPECT_EQ(times.end_sec[6], 0.0);
}

}  // namespace
}  // namespace dtsim::sim
