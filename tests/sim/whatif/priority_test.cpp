// Priorities, the ready-node policy (priority.h) and P3 (priority_propagation.h) on hand-built
// graphs; every expected order and byte count is worked out by hand in the comments.
#include "sim/whatif/priority.h"

#include <gtest/gtest.h>

#include "sim/config_error.h"
#include "sim/whatif/priority_propagation.h"
#include "tests/sim/whatif/whatif_graphs.h"

namespace dtsim::sim {
namespace {

using V = std::vector<std::int32_t>;

// Collectives take 0.01 s per byte (a stand-in for the chooser's estimate).
double ten_ms_a_byte(const ExecutionGraph& /*g*/, int /*rank*/, const Node& n) {
  return 0.01 * static_cast<double>(n.bytes);
}

// One program on two ranks: compute X 1 s, Y 0.5 s, Z 3 s; all-reduces of 200 bytes (2 s):
// c1 after X (priority 2), c2 after X (priority 1), c3 after Y (priority 0).
// Issue order: 0 X, 1 c1, 2 c2, 3 Y, 4 c3, 5 Z.
ExecutionGraph three_collectives() {
  ExecutionGraph g;
  g.communicators = {{.name = "dp", .ranks = {0, 1}}};
  Program p{.name = "replica", .comms = {"dp"}};
  const Node ar{.kind = NodeKind::kCollective, .comm = 0, .bytes = 200};
  const std::int32_t x = p.add({.label = -1, .duration_sec = 1.0});
  Node c1 = ar;
  c1.priority = 2;
  p.add(c1, {x});
  Node c2 = ar;
  c2.priority = 1;
  p.add(c2, {x});
  const std::int32_t y = p.add({.duration_sec = 0.5});
  Node c3 = ar;
  c3.priority = 0;
  p.add(c3, {y});
  p.add({.duration_sec = 3.0});
  g.programs.push_back(std::move(p));
  g.ranks.assign(2, RankProgram{.program = 0, .comms = {0}});
  return g;
}

TEST(Priority, AllZeroIsIssueOrderAndLeavesTheGraphAsItIs) {
  const ExecutionGraph g = two_layer_graph();
  EXPECT_FALSE(has_priorities(g));
  EXPECT_EQ(order_by_priority(g, ten_ms_a_byte), g);
}

TEST(Priority, AReadyLowerNumberOvertakesQueuedCommunication) {
  // By hand: t=0 X runs (to 1); the stream of dp has nothing ready. t=1: Y runs 1-1.5; c1 and
  // c2 are ready (X ended), c3 is not (Y runs): c2 (priority 1) runs 1-3. t=1.5: Z runs
  // 1.5-4.5. t=3: c3 (priority 0, ready since 1.5) runs 3-5; t=5: c1 runs 5-7. Started in that
  // order (at one instant the compute stream first): X, Y, c2, Z, c3, c1.
  const ExecutionGraph in = three_collectives();
  ASSERT_TRUE(has_priorities(in));
  const ExecutionGraph g = order_by_priority(in, ten_ms_a_byte);
  const auto& n = g.programs[0].nodes;
  ASSERT_EQ(n.size(), 6u);
  EXPECT_EQ(n[0].duration_sec, 1.0);  // X
  EXPECT_EQ(n[1].duration_sec, 0.5);  // Y
  EXPECT_EQ(n[2].priority, 1);        // c2
  EXPECT_EQ(n[3].duration_sec, 3.0);  // Z
  EXPECT_EQ(n[4].priority, 0);        // c3
  EXPECT_EQ(n[5].priority, 2);        // c1
  EXPECT_EQ(deps_of(g, 2), (V{0}));   // c2 after X
  EXPECT_EQ(deps_of(g, 4), (V{1}));   // c3 after Y
  EXPECT_EQ(deps_of(g, 5), (V{0}));   // c1 after X
}

TEST(Priority, EqualPrioritiesKeepIssueOrderAndANotReadyHeadHoldsOnlyItsQueue) {
  // c1 (201 bytes: 2.01 s, to tell it apart) and c2 both priority 1: c1, issued first, runs
  // 1-3.01 though c2 is as ready; c3 (priority 0) is not ready at t=1 and does not hold the
  // priority-1 queue back. Then c3 3.01-5.01, c2 5.01-7.01: X, Y, c1, Z, c3, c2.
  ExecutionGraph in = three_collectives();
  in.programs[0].nodes[1].priority = 1;
  in.programs[0].nodes[1].bytes = 201;
  const ExecutionGraph g = order_by_priority(in, ten_ms_a_byte);
  const auto& n = g.programs[0].nodes;
  EXPECT_EQ(n[2].bytes, 201u);
  EXPECT_EQ(n[4].priority, 0);
  EXPECT_EQ(n[5].bytes, 200u);
  EXPECT_EQ(n[5].priority, 1);
}

TEST(Priority, SetPrioritySetsTheSelectedNodesOnly) {
  const ExecutionGraph g = set_priority(two_layer_graph(), std::vector<NodeRef>{{0, 4}}, 7);
  EXPECT_EQ(g.programs[0].nodes[4].priority, 7);
  EXPECT_EQ(g.programs[0].nodes[5].priority, 0);
  EXPECT_THROW((void)set_priority(two_layer_graph(), std::vector<NodeRef>{{0, 99}}, 1),
               ConfigError);
}

TEST(Priority, RefusesProgramsWithSendsAndCommunicatorsAcrossPrograms) {
  ExecutionGraph sends = three_collectives();
  sends.programs[0].add({.kind = NodeKind::kSend, .comm = 0, .peer = 1, .bytes = 8});
  sends.programs[0].add({.kind = NodeKind::kRecv, .comm = 0, .peer = 1, .bytes = 8});
  EXPECT_THROW((void)order_by_priority(sends, ten_ms_a_byte), ConfigError);

  ExecutionGraph mixed = three_collectives();
  mixed.programs.push_back(mixed.programs[0]);
  mixed.programs[1].name = "other";
  mixed.ranks[1].program = 1;
  try {
    (void)order_by_priority(mixed, ten_ms_a_byte);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("communicator dp"), std::string::npos) << e.what();
  }
}

// two_layer_graph() for two iterations: per iteration forward a, forward b, backward b,
// backward a, all-reduce of b (100 bytes), of a (200 bytes), optimizer 0.3 s.
ExecutionGraph two_iterations() {
  ExecutionGraph g = two_layer_graph();
  Program& p = g.programs[0];
  p.nodes[6].duration_sec = 0.3;
  const Program one = p;
  for (const Node& n : one.nodes) {
    Node next = n;
    next.iteration = 1;
    const auto d = one.deps_of(n);
    std::vector<std::int32_t> deps;
    for (std::int32_t i : d) {
      deps.push_back(i + 7);
    }
    p.add(next, std::span<const std::int32_t>(deps));
  }
  return g;
}

TEST(PriorityPropagation, SlicesBucketsSplitsTheOptimizerAndLetsTheForwardStartEarly) {
  // Slices of 80 bytes: b's 100 -> 2 of 50; a's 200 -> 3 of 67, 67, 66. Priorities: a's slices
  // 0 (layer a is first in the forward pass), b's 1. The optimizer's 0.3 s by gradient bytes:
  // update b 0.1 s (priority 1 - 2 layers = -1), update a 0.2 s (0 - 2 = -2). Per iteration, in
  // issue order:
  //   0 fwd a, 1 fwd b, 2 bwd b, 3 bwd a, 4-5 b slices, 6-8 a slices, 9 update b, 10 update a;
  // iteration 1 the same from 11, its forward a waiting for update a (10), forward b for 9.
  const ExecutionGraph g = priority_propagation(two_iterations(), 80);
  const auto& n = g.programs[0].nodes;
  ASSERT_EQ(n.size(), 22u);
  EXPECT_EQ(n[4].bytes, 50u);
  EXPECT_EQ(n[5].bytes, 50u);
  EXPECT_EQ(n[6].bytes, 67u);
  EXPECT_EQ(n[7].bytes, 67u);
  EXPECT_EQ(n[8].bytes, 66u);
  EXPECT_EQ(n[4].priority, 1);
  EXPECT_EQ(n[6].priority, 0);
  EXPECT_EQ(deps_of(g, 4), (V{2}));
  EXPECT_EQ(deps_of(g, 8), (V{3}));
  EXPECT_DOUBLE_EQ(n[9].duration_sec, 0.1);
  EXPECT_DOUBLE_EQ(n[10].duration_sec, 0.2);
  EXPECT_EQ(n[9].priority, -1);
  EXPECT_EQ(n[10].priority, -2);
  EXPECT_EQ(n[9].phase, Phase::kOptimizer);
  EXPECT_EQ(deps_of(g, 9), (V{4, 5}));
  EXPECT_EQ(deps_of(g, 10), (V{6, 7, 8}));
  EXPECT_EQ(n[11].iteration, 1);
  EXPECT_EQ(deps_of(g, 11), (V{10}));  // forward a of iteration 1 after update a
  EXPECT_EQ(deps_of(g, 12), (V{9}));   // forward b after update b
}

TEST(PriorityPropagation, TheForwardPassOverlapsTheLastLayersGradients) {
  // order_by_priority at 0.01 s a byte (b's slices 0.5 s each; a's 0.67, 0.67, 0.66), by hand:
  // fwd a 0-1, fwd b 1-1.5, bwd b 1.5-2.5, then bwd a 2.5-4.5 and b1 2.5-3.0, b2 3.0-3.5 (a's
  // slices wait for bwd a). t=4.5: update b (ready since 3.5) 4.5-4.6 and a1
  // 4.5-5.17; a2, a3 to 6.5; update a 6.5-6.7; iteration 1's forward a 6.7-7.7, its forward b
  // after it (update b long done). Started in that order:
  //   0 fwd a, 1 fwd b, 2 bwd b, 3 bwd a, 4 b1, 5 b2, 6 update b, 7-9 a1-a3, 10 update a,
  //   11 iteration 1's fwd a.
  // Without p3 iteration 1's forward a would wait for the one optimizer node, after both
  // buckets.
  const ExecutionGraph g =
      order_by_priority(priority_propagation(two_iterations(), 80), ten_ms_a_byte);
  const auto& n = g.programs[0].nodes;
  EXPECT_EQ(n[3].duration_sec, 2.0);  // bwd a
  EXPECT_EQ(n[4].bytes, 50u);
  EXPECT_EQ(n[5].bytes, 50u);
  EXPECT_DOUBLE_EQ(n[6].duration_sec, 0.1);  // update b
  EXPECT_EQ(n[7].bytes, 67u);
  EXPECT_EQ(n[9].bytes, 66u);
  EXPECT_DOUBLE_EQ(n[10].duration_sec, 0.2);  // update a
  EXPECT_EQ(n[11].iteration, 1);
  EXPECT_EQ(n[11].phase, Phase::kForward);
  EXPECT_EQ(n[11].layer, 0);
  EXPECT_EQ(deps_of(g, 11), (V{10}));
}

TEST(PriorityPropagation, RefusesWhatItCannotRewrite) {
  EXPECT_THROW((void)priority_propagation(two_layer_graph(), 0), ConfigError);
  ExecutionGraph no_optimizer = two_layer_graph();
  no_optimizer.programs[0].nodes.pop_back();
  EXPECT_THROW((void)priority_propagation(no_optimizer, 80), ConfigError);
  try {  // 300 bytes in 1-byte slices: 300 all-reduces, fine; the bound is a million
    (void)priority_propagation(two_layer_graph(), 1);
  } catch (const ConfigError& e) {
    FAIL() << e.what();
  }
  ExecutionGraph huge = two_layer_graph();
  huge.programs[0].nodes[4].bytes = 2'000'000;
  EXPECT_THROW((void)priority_propagation(huge, 1), ConfigError);
}

}  // namespace
}  // namespace dtsim::sim
