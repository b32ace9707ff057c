// The small hand-built graph the what-if tests rewrite (tests/sim/whatif/).
#ifndef DTSIM_TESTS_SIM_WHATIF_WHATIF_GRAPHS_H_
#define DTSIM_TESTS_SIM_WHATIF_WHATIF_GRAPHS_H_

#include "sim/graph/execution_graph.h"

namespace dtsim::sim {

// Two data-parallel ranks, one program, two layers a and b, one iteration:
//   0 forward a 1 s (matmul)      1 forward b 0.5 s (memory)
//   2 backward b 1 s (memory)     3 backward a 2 s (matmul)
//   4 all-reduce of b's gradients, 100 bytes (waits for 2)
//   5 all-reduce of a's gradients, 200 bytes (waits for 3)
//   6 optimizer 0.25 s (memory, waits for 5)
inline ExecutionGraph two_layer_graph() {
  ExecutionGraph g;
  g.layers = {"a", "b"};
  g.op_classes = {"matmul", "memory"};
  g.labels = {"bucket 0", "bucket 1"};
  g.communicators = {{.name = "dp", .ranks = {0, 1}}};
  Program p{.name = "replica", .comms = {"dp"}};
  p.add({.phase = Phase::kForward, .layer = 0, .op_class = 0, .duration_sec = 1.0});
  p.add({.phase = Phase::kForward, .layer = 1, .op_class = 1, .duration_sec = 0.5});
  p.add({.phase = Phase::kBackward, .layer = 1, .op_class = 1, .duration_sec = 1.0});
  p.add({.phase = Phase::kBackward, .layer = 0, .op_class = 0, .duration_sec = 2.0});
  p.add({.kind = NodeKind::kCollective,
         .phase = Phase::kBackward,
         .layer = 1,
         .last_layer = 1,
         .label = 0,
         .comm = 0,
         .bytes = 100},
        {2});
  p.add({.kind = NodeKind::kCollective,
         .phase = Phase::kBackward,
         .layer = 0,
         .last_layer = 0,
         .label = 1,
         .comm = 0,
         .bytes = 200},
        {3});
  p.add({.phase = Phase::kOptimizer, .op_class = 1, .duration_sec = 0.25}, {5});
  g.programs.push_back(std::move(p));
  g.ranks.assign(2, RankProgram{.program = 0, .comms = {0}});
  return g;
}

// The deps of node `i` of program 0, as a vector.
inline std::vector<std::int32_t> deps_of(const ExecutionGraph& g, std::size_t i,
                                         std::size_t program = 0) {
  const Program& p = g.programs[program];
  const auto d = p.deps_of(p.nodes[i]);
  return {d.begin(), d.end()};
}

}  // namespace dtsim::sim

#endif  // DTSIM_TESTS_SIM_WHATIF_WHATIF_GRAPHS_H_
