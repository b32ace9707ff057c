// Writing execution graphs as Chakra execution traces, without SimGrid: ASTRA-sim's
// microbenchmarks reproduced byte for byte from the shipped files, and graphs written then read
// back (the same nodes, tags, communicators and dependencies on every rank).
#include "sim/chakra/chakra_writer.h"

#include <gtest/gtest.h>

#include "sim/chakra/chakra_error.h"
#include "sim/chakra/chakra_reader.h"
#include "sim/graph/graph_reader.h"
#include "sim/strategies/data_parallel.h"
#include "sim/strategies/hybrid.h"
#include "sim/strategies/model_pieces.h"
#include "tests/sim/chakra/chakra_test_files.h"
#include "workloads/trace_reader.h"

namespace dtsim::sim {
namespace {

using chakra_test::ChakraTest;

// One node as a rank sees it, with every index resolved to what it names: the form in which two
// graphs that number their programs, tables and communicators differently still compare.
struct FlatNode {
  NodeKind kind;
  Phase phase;
  CollectiveOp op;
  std::int32_t iteration, micro_batch, root, priority;
  std::string layer, last_layer, op_class, label, algorithm;
  std::string comm;             // the communicator's name ("" for compute)
  std::vector<int> comm_ranks;  // its global ranks, in local order
  int peer;                     // global rank of a send's or receive's peer, else -1
  double duration_sec;
  std::uint64_t bytes;
  std::vector<std::int32_t> deps;
  bool operator==(const FlatNode&) const = default;
};

std::vector<std::vector<FlatNode>> flatten(const ExecutionGraph& g) {
  const auto name = [](const std::vector<std::string>& table, std::int32_t i) {
    return i < 0 ? std::string() : table[static_cast<std::size_t>(i)];
  };
  std::vector<std::vector<FlatNode>> ranks;
  for (int r = 0; r < g.rank_count(); ++r) {
    const Program& p = g.program_of(r);
    auto& nodes = ranks.emplace_back();
    for (const Node& n : p.nodes) {
      const Communicator* c = n.comm < 0 ? nullptr : &g.communicator_of(r, n);
      nodes.push_back({.kind = n.kind,
                       .phase = n.phase,
                       .op = n.op,
                       .iteration = n.iteration,
                       .micro_batch = n.micro_batch,
                       .root = n.root,
                       .priority = n.priority,
                       .layer = name(g.layers, n.layer),
                       .last_layer = name(g.layers, n.last_layer),
                       .op_class = name(g.op_classes, n.op_class),
                       .label = name(g.labels, n.label),
                       .algorithm = name(g.algorithms, n.algorithm),
                       .comm = c == nullptr ? "" : c->name,
                       .comm_ranks = c == nullptr ? std::vector<int>{} : c->ranks,
                       .peer = n.peer < 0 ? -1 : c->ranks[static_cast<std::size_t>(n.peer)],
                       .duration_sec = n.duration_sec,
                       .bytes = n.bytes,
                       .deps = {p.deps_of(n).begin(), p.deps_of(n).end()}});
    }
  }
  return ranks;
}

TEST(ChakraMicrobenchmark, ReproducesTheShippedFilesByteForByte) {
  const std::vector<std::pair<std::string, CollectiveOp>> ops{
      {"all_reduce", CollectiveOp::kAllReduce},
      {"all_gather", CollectiveOp::kAllGather},
      {"reduce_scatter", CollectiveOp::kReduceScatter},
      {"all_to_all", CollectiveOp::kAllToAll}};
  for (const auto& [name, op] : ops) {
    for (const int ranks : {4, 8}) {
      const ChakraMicrobenchmark b{.op = op, .ranks = ranks, .bytes = 1 << 20};
      EXPECT_EQ(microbenchmark_name(b), name + "_" + std::to_string(ranks) + "npus_1MB");
      for (int r = 0; r < ranks; ++r) {
        const std::string shipped =
            chakra_test::slurp("tests/testdata/chakra/" + name + "/" + std::to_string(ranks) +
                               "npus_1MB/" + name + "." + std::to_string(r) + ".et");
        ASSERT_FALSE(shipped.empty());
        EXPECT_EQ(microbenchmark_rank_file(b, r), shipped) << name << " rank " << r;
      }
    }
  }
}

TEST(ChakraMicrobenchmark, NamesItsSizeInTheLargestUnitThatDividesIt) {
  EXPECT_EQ(microbenchmark_name({.op = CollectiveOp::kAllReduce, .ranks = 1024, .bytes = 1u << 30}),
            "all_reduce_1024npus_1GB");
  EXPECT_EQ(microbenchmark_name({.op = CollectiveOp::kAllToAll, .ranks = 16, .bytes = 3 << 10}),
            "all_to_all_16npus_3KB");
  EXPECT_EQ(microbenchmark_name({.op = CollectiveOp::kBroadcast, .ranks = 2, .bytes = 1000}),
            "broadcast_2npus_1000B");
}

TEST_F(ChakraTest, GeneratedMicrobenchmarkReadsBackAsItsCollective) {
  write_chakra_microbenchmark({.op = CollectiveOp::kReduceScatter, .ranks = 64, .bytes = 1 << 26},
                              prefix_);
  const ChakraImport t = read_chakra_trace(prefix_, 64);
  EXPECT_EQ(t.graph.rank_count(), 64);
  ASSERT_EQ(t.graph.programs.size(), 1u);
  EXPECT_EQ(t.graph.programs[0].nodes[0].op, CollectiveOp::kReduceScatter);
  EXPECT_EQ(t.graph.programs[0].nodes[0].bytes, 1u << 26);
}

TEST_F(ChakraTest, GraphFilesRoundTrip) {
  for (const char* file :
       {"graph_pipeline_2stage", "graph_all_to_all", "graph_broadcast_subgroup",
        "graph_cross_streams", "graph_disjoint_groups", "graph_one_communicator",
        "graph_send_in_and_out", "graph_subgroup_ring", "graph_two_communicators",
        "graph_two_pairs_send", "graph_two_senders_one_node", "graph_iterations_per_stream"}) {
    SCOPED_TRACE(file);
    const ExecutionGraph g = read_execution_graph("tests/testdata/" + std::string(file) + ".json");
    write_chakra_trace(g, prefix_);
    const ChakraImport back = read_chakra_trace(prefix_, g.rank_count());
    EXPECT_EQ(flatten(back.graph), flatten(g));
    EXPECT_EQ(back.warnings, std::vector<std::string>{});
    for (int r = 0; r < g.rank_count(); ++r) {
      chakra_test::fs::remove(chakra_rank_path(prefix_, r));
    }
  }
}

TEST_F(ChakraTest, DataParallelGraphRoundTripsWithItsTags) {
  const workloads::Workload w = workloads::read_workload("workloads/traces/resnet50_v100_b32.json");
  ExecutionGraph g = build_data_parallel(w, {.ranks = 4, .iterations = 2});
  g.algorithms = {"tree"};  // one bucket of each iteration names its own algorithm
  for (Node& n : g.programs[0].nodes) {
    if (n.kind == NodeKind::kCollective && n.label == 0) {
      n.algorithm = 0;
    }
  }
  write_chakra_trace(g, prefix_);
  const ChakraImport back = read_chakra_trace(prefix_, 4);
  EXPECT_EQ(flatten(back.graph), flatten(g));
  EXPECT_EQ(back.graph.programs.size(), 1u);  // the replicas share one program again
  EXPECT_EQ(back.stats.compute_nodes + back.stats.collective_nodes,
            static_cast<std::int64_t>(4 * g.programs[0].nodes.size()));
}

TEST_F(ChakraTest, HybridGraphRoundTripsWithItsProgramsAndRoles) {
  // ResNet-50's layers as a pipeline of 2 stages, tensor and data parallel by 2: 8 ranks, one
  // program per stage, each rank binding its own TP and DP groups.
  const HybridModel model =
      model_from_trace(workloads::read_workload("workloads/traces/resnet50_v100_b32.json"));
  const HybridJob job{.degrees = {.tp = 2, .dp = 2, .pp = 2}, .micro_batches = 4, .iterations = 2};
  ASSERT_EQ(check_hybrid(model, job), "");
  const ExecutionGraph g = build_hybrid(model, job);
  write_chakra_trace(g, prefix_);
  const ChakraImport back = read_chakra_trace(prefix_, 8);
  EXPECT_EQ(flatten(back.graph), flatten(g));
  // Roles and program names come back too, so the stages' ranks share their programs again.
  ASSERT_EQ(back.graph.programs.size(), g.programs.size());
  for (std::size_t p = 0; p < g.programs.size(); ++p) {
    EXPECT_EQ(back.graph.programs[p].name, g.programs[p].name);
    EXPECT_EQ(back.graph.programs[p].comms, g.programs[p].comms);
  }
}

TEST(ChakraWriter, RefusesASendRecvCollective) {
  ExecutionGraph g;
  g.communicators.push_back({.name = "x", .ranks = {0, 1}});
  Program p{.name = "p", .comms = {"x"}};
  p.add({.kind = NodeKind::kCollective, .op = CollectiveOp::kSendRecv, .comm = 0, .bytes = 8});
  g.programs.push_back(p);
  g.ranks.assign(2, {.program = 0, .comms = {0}});
  try {
    (void)chakra_rank_file(g, 1);
    FAIL() << "no error";
  } catch (const ChakraError& e) {
    EXPECT_STREQ(e.what(), "rank 1: node 0: a send-recv collective has no Chakra comm_type");
  }
}

}  // namespace
}  // namespace dtsim::sim
