// `dtsim plan` as a user runs it: every configuration of a small model on one DGX A100 node
// estimated, the best few simulated, a table and a sentence, the plan as JSON and CSV; the same
// bytes for any thread count; bad input a located error (exit 2, nothing written).
#include <algorithm>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_support.h"

namespace {

namespace fs = std::filesystem;

using dtsim::cli_test::Result;
using dtsim::cli_test::slurp;
using nlohmann::json;

// GPT-3 1.3B on the 8 GPUs of one DGX A100 node (the platform has 16), 8 sequences of 256.
const std::string kSmall =
    "--model gpt3-1.3b --device a100 --platform tests/testdata/dgx_a100_2nodes.json --gpus 8 "
    "--global-batch 8 --seq-len 256";

class PlanCli : public dtsim::cli_test::DtsimTest {
 protected:
  [[nodiscard]] std::string report() const { return (dir_ / "plan.json").string(); }
  [[nodiscard]] std::string csv() const { return (dir_ / "plan.csv").string(); }

  void expect_error(const std::string& args, const std::string& message) const {
    const Result r = run("plan " + args + " --report " + report());
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_EQ(r.err, message) << args;
    EXPECT_EQ(r.out, "") << args;
    EXPECT_FALSE(fs::exists(report())) << args;
  }
};

TEST_F(PlanCli, RanksTheSimulatedBestFirstAndExplainsTheWinner) {
  const Result r = run("plan " + kSmall + " --simulate 2 --top 5 --report " + report());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("2 simulated (SimGrid)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" beats "), std::string::npos) << r.out;
  const json plan = json::parse(slurp(report()));
  const json& rows = plan.at("configurations");
  ASSERT_GE(rows.size(), 3u);
  // The two simulated come first, in simulated order; the third is estimated only.
  const double first = rows[0].at("simulated").at("iteration_time_sec").get<double>();
  const double second = rows[1].at("simulated").at("iteration_time_sec").get<double>();
  EXPECT_LE(first, second);
  EXPECT_FALSE(rows[2].contains("simulated"));
  EXPECT_EQ(plan.at("why_winner")
                .get<std::string>()
                .find(rows[0].at("configuration").get<std::string>() + " beats "),
            0u);
  // The CSV has a header and one line per configuration that fits.
  const std::string text = slurp(csv());
  EXPECT_EQ(text.substr(0, text.find('\n')).substr(0, 19), "rank,configuration,");
  EXPECT_EQ(static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')), rows.size() + 1);
}

TEST_F(PlanCli, GivesTheSameBytesForAnyThreadCount) {
  const std::string one = (dir_ / "one.json").string();
  const std::string two = (dir_ / "two.json").string();
  const Result a = run("plan " + kSmall + " --simulate 0 --threads 1 --report " + one);
  const Result b = run("plan " + kSmall + " --simulate 0 --threads 2 --report " + two);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_EQ(a.out, b.out);
  EXPECT_EQ(slurp(one), slurp(two));
  EXPECT_EQ(slurp((dir_ / "one.csv")), slurp((dir_ / "two.csv")));
}

TEST_F(PlanCli, SaysHowManyDoNotFitAndWhy) {
  // GPT-3 175B on 8 V100s of 32 GiB: 175e9 parameters need 18 bytes each in weights, gradients
  // and Adam's states (MEMORY.md), over 8 GPUs even with ZeRO-3 394 GB per GPU: nothing fits.
  const Result r = run(
      "plan --model gpt3-175b --device v100 --precision fp16 --platform "
      "tests/testdata/dgx_a100_2nodes.json --gpus 8 --global-batch 8 --seq-len 2048 --strategies "
      "tp,pp,dp,zero --simulate 0");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("out of memory (largest part: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  0 estimated, 0 simulated"), std::string::npos) << r.out;
}

TEST_F(PlanCli, RefusesBadInputNamingTheFlag) {
  const std::string platform = " --platform tests/testdata/dgx_a100_2nodes.json";
  const std::string model = "--model gpt3-1.3b --global-batch 8" + platform;
  expect_error(model + " --gpus 0", "dtsim plan: --gpus 0: expected an integer >= 1\n");
  expect_error(model + " --gpus 32",
               "dtsim plan: --gpus 32: the platform tests/testdata/dgx_a100_2nodes.json has 16 "
               "GPUs\n");
  expect_error(model + " --gpus 8 --strategies tp,fsdp",
               "dtsim plan: --strategies tp,fsdp: unknown strategy \"fsdp\" (expected tp, pp, "
               "dp, cp, zero, recompute, sp)\n");
  expect_error(model + " --gpus 8 --seq-len 4096",
               "dtsim plan: --seq-len 4096: gpt3-1.3b has a context of 2048 tokens\n");
  expect_error(model + " --gpus 8 --device tpu",
               "dtsim plan: --device tpu: unknown device (expected one of v100, a100, h100, "
               "h200)\n");
  expect_error(
      "--model gpt3-1.3b --platform tests/testdata/pf_torus.json --gpus 8 --global-batch 8",
      "dtsim plan: tests/testdata/pf_torus.json: the planner's estimate supports star and "
      "fat-tree platforms, not torus\n");
  expect_error("--model gpt9 --gpus 8 --global-batch 8" + platform,
               "dtsim plan: --model gpt9: not in the catalogue (workloads/TRANSFORMER.md)\n");
  expect_error(model + " --gpus 8 --simulate-timeout -1",
               "dtsim plan: --simulate-timeout: expected a number of seconds >= 0\n");
}

}  // namespace
