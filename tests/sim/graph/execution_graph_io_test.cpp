// The execution graph's file format (sim/graph/GRAPH.md): writing and reading back, the shipped
// example, and the exact message of every kind of refusal, from the reader and from the
// validator. Messages are asserted verbatim (style G19): if the wording changes, these tests
// change in the same commit.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <numeric>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "sim/graph/execution_graph.h"
#include "sim/graph/graph_error.h"
#include "sim/graph/graph_reader.h"
#include "sim/graph/graph_validate.h"
#include "sim/graph/graph_writer.h"

#include <unistd.h>

namespace dtsim::sim {
namespace {

using nlohmann::json;

constexpr const char* kExample = "tests/testdata/graph_pipeline_2stage.json";

std::string file_text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// The message of the GraphError that reading `path` throws, or "<no error>".
std::string read_error(const std::string& path) {
  try {
    (void)read_execution_graph(path);
  } catch (const GraphError& e) {
    return e.what();
  }
  return "<no error>";
}

// The message of the GraphError that parse_execution_graph(`text`, "g.json") throws.
std::string parse_error(const std::string& text) {
  try {
    (void)parse_execution_graph(json::parse(text), "g.json");
  } catch (const GraphError& e) {
    return e.what();
  }
  return "<no error>";
}

// validate_execution_graph's problems, one per line.
std::string problems_of(const ExecutionGraph& g) {
  std::string out;
  for (const std::string& p : validate_execution_graph(g)) {
    out += (out.empty() ? "" : "\n") + p;
  }
  return out;
}

ExecutionGraph parse_text(const std::string& text) {
  return parse_execution_graph(json::parse(text), "g.json");
}

// A file whose communicators, programs and ranks are the given JSON arrays.
std::string doc(const std::string& communicators, const std::string& programs,
                const std::string& ranks) {
  return R"({"format": "dtsim-execution-graph", "version": 1, "communicators": [)" + communicators +
         R"(], "programs": [)" + programs + R"(], "ranks": [)" + ranks + "]}";
}

// Ranks 0 and 1 run program "p" (role "x" bound to communicator "x" = [0, 1]) of `nodes`.
std::string two_ranks(const std::string& nodes) {
  return doc(R"({"name": "x", "ranks": [0, 1]})",
             R"({"name": "p", "comms": ["x"], "nodes": [)" + nodes + "]}",
             R"({"rank_range": [0, 2], "program": "p", "comms": {"x": "x"}})");
}

// Rank 0 runs program "a" and rank 1 program "b", both with role "x" on communicator [0, 1].
std::string two_programs(const std::string& a_nodes, const std::string& b_nodes) {
  return doc(R"({"name": "x", "ranks": [0, 1]})",
             R"({"name": "a", "comms": ["x"], "nodes": [)" + a_nodes +
                 R"(]}, {"name": "b", "comms": ["x"], "nodes": [)" + b_nodes + "]}",
             R"({"rank": 0, "program": "a", "comms": {"x": "x"}},
                {"rank": 1, "program": "b", "comms": {"x": "x"}})");
}

const char* kCompute = R"({"kind": "compute", "duration_sec": 1})";

std::string all_reduce(std::uint64_t bytes) {
  return R"({"kind": "collective", "op": "all-reduce", "comm": "x", "bytes": )" +
         std::to_string(bytes) + "}";
}

std::string p2p(const char* kind, int peer, std::uint64_t bytes) {
  return R"({"kind": ")" + std::string(kind) + R"(", "comm": "x", "peer": )" +
         std::to_string(peer) + R"(, "bytes": )" + std::to_string(bytes) + "}";
}

Node compute(double sec, Phase phase = Phase::kOther) {
  return {.kind = NodeKind::kCompute, .phase = phase, .duration_sec = sec};
}

Node collective(CollectiveOp op, std::int32_t comm, std::uint64_t bytes, std::int32_t root = 0) {
  return {.kind = NodeKind::kCollective, .op = op, .comm = comm, .root = root, .bytes = bytes};
}

Node p2p_node(NodeKind kind, std::int32_t comm, std::int32_t peer, std::uint64_t bytes) {
  return {.kind = kind, .comm = comm, .peer = peer, .bytes = bytes};
}

std::vector<int> iota(int first, int end, int step = 1) {
  std::vector<int> out;
  for (int r = first; r < end; r += step) {
    out.push_back(r);
  }
  return out;
}

// Six ranks: 0-3 share program "worker" (roles tp and dp on 2x2 communicators), rank 4 sends to
// rank 5 on "pp"; every node kind, op and phase, and every tag.
ExecutionGraph hand_built() {
  ExecutionGraph g;
  g.layers = {"embed", "block0", "block1", "head"};
  g.op_classes = {"gemm", "elementwise"};
  g.labels = {"bucket 0", "activations"};
  g.algorithms = {"tree"};
  g.communicators = {{"tp.0", {0, 1}}, {"tp.1", {2, 3}},    {"dp.0", {0, 2}},    {"dp.1", {1, 3}},
                     {"pp", {4, 5}},   {"all", iota(0, 6)}, {"evens", {0, 2, 4}}};
  Program worker{.name = "worker", .comms = {"tp", "dp"}};
  Node fwd = compute(0.25, Phase::kForward);
  fwd.layer = 0;
  fwd.last_layer = 2;
  fwd.op_class = 0;
  fwd.iteration = 3;
  fwd.micro_batch = 1;
  fwd.priority = -2;
  const std::int32_t f = worker.add(fwd);
  const std::int32_t ar = worker.add(collective(CollectiveOp::kAllReduce, 0, 1024), {f});
  Node bwd = compute(0.1, Phase::kBackward);
  bwd.op_class = 1;
  const std::int32_t b = worker.add(bwd, {ar});
  Node bucket = collective(CollectiveOp::kReduceScatter, 1, 4096);
  bucket.label = 0;
  bucket.layer = 1;
  bucket.last_layer = 3;
  bucket.phase = Phase::kBackward;
  bucket.algorithm = 0;
  const std::int32_t rs = worker.add(bucket, {b});
  worker.add(collective(CollectiveOp::kAllGather, 1, 4096), {rs});
  worker.add(collective(CollectiveOp::kBroadcast, 0, 64, 1));
  worker.add(collective(CollectiveOp::kReduce, 1, 64, 1));
  worker.add(collective(CollectiveOp::kAllToAll, 0, 800));
  worker.add(collective(CollectiveOp::kSendRecv, 1, 32, 0));
  worker.add(compute(0, Phase::kRecompute));
  worker.add(compute(1e-6, Phase::kOptimizer), {f, b});
  Program sender{.name = "sender", .comms = {"pp"}};
  Node act = p2p_node(NodeKind::kSend, 0, 1, 100);
  act.label = 1;
  sender.add(act, {sender.add(compute(0.5, Phase::kForward))});
  Program receiver{.name = "receiver", .comms = {"pp"}};
  receiver.add(compute(0.5), {receiver.add(p2p_node(NodeKind::kRecv, 0, 0, 100))});
  g.programs = {worker, sender, receiver, Program{.name = "spare"}};
  g.ranks = {{0, {0, 2}}, {0, {0, 3}}, {0, {1, 2}}, {0, {1, 3}}, {1, {4}}, {2, {4}}};
  return g;
}

// `ranks` data-parallel replicas sharing one program: per iteration a forward pass, then per
// bucket a backward segment and its all-reduce, then the optimizer step.
ExecutionGraph data_parallel(int ranks, int iterations, int buckets) {
  ExecutionGraph g;
  g.communicators = {{"dp", iota(0, ranks)}};
  Program p{.name = "replica", .comms = {"dp"}};
  for (int it = 0; it < iterations; ++it) {
    Node fwd = compute(0.01, Phase::kForward);
    fwd.iteration = it;
    p.add(fwd);
    std::vector<std::int32_t> reduces;
    for (int b = 0; b < buckets; ++b) {
      Node bwd = compute(0.001, Phase::kBackward);
      bwd.iteration = it;
      Node ar = collective(CollectiveOp::kAllReduce, 0, 1 << 20);
      ar.iteration = it;
      ar.phase = Phase::kBackward;
      reduces.push_back(p.add(ar, {p.add(bwd)}));
    }
    Node opt = compute(0.002, Phase::kOptimizer);
    opt.iteration = it;
    p.add(opt, reduces);
  }
  g.programs = {p};
  g.ranks.assign(static_cast<std::size_t>(ranks), RankProgram{0, {0}});
  return g;
}

// ---------------------------------------------------------------------------------------------
// Writing and reading back.

TEST(GraphIo, HandBuiltGraphIsValid) {
  EXPECT_EQ(problems_of(hand_built()), "");
}

TEST(GraphIo, RoundTripsHandBuiltGraph) {
  const ExecutionGraph g = hand_built();
  EXPECT_EQ(parse_text(execution_graph_text(g)), g);
  EXPECT_EQ(parse_execution_graph(json::parse(execution_graph_json(g).dump()), "g.json"), g);
}

TEST(GraphIo, RoundTripsThroughAFile) {
  const ExecutionGraph g = hand_built();
  const std::string path = ::testing::TempDir() + "graph_roundtrip.json";
  write_execution_graph(g, path);
  EXPECT_EQ(read_execution_graph(path), g);
  EXPECT_EQ(file_text(path), execution_graph_text(g));
  std::filesystem::remove(path);
}

TEST(GraphIo, EqualGraphsGiveIdenticalBytes) {
  EXPECT_EQ(execution_graph_text(hand_built()), execution_graph_text(hand_built()));
  // Not a copy of the text: a graph read back writes the same bytes.
  EXPECT_EQ(execution_graph_text(parse_text(execution_graph_text(hand_built()))),
            execution_graph_text(hand_built()));
}

TEST(GraphIo, WriterGroupsRanksAndCommunicatorRanges) {
  const json j = json::parse(execution_graph_text(hand_built()));
  EXPECT_EQ(j["ranks"][0], json::parse(R"({"rank": 0, "program": "worker",
                                           "comms": {"tp": "tp.0", "dp": "dp.0"}})"));
  EXPECT_EQ(j["ranks"].size(), 6u);  // bindings differ: no two consecutive ranks share an entry
  EXPECT_EQ(j["communicators"][0], json::parse(R"({"name": "tp.0", "ranks": [0, 1]})"));
  EXPECT_EQ(j["communicators"][5], json::parse(R"({"name": "all", "rank_range": [0, 6]})"));
  EXPECT_EQ(j["communicators"][6], json::parse(R"({"name": "evens", "rank_range": [0, 5, 2]})"));

  const ExecutionGraph dp = data_parallel(16384, 2, 150);
  const std::string text = execution_graph_text(dp);
  const json k = json::parse(text);
  EXPECT_EQ(k["ranks"], json::parse(R"([{"rank_range": [0, 16384], "program": "replica",
                                          "comms": {"dp": "dp"}}])"));
  EXPECT_EQ(k["communicators"][0]["rank_range"], json::parse("[0, 16384]"));
  EXPECT_LT(text.size(), 100'000u);  // 16,384 ranks, 604 nodes
  EXPECT_EQ(parse_text(text), dp);
}

TEST(GraphIo, WritesDefaultsOnlyWhereTheyAreRequired) {
  EXPECT_EQ(execution_graph_text(parse_text(two_ranks(kCompute))),
            R"({
  "format": "dtsim-execution-graph",
  "version": 1,
  "communicators": [
    {"name": "x", "ranks": [0, 1]}
  ],
  "programs": [
    {
      "name": "p",
      "comms": ["x"],
      "nodes": [
        {"id": 0, "kind": "compute", "duration_sec": 1.0}
      ]
    }
  ],
  "ranks": [
    {"rank_range": [0, 2], "program": "p", "comms": {"x": "x"}}
  ]
}
)");
}

TEST(GraphIo, WriteFailureNamesThePathAndLeavesNoFile) {
  const ExecutionGraph g = hand_built();
  try {
    write_execution_graph(g, "/nonexistent-dir/g.json");
    ADD_FAILURE() << "no error";
  } catch (const GraphError& e) {
    EXPECT_STREQ(e.what(),
                 "/nonexistent-dir/g.json: cannot write execution graph (No such file or "
                 "directory)");
  }
  // The target is a directory: the rename fails, and the temporary file is removed.
  const std::filesystem::path dir = ::testing::TempDir() + "graph_write_dir";
  std::filesystem::create_directories(dir / "g.json");
  try {
    write_execution_graph(g, (dir / "g.json").string());
    ADD_FAILURE() << "no error";
  } catch (const GraphError& e) {
    EXPECT_EQ(std::string(e.what()),
              (dir / "g.json").string() + ": cannot write execution graph (Is a directory)");
  }
  int entries = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    EXPECT_EQ(entry.path().filename(), "g.json");
    ++entries;
  }
  EXPECT_EQ(entries, 1);
  std::filesystem::remove_all(dir);
}

// ---------------------------------------------------------------------------------------------
// The example of GRAPH.md.

TEST(GraphReader, ReadsThePipelineExample) {
  const ExecutionGraph g = read_execution_graph(kExample);
  ASSERT_EQ(g.rank_count(), 2);
  ASSERT_EQ(g.programs.size(), 2u);
  EXPECT_EQ(g.layers, (std::vector<std::string>{"block0", "block1"}));
  EXPECT_EQ(g.labels, (std::vector<std::string>{"activations", "gradients"}));
  EXPECT_EQ(g.communicators, (std::vector<Communicator>{{"pp", {0, 1}}}));
  EXPECT_EQ(g.ranks, (std::vector<RankProgram>{{0, {0}}, {1, {0}}}));
  const Program& stage0 = g.programs[0];
  EXPECT_EQ(stage0.name, "stage0");
  ASSERT_EQ(stage0.nodes.size(), 9u);
  const Node& send = stage0.nodes[3];
  EXPECT_EQ(send.kind, NodeKind::kSend);
  EXPECT_EQ(send.micro_batch, 1);
  EXPECT_EQ(send.peer, 1);
  EXPECT_EQ(send.bytes, 8388608u);
  EXPECT_EQ(send.label, 0);
  EXPECT_EQ(std::vector<std::int32_t>(stage0.deps_of(send).begin(), stage0.deps_of(send).end()),
            std::vector<std::int32_t>{2});
  EXPECT_EQ(g.programs[1].nodes[5].duration_sec, 0.004);
}

TEST(GraphReader, PipelineExampleIsWhatTheWriterWrites) {
  EXPECT_EQ(execution_graph_text(read_execution_graph(kExample)), file_text(kExample));
}

TEST(GraphReader, GraphMdShowsThePipelineExampleVerbatim) {
  const std::string doc_text = file_text("sim/graph/GRAPH.md");
  EXPECT_NE(doc_text.find("```json\n" + file_text(kExample) + "```\n"), std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// Reading.

TEST(GraphReader, OrdersNodesTopologicallyStablyInFileOrder) {
  // File order 0:c, 1:a, 2:b with c waiting for b and b for a; d (no deps) stays before b.
  const ExecutionGraph g = parse_text(two_ranks(
      R"({"id": 30, "kind": "compute", "deps": [20], "duration_sec": 3},
         {"id": 10, "kind": "compute", "duration_sec": 1},
         {"id": 40, "kind": "compute", "duration_sec": 4},
         {"id": 20, "kind": "compute", "deps": [10], "duration_sec": 2})"));
  const Program& p = g.programs[0];
  ASSERT_EQ(p.nodes.size(), 4u);
  std::vector<double> order;
  for (const Node& n : p.nodes) {
    order.push_back(n.duration_sec);
  }
  EXPECT_EQ(order, (std::vector<double>{1, 4, 2, 3}));
  EXPECT_EQ(p.deps, (std::vector<std::int32_t>{0, 2}));
}

TEST(GraphReader, ExpandsRankEntriesAndCollectsNames) {
  const ExecutionGraph g = parse_text(doc(R"({"name": "x", "rank_range": [0, 5]})",
                                          R"({"name": "p", "comms": ["x"], "nodes": [
                {"kind": "compute", "layer": "b", "op_class": "gemm", "duration_sec": 1},
                {"kind": "compute", "layer": "a", "last_layer": "b", "label": "l",
                 "duration_sec": 1}]})",
                                          R"({"ranks": [4, 0], "program": "p", "comms": {"x": "x"}},
             {"rank_range": [1, 4], "program": "p", "comms": {"x": "x"}})"));
  EXPECT_EQ(g.rank_count(), 5);
  EXPECT_EQ(g.layers, (std::vector<std::string>{"b", "a"}));
  EXPECT_EQ(g.op_classes, std::vector<std::string>{"gemm"});
  EXPECT_EQ(g.labels, std::vector<std::string>{"l"});
  EXPECT_EQ(g.programs[0].nodes[1].layer, 1);
  EXPECT_EQ(g.programs[0].nodes[1].last_layer, 0);
  EXPECT_EQ(g.communicators[0].ranks, iota(0, 5));
}

TEST(GraphReader, MissingFileDirectoryAndMalformedJson) {
  EXPECT_EQ(read_error("tests/testdata/no_such_graph.json"),
            "tests/testdata/no_such_graph.json: cannot open execution graph");
  EXPECT_EQ(read_error("tests/testdata"), "tests/testdata: a directory, not an execution graph");
  const std::string path = ::testing::TempDir() + "graph_malformed.json";
  std::ofstream(path) << "{\"format\": \"dtsim-execution-graph\",\n}";
  EXPECT_EQ(read_error(path),
            path +
                ": [json.exception.parse_error.101] parse error at line 2, column 1: syntax "
                "error while parsing object key - unexpected '}'; expected string literal");
  std::filesystem::remove(path);
}

TEST(GraphReader, RefusesOtherFormatsAndVersionsAtOnce) {
  EXPECT_EQ(parse_error(R"({"format": "dtsim-trace", "version": 1, "nodes": 3})"),
            "g.json: /nodes: unknown key (expected one of format, version, layers, op_classes, "
            "labels, algorithms, communicators, programs, ranks)\n"
            "g.json: /format: expected \"dtsim-execution-graph\", got string \"dtsim-trace\"");
  EXPECT_EQ(parse_error(R"({"format": "dtsim-execution-graph", "version": 2})"),
            "g.json: /version: unsupported version 2 (this dtsim reads version 1)");
}

TEST(GraphReader, NotAnObject) {
  EXPECT_EQ(parse_error("[1, 2]"), "g.json: /: expected an object, got array [1,2]");
}

TEST(GraphReader, RefusesKeysThatDoNotBelong) {
  EXPECT_EQ(
      parse_error(two_ranks(
          R"({"kind": "compute", "duration_sec": 1, "bytes": 5, "flops": 2},
             {"kind": "collective", "op": "all-reduce", "comm": "x", "bytes": 8, "root": 0})")),
      "g.json: /programs/0/nodes/0/bytes: does not apply to a compute node (expected one of id, "
      "kind, deps, phase, iteration, micro_batch, layer, last_layer, op_class, label, priority, "
      "duration_sec)\n"
      "g.json: /programs/0/nodes/0/flops: unknown key (expected one of id, kind, deps, phase, "
      "iteration, micro_batch, layer, last_layer, op_class, label, priority, duration_sec)\n"
      "g.json: /programs/0/nodes/1/root: all-reduce has no root (only broadcast, reduce and "
      "send-recv have one)");
}

TEST(GraphReader, WrongTypesAndNames) {
  EXPECT_EQ(
      parse_error(two_ranks(
          R"({"kind": "compute", "duration_sec": "3ms", "phase": "fwd", "iteration": -1},
             {"kind": "collective", "op": "allreduce", "comm": "y", "bytes": -8},
             {"kind": "sent"},
             {"kind": "send", "comm": "x", "bytes": 8})")),
      "g.json: /programs/0/nodes/0/phase: unknown phase \"fwd\" (expected one of forward, "
      "backward, optimizer, recompute, other)\n"
      "g.json: /programs/0/nodes/0/iteration: expected an integer between 0 and 2147483647, got "
      "-1\n"
      "g.json: /programs/0/nodes/0/duration_sec: expected a number, got string \"3ms\"\n"
      "g.json: /programs/0/nodes/1/op: unknown op \"allreduce\" (expected one of all-reduce, "
      "reduce-scatter, all-gather, broadcast, reduce, all-to-all, send-recv)\n"
      "g.json: /programs/0/nodes/1/comm: \"y\" is not a communicator role of program \"p\" (its "
      "roles: x)\n"
      "g.json: /programs/0/nodes/1/bytes: expected an integer >= 0, got number -8\n"
      "g.json: /programs/0/nodes/2/kind: unknown kind \"sent\" (expected one of compute, "
      "collective, send, recv)\n"
      "g.json: /programs/0/nodes/3/peer: missing");
}

TEST(GraphReader, NamesMustBeInTheTablesGiven) {
  EXPECT_EQ(parse_error(R"({"format": "dtsim-execution-graph", "version": 1,
      "layers": ["a", "a", 3], "communicators": [],
      "programs": [{"name": "p", "nodes": [{"kind": "compute", "layer": "b", "duration_sec": 0}]}],
      "ranks": [{"rank": 0, "program": "p"}]})"),
            "g.json: /layers/2: expected a string, got number 3\n"
            "g.json: /programs/0/nodes/0/layer: \"b\" is not in /layers\n"
            "g.json: /layers/1: \"a\" already names /layers/0");
}

TEST(GraphReader, ReportsACycleNamingItsNodes) {
  EXPECT_EQ(parse_error(two_ranks(R"({"id": 7, "kind": "compute", "duration_sec": 1},
      {"id": 1, "kind": "compute", "deps": [3], "duration_sec": 1},
      {"id": 2, "kind": "compute", "deps": [1, 7], "duration_sec": 1},
      {"id": 3, "kind": "compute", "deps": [2], "duration_sec": 1},
      {"id": 4, "kind": "compute", "deps": [3], "duration_sec": 1})")),
            "g.json: /programs/0/nodes/1: a cycle of dependencies: node 1 waits for node 3, "
            "which waits for node 2, which waits for node 1");
}

TEST(GraphReader, UnknownSelfAndRepeatedIds) {
  EXPECT_EQ(parse_error(two_ranks(R"({"id": 1, "kind": "compute", "duration_sec": 1},
                                     {"id": 1, "kind": "compute", "duration_sec": 1},
                                     {"kind": "compute", "deps": [2, 9], "duration_sec": 1},
                                     {"id": 4, "kind": "compute", "duration_sec": 1},
                                     {"kind": "compute", "duration_sec": 1})")),
            "g.json: /programs/0/nodes/1/id: id 1 already identifies /programs/0/nodes/0\n"
            "g.json: /programs/0/nodes/4: its default id 4 (its position) already identifies "
            "/programs/0/nodes/3\n"
            "g.json: /programs/0/nodes/2/deps/0: a node cannot depend on itself\n"
            "g.json: /programs/0/nodes/2/deps/1: no node of program \"p\" has id 9");
}

TEST(GraphReader, RankEntries) {
  EXPECT_EQ(
      parse_error(doc(R"({"name": "x", "ranks": [0, 1]}, {"name": "z", "rank_range": [3, 1]})",
                      R"({"name": "p", "comms": ["x"], "nodes": []})",
                      R"({"rank": 0, "ranks": [1], "program": "p", "comms": {"x": "x"}},
                         {"rank_range": [0, 3], "program": "q"},
                         {"ranks": [5, 5], "program": "p", "comms": {"x": "y", "w": "x"}},
                         {"program": "p"})")),
      "g.json: /communicators/1/rank_range: expected [FIRST, END] or [FIRST, END, STEP]: "
      "integers with 0 <= FIRST < END <= 16777216 and 1 <= STEP <= 16777216, got array [3,1]\n"
      "g.json: /ranks/0: has both rank and ranks (expected one of rank, ranks, rank_range)\n"
      "g.json: /ranks/1/program: no program is named \"q\"\n"
      "g.json: /ranks/2/comms/w: program \"p\" has no role \"w\"\n"
      "g.json: /ranks/2/comms/x: no communicator is named \"y\"\n"
      "g.json: /ranks/3: needs one of rank, ranks, rank_range\n"
      "g.json: /ranks/3/comms: binds no communicator to role \"x\" of program \"p\"\n"
      "g.json: /ranks/2: covers rank 5 more than once\n"
      "g.json: /ranks: no entry covers ranks 3-4");
}

TEST(GraphReader, RanksCoveredTwice) {
  EXPECT_EQ(parse_error(doc(R"({"name": "x", "rank_range": [0, 8]})",
                            R"({"name": "p", "comms": ["x"], "nodes": []})",
                            R"({"rank_range": [0, 6], "program": "p", "comms": {"x": "x"}},
                               {"ranks": [7, 2, 3, 6, 5], "program": "p", "comms": {"x": "x"}})")),
            "g.json: /ranks/1: covers ranks 2-3, 5, already covered by /ranks/0");
}

TEST(GraphReader, ReportsEveryProblemAtOnce) {
  EXPECT_EQ(
      parse_error(R"({"format": "dtsim-execution-graph", "version": 1, "comment": "x",
        "communicators": [{"name": "x", "ranks": [0, 1]}, {"name": "x", "ranks": []}],
        "programs": [{"name": "p", "comms": ["x"], "nodes": [
          {"kind": "compute", "duration_sec": -1},
          {"kind": "collective", "op": "broadcast", "comm": "x", "root": 1,
           "bytes": 2000000000000000}]}],
        "ranks": [{"rank_range": [0, 2], "program": "p", "comms": {"x": "x"}},
                  {"rank": 2, "program": "nope"}]})"),
      "g.json: /comment: unknown key (expected one of format, version, layers, op_classes, "
      "labels, algorithms, communicators, programs, ranks)\n"
      "g.json: /ranks/1/program: no program is named \"nope\"\n"
      "g.json: /communicators/1/name: \"x\" already names /communicators/0\n"
      "g.json: /communicators/1: communicator \"x\" has no ranks\n"
      "g.json: /programs/0/nodes/0/duration_sec: expected a finite number >= 0, got -1\n"
      "g.json: /programs/0/nodes/1/bytes: expected at most 2^50 (1 PiB), got 2000000000000000");
}

// ---------------------------------------------------------------------------------------------
// What spans ranks, through the reader.

TEST(GraphValidate, CrossRankDeadlock) {
  // Rank 0: A on x, then B on y after A. Rank 1: B on y, then A on x after B.
  const std::string nodes_a =
      R"({"kind": "collective", "op": "all-reduce", "comm": "x", "bytes": 8},
         {"kind": "collective", "op": "all-reduce", "comm": "y", "bytes": 8, "deps": [0]})";
  const std::string nodes_b =
      R"({"kind": "collective", "op": "all-reduce", "comm": "y", "bytes": 8},
         {"kind": "collective", "op": "all-reduce", "comm": "x", "bytes": 8, "deps": [0]})";
  const std::string text =
      doc(R"({"name": "x", "ranks": [0, 1]}, {"name": "y", "ranks": [0, 1]})",
          R"({"name": "a", "comms": ["x", "y"], "nodes": [)" + nodes_a +
              R"(]}, {"name": "b", "comms": ["x", "y"], "nodes": [)" + nodes_b + "]}",
          R"({"rank": 0, "program": "a", "comms": {"x": "x", "y": "y"}},
         {"rank": 1, "program": "b", "comms": {"x": "x", "y": "y"}})");
  EXPECT_EQ(parse_error(text),
            "g.json: /ranks/0: deadlock: rank 0 stuck at /programs/0/nodes/0 (all-reduce, "
            "collective 0 on communicator \"x\"), never issued by rank 1\n"
            "g.json: /ranks/1: deadlock: rank 1 stuck at /programs/1/nodes/0 (all-reduce, "
            "collective 0 on communicator \"y\"), never issued by rank 0");
}

TEST(GraphValidate, DeadlockThroughStreamOrderOfSendsAndReceives) {
  // Both ranks send first on the same stream, then receive: each send waits for a receive the
  // other rank issues only after its own send.
  EXPECT_EQ(parse_error(two_programs(p2p("send", 1, 8) + "," + p2p("recv", 1, 8),
                                     p2p("send", 0, 8) + "," + p2p("recv", 0, 8))),
            "g.json: /ranks/0: deadlock: rank 0 stuck at /programs/0/nodes/0 (send 0 to rank 1 "
            "on communicator \"x\"), its receive never issued by rank 1\n"
            "g.json: /ranks/1: deadlock: rank 1 stuck at /programs/1/nodes/0 (send 0 to rank 0 "
            "on communicator \"x\"), its receive never issued by rank 0");
}

TEST(GraphValidate, NoDeadlockWhenTheOrderIsConsistent) {
  EXPECT_EQ(parse_error(two_programs(p2p("send", 1, 8) + "," + p2p("recv", 1, 8),
                                     p2p("recv", 0, 8) + "," + p2p("send", 0, 8))),
            "<no error>");
  // Through compute: rank 1's send waits for a compute node that waits for its receive.
  EXPECT_EQ(parse_error(two_programs(
                p2p("send", 1, 8) + "," + p2p("recv", 1, 8),
                p2p("recv", 0, 8) + R"(, {"kind": "compute", "deps": [0], "duration_sec": 1},
                   {"kind": "send", "comm": "x", "peer": 0, "bytes": 8, "deps": [1]})")),
            "<no error>");
}

TEST(GraphValidate, MembersDisagreeOnACollective) {
  EXPECT_EQ(
      parse_error(
          two_programs(all_reduce(8) + "," + all_reduce(16),
                       all_reduce(8) + R"(, {"kind": "collective", "op": "broadcast", "comm": "x",
                                "root": 1, "bytes": 32})")),
      "g.json: /communicators/0: collective 1 on communicator \"x\" differs in op, bytes and root "
      "between rank 0 (all-reduce of 16 bytes, /programs/0/nodes/1) and rank 1 (broadcast of 32 "
      "bytes from root 1, /programs/1/nodes/1)");
}

TEST(GraphValidate, MembersDisagreeOnACollectivesAlgorithm) {
  EXPECT_EQ(
      parse_error(two_programs(
          R"({"kind": "collective", "op": "all-reduce", "comm": "x", "bytes": 8, "algorithm": "ring"})",
          R"({"kind": "collective", "op": "all-reduce", "comm": "x", "bytes": 8, "algorithm": "tree"})")),
      "g.json: /communicators/0: collective 0 on communicator \"x\" differs in algorithm between "
      "rank 0 (all-reduce of 8 bytes by ring, /programs/0/nodes/0) and rank 1 (all-reduce of 8 "
      "bytes by tree, /programs/1/nodes/0)");
  EXPECT_EQ(
      parse_error(two_ranks(R"({"kind": "compute", "duration_sec": 1, "algorithm": "ring"})")),
      "g.json: /programs/0/nodes/0/algorithm: does not apply to a compute node (expected "
      "one of id, kind, deps, phase, iteration, micro_batch, layer, last_layer, op_class, "
      "label, priority, duration_sec)");
}

TEST(GraphValidate, MemberWithFewerCollectives) {
  EXPECT_EQ(parse_error(two_programs(all_reduce(8), all_reduce(8) + "," + all_reduce(8))),
            "g.json: /communicators/0: rank 0 runs 1 collective on communicator \"x\", rank 1 "
            "runs 2: rank 1 would wait forever in collective 1 (/programs/1/nodes/1)");
}

TEST(GraphValidate, SendsAndReceivesMustMatch) {
  EXPECT_EQ(
      parse_error(two_programs(p2p("send", 1, 8) + "," + p2p("send", 1, 8), p2p("recv", 0, 8))),
      "g.json: /programs/0/nodes/1: send 1 from rank 0 to rank 1 on communicator \"x\" has "
      "no receive: rank 1 posts 1 receive from rank 0 there");
  EXPECT_EQ(parse_error(two_programs(kCompute, p2p("recv", 0, 8))),
            "g.json: /programs/1/nodes/0: receive 0 at rank 1 from rank 0 on communicator \"x\" "
            "has no send: rank 0 posts 0 sends to rank 1 there");
  EXPECT_EQ(parse_error(two_programs(p2p("send", 1, 8), p2p("recv", 0, 9))),
            "g.json: /programs/0/nodes/0/bytes: send 0 from rank 0 to rank 1 on communicator \"x\" "
            "carries 8 bytes, but its receive (/programs/1/nodes/0) 9");
}

TEST(GraphValidate, PeersAndRootsInsideTheCommunicator) {
  EXPECT_EQ(
      parse_error(two_programs(
          p2p("send", 2, 8) + "," + p2p("recv", 0, 8) +
              R"(, {"kind": "collective", "op": "reduce", "comm": "x", "root": 2, "bytes": 8})",
          R"({"kind": "collective", "op": "reduce", "comm": "x", "root": 2, "bytes": 8})")),
      "g.json: /programs/0/nodes/0/peer: peer 2 is outside communicator \"x\" (2 ranks), which "
      "rank 0 binds role \"x\" to\n"
      "g.json: /programs/0/nodes/2/root: root 2 is outside communicator \"x\" (2 ranks), which "
      "rank 0 binds role \"x\" to\n"
      "g.json: /programs/1/nodes/0/root: root 2 is outside communicator \"x\" (2 ranks), which "
      "rank 1 binds role \"x\" to\n"
      "g.json: /programs/0/nodes/1/peer: rank 0 would receive from itself: peer 0 is its own "
      "local rank in communicator \"x\"");
}

TEST(GraphValidate, RankNotAMemberOfItsCommunicator) {
  EXPECT_EQ(parse_error(doc(R"({"name": "x", "ranks": [0, 1]}, {"name": "y", "ranks": [0]})",
                            R"({"name": "p", "comms": ["a", "b"], "nodes": []})",
                            R"({"rank_range": [0, 4], "program": "p",
                                "comms": {"a": "x", "b": "y"}})")),
            "g.json: /ranks/0: rank 1: not a member of communicator \"y\" (/communicators/1), "
            "bound to role \"b\"\n"
            "g.json: /ranks/0: ranks 2-3: not a member of communicator \"x\" (/communicators/0), "
            "bound to role \"a\"\n"
            "g.json: /ranks/0: ranks 2-3: not a member of communicator \"y\" (/communicators/1), "
            "bound to role \"b\"");
  EXPECT_EQ(parse_error(doc(R"({"name": "x", "ranks": [0, 1]})",
                            R"({"name": "p", "comms": ["a", "b"], "nodes": []})",
                            R"({"rank_range": [0, 2], "program": "p",
                                "comms": {"a": "x", "b": "x"}})")),
            "g.json: /ranks/0: ranks 0-1: roles \"a\" and \"b\" are both bound to communicator "
            "\"x\" (/communicators/0)");
}

TEST(GraphValidate, CommunicatorsListRanksOfTheGraphOnce) {
  EXPECT_EQ(parse_error(doc(R"({"name": "x", "ranks": [0, 1, 1, 7, 0, 8]})",
                            R"({"name": "p", "nodes": []})",
                            R"({"rank_range": [0, 2], "program": "p"})")),
            "g.json: /communicators/0: lists ranks 7-8, outside the graph's ranks 0 to 1\n"
            "g.json: /communicators/0: lists ranks 0-1 more than once");
}

// ---------------------------------------------------------------------------------------------
// The validator on values the reader never produces.

TEST(GraphValidate, DependenciesPointToEarlierNodes) {
  ExecutionGraph g = data_parallel(2, 1, 1);
  Program& p = g.programs[0];
  p.deps[0] = 3;  // node 2 (the all-reduce) waits for the optimizer step after it
  p.deps.push_back(3);
  p.nodes[3].dep_end = static_cast<std::int32_t>(p.deps.size());
  p.deps.push_back(9);
  p.nodes[3].dep_end = static_cast<std::int32_t>(p.deps.size());
  EXPECT_EQ(problems_of(g),
            "/programs/0/nodes/2/deps/0: node 3 comes later: a node depends only on earlier nodes\n"
            "/programs/0/nodes/3/deps/1: a node cannot depend on itself\n"
            "/programs/0/nodes/3/deps/2: no node 9 in program \"replica\" (it has 4 nodes)");
  p.nodes[1].dep_begin = 5;
  EXPECT_EQ(problems_of(g),
            "/programs/0/nodes/1: deps [5, 0) of Program::deps (4 entries) do not continue the "
            "previous node's, which end at 0");
}

TEST(GraphValidate, FieldsOfOtherKindsHoldTheirDefaults) {
  ExecutionGraph g = data_parallel(2, 1, 1);
  Node& fwd = g.programs[0].nodes[0];
  fwd.comm = 0;
  fwd.bytes = 5;
  fwd.op = CollectiveOp::kBroadcast;
  Node& ar = g.programs[0].nodes[2];
  ar.comm = -1;
  ar.root = 1;
  ar.duration_sec = std::numeric_limits<double>::quiet_NaN();
  g.programs[0].nodes[3].duration_sec = std::numeric_limits<double>::infinity();
  EXPECT_EQ(problems_of(g),
            "/programs/0/nodes/0/comm: does not apply to a compute node (must be -1, is 0)\n"
            "/programs/0/nodes/0/bytes: does not apply to a compute node (must be 0, is 5)\n"
            "/programs/0/nodes/0/op: does not apply to a compute node (must be all-reduce, is "
            "broadcast)\n"
            "/programs/0/nodes/2/comm: expected a role index of program \"replica\" (0 to 0), got "
            "-1\n"
            "/programs/0/nodes/2/duration_sec: does not apply to a collective node (must be 0, is "
            "nan)\n"
            "/programs/0/nodes/2/root: all-reduce has no root (must be 0, is 1)\n"
            "/programs/0/nodes/3/duration_sec: expected a finite number >= 0, got inf");
}

TEST(GraphValidate, IndicesIntoTablesProgramsAndCommunicators) {
  ExecutionGraph g = data_parallel(3, 1, 1);
  g.layers = {"a"};
  g.programs[0].nodes[0].layer = 1;
  g.programs[0].nodes[0].label = 0;
  g.programs[0].nodes[1].micro_batch = -2;
  g.programs[0].nodes[2].kind = static_cast<NodeKind>(9);
  g.ranks[0].program = 4;
  g.ranks[1].comms = {0, 0};
  g.ranks[2].comms = {3};
  EXPECT_EQ(problems_of(g),
            "/programs/0/nodes/0/layer: expected -1 or an index into /layers (0 to 0), got 1\n"
            "/programs/0/nodes/0/label: expected -1 (/labels is empty), got 0\n"
            "/programs/0/nodes/1/micro_batch: expected an integer >= 0, got -2\n"
            "/programs/0/nodes/2/kind: not a node kind (9)\n"
            "/ranks/0: rank 0: runs program 4, but the graph has 1 program\n"
            "/ranks/1: rank 1: binds 2 communicators, but program \"replica\" has 1 role (dp)\n"
            "/ranks/2: rank 2: role \"dp\" is bound to communicator 3, but the graph has 1 "
            "communicator");
}

TEST(GraphValidate, EmptyGraph) {
  EXPECT_EQ(problems_of(ExecutionGraph{}), "/ranks: a graph needs at least one rank");
}

TEST(GraphValidate, ManyStuckRanksAreSummarised) {
  // 12 ranks in a ring of sends, each sending to the next before receiving from the previous.
  ExecutionGraph g;
  const int n = 12;
  g.communicators = {{"ring", iota(0, n)}};
  for (int r = 0; r < n; ++r) {
    Program p{.name = "r" + std::to_string(r), .comms = {"ring"}};
    p.add(p2p_node(NodeKind::kSend, 0, (r + 1) % n, 8));
    p.add(p2p_node(NodeKind::kRecv, 0, (r + n - 1) % n, 8));
    g.programs.push_back(p);
    g.ranks.push_back({r, {0}});
  }
  std::string expected;
  for (int r = 0; r < 8; ++r) {
    expected += "/ranks/" + std::to_string(r) + ": deadlock: rank " + std::to_string(r) +
                " stuck at /programs/" + std::to_string(r) + "/nodes/0 (send 0 to rank " +
                std::to_string((r + 1) % n) + " on communicator \"ring\"), its receive never " +
                "issued by rank " + std::to_string((r + 1) % n) + "\n";
  }
  EXPECT_EQ(problems_of(g), expected + "/ranks: deadlock: 4 more ranks stuck");
  // One rank receiving first breaks the cycle.
  std::swap(g.programs[5].nodes[0], g.programs[5].nodes[1]);
  EXPECT_EQ(problems_of(g), "");
}

// (Its speed is measured by experiments/bench, not asserted here: no timed tests.)
TEST(GraphValidate, DataParallelGraphOf16384RanksIsValid) {
  const ExecutionGraph g = data_parallel(16384, 2, 150);  // 300 all-reduces
  EXPECT_TRUE(validate_execution_graph(g).empty());
}

TEST(GraphValidate, TensorTimesDataParallelGraphIsValid) {
  // 4096 ranks: tp groups of 8 consecutive ranks, dp groups of 512 strided ones. Per bucket an
  // all-gather on tp, a backward segment, an all-reduce on dp.
  ExecutionGraph g;
  for (int t = 0; t < 512; ++t) {
    g.communicators.push_back({"tp." + std::to_string(t), iota(8 * t, 8 * t + 8)});
  }
  for (int d = 0; d < 8; ++d) {
    g.communicators.push_back({"dp." + std::to_string(d), iota(d, 4096, 8)});
  }
  Program p{.name = "worker", .comms = {"dp", "tp"}};
  std::int32_t last = p.add(compute(0.01, Phase::kForward));
  std::vector<std::int32_t> reduces;
  for (int b = 0; b < 50; ++b) {
    last = p.add(compute(0.001, Phase::kBackward),
                 {p.add(collective(CollectiveOp::kAllGather, 1, 4096), {last})});
    reduces.push_back(p.add(collective(CollectiveOp::kAllReduce, 0, 1 << 20), {last}));
  }
  p.add(compute(0.002, Phase::kOptimizer), reduces);
  g.programs = {p};
  for (int r = 0; r < 4096; ++r) {
    g.ranks.push_back({0, {512 + r % 8, r / 8}});
  }
  EXPECT_EQ(problems_of(g), "");
  EXPECT_EQ(parse_text(execution_graph_text(g)), g);
}

TEST(GraphValidate, NeverCrashesOnWildValues) {
  // Every int32 field of every node of the hand-built graph, in turn, set to wild values.
  const std::vector<std::int32_t> wild{-7,
                                       -1,
                                       0,
                                       1,
                                       2,
                                       9,
                                       std::numeric_limits<std::int32_t>::max(),
                                       std::numeric_limits<std::int32_t>::min()};
  const ExecutionGraph base = hand_built();
  int problems = 0;
  for (std::size_t p = 0; p < base.programs.size(); ++p) {
    for (std::size_t i = 0; i < base.programs[p].nodes.size(); ++i) {
      for (int field = 0; field < 10; ++field) {
        for (std::int32_t v : wild) {
          ExecutionGraph g = base;
          Node& n = g.programs[p].nodes[i];
          std::int32_t* slots[] = {&n.iteration, &n.micro_batch, &n.layer, &n.last_layer,
                                   &n.op_class,  &n.label,       &n.comm,  &n.peer,
                                   &n.root,      &n.dep_begin};
          *slots[field] = v;
          problems += static_cast<int>(validate_execution_graph(g).size());
        }
      }
    }
  }
  for (std::int32_t v : wild) {
    for (std::size_t r = 0; r < base.ranks.size(); ++r) {
      ExecutionGraph g = base;
      g.ranks[r].program = v;
      problems += static_cast<int>(validate_execution_graph(g).size());
      g = base;
      g.ranks[r].comms[0] = v;
      problems += static_cast<int>(validate_execution_graph(g).size());
      g = base;
      g.communicators[r].ranks[0] = v;
      problems += static_cast<int>(validate_execution_graph(g).size());
    }
  }
  EXPECT_GT(problems, 0);
}

}  // namespace
}  // namespace dtsim::sim

namespace dtsim::sim {
namespace {

// A communicator's local ranks are its list's positions, whatever the order of its global ranks.
TEST(LocalRanks, AGlobalRanksPositionInEachCommunicator) {
  ExecutionGraph g;
  g.communicators = {{.name = "a", .ranks = {5, 2, 9}}, {.name = "b", .ranks = {2, 5}}};
  const LocalRanks local(g);
  EXPECT_EQ(local.of(0, 5), 0);
  EXPECT_EQ(local.of(0, 9), 2);
  EXPECT_EQ(local.of(1, 5), 1);
  EXPECT_EQ(local.of(1, 9), -1);
  EXPECT_EQ(local.of(0, 3), -1);
}

}  // namespace
}  // namespace dtsim::sim
