// Execution graphs replayed as they are (`dtsim simulate --graph`): collectives on groups of
// ranks against their closed forms, communicators that overlap, and a hand-written pipeline
// against its hand-computed timeline. Every TEST runs in its own process (one SimGrid engine).
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sim/config_error.h"
#include "sim/graph/graph_error.h"
#include "sim/run/simulation.h"

namespace dtsim::sim {
namespace {

using nlohmann::ordered_json;

GraphReport run_graph(const std::string& graph, const std::string& platform,
                      SimulateOutputs* outputs = nullptr) {
  return simulate_graph({.run = {.platform_path = "tests/testdata/" + platform},
                         .graph_path = "tests/testdata/" + graph},
                        outputs);
}

// A star with 25 GB/s and 1 us per link: alpha = 2 us per route. A ring all-reduce of n bytes
// on p ranks takes 2(p-1)(alpha + n/(pB)) (collapsed: one transfer per edge of 2(p-1)n/p bytes,
// then the remaining 2(p-1)-1 latency terms).
TEST(GroupCollectives, DisjointGroupsAtOnceEachTakeTheirClosedForm) {
  // Groups {0, 1} and {3, 2} all-reduce 100 MB at the same time; no link is shared.
  const GraphReport r = run_graph("graph_disjoint_groups.json", "sim_star16_25GBps.json");
  const double expected = 2 * (2e-6 + 1e8 / (2 * 25e9));  // 4.004 ms
  ASSERT_EQ(r.collectives.size(), 2u);
  for (const CollectiveResult& c : r.collectives) {
    EXPECT_EQ(c.algorithm, "ring");
    EXPECT_NEAR(c.start_sec, 0.0, 1e-12);
    EXPECT_NEAR(c.end_sec, expected, 1e-9 * expected) << c.communicator;
  }
  EXPECT_NEAR(r.iteration_time_sec, expected, 1e-9 * expected);
}

// Links with 1 ms latency and unbounded bandwidth (alpha = 2 ms per route): a ring all-reduce
// of 8 bytes on 2 ranks is its 2(p-1) = 2 latency terms, 4 ms.
TEST(GroupCollectives, TwoCommunicatorsOfOneRankOverlap) {
  // Each rank issues an all-reduce on x, then one on y, with nothing between them: NCCL runs the
  // two communicators on their own streams, so both take 4 ms at once.
  const GraphReport r = run_graph("graph_two_communicators.json", "sim_star2_latency_only.json");
  EXPECT_NEAR(r.iteration_time_sec, 4e-3, 1e-12);
  ASSERT_EQ(r.collectives.size(), 2u);
  EXPECT_NEAR(r.collectives[1].start_sec, 0.0, 1e-12);
}

TEST(GroupCollectives, CollectivesOfOneCommunicatorRunOneAfterTheOther) {
  // The same two all-reduces on one communicator: its stream runs them in order, 2 x 4 ms.
  const GraphReport r = run_graph("graph_one_communicator.json", "sim_star2_latency_only.json");
  EXPECT_NEAR(r.iteration_time_sec, 8e-3, 1e-12);
  ASSERT_EQ(r.collectives.size(), 2u);
  EXPECT_NEAR(r.collectives[1].start_sec, 4e-3, 1e-12);
}

// tests/testdata/sim_fat_tree16.json: leaves of 4 hosts, 25 GB/s and 1 us per link. The group
// {2, 3, 4, 5} spans leaves 0 and 1: its ring edges 3 -> 4 and 5 -> 2 cross a spine (4 links,
// 4 us), the others stay in a leaf (2 links). The ring pays the group's own longest edge:
// 2(p-1)(4 us + n/(pB)) = 6 x (4 us + 1 ms) = 6.024 ms for 100 MB. (Ranks 0-3, the identity
// mapping of its local ranks, would all share leaf 0: 2 us, 6.012 ms.)
TEST(GroupCollectives, SubgroupRingOnAFatTreePaysTheGroupsLongestEdge) {
  const GraphReport r = run_graph("graph_subgroup_ring.json", "sim_fat_tree16.json");
  const double expected = 6 * (4e-6 + 1e8 / (4 * 25e9));
  ASSERT_EQ(r.collectives.size(), 1u);
  EXPECT_NEAR(r.collectives[0].end_sec, expected, 1e-9 * expected);
  EXPECT_NEAR(r.iteration_time_sec, expected, 1e-9 * expected);
}

const ordered_json* find(const ordered_json& events, int pid, const std::string& name,
                         int occurrence = 0) {
  for (const auto& e : events) {
    if (e["ph"] == "X" && e["pid"] == pid && e["name"] == name && occurrence-- == 0) {
      return &e;
    }
  }
  return nullptr;
}

// tests/testdata/graph_pipeline_2stage.json (the example of sim/graph/GRAPH.md) on a star with
// 1 GB/s and 1 us per link: every 8 MiB send takes T = 2 us + 8388608 B / 1e9 B/s = 8.390608 ms.
// Stage 0 runs forward 4 ms per micro-batch and backward 8 ms, stage 1 the same; GPipe order.
// By hand (ms): stage 0 F0 [0, 4], F1 [4, 8]; activations a0 [4, 4+T], a1 [4+T, 4+2T] (one pp
// stream). Stage 1 F0 [4+T, 8+T], B0 [8+T, 16+T], gradients g0 [16+T, 16+2T], F1 [16+T, 20+T],
// B1 [20+T, 28+T], g1 [28+T, 28+2T]. Stage 0 B0 [16+2T, 24+2T], B1 [28+2T, 36+2T], optimizer
// [36+2T, 37+2T]: the iteration ends at 37 ms + 2T = 53.781216 ms.
TEST(HandWrittenGraph, TwoStagePipelineReplaysTheHandComputedTimeline) {
  SimulateOutputs outputs{.want_timeline = true};
  const GraphReport r = run_graph("graph_pipeline_2stage.json", "sim_star2_1GBps.json", &outputs);
  const double t_ms = 2e-3 + 8388608 / 1e6;
  EXPECT_NEAR(r.iteration_time_sec * 1e3, 37 + 2 * t_ms, 1e-9);
  EXPECT_EQ(r.transfers, 4u);
  EXPECT_EQ(r.transfer_bytes, 4u * 8388608);
  const ordered_json trace = ordered_json::parse(outputs.timeline.dump());
  const auto& events = trace["traceEvents"];
  struct Expected {
    int pid;
    const char* name;
    int occurrence;
    double start_ms;
    double duration_ms;
  };
  const double t = t_ms;
  for (const Expected& e : std::vector<Expected>{
           {0, "forward block0", 0, 0, 4},
           {0, "forward block0", 1, 4, 4},
           {0, "send to 1", 0, 4, t},
           {0, "send to 1", 1, 4 + t, t},
           {1, "recv from 0", 1, 4 + t, t},
           {1, "forward block1", 0, 4 + t, 4},
           {1, "backward block1", 0, 8 + t, 8},
           {1, "send to 0", 0, 16 + t, t},
           {1, "forward block1", 1, 16 + t, 4},
           {1, "backward block1", 1, 20 + t, 8},
           {1, "send to 0", 1, 28 + t, t},
           {0, "recv from 1", 0, 16 + t, t},
           {0, "backward block0", 0, 16 + 2 * t, 8},
           {0, "backward block0", 1, 28 + 2 * t, 8},
           {0, "optimizer", 0, 36 + 2 * t, 1},
           {1, "optimizer", 0, 28 + t, 1},
       }) {
    const ordered_json* slice = find(events, e.pid, e.name, e.occurrence);
    ASSERT_NE(slice, nullptr) << e.pid << " " << e.name << " #" << e.occurrence;
    EXPECT_NEAR((*slice)["ts"].get<double>(), e.start_ms * 1e3, 0.5 / 1024) << e.name;  // the grid
    EXPECT_NEAR((*slice)["dur"].get<double>(), e.duration_ms * 1e3, 1.0 / 1024) << e.name;
  }
}

// Rank 0 sends 1 MB to rank 1 on communicator x, then 1 MB on y; rank 1 posts the receive on y
// first. Each communicator is its own stream, so neither waits for the other: both 1 MB flows
// share the 1 GB/s route at once and end together, at 2 us + 2 MB / 1 GB/s = 2.002 ms.
TEST(GraphStreams, TwoCommunicatorsOfARankDoNotWaitForEachOther) {
  const GraphReport r = run_graph("graph_cross_streams.json", "sim_star2_1GBps.json");
  EXPECT_NEAR(r.iteration_time_sec, 2e-6 + 2e6 / 1e9, 1e-12);
  EXPECT_EQ(r.transfers, 2u);
}

// --algorithm names one algorithm for every collective of a graph: one it lacks is refused,
// before the simulation, naming the collective.
TEST(GraphStreams, ACollectiveTheAlgorithmLacksIsAnError) {
  try {
    (void)simulate_graph(
        {.run = {.platform_path = "tests/testdata/sim_star2_1GBps.json", .algorithm = "ring"},
         .graph_path = "tests/testdata/graph_all_to_all.json"});
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(),
                 "algorithm ring: ring has no all-to-all (use direct) (all-to-all of 2000000 "
                 "bytes on communicator \"ep\")");
  }
  // With direct: each rank sends bytes/p = 1 MB to the other, 2 us + 1 MB / 1 GB/s.
  const GraphReport r = simulate_graph(
      {.run = {.platform_path = "tests/testdata/sim_star2_1GBps.json", .algorithm = "direct"},
       .graph_path = "tests/testdata/graph_all_to_all.json"});
  EXPECT_NEAR(r.iteration_time_sec, 2e-6 + 1e6 / 1e9, 1e-12);
}

std::string graph_error(const std::string& graph) {
  try {
    (void)run_graph(graph, "sim_star2_1GBps.json");
  } catch (const ConfigError& e) {
    return e.what();
  } catch (const GraphError& e) {  // the reader's own checks
    return e.what();
  }
  return "no error";
}

// A replay needs a node, iterations 0, 1, 2, ... without a gap, and compute that ends.
TEST(GraphStreams, GraphsThatCannotBeReplayedAreRefused) {
  EXPECT_EQ(graph_error("graph_no_nodes.json"),
            "tests/testdata/graph_no_nodes.json: the graph has no node to replay");
  EXPECT_EQ(graph_error("graph_iteration_gap.json"),
            "tests/testdata/graph_iteration_gap.json: no node has iteration 1, but one has "
            "iteration 2 (iterations are numbered 0, 1, 2, ... without a gap)");
  // Two nodes of 1e308 s add up to inf; since issue #21 the reader refuses each (at most 1e9 s
  // a node), so only a slow GPU's factor could still make finite nodes endless.
  EXPECT_EQ(graph_error("graph_endless.json"),
            "tests/testdata/graph_endless.json: /programs/0/nodes/0/duration_sec: expected at most "
            "1e9 s, got 1e+308\n"
            "tests/testdata/graph_endless.json: /programs/0/nodes/1/duration_sec: expected at most "
            "1e9 s, got 1e+308");
}

// A broadcast on the group {2, 3, 4} (root local rank 2, global rank 4): every member's
// communication track shows it, the ranks that only receive included.
TEST(GraphStreams, EveryMemberOfACollectiveShowsItOnItsTimeline) {
  SimulateOutputs outputs{.want_timeline = true};
  (void)run_graph("graph_broadcast_subgroup.json", "sim_star16_25GBps.json", &outputs);
  for (int pid : {2, 3, 4}) {
    EXPECT_NE(find(outputs.timeline["traceEvents"], pid, "broadcast on g"), nullptr) << pid;
  }
  EXPECT_EQ(find(outputs.timeline["traceEvents"], 1, "broadcast on g"), nullptr);
}

// Iterations are ordered per stream only: a program may list its compute stream's iterations 0
// and 1 before its all-reduce stream's 0 and 1, and the all-reduce of iteration 0 (10 MB, 2 ranks,
// 1 GB/s: 2 x (2 us + 5 ms) = 10.004 ms after the 1 ms compute) may end after iteration 1's 1 ms
// compute. Iteration k ends once every node of an iteration <= k has: iteration 0 at 11.004 ms,
// iteration 1 (the second all-reduce, 11.004 -> 21.008 ms) at 21.008 ms.
TEST(GraphStreams, IterationsOrderedPerStreamAndEndingCumulatively) {
  const GraphReport r = run_graph("graph_iterations_per_stream.json", "sim_star2_1GBps.json");
  ASSERT_EQ(r.iteration_end_sec.size(), 2u);
  EXPECT_NEAR(r.iteration_end_sec[0], 1e-3 + 2 * (2e-6 + 5e6 / 1e9), 1e-12);
  EXPECT_NEAR(r.iteration_end_sec[1], 1e-3 + 4 * (2e-6 + 5e6 / 1e9), 1e-12);
  EXPECT_NEAR(r.iteration_time_sec, 2 * (2e-6 + 5e6 / 1e9), 1e-12);
}

// A stream's iterations may interleave, as P3's updates of step k run after step k+1's first
// forward node: the compute stream runs 0.1 s (iteration 0), 0.1 s (1), 0.05 s (0), 0.05 s (1)
// in that order, so iteration 0 ends at 0.25 s and iteration 1 at 0.3 s.
TEST(GraphStreams, AStreamsIterationsMayInterleave) {
  const GraphReport r = run_graph("graph_iterations_interleaved.json", "sim_star2_1GBps.json");
  ASSERT_EQ(r.iteration_end_sec.size(), 2u);
  EXPECT_NEAR(r.iteration_end_sec[0], 0.25, 1e-12);
  EXPECT_NEAR(r.iteration_end_sec[1], 0.3, 1e-12);
  EXPECT_NEAR(r.iteration_time_sec, 0.05, 1e-12);
}

}  // namespace
}  // namespace dtsim::sim
