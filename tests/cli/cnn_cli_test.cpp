// `dtsim simulate --parallel dp=D,spatial=HxW|filter=F|channel=C` as a user runs it
// (sim/strategies/CNN.md): an unsplit CNN is today's data parallelism to the last digit, a split
// of a zoo CNN or its trace runs, and every bad split is a located error (exit 2, no report).
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_support.h"

namespace {

namespace fs = std::filesystem;

using dtsim::cli_test::Result;
using dtsim::cli_test::slurp;
using nlohmann::json;

const std::string kPlatform = " --platform tests/testdata/sim_fat_tree16.json";

class CnnCli : public dtsim::cli_test::DtsimTest {
 protected:
  [[nodiscard]] fs::path path(const std::string& name) const { return dir_ / name; }

  // resnet50, batch 8, on a V100 in fp32 from the generator.
  [[nodiscard]] std::string trace() const {
    const std::string t = path("resnet50.json").string();
    const Result r = run("workload generate --model resnet50 --batch 8 --device v100 -o " + t);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return t;
  }

  json simulate(const std::string& args) const {
    const std::string report = path("r.json").string();
    const Result r = run("simulate " + args + kPlatform + " --report " + report);
    EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.err;
    return json::parse(slurp(report));
  }

  void expect_error(const std::string& args, const std::string& message) const {
    const Result r = run("simulate " + args + kPlatform + " --report " + path("bad.json").string());
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_EQ(r.err, message) << args;
    EXPECT_FALSE(fs::exists(path("bad.json"))) << args;
  }
};

TEST_F(CnnCli, AnUnsplitZooCnnIsTodaysDataParallelRunToTheLastDigit) {
  // The issue's rule: a spatial split of 1 gives today's data-parallel result. Today's run is
  // the generator's trace replayed by data parallelism (no --parallel); the CNN path builds the
  // same trace from --model and the zoo's shapes.
  const json dp = simulate("--workload " + trace() + " --ranks 4");
  const json cnn = simulate(
      "--model resnet50 --device v100 --precision fp32 --micro-batch 8 --ranks 4 "
      "--parallel dp=4,spatial=1x1");
  EXPECT_EQ(cnn["result"]["iteration_time_sec"], dp["result"]["iteration_time_sec"]);
  EXPECT_EQ(cnn["model"]["parameters"], 25'557'032);  // torchvision's resnet50
}

TEST_F(CnnCli, EachSplitOfATraceRunsAndShowsItsCommunication) {
  const std::string t = trace();
  // Spatial: halo exchanges and the spatial group's collectives appear as exposed kinds
  // unless hidden; the iteration is shorter than one GPU's (4 ranks share a sample).
  const json one = simulate("--workload " + t + " --ranks 1");
  const json spatial = simulate("--workload " + t + " --ranks 4 --parallel spatial=2x2");
  EXPECT_EQ(spatial["parallel"]["degrees"], "tp=1,cp=4,dp=1,pp=1,ep=1");
  EXPECT_LT(spatial["result"]["iteration_time_sec"], one["result"]["iteration_time_sec"]);
  EXPECT_GT(spatial["graph"]["programs"], 1);  // corners of the 2x2 grid differ
  for (const std::string split : {"filter=4", "channel=4"}) {
    const json r = simulate("--workload " + t + " --ranks 8 --parallel dp=2," + split);
    EXPECT_EQ(r["parallel"]["degrees"], "tp=4,cp=1,dp=2,pp=1,ep=1") << split;
    EXPECT_LT(r["result"]["iteration_time_sec"], one["result"]["iteration_time_sec"]) << split;
  }
}

TEST_F(CnnCli, ThinShardsPrintNothingOnStderr) {
  // cosmoflow 128^3 split over 8 input channels: its first layer's share (4 input channels / 8)
  // computes in under a nanosecond, which SimGrid said on stderr once per rank (s4u_actor INFO,
  // engine_run.cpp) before its log was turned down.
  const Result r = run(
      "simulate --model cosmoflow --image-size 128 --device v100 --precision fp32 --micro-batch 1 "
      "--global-batch 1 --parallel channel=8 --ranks 8" +
      kPlatform);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
}

TEST_F(CnnCli, AJobFileTakesTheSplitAsText) {
  // sim/cli/JOB.md: "parallel" holds the flag's text, a CNN's split included; the same run.
  const std::string t = trace();
  const fs::path job = path("job.json");
  std::ofstream(job) << R"({"workload": ")" << t
                     << R"(", "ranks": 4, "parallel": "dp=2,spatial=2x1"})";
  const json by_flags = simulate("--workload " + t + " --ranks 4 --parallel dp=2,spatial=2x1");
  const json by_file = simulate("--job " + job.string());
  EXPECT_EQ(by_file["result"]["iteration_time_sec"], by_flags["result"]["iteration_time_sec"]);
  EXPECT_EQ(by_file["parallel"]["degrees"], "tp=1,cp=2,dp=2,pp=1,ep=1");
}

TEST_F(CnnCli, BadSplitsAreLocatedErrors) {
  const std::string w = "--workload " + trace();
  expect_error(w + " --ranks 3 --parallel spatial=3x1",
               "dtsim simulate: --parallel: spatial: the grid 3x1x1 does not tile the 224x224x1 "
               "input (3 does not divide 224)\n");
  expect_error(w + " --ranks 8 --parallel spatial=2x2,filter=2",
               "dtsim simulate: --parallel: spatial: one of spatial, filter and channel at a time "
               "(each beside dp and pp)\n");
  expect_error(w + " --ranks 4096 --parallel filter=4096",
               "dtsim simulate: --parallel: filter: 4096 splits, more than the widest layer's "
               "2048 channels\n");
  expect_error(w + " --ranks 8 --parallel filter=4,tp=2",
               "dtsim simulate: --parallel filter=4,tp=2: filter and channel splits are the tensor "
               "dimension; give tp or them, not both\n");
  expect_error(w + " --ranks 4 --parallel spatial=4",
               "dtsim simulate: --parallel spatial=4: spatial=4: expected a grid such as 4x4 or "
               "2x2x2 (height x width [x depth], each >= 1)\n");
  expect_error("--model resnet50 --ranks 4 --parallel dp=2,tp=2",
               "dtsim simulate: --parallel: tp: a CNN's tensor dimension is its filter or channel "
               "split: give filter=F or channel=C in place of tp\n");
  expect_error("--model resnet50 --ranks 4 --parallel dp=2,cp=2",
               "dtsim simulate: --parallel: cp: a CNN's context dimension is its spatial split: "
               "give spatial=HxW[xD] in place of cp\n");
  expect_error("--model gpt3-1.3b --ranks 2 --parallel spatial=2x1",
               "dtsim simulate: --parallel: spatial, filter and channel splits need a CNN of the "
               "model zoo, and gpt3-1.3b is a transformer\n");
  expect_error("--model cosmoflow --ranks 2 --image-size 100 --parallel spatial=2x1",
               "dtsim simulate: --image-size 100: cosmoflow's volume side must be a multiple of "
               "32 (five 2x2x2 poolings; the benchmark uses 128)\n");
}

}  // namespace
