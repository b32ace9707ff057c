// The --timeline trace of a data-parallel run against a hand-computed timeline.
// Every TEST runs in its own process (one SimGrid engine per process).
#include <string>

#include <gtest/gtest.h>

#include "sim/report/timeline.h"
#include "sim/run/simulation.h"

namespace dtsim::sim {
namespace {

using nlohmann::ordered_json;

TEST(TimelineRanks, AllUpToTheLimit) {
  EXPECT_EQ(timeline_ranks(1), std::vector<int>{0});
  EXPECT_EQ(timeline_ranks(16).size(), 16u);
  EXPECT_EQ(timeline_ranks(16).back(), 15);
}

TEST(TimelineRanks, EvenlySpacedFromFirstToLast) {
  // 31 ranks: floor(i * 30 / 15) = 2i.
  std::vector<int> even;
  for (int i = 0; i < 16; ++i) {
    even.push_back(2 * i);
  }
  EXPECT_EQ(timeline_ranks(31), even);
  // 17 ranks: floor(i * 16 / 15) = i for i < 15, and 16 for i = 15.
  EXPECT_EQ(timeline_ranks(17),
            (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 16}));
  const auto big = timeline_ranks(1000);
  ASSERT_EQ(big.size(), 16u);
  EXPECT_EQ(big.front(), 0);
  EXPECT_EQ(big.back(), 999);
  EXPECT_TRUE(std::is_sorted(big.begin(), big.end()));
}

// The setup of data_parallel_engine_test.cpp: tests/testdata/sim_three_layers.json on 2 ranks of
// a star with 1 GB/s links and 1 us per link (alpha = 2 us per route), ring, 3 iterations.
// Layers l0, l1, l2: forward 1 ms each; backward 0.3, 0.5, 2 ms; gradients 3 MiB, none, 1 MiB;
// optimizer 0.5 ms. Buckets: 0 = {l2} (1 MiB), 1 = {l0} (3 MiB).
// One iteration, from its start: forward 0-3 ms; backward l2 3-5 ms, then l1 and l0 (5-5.8 ms);
// bucket 0's all-reduce 5 ms .. 5 ms + T0, bucket 1's next (T1), then the optimizer (0.5 ms).
// A ring all-reduce of n bytes on 2 ranks takes 2 alpha + n / B.
constexpr double kAlpha = 2e-6;
constexpr double kBytesPerSec = 1e9;
constexpr double kMiB = 1048576;
constexpr double kT0 = 2 * kAlpha + kMiB / kBytesPerSec;
constexpr double kT1 = 2 * kAlpha + 3 * kMiB / kBytesPerSec;
constexpr double kIteration = 5e-3 + kT0 + kT1 + 0.5e-3;

ordered_json three_layer_timeline() {
  SimulateConfig config{.run = {.platform_path = "tests/testdata/sim_star2_1GBps.json",
                                .ranks = 2,
                                .algorithm = "ring"},
                        .workload_path = "tests/testdata/sim_three_layers.json"};
  SimulateOutputs outputs{.want_timeline = true};
  (void)simulate_data_parallel(config, &outputs);
  // Round trip through text: what a viewer reads.
  return ordered_json::parse(outputs.timeline.dump());
}

const ordered_json* find(const ordered_json& events, int pid, const std::string& name,
                         int iteration) {
  for (const auto& e : events) {
    if (e["ph"] == "X" && e["pid"] == pid && e["name"] == name &&
        e["args"]["iteration"] == iteration) {
      return &e;
    }
  }
  return nullptr;
}

TEST(Timeline, EveryEventHasTheRequiredFields) {
  const ordered_json trace = three_layer_timeline();
  const auto& events = trace["traceEvents"];
  // Per rank: 3 metadata events; per iteration 3 forward, 3 backward, 1 optimizer, 2 buckets.
  ASSERT_EQ(events.size(), 2u * (3 + 3 * 9));
  int complete = 0;
  for (const auto& e : events) {
    for (const char* key : {"name", "ph", "pid", "tid", "args"}) {
      EXPECT_TRUE(e.contains(key)) << key << " in " << e.dump();
    }
    if (e["ph"] == "X") {
      ++complete;
      for (const char* key : {"cat", "ts", "dur"}) {
        EXPECT_TRUE(e.contains(key)) << key << " in " << e.dump();
      }
      EXPECT_GE(e["dur"].get<double>(), 0);
    } else {
      EXPECT_EQ(e["ph"], "M");
    }
  }
  EXPECT_EQ(complete, 2 * 3 * 9);
  EXPECT_EQ(events[0].dump(),
            R"({"name":"process_name","ph":"M","pid":0,"tid":0,"args":{"name":"rank 0"}})");
}

struct Expected {
  std::string name;
  int tid;
  double start_sec;  // within the iteration
  double duration_sec;
};

TEST(Timeline, SlicesAreTheHandComputedTaskTimes) {
  const ordered_json trace = three_layer_timeline();
  const double t = 2 * kIteration;  // the third iteration starts after two identical ones
  const std::vector<Expected> expected{
      {"forward l0", 0, 0, 1e-3},
      {"forward l1", 0, 1e-3, 1e-3},
      {"forward l2", 0, 2e-3, 1e-3},
      {"backward l2", 0, 3e-3, 2e-3},
      {"backward l1", 0, 5e-3, 0.5e-3},
      {"backward l0", 0, 5.5e-3, 0.3e-3},
      {"optimizer", 0, 5e-3 + kT0 + kT1, 0.5e-3},
      {"all-reduce bucket 0", 1, 5e-3, kT0},
      {"all-reduce bucket 1", 1, 5e-3 + kT0, kT1},
  };
  for (int rank : {0, 1}) {
    for (const Expected& x : expected) {
      const ordered_json* e = find(trace["traceEvents"], rank, x.name, 2);
      ASSERT_NE(e, nullptr) << x.name;
      EXPECT_EQ((*e)["tid"].get<int>(), x.tid) << x.name;
      // Times are rounded to 2^-10 us (timeline.h): a start within half a step, a duration (two
      // rounded ends) within one.
      EXPECT_NEAR((*e)["ts"].get<double>(), (t + x.start_sec) * 1e6, 0.5 / 1024) << x.name;
      EXPECT_NEAR((*e)["dur"].get<double>(), x.duration_sec * 1e6, 1.0 / 1024) << x.name;
    }
  }
  const ordered_json* b1 = find(trace["traceEvents"], 1, "all-reduce bucket 1", 2);
  EXPECT_EQ((*b1)["args"].dump(),
            R"({"iteration":2,"bytes":3145728,"algorithm":"ring","communicator":"dp"})");
}

}  // namespace
}  // namespace dtsim::sim
