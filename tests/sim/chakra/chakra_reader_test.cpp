// Reading Chakra execution traces into execution graphs, without SimGrid: the files ASTRA-sim
// ships, every node type and attribute the reader maps, what it reports as not used, and its
// error messages (verbatim, workloads/CHAKRA.md).
#include "sim/chakra/chakra_reader.h"

#include <gtest/gtest.h>

#include "sim/chakra/chakra_error.h"
#include "tests/sim/chakra/chakra_test_files.h"

namespace dtsim::sim {
namespace {

using chakra_test::attr;
using chakra_test::ChakraTest;
using chakra_test::collective;
using chakra_test::node;
namespace et = chakra_et;

const std::string kShipped = "tests/testdata/chakra/";

std::string error_of(const std::string& prefix, int ranks) {
  try {
    (void)read_chakra_trace(prefix, ranks);
  } catch (const ChakraError& e) {
    return e.what();
  }
  return "(no error)";
}

// The shipped all_reduce.5.et, decoded by hand (xxd): metadata {version "0.0.4"}, then one node
// {id 5, name "all_reduce_8npus_1MB", type 7 (COMM_COLL_NODE), attr is_cpu_op bool_val false,
// comm_type int64_val 0 (ALL_REDUCE), comm_size int64_val 1048576 (bytes 80 80 40)}; every rank
// alike but for its id, and no pg_name: one all-reduce of 1 MiB over all 8 ranks.
TEST(ChakraReader, ShippedAllReduceIsOneAllReduceOfOneMibOnEveryRank) {
  const ChakraImport t = read_chakra_trace(kShipped + "all_reduce/8npus_1MB/all_reduce", 8);
  const ExecutionGraph& g = t.graph;
  ASSERT_EQ(g.rank_count(), 8);
  ASSERT_EQ(g.communicators.size(), 1u);
  EXPECT_EQ(g.communicators[0].name, "world");
  EXPECT_EQ(g.communicators[0].ranks, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  ASSERT_EQ(g.programs.size(), 1u);  // the ranks' programs are equal: they share one
  ASSERT_EQ(g.programs[0].nodes.size(), 1u);
  const Node& n = g.programs[0].nodes[0];
  EXPECT_EQ(n.kind, NodeKind::kCollective);
  EXPECT_EQ(n.op, CollectiveOp::kAllReduce);
  EXPECT_EQ(n.bytes, 1048576u);
  EXPECT_EQ(g.labels, (std::vector<std::string>{"all_reduce_8npus_1MB"}));  // the node's name
  EXPECT_EQ(t.stats.nodes, 8);
  EXPECT_EQ(t.stats.collective_nodes, 8);
  EXPECT_EQ(t.stats.unknown_attributes + t.stats.unknown_fields + t.stats.unknown_type_nodes, 0);
  EXPECT_TRUE(t.warnings.empty());
}

TEST(ChakraReader, ShippedCollectivesMapToTheirOps) {
  // comm_type 2, 7, 6 in the shipped files (bytes 48 02, 48 07, 48 06).
  const std::vector<std::pair<std::string, CollectiveOp>> cases{
      {"all_gather", CollectiveOp::kAllGather},
      {"reduce_scatter", CollectiveOp::kReduceScatter},
      {"all_to_all", CollectiveOp::kAllToAll}};
  for (const auto& [name, op] : cases) {
    const ChakraImport t = read_chakra_trace(kShipped + name + "/4npus_1MB/" + name, 0);
    EXPECT_EQ(t.graph.rank_count(), 4) << name;  // ranks 0: as many as there are files
    EXPECT_EQ(t.graph.programs[0].nodes[0].op, op) << name;
    EXPECT_EQ(t.graph.programs[0].nodes[0].bytes, 1048576u) << name;
  }
}

TEST(ChakraReader, RefusesFewerRanksThanFilesAndMissingFiles) {
  const std::string prefix = kShipped + "all_reduce/8npus_1MB/all_reduce";
  EXPECT_EQ(error_of(prefix, 4), prefix +
                                     ".4.et: exists, but the trace was read for 4 ranks (give "
                                     "the rank count of the trace)");
  EXPECT_EQ(error_of(prefix, 9), prefix + ".8.et: cannot open Chakra execution trace");
  EXPECT_EQ(error_of("tests/testdata/chakra/none", 0),
            "tests/testdata/chakra/none.0.et: cannot open Chakra execution trace");
}

TEST_F(ChakraTest, TruncatedAndGarbledFilesAreLocatedByByte) {
  const std::string shipped = chakra_test::slurp(kShipped + "all_reduce/4npus_1MB/all_reduce.0.et");
  // 8 bytes of metadata (length 7 + 7), then a node of length 72 at byte 8: 60 bytes leave 51.
  chakra_test::spit(file(0), shipped.substr(0, 60));
  EXPECT_EQ(error_of(prefix_, 1), file(0) +
                                      ": byte 8: truncated Node message (length 72, 51 bytes "
                                      "left)");
  chakra_test::spit(file(0), std::string(12, '\xff'));
  EXPECT_EQ(error_of(prefix_, 1), file(0) +
                                      ": byte 0: the length of a GlobalMetadata message "
                                      "is not a varint");
  chakra_test::spit(file(0), "");
  EXPECT_EQ(error_of(prefix_, 1), file(0) +
                                      ": byte 0: empty file: expected a GlobalMetadata "
                                      "message");
  // A length-2 message whose field 1 claims 100 bytes: no Node parses from it.
  chakra_test::spit(file(0), shipped.substr(0, 8) + std::string("\x02\x0a\x64", 3));
  EXPECT_EQ(error_of(prefix_, 1), file(0) + ": byte 8: not a Chakra Node message");
}

// Rank 0 computes 1.5 ms, loads from memory, then sends 1000 bytes to rank 1, which receives
// them and computes 2 ms. The memory node is a no-op whose dependency passes through: the send
// waits for the compute node.
TEST_F(ChakraTest, ComputeSendReceiveAndMemoryNodes) {
  et::Node compute = node(1, et::COMP_NODE);
  compute.set_duration_micros(1500);
  et::Node send = node(3, et::COMM_SEND_NODE, {2});
  attr(send, "comm_dst")->set_int32_val(1);
  attr(send, "comm_size")->set_uint64_val(1000);
  attr(send, "comm_tag")->set_int64_val(0);
  write_rank(0, {compute, node(2, et::MEM_LOAD_NODE, {1}), send});
  et::Node recv = node(7, et::COMM_RECV_NODE);
  attr(recv, "comm_src")->set_int64_val(0);
  attr(recv, "comm_size")->set_int64_val(1000);
  et::Node after = node(8, et::COMP_NODE, {7});
  after.set_duration_micros(2000);
  write_rank(1, {recv, after});

  const ChakraImport t = read_chakra_trace(prefix_, 2);
  const ExecutionGraph& g = t.graph;
  ASSERT_EQ(g.communicators.size(), 1u);
  EXPECT_EQ(g.communicators[0].name, "p2p.0-1");
  EXPECT_EQ(g.communicators[0].ranks, (std::vector<int>{0, 1}));
  const Program& p0 = g.program_of(0);
  ASSERT_EQ(p0.nodes.size(), 2u);
  EXPECT_EQ(p0.nodes[0].kind, NodeKind::kCompute);
  EXPECT_DOUBLE_EQ(p0.nodes[0].duration_sec, 1.5e-3);
  EXPECT_EQ(p0.nodes[1].kind, NodeKind::kSend);
  EXPECT_EQ(p0.nodes[1].peer, 1);
  EXPECT_EQ(p0.nodes[1].bytes, 1000u);
  EXPECT_EQ(
      std::vector<std::int32_t>(p0.deps_of(p0.nodes[1]).begin(), p0.deps_of(p0.nodes[1]).end()),
      std::vector<std::int32_t>{0});
  const Program& p1 = g.program_of(1);
  ASSERT_EQ(p1.nodes.size(), 2u);
  EXPECT_EQ(p1.nodes[0].kind, NodeKind::kRecv);
  EXPECT_EQ(p1.nodes[0].peer, 0);
  EXPECT_DOUBLE_EQ(p1.nodes[1].duration_sec, 2e-3);
  EXPECT_EQ(t.stats.memory_nodes, 1);
  EXPECT_EQ(t.stats.compute_nodes, 2);
  EXPECT_EQ(t.stats.send_nodes, 1);
  EXPECT_EQ(t.stats.recv_nodes, 1);
  EXPECT_EQ(t.stats.programs, 2);
}

TEST_F(ChakraTest, ProcessGroupsAreTheRanksThatUseThem) {
  // Ranks 0, 1 all-reduce on "tp0", ranks 2, 3 on "tp1", then all four on the world.
  for (int r = 0; r < 4; ++r) {
    et::Node tp = collective(0, et::ALL_REDUCE, 64);
    attr(tp, "pg_name")->set_string_val(r < 2 ? "tp0" : "tp1");
    write_rank(r, {tp, collective(1, et::ALL_GATHER, 128)});
  }
  const ExecutionGraph g = read_chakra_trace(prefix_, 4).graph;
  ASSERT_EQ(g.communicators.size(), 3u);  // sorted by name
  EXPECT_EQ(g.communicators[0].name, "tp0");
  EXPECT_EQ(g.communicators[0].ranks, (std::vector<int>{0, 1}));
  EXPECT_EQ(g.communicators[1].name, "tp1");
  EXPECT_EQ(g.communicators[1].ranks, (std::vector<int>{2, 3}));
  EXPECT_EQ(g.communicators[2].name, "world");
  EXPECT_EQ(g.programs.size(), 2u);  // ranks 0 and 1 share one, ranks 2 and 3 the other
  EXPECT_EQ(g.ranks[3].comms, (std::vector<std::int32_t>{1, 2}));
}

TEST_F(ChakraTest, ControlDependenciesAlongAStreamAreItsOrder) {
  // Node 1 waits for node 0 by a control dependency (both compute: the stream's order, not
  // kept) and node 2 by a data dependency (kept).
  et::Node a = node(0, et::COMP_NODE);
  a.set_duration_micros(1);
  et::Node b = node(1, et::COMP_NODE);
  b.set_duration_micros(1);
  b.add_ctrl_deps(0);
  et::Node c = node(2, et::COMP_NODE, {1});
  c.set_duration_micros(1);
  write_rank(0, {c, b, a});  // listed backwards: the reader orders them by their dependencies
  const ExecutionGraph g = read_chakra_trace(prefix_, 1).graph;
  const Program& p = g.programs[0];
  ASSERT_EQ(p.nodes.size(), 3u);
  EXPECT_EQ(g.labels, (std::vector<std::string>{"n0", "n1", "n2"}));  // issue order
  EXPECT_EQ(p.nodes[2].label, 2);
  EXPECT_TRUE(p.deps_of(p.nodes[1]).empty());
  ASSERT_EQ(p.deps_of(p.nodes[2]).size(), 1u);
  EXPECT_EQ(p.deps_of(p.nodes[2])[0], 1);
}

TEST_F(ChakraTest, ReportsWhatItDoesNotUse) {
  et::Node compute = node(0, et::COMP_NODE);
  compute.set_duration_micros(10);
  attr(compute, "num_ops")->set_int64_val(1000);
  et::Node storage = node(1, et::STORAGE_NODE, {0});
  et::Node odd = collective(2, et::ALL_REDUCE, 8);
  odd.add_data_deps(1);
  std::string bytes = chakra_test::file_bytes({compute, storage});
  // Node 2 with field 15 (varint 1) appended: outside the schema.
  std::string serialized = odd.SerializeAsString() + std::string("\x78\x01", 2);
  bytes += static_cast<char>(serialized.size()) + serialized;
  chakra_test::spit(file(0), bytes);
  et::Node again = node(0, et::COMP_NODE);
  again.set_duration_micros(10);
  attr(again, "num_ops")->set_int64_val(1000);
  write_rank(1, {again, collective(2, et::ALL_REDUCE, 8)});

  const ChakraImport t = read_chakra_trace(prefix_, 2);
  EXPECT_EQ(t.stats.unknown_attributes, 2);
  EXPECT_EQ(t.stats.unknown_fields, 1);
  EXPECT_EQ(t.stats.unknown_type_nodes, 1);
  EXPECT_EQ(t.warnings,
            (std::vector<std::string>{
                file(0) + ": node 0: attribute \"num_ops\" not used on a compute node (2 times: " +
                    file(0) + ": node 0, " + file(1) + ": node 0)",
                file(0) + ": node 1: node type 8 (STORAGE_NODE) not replayed: a no-op, its "
                          "dependencies passed through",
                file(0) + ": node 2: node: field 15 is not in dtsim's Chakra schema, not used"}));
  // The all-reduce still waits for the compute node, through the storage node.
  const Program& p = t.graph.program_of(0);
  ASSERT_EQ(p.nodes.size(), 2u);
  EXPECT_EQ(p.deps_of(p.nodes[1]).size(), 1u);
}

TEST_F(ChakraTest, BarrierIsAnAllReduceAndWhatItCannotHonourIsReported) {
  et::Node barrier = node(0, et::COMM_COLL_NODE);
  attr(barrier, "comm_type")->set_int64_val(et::BARRIER);  // no comm_size: 0 bytes
  et::Node dims = collective(1, et::ALL_GATHER, 64);
  et::BoolList* involved = attr(dims, "involved_dim")->mutable_bool_list();
  involved->add_values(true);
  involved->add_values(false);
  et::Node on_cpu = node(2, et::COMP_NODE, {1});
  attr(on_cpu, "is_cpu_op")->set_bool_val(true);
  write_rank(0, {barrier, dims, on_cpu});
  const ChakraImport t = read_chakra_trace(prefix_, 1);
  const Program& p = t.graph.programs[0];
  ASSERT_EQ(p.nodes.size(), 3u);
  EXPECT_EQ(p.nodes[0].op, CollectiveOp::kAllReduce);
  EXPECT_EQ(p.nodes[0].bytes, 0u);
  EXPECT_EQ(p.nodes[1].op, CollectiveOp::kAllGather);
  EXPECT_EQ(t.stats.compute_without_duration, 1);
  EXPECT_EQ(t.stats.cpu_compute_nodes, 1);
  EXPECT_EQ(t.stats.unknown_attributes, 1);
  EXPECT_EQ(t.warnings, (std::vector<std::string>{
                            file(0) + ": node 2: compute node with is_cpu_op true: runs on the "
                                      "rank's compute stream, in series with its other compute "
                                      "nodes",
                            file(0) + ": node 2: compute node without duration_micros: takes 0 s",
                            file(0) + ": node 1: involved_dim not used: the collective runs on "
                                      "its whole process group"}));
}

TEST_F(ChakraTest, ListsEveryProblemOfTheFilesAtOnce) {
  et::Node gather = collective(1, et::GATHER, 8);
  et::Node no_type = node(2, et::COMM_COLL_NODE);
  attr(no_type, "comm_size")->set_int64_val(8);
  et::Node twice = node(2, et::COMP_NODE);
  write_rank(0, {node(0, et::COMP_NODE, {9}), gather, no_type, twice});
  et::Node x = node(0, et::COMP_NODE, {1});
  et::Node y = node(1, et::COMP_NODE, {0});
  et::Node send = node(2, et::COMM_SEND_NODE);
  attr(send, "comm_dst")->set_int64_val(5);
  attr(send, "comm_size")->set_int64_val(8);
  write_rank(1, {x, y, send});
  // Bytes: metadata 0-7; node 0 (name, type, data_deps) 8-17; node 1 (id, name, type, two
  // attributes of 15 bytes) 18-56; node 2 57-80; the second node 2 from 81.
  EXPECT_EQ(error_of(prefix_, 2),
            file(0) +
                ": node 1: comm_type 3 (GATHER): dtsim has no such collective (it replays "
                "ALL_REDUCE, REDUCE, ALL_GATHER, BROADCAST, ALL_TO_ALL, REDUCE_SCATTER and "
                "BARRIER)\n" +
                file(0) + ": node 2: no comm_type attribute\n" + file(0) +
                ": node 2: id used twice (the nodes at byte 57 and byte 81)\n" + file(0) +
                ": node 0: data_deps names node 9, which " + file(0) + " does not have\n" +
                file(1) + ": node 2: attribute comm_dst: expected an integer from 0 to 1\n" +
                file(1) + ": node 0: a cycle of dependencies: 2 nodes never become ready " +
                "(nodes 0, 1)");
}

// A metadata naming process group "pg1" with the global ranks `ranks` (as dtsim writes it).
et::GlobalMetadata group_metadata(const std::vector<std::int64_t>& ranks) {
  et::GlobalMetadata m;
  et::AttributeProto* a = m.add_attr();
  a->set_name("dtsim.comm_group:pg1");
  for (const std::int64_t r : ranks) {
    a->mutable_int64_list()->add_values(r);
  }
  return m;
}

TEST_F(ChakraTest, SelfDependenciesGroupsThatDisagreeAndPeersOutsideTheirGroup) {
  write_rank(0, {node(3, et::COMP_NODE, {3})});
  EXPECT_EQ(error_of(prefix_, 1), file(0) + ": node 3: depends on itself");
  et::Node send = node(4, et::COMM_SEND_NODE);
  attr(send, "comm_dst")->set_int64_val(1);
  attr(send, "comm_size")->set_int64_val(8);
  attr(send, "pg_name")->set_string_val("pg1");
  write_rank(0, {send}, group_metadata({0}));
  et::Node recv = node(4, et::COMM_RECV_NODE);
  attr(recv, "comm_src")->set_int64_val(0);
  attr(recv, "comm_size")->set_int64_val(8);
  attr(recv, "pg_name")->set_string_val("pg1");
  write_rank(1, {recv}, group_metadata({0, 1}));
  EXPECT_EQ(error_of(prefix_, 2), file(1) +
                                      ": metadata: process group \"pg1\" lists other ranks than "
                                      "in " +
                                      file(0));
  write_rank(1, {recv}, group_metadata({0}));
  EXPECT_EQ(error_of(prefix_, 2),
            file(0) + ": node 4: peer rank 1 is not in process group \"pg1\"");
}

TEST_F(ChakraTest, CollectivesThatDifferAcrossRanksAreLocatedInTheirFiles) {
  write_rank(0, {collective(4, et::ALL_REDUCE, 1024)});
  write_rank(1, {collective(4, et::ALL_REDUCE, 2048)});
  EXPECT_EQ(error_of(prefix_, 2),
            prefix_ +
                ": collective 0 on communicator \"world\" differs in bytes between rank 0 "
                "(all-reduce of 1024 bytes, " +
                file(0) + ": node 4) and rank 1 (all-reduce of 2048 bytes, " + file(1) +
                ": node 4)");
}

}  // namespace
}  // namespace dtsim::sim
