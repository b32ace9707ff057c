// The what-if primitives on a hand-built graph (whatif_graphs.h); every expected value is worked
// out by hand from the graph's listing.
#include "sim/whatif/primitives.h"

#include <gtest/gtest.h>

#include "sim/config_error.h"
#include "sim/graph/graph_validate.h"
#include "sim/whatif/priority.h"
#include "sim/whatif/select.h"
#include "tests/sim/whatif/whatif_graphs.h"

namespace dtsim::sim {
namespace {

std::vector<std::int32_t> indices(const std::vector<NodeRef>& refs) {
  std::vector<std::int32_t> out;
  for (NodeRef r : refs) {
    out.push_back(r.node);
  }
  return out;
}

using V = std::vector<std::int32_t>;

TEST(SelectNodes, ByPhaseKindLayerRoleAndOpClass) {
  const ExecutionGraph g = two_layer_graph();
  EXPECT_EQ(indices(select_nodes(g, {.kind = NodeKind::kCompute, .phase = Phase::kBackward})),
            (V{2, 3}));
  EXPECT_EQ(indices(select_nodes(g, {.layer = "b"})), (V{1, 2, 4}));  // the bucket's range too
  EXPECT_EQ(indices(select_nodes(g, {.role = "dp"})), (V{4, 5}));
  EXPECT_EQ(indices(select_nodes(g, {.op_class = "matmul"})), (V{0, 3}));
  EXPECT_EQ(indices(select_nodes(g, {.label = "bucket 1"})), (V{5}));
  EXPECT_EQ(indices(select_nodes(g, {.iteration = 1})), V{});
  EXPECT_EQ(indices(select_nodes(g, {.op_class = "no such class"})), V{});
}

TEST(IsolateRanks, GivesTheRanksAProgramOfTheirOwn) {
  std::int32_t program = -1;
  const std::vector<int> one{1};
  const ExecutionGraph g = isolate_ranks(two_layer_graph(), one, program);
  EXPECT_EQ(program, 1);
  ASSERT_EQ(g.programs.size(), 2u);
  EXPECT_EQ(g.programs[1].name, "replica@1");
  EXPECT_EQ(g.ranks[0].program, 0);
  EXPECT_EQ(g.ranks[1].program, 1);
  EXPECT_TRUE(validate_execution_graph(g).empty());
  const std::vector<int> both{0, 1};
  EXPECT_EQ(isolate_ranks(two_layer_graph(), both, program), two_layer_graph());
  EXPECT_EQ(program, 0);
}

TEST(IsolateRanks, RefusesRanksOutsideTheGraphOrOnDifferentPrograms) {
  std::int32_t program = -1;
  const std::vector<int> outside{2};
  try {
    (void)isolate_ranks(two_layer_graph(), outside, program);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(), "what_if rank 2 is outside the graph's ranks 0 to 1");
  }
  const std::vector<int> one{1}, both{0, 1};
  ExecutionGraph split = isolate_ranks(two_layer_graph(), one, program);
  EXPECT_THROW((void)isolate_ranks(std::move(split), both, program), ConfigError);
}

TEST(ScaleDurations, MultipliesTheSelectedComputeNodes) {
  ExecutionGraph g = two_layer_graph();
  const auto backward = select_nodes(g, {.kind = NodeKind::kCompute, .phase = Phase::kBackward});
  g = scale_durations(std::move(g), backward, 0.5);
  const auto& n = g.programs[0].nodes;
  EXPECT_EQ(n[2].duration_sec, 0.5);
  EXPECT_EQ(n[3].duration_sec, 1.0);
  EXPECT_EQ(n[0].duration_sec, 1.0);  // forward untouched
}

TEST(ScaleDurations, RefusesACollective) {
  const std::vector<NodeRef> collective{{0, 4}};
  try {
    (void)scale_durations(two_layer_graph(), collective, 2);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(),
                 "what_if scale_durations: node 4 of program \"replica\" is a collective node, "
                 "not a compute node");
  }
}

TEST(ScaleBytes, MultipliesTheSelectedCollectives) {
  ExecutionGraph g = two_layer_graph();
  const auto grads = select_nodes(g, {.role = "dp"});
  g = scale_bytes(std::move(g), grads, 0.25);
  EXPECT_EQ(g.programs[0].nodes[4].bytes, 25u);
  EXPECT_EQ(g.programs[0].nodes[5].bytes, 50u);
}

TEST(InsertNodes, BeforeGoesRightAfterTheAnchorsDependencies) {
  // Before node 5 (waits for 3): the new node N waits for 3, sits right after it, and node 5
  // waits for N. New order 0 1 2 3 N 4 5 6.
  const std::vector<Insertion> ins{
      {.anchor = {0, 5}, .where = Where::kBefore, .node = {.duration_sec = 7}}};
  const ExecutionGraph g = insert_nodes(two_layer_graph(), ins);
  const auto& n = g.programs[0].nodes;
  ASSERT_EQ(n.size(), 8u);
  EXPECT_EQ(n[4].duration_sec, 7);
  EXPECT_EQ(deps_of(g, 4), (V{3}));
  EXPECT_EQ(n[5].bytes, 100u);
  EXPECT_EQ(deps_of(g, 5), (V{2}));
  EXPECT_EQ(n[6].bytes, 200u);
  EXPECT_EQ(deps_of(g, 6), (V{4}));
  EXPECT_EQ(deps_of(g, 7), (V{6}));
}

TEST(InsertNodes, BeforeOnTheSameStreamGoesRightBeforeTheAnchor) {
  // A compute node before backward b (node 2, compute stream, no deps): it sits at index 2,
  // waits for nothing, and backward b (now 3) waits for it. Order 0 1 N 2 3 4 5 6.
  const std::vector<Insertion> ins{
      {.anchor = {0, 2}, .where = Where::kBefore, .node = {.duration_sec = 7}}};
  const ExecutionGraph g = insert_nodes(two_layer_graph(), ins);
  const auto& n = g.programs[0].nodes;
  ASSERT_EQ(n.size(), 8u);
  EXPECT_EQ(n[2].duration_sec, 7);
  EXPECT_EQ(deps_of(g, 2), V{});
  EXPECT_EQ(n[3].phase, Phase::kBackward);
  EXPECT_EQ(deps_of(g, 3), (V{2}));
  EXPECT_EQ(deps_of(g, 5), (V{3}));  // all-reduce b still waits for backward b
}

TEST(InsertNodes, AfterTakesOverTheAnchorsDependents) {
  // After node 5: N waits for 5, the optimizer (waited for 5) waits for N. Order 0..5 N 6.
  const std::vector<Insertion> ins{
      {.anchor = {0, 5}, .where = Where::kAfter, .node = {.duration_sec = 7}}};
  const ExecutionGraph g = insert_nodes(two_layer_graph(), ins);
  ASSERT_EQ(g.programs[0].nodes.size(), 8u);
  EXPECT_EQ(g.programs[0].nodes[6].duration_sec, 7);
  EXPECT_EQ(deps_of(g, 6), (V{5}));
  EXPECT_EQ(g.programs[0].nodes[7].phase, Phase::kOptimizer);
  EXPECT_EQ(deps_of(g, 7), (V{6}));
}

TEST(RemoveNodes, RejoinsTheDependencies) {
  // Without node 5, the optimizer waits for what 5 waited for: backward a (node 3).
  const std::vector<NodeRef> gone{{0, 5}};
  const ExecutionGraph g = remove_nodes(two_layer_graph(), gone);
  ASSERT_EQ(g.programs[0].nodes.size(), 6u);
  EXPECT_EQ(g.programs[0].nodes[5].phase, Phase::kOptimizer);
  EXPECT_EQ(deps_of(g, 5), (V{3}));
  // A chain: without 3 and 5 the optimizer waits for nothing 3 waited for (3 had no deps).
  const std::vector<NodeRef> chain{{0, 3}, {0, 5}};
  const ExecutionGraph h = remove_nodes(two_layer_graph(), chain);
  EXPECT_EQ(deps_of(h, 4), V{});
}

TEST(RemoveNodes, OnOneMemberOnlyIsRefusedByTheValidator) {
  std::int32_t program = -1;
  const std::vector<int> one{1};
  ExecutionGraph g = isolate_ranks(two_layer_graph(), one, program);
  const std::vector<NodeRef> gone{{program, 5}};
  try {
    (void)remove_nodes(std::move(g), gone);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("remove_nodes: the transformed graph is not valid"),
              std::string::npos)
        << e.what();
  }
}

TEST(Primitives, EveryOneKeepsTheGraphValid) {
  ExecutionGraph g = two_layer_graph();
  const auto all = select_nodes(g, {});
  const auto compute = select_nodes(g, {.kind = NodeKind::kCompute});
  const auto comm = select_nodes(g, {.kind = NodeKind::kCollective});
  g = scale_durations(std::move(g), compute, 3);
  EXPECT_TRUE(validate_execution_graph(g).empty());
  g = scale_bytes(std::move(g), comm, 2);
  EXPECT_TRUE(validate_execution_graph(g).empty());
  std::vector<Insertion> ins;
  for (NodeRef r : all) {
    ins.push_back({.anchor = r, .where = Where::kBefore, .node = {.duration_sec = 1}});
    ins.push_back({.anchor = r, .where = Where::kAfter, .node = {.duration_sec = 1}});
  }
  g = insert_nodes(std::move(g), ins);
  EXPECT_TRUE(validate_execution_graph(g).empty());
  EXPECT_EQ(g.programs[0].nodes.size(), 7u * 3);
  for (std::int32_t i = 0; i < 21; ++i) {  // priorities 0, -1, -2, ... : the reverse of issue order
    g = set_priority(std::move(g), std::vector<NodeRef>{{0, i}}, -i);
    EXPECT_TRUE(validate_execution_graph(g).empty());
  }
  g = order_by_priority(std::move(g), [](const ExecutionGraph&, int, const Node& n) {
    return 1e-3 * static_cast<double>(n.bytes);
  });
  EXPECT_TRUE(validate_execution_graph(g).empty());
  EXPECT_EQ(g.programs[0].nodes.size(), 7u * 3);
  g = remove_nodes(std::move(g), select_nodes(g, {.kind = NodeKind::kCompute}));
  EXPECT_TRUE(validate_execution_graph(g).empty());
  EXPECT_EQ(g.programs[0].nodes.size(), 2u);  // the two all-reduces
}

}  // namespace
}  // namespace dtsim::sim
