// Chakra execution traces through the dtsim binary: `simulate --chakra`, `--dump-chakra` and
// `chakra microbenchmark`, their reports, warnings and errors (exit code 2), as a user runs them.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_support.h"

namespace dtsim::cli_test {
namespace {

using Chakra = DtsimTest;

const std::string kAllReduce8 = "tests/testdata/chakra/all_reduce/8npus_1MB/all_reduce";
const std::string kStar = "--platform tests/testdata/sim_star16_25GBps.json";

TEST_F(Chakra, SimulatesTheShippedAllReduceAndReportsWhatItRead) {
  const auto report = dir_ / "r.json";
  const Result r = run("simulate --chakra " + kAllReduce8 + " " + kStar + " --ranks 8 --report " +
                       report.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_NE(r.out.find("chakra: 8 ranks, 8 nodes (0 compute, 8 collectives, 0 sends, 0 receives, "
                       "0 memory/metadata no-ops), 0 of unknown type, 0 attributes and 0 fields "
                       "not used\n"),
            std::string::npos)
      << r.out;
  const auto j = nlohmann::json::parse(slurp(report));
  EXPECT_EQ(j["chakra"]["collective_nodes"], 8);
  EXPECT_EQ(j["chakra"]["programs"], 1);
  // Provenance: the platform, then every file of the trace.
  ASSERT_EQ(j["provenance"]["inputs"].size(), 9u);
  EXPECT_EQ(j["provenance"]["inputs"][8]["flag"], "chakra");
  EXPECT_EQ(j["provenance"]["inputs"][8]["path"], kAllReduce8 + ".7.et");
  // The ring closed form 2(p-1)(alpha + n/(pB)), alpha = 2 us, B = 25 GB/s, p = 8, n = 1 MiB.
  const double expected = 14 * (2e-6 + 1048576 / (8 * 25e9));
  EXPECT_NEAR(j["result"]["iteration_time_sec"].get<double>(), expected, 1e-9 * expected);
}

TEST_F(Chakra, MalformedFileIsALocatedErrorWithExitCodeTwo) {
  const std::string shipped = slurp(kAllReduce8 + ".0.et");
  std::ofstream(dir_ / "t.0.et", std::ios::binary) << shipped.substr(0, 40);
  const Result r = run("simulate --chakra " + (dir_ / "t").string() + " " + kStar);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "dtsim simulate: " + (dir_ / "t.0.et").string() +
                       ": byte 8: truncated Node message (length 72, 31 bytes left)\n");
  EXPECT_EQ(r.out, "");
}

TEST_F(Chakra, WhatItDoesNotUseIsAWarningOnStderr) {
  // One rank, one node written byte by byte: metadata {version "0.0.4"}, then a node {name "x",
  // type 4 (COMP_NODE), duration_micros 10, attr {name "num_ops", int64_val 5}}.
  const std::string bytes(
      "\x07\x0a\x05"
      "0.0.4"
      "\x14\x12\x01x\x18\x04\x38\x0a\x52\x0b\x0a\x07"
      "num_ops"
      "\x48\x05",
      29);
  std::ofstream(dir_ / "t.0.et", std::ios::binary) << bytes;
  const Result r = run("simulate --chakra " + (dir_ / "t").string() + " " + kStar);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "dtsim simulate: warning: " + (dir_ / "t.0.et").string() +
                       ": node 0: attribute \"num_ops\" not used on a compute node\n");
  EXPECT_NE(r.out.find("iteration time          0.000010 s"), std::string::npos) << r.out;
}

TEST_F(Chakra, DumpingOverTheTraceReadIsRefused) {
  const Result r =
      run("simulate --chakra " + kAllReduce8 + " " + kStar + " --dump-chakra " + kAllReduce8);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "dtsim simulate: --chakra " + kAllReduce8 + ": the same file as --dump-chakra\n");
}

TEST_F(Chakra, GivesOnlyOneSourceOfWork) {
  const Result r = run("simulate --chakra " + kAllReduce8 + " --graph g.json " + kStar);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "dtsim simulate: --chakra PREFIX replays a trace as it is: give no --workload, "
            "--graph, --model or --parallel\n");
}

// What dtsim replays and what it reads back from its own Chakra trace are the same graph: the
// same iteration time to the last digit, for a data-parallel and a hybrid-parallel job.
TEST_F(Chakra, DumpedTrainingJobsReadBackToTheSameIterationTime) {
  const std::vector<std::string> jobs{
      "--workload workloads/traces/resnet50_v100_b32.json --platform "
      "platforms/files/fat_tree_256.json --ranks 32",
      "--model gpt3-1.3b --device a100 --precision bf16 --platform "
      "platforms/files/presets/dgx-a100.json --ranks 16 --parallel tp=2,pp=2,dp=4 "
      "--micro-batch 1 --global-batch 16 --seq-len 2048"};
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const std::string prefix = (dir_ / ("job" + std::to_string(i))).string();
    const Result a =
        run("simulate " + jobs[i] + " --dump-chakra " + prefix + " --report " + prefix + ".a.json");
    ASSERT_EQ(a.exit_code, 0) << a.err;
    const std::string platform = jobs[i].substr(jobs[i].find("--platform"));
    const Result b =
        run("simulate --chakra " + prefix + " " + platform.substr(0, platform.find(" --ranks")) +
            " --report " + prefix + ".b.json");
    ASSERT_EQ(b.exit_code, 0) << b.err;
    EXPECT_EQ(b.err, "");
    const auto ja = nlohmann::json::parse(slurp(prefix + ".a.json"));
    const auto jb = nlohmann::json::parse(slurp(prefix + ".b.json"));
    EXPECT_EQ(ja["result"]["iteration_time_sec"].get<double>(),
              jb["result"]["iteration_time_sec"].get<double>())
        << jobs[i];
  }
}

TEST_F(Chakra, MicrobenchmarkVerbWritesTheShippedFiles) {
  const std::string prefix = (dir_ / "all_reduce").string();
  const Result r = run("chakra microbenchmark --op all-reduce --ranks 8 --bytes 1MiB -o " + prefix);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "all_reduce_8npus_1MB: 8 files " + prefix + ".0.et ... " + prefix + ".7.et\n");
  for (int rank = 0; rank < 8; ++rank) {
    EXPECT_EQ(slurp(prefix + "." + std::to_string(rank) + ".et"),
              slurp(kAllReduce8 + "." + std::to_string(rank) + ".et"))
        << rank;
  }
  const Result bad = run("chakra microbenchmark --op send-recv --ranks 8 -o " + prefix);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err,
            "dtsim chakra microbenchmark: --op send-recv: expected all-reduce, reduce-scatter, "
            "all-gather, broadcast, reduce or all-to-all\n");
}

}  // namespace
}  // namespace dtsim::cli_test
