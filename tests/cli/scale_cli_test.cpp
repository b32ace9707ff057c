// The fast paths of dtsim at scale give the same predictions as the step-level replay: a
// collapsed ring with ranks folded onto one compute stream versus every ring step of every rank.
// Equality up to floating-point rounding (1e-9 relative): both replay the same alpha-beta
// schedule on an otherwise idle network. DTSIM_BINARY is set by CMake.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Runs `dtsim simulate ARGS --report R` and returns the report (empty on failure).
json simulate(const std::string& args, const std::string& name) {
  const fs::path report = fs::temp_directory_path() / ("dtsim_scale_" + name + ".json");
  const std::string cmd = std::string(DTSIM_BINARY) + " simulate " + args + " --report " +
                          report.string() + " >/dev/null";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::ifstream in(report);
  json j = json::parse(in, nullptr, /*allow_exceptions=*/false);
  fs::remove(report);
  return j;
}

void expect_same_times(const json& fast, const json& step) {
  const json& a = fast["result"];
  const json& b = step["result"];
  const double t = b["iteration_time_sec"].get<double>();
  EXPECT_NEAR(a["iteration_time_sec"].get<double>(), t, 1e-9 * t);
  ASSERT_EQ(a["buckets"].size(), b["buckets"].size());
  for (std::size_t i = 0; i < a["buckets"].size(); ++i) {
    for (const char* key : {"ready_sec", "end_sec"}) {
      EXPECT_NEAR(a["buckets"][i][key].get<double>(), b["buckets"][i][key].get<double>(), 1e-9 * t)
          << "bucket " << i << " " << key;
    }
  }
}

TEST(ScaleCli, FoldedCollapsedRingEqualsTheStepLevelRing) {
  const std::string args =
      "--workload workloads/traces/resnet50_v100_b32.json --platform "
      "platforms/files/fat_tree_256.json --ranks 32 --algorithm ring";
  const json fast = simulate(args + " --replay collapsed", "fast");
  const json step = simulate(args + " --replay step", "step");
  EXPECT_TRUE(fast["ranks_folded"].get<bool>());
  EXPECT_FALSE(step["ranks_folded"].get<bool>());
  expect_same_times(fast, step);
}

TEST(ScaleCli, FoldingKeepsTheCollectiveLatencyAndAccumulation) {
  const std::string args =
      "--workload workloads/traces/resnet50_v100_b32.json --platform "
      "tests/testdata/sim_star16_25GBps.json --ranks 16 --algorithm ring "
      "--collective-latency 8.4us --accumulation-steps 2";
  const json fast = simulate(args + " --replay collapsed", "fast_latency");
  const json step = simulate(args + " --replay step", "step_latency");
  EXPECT_TRUE(fast["ranks_folded"].get<bool>());
  expect_same_times(fast, step);
}

TEST(ScaleCli, MemoizedRepeatsEqualTheStepLevelRing) {
  // BERT-large: 38 buckets, most of them 25 MiB: with folded ranks each size is replayed once and
  // its repeats (later buckets and iterations) are waits as long as that first replay.
  const std::string args =
      "--workload workloads/traces/bert_large_a100_seq128_b128.json --platform "
      "tests/testdata/sim_star16_25GBps.json --ranks 16 --algorithm ring";
  const json fast = simulate(args + " --replay collapsed", "fast_bert");
  const json step = simulate(args + " --replay step", "step_bert");
  EXPECT_GT(fast["all_reduces_memoized"].get<int>(), 0);
  EXPECT_EQ(step["all_reduces_memoized"].get<int>(), 0);
  expect_same_times(fast, step);
  // Link loads come from the replayed all-reduce of each size: the same bytes per link.
  ASSERT_EQ(fast["links"].size(), step["links"].size());
  for (std::size_t i = 0; i < fast["links"].size(); ++i) {
    EXPECT_EQ(fast["links"][i]["bytes"], step["links"][i]["bytes"]) << "level " << i;
  }
}

TEST(ScaleCli, TreesDoNotFold) {
  // Ranks leave a tree all-reduce at different times: every rank keeps its own compute stream.
  const json tree = simulate(
      "--workload workloads/traces/resnet50_v100_b32.json --platform "
      "tests/testdata/sim_star16_25GBps.json --ranks 4 --algorithm tree",
      "tree");
  EXPECT_FALSE(tree["ranks_folded"].get<bool>());
}

}  // namespace
