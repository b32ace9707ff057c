// Algorithm files: every built-in writes itself and reads back to the same schedule; a
// hand-written file gets the dependencies its data imply; bad and wrong files are refused with
// the place they go wrong.
#include "sim/collectives/algorithm_file.h"

#include <fstream>

#include <gtest/gtest.h>

#include "sim/collectives/registry.h"
#include "sim/config_error.h"

namespace dtsim::sim {
namespace {

using json = nlohmann::json;

const AlgorithmOptions kStepLevel{.collapse = false, .chunk_bytes = 1000};

TopologyHints hints_for(int p) {
  TopologyHints h;
  h.injection_bytes_per_sec = 1e9;
  h.ranks_per_node = p % 2 == 0 ? 2 : 1;
  h.grid = {p % 2 == 0 ? 2 : 1, p % 2 == 0 ? p / 2 : p};
  return h;
}

TEST(AlgorithmFile, EveryBuiltInWritesItselfAndReadsBackToTheSameSchedule) {
  int written = 0;
  for (const std::string& name : algorithm_names()) {
    if (name == "nvls") {
      continue;  // no transfer carries the vector: it cannot be written (see the test below)
    }
    const auto algorithm = make_algorithm(name, kStepLevel);
    for (CollectiveOp op : all_ops()) {
      for (int p : {2, 3, 4, 6, 8}) {
        for (std::uint64_t bytes : {std::uint64_t{4800}, std::uint64_t{4803}}) {
          const CollectiveRequest request{.op = op, .ranks = p, .bytes = bytes, .root = 1};
          const TopologyHints hints = hints_for(p);
          if (!algorithm->unsupported(request, hints).empty()) {
            continue;
          }
          const Schedule schedule = algorithm->build(request, hints);
          if (op == CollectiveOp::kAllToAll && bytes % static_cast<std::uint64_t>(p) != 0) {
            // Unequal blocks: p output slots of len_d bytes overrun the buffer's chunks.
            EXPECT_THROW((void)algorithm_file_json(schedule, request, name), ConfigError);
            continue;
          }
          const json doc = json::parse(algorithm_file_json(schedule, request, name).dump());
          const AlgorithmFile file = parse_algorithm_file(doc, name + ".json");  // checks it too
          EXPECT_EQ(file_schedule(file, bytes).ops, schedule.ops)
              << name << " " << op_name(op) << " p=" << p << " bytes=" << bytes;
          EXPECT_EQ(file_schedule(file, bytes).exit_ops, schedule.exit_ops) << name;
          ++written;
        }
      }
    }
  }
  EXPECT_GT(written, 100);
}

TEST(AlgorithmFile, CollapsedSchedulesAndTrafficModelsCannotBeWritten) {
  const CollectiveRequest request{.op = CollectiveOp::kAllReduce, .ranks = 4, .bytes = 4000};
  const Schedule collapsed = make_algorithm("ring", AlgorithmOptions{})->build(request, {});
  EXPECT_THROW((void)algorithm_file_json(collapsed, request, "ring"), ConfigError);
}

// A 3-rank ring all-reduce written by hand: at step s rank i sends chunk (i - s - 1) mod 3 to
// i + 1, adding during the first two steps and copying during the last two.
json hand_ring(int wrong_chunk_at_step = -1) {
  json steps = json::array();
  for (int s = 0; s < 4; ++s) {
    json step = json::array();
    for (int i = 0; i < 3; ++i) {
      int chunk = ((i - s - 1) % 3 + 3) % 3;
      if (s == wrong_chunk_at_step && i == 1) {
        chunk = (chunk + 1) % 3;
      }
      step.push_back({{"src", i}, {"dst", (i + 1) % 3}, {"chunk", chunk}, {"reduce", s < 2}});
    }
    steps.push_back(step);
  }
  return {{"format", "dtsim-collective-algorithm"},
          {"version", 1},
          {"name", "hand ring"},
          {"operation", "all-reduce"},
          {"ranks", 3},
          {"chunks", 3},
          {"steps", steps}};
}

TEST(AlgorithmFile, StepsImplyTheirDataDependencies) {
  const AlgorithmFile file = parse_algorithm_file(hand_ring(), "ring.json");
  const Schedule s = file_schedule(file, 3000);
  ASSERT_EQ(s.ops.size(), 12u);  // 4 steps x 3 transfers of one 1000-byte chunk
  for (const ScheduleOp& op : s.ops) {
    EXPECT_EQ(op.bytes, 1000u);
  }
  // Step 0 waits for nothing. Step 1's transfer from rank 1 (op 4) sends chunk 2, which rank 1
  // received from rank 0 at step 0 (op 0): that is its one dependency (nobody read or wrote
  // rank 2's chunk 2 before, which it adds to).
  EXPECT_TRUE(s.ops[0].deps.empty());
  EXPECT_EQ(s.ops[4].deps, std::vector<int>({0}));
  // Step 2 (copies) from rank 0 (op 6) sends chunk 0, completed at step 1 by rank 2's transfer
  // (op 5), and overwrites rank 1's chunk 0, which rank 1 sent at step 0 (op 1): both.
  EXPECT_EQ(s.ops[6].deps, std::vector<int>({1, 5}));
}

TEST(AlgorithmFile, AWrongScheduleIsRefusedWhereItGoesWrong) {
  // Rank 1 sends chunk 1 instead of chunk 0 at step 0 (it adds its own chunk 1 into rank 2's);
  // rank 2 then forwards ... until, at step 1, rank 2 adds rank 1's contribution a second time.
  try {
    (void)parse_algorithm_file(hand_ring(/*wrong_chunk_at_step=*/0), "bad.json");
    FAIL() << "accepted a wrong ring";
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("bad.json: "), std::string::npos) << what;
    EXPECT_NE(what.find("not a correct all-reduce"), std::string::npos) << what;
    EXPECT_NE(what.find("rank "), std::string::npos) << what;
    EXPECT_NE(what.find("chunk "), std::string::npos) << what;
  }
}

TEST(AlgorithmFile, FieldProblemsAreAllReportedWithTheirJsonPointer) {
  json doc = hand_ring();
  doc["steps"][0][0]["dst"] = 7;
  doc["steps"][1][2]["chunk"] = 5;
  doc["steps"][2][1]["buffer"] = "output";
  doc["colour"] = "blue";
  try {
    (void)parse_algorithm_file(doc, "f.json");
    FAIL() << "accepted a bad file";
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("f.json: /steps/0/0/dst: 7 is not a rank (the algorithm has 3)"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("f.json: /steps/1/2/chunk: chunks [5, 6) are not within the 3 chunks"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("/steps/2/1/buffer: an in-place algorithm has no separate output buffer"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("/colour: unknown key"), std::string::npos) << what;
  }
}

TEST(AlgorithmFile, EitherStepsOrOpsAndAllToAllIsNeverInPlace) {
  json doc = hand_ring();
  doc["ops"] = json::array();
  EXPECT_THROW((void)parse_algorithm_file(doc, "f.json"), ConfigError);
  json a2a = hand_ring();
  a2a["operation"] = "all-to-all";
  try {
    (void)parse_algorithm_file(a2a, "f.json");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("/in_place: an all-to-all is never in place"),
              std::string::npos)
        << e.what();
  }
}

TEST(AlgorithmFile, AFileRunsOnlyWhatItIsWrittenFor) {
  const std::string path = ::testing::TempDir() + "/hand_ring.json";
  {
    std::ofstream out(path);
    out << hand_ring().dump();
  }
  const auto algorithm = make_algorithm("file:" + path, {});
  ASSERT_NE(algorithm, nullptr);
  EXPECT_EQ(algorithm->name(), "file:" + path);
  const CollectiveRequest fits{.op = CollectiveOp::kAllReduce, .ranks = 3, .bytes = 3000};
  EXPECT_EQ(algorithm->unsupported(fits, {}), "");
  EXPECT_EQ(algorithm->unsupported({.op = CollectiveOp::kAllReduce, .ranks = 4}, {}),
            "the file's algorithm is written for 3 ranks, not 4");
  EXPECT_EQ(algorithm->unsupported({.op = CollectiveOp::kAllGather, .ranks = 3}, {}),
            "the file's algorithm is all-reduce, not all-gather");
  EXPECT_THROW((void)make_algorithm("file:" + path + ".missing", {}), ConfigError);
}

TEST(AlgorithmFile, TheSchemaNamesWhatTheReaderAccepts) {
  // Every key the schema documents is read (an unknown key is refused, so a key the reader did
  // not know would fail here), and every step transfer key of the reader is in the schema.
  std::ifstream in("sim/collectives/algorithm.schema.json");
  const json schema = json::parse(in);
  json doc = hand_ring();
  for (const auto& [key, unused] : schema["properties"].items()) {
    EXPECT_TRUE(doc.contains(key) || key == "root" || key == "in_place" || key == "chunk_bytes" ||
                key == "ops")
        << key;
  }
  const json& transfer = schema["properties"]["steps"]["items"]["items"]["oneOf"][0]["properties"];
  for (const char* key :
       {"src", "dst", "chunk", "count", "to_chunk", "buffer", "to_buffer", "reduce", "channel"}) {
    EXPECT_TRUE(transfer.contains(key)) << key;
  }
  EXPECT_EQ(transfer.size(), 9u);
  json unknown = hand_ring();
  unknown["steps"][0][0]["colour"] = 1;  // not in the schema: refused
  EXPECT_THROW((void)parse_algorithm_file(unknown, "f.json"), ConfigError);
}

}  // namespace
}  // namespace dtsim::sim
