// `dtsim plan` as a user runs it: every configuration of a small model on one DGX A100 node
// estimated, the best few simulated, a table and a sentence, the plan as JSON and CSV; the same
// bytes for any thread count; bad input a located error (exit 2, nothing written).
#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
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
  // The simulated times are hybrid transformer runs': that class's validated error.
  EXPECT_EQ(plan.at("error_bars").at(0).at("class"), "hybrid-transformer");
  EXPECT_GT(plan.at("error_bars").at(0).at("rows").get<int>(), 0);
  EXPECT_NE(r.out.find("  validated error         "), std::string::npos) << r.out;
  // The CSV has a header and one line per configuration that fits.
  const std::string text = slurp(csv());
  EXPECT_EQ(text.substr(0, text.find('\n')).substr(0, 19), "rank,configuration,");
  EXPECT_EQ(static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')), rows.size() + 1);
}

TEST_F(PlanCli, PlansAnArchitectureFileAsTheCatalogueEntry) {
  // gpt3-1.3b's catalogue entry (workloads/TRANSFORMER.md) in an architecture file's keys,
  // under another name.
  const std::string file = (dir_ / "gpt.json").string();
  std::ofstream(file) << R"({"name": "my-gpt", "layers": 24, "hidden": 2048, "heads": 16,
      "ffn_hidden": 8192, "vocab": 50257, "max_seq_len": 2048, "mlp": "gelu",
      "norm": "layernorm", "positions": "learned", "tied_embeddings": true,
      "linear_biases": true, "dropout": true})";
  const std::string flags =
      " --device a100 --platform tests/testdata/dgx_a100_2nodes.json "
      "--gpus 8 --global-batch 8 --seq-len 256 --simulate 0";
  const Result named = run("plan --model gpt3-1.3b" + flags);
  const Result from_file = run("plan --model " + file + flags);
  ASSERT_EQ(named.exit_code, 0) << named.err;
  ASSERT_EQ(from_file.exit_code, 0) << from_file.err;
  // Every configuration, estimate and memory; only the model's name differs.
  std::string out = from_file.out;
  for (std::size_t at = out.find("my-gpt"); at != std::string::npos; at = out.find("my-gpt")) {
    out.replace(at, 6, "gpt3-1.3b");
  }
  EXPECT_NE(from_file.out, named.out);
  EXPECT_EQ(out, named.out);
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
  // Nothing simulated: the table holds estimates, whose class no published row checked.
  EXPECT_EQ(json::parse(slurp(one)).at("error_bars").at(0).at("class"), "plan-estimate");
  EXPECT_EQ(json::parse(slurp(one)).at("error_bars").at(0).at("rows"), 0);
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

TEST_F(PlanCli, CheckpointEarlyStopShortensTheFullRecomputeConfigurations) {
  // --checkpoint-early-stop (TRANSFORMER.md, "Recompute") applies to the configurations that
  // recompute in full: they compute less, and with TP redo one all-reduce less per block; the
  // others are estimated as before. MPT 1B: GPT-3 1.3B's shape, trained without dropout (with it
  // the output's reduction would be redone).
  const auto estimates = [&](const std::string& extra, const std::string& name) {
    const std::string file = (dir_ / name).string();
    const Result r = run(
        "plan --model mpt-1b --device a100 --platform tests/testdata/dgx_a100_2nodes.json --gpus 8 "
        "--global-batch 8 --seq-len 256 --simulate 0" +
        extra + " --report " + file);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const json plan = json::parse(slurp(file));
    EXPECT_EQ(plan.at("plan").at("checkpoint_early_stop"), !extra.empty());
    EXPECT_EQ(r.out.find(", full recompute stopping early\n") != std::string::npos, !extra.empty());
    std::map<std::string, json> by_name;
    for (const json& row : plan.at("configurations")) {
      by_name[row.at("configuration").get<std::string>()] = row.at("estimated");
    }
    return by_name;
  };
  const auto plain = estimates("", "plain.json");
  const auto early = estimates(" --checkpoint-early-stop", "early.json");
  ASSERT_EQ(plain.size(), early.size());
  int full_rows = 0;
  for (const auto& [name, row] : plain) {
    const json& other = early.at(name);
    if (name.find(" full") == std::string::npos) {
      EXPECT_EQ(other, row) << name;
      continue;
    }
    ++full_rows;
    EXPECT_LT(other.at("compute_sec").get<double>(), row.at("compute_sec").get<double>()) << name;
    if (name.starts_with("tp2 ")) {
      EXPECT_LT(other.at("tp_sec").get<double>(), row.at("tp_sec").get<double>()) << name;
    }
  }
  EXPECT_GT(full_rows, 0);
}

TEST_F(PlanCli, APowerLimitSlowsComputeBoundConfigurationsAndKeepsMemory) {
  // The same plan on A100s held to 200 W of their 400 (workloads/COMPUTE.md, "Power limit"):
  // no configuration's compute gets faster, none slower than 1 / (1/2)^(1/3) (memory-bound
  // kernels keep their speed); memory and the fit are the same (capacity is the card's).
  // Without context parallelism a rank holds all 256 tokens, and its QKV and MLP GEMMs are
  // compute-bound (by hand, the smallest, QKV's 256 x 2048 x 768 at tp8 in bf16: 2*256*2048*768
  // FLOP over 2*(256*2048 + 2048*768 + 256*768) B = 176 FLOP/B, above the A100's ridge point 312e12
  // / 2.039e12 = 153), so those configurations are strictly slower. With cp >= 4 a rank holds 64
  // tokens or fewer and every kernel may be memory-bound: equal is then right.
  const auto estimates = [&](const std::string& device, const std::string& name) {
    const std::string file = (dir_ / name).string();
    const Result r =
        run("plan --model gpt3-1.3b --device " + device +
            " --platform tests/testdata/dgx_a100_2nodes.json --gpus 8 --global-batch 8 "
            "--seq-len 256 --simulate 0 --report " +
            file);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const json report = json::parse(slurp(file));
    std::map<std::string, json> by_name;
    for (const json& row : report.at("configurations")) {
      by_name[row.at("configuration").get<std::string>()] = row;
    }
    return by_name;
  };
  const auto full = estimates("a100", "full.json");
  const auto capped = estimates("a100@200W", "capped.json");
  ASSERT_EQ(full.size(), capped.size());
  ASSERT_FALSE(full.empty());
  int without_cp = 0;
  for (const auto& [name, row] : full) {
    const double t = row.at("estimated").at("compute_sec");
    const double c = capped.at(name).at("estimated").at("compute_sec");
    EXPECT_GE(c, t) << name;
    if (name.find(" cp1 ") != std::string::npos) {
      EXPECT_GT(c, t) << name;
      ++without_cp;
    }
    EXPECT_LT(c, t / std::cbrt(0.5)) << name;
    EXPECT_EQ(capped.at(name).at("peak_memory_bytes"), row.at("peak_memory_bytes")) << name;
  }
  EXPECT_GT(without_cp, 0);
}

TEST_F(PlanCli, RefusesBadInputNamingTheFlag) {
  const std::string platform = " --platform tests/testdata/dgx_a100_2nodes.json";
  const std::string model = "--model gpt3-1.3b --global-batch 8" + platform;
  expect_error(model + " --gpus 0", "dtsim plan: --gpus 0: expected an integer >= 1\n");
  expect_error(model + " --gpus 32",
               "dtsim plan: --gpus 32: the platform tests/testdata/dgx_a100_2nodes.json has 16 "
               "GPUs\n");
  expect_error(model + " --gpus 8 --attention flash3",
               "dtsim plan: --attention flash3: expected flash1, flash2 or cudnn\n");
  expect_error(model + " --gpus 8 --fp8-recipe transformer-engine",
               "dtsim plan: --fp8-recipe transformer-engine: expected torchao, "
               "torchao-rowwise, te or megatron-te\n");
  expect_error(
      model + " --gpus 8 --strategies tp,fsdp",
      "dtsim plan: --strategies tp,fsdp: unknown strategy \"fsdp\" (expected tp, pp, "
      "dp, cp, zero, recompute, sp, tp-overlap; for a CNN dp, pp, spatial, filter, channel)\n");
  expect_error(
      model + " --gpus 8 --seq-len 4096",
      "dtsim plan: --seq-len 4096: gpt3-1.3b has a learned position table of 2048 tokens\n");
  expect_error(
      model + " --gpus 8 --device tpu",
      "dtsim plan: --device tpu: unknown device (expected one of v100, v100-pcie, t4, a100, "
      "a100-40gb, a100-pcie, a10, l40s, l4, h100-pcie, h100, h200, b200, or one of them @WATTS, "
      "e.g. h100@500W)\n");
  expect_error(
      "--model gpt3-1.3b --platform tests/testdata/pf_torus.json --gpus 8 --global-batch 8",
      "dtsim plan: tests/testdata/pf_torus.json: the planner's estimate supports star and "
      "fat-tree platforms, not torus\n");
  expect_error("--model gpt9 --gpus 8 --global-batch 8" + platform,
               "dtsim plan: --model gpt9: not in the catalogue (workloads/TRANSFORMER.md), an "
               "architecture file (a path ending in .json) nor a CNN of the model zoo "
               "(workloads/GENERATOR.md)\n");
  const std::string bad = (dir_ / "bad.json").string();
  std::ofstream(bad) << R"({"name": "g", "layers": 2})";
  expect_error("--model " + bad + " --gpus 8 --global-batch 8" + platform,
               "dtsim plan: " + bad + ": /hidden: missing\n" + "dtsim plan: " + bad +
                   ": /heads: missing\n" + "dtsim plan: " + bad + ": /ffn_hidden: missing\n" +
                   "dtsim plan: " + bad + ": /vocab: missing\n" + "dtsim plan: " + bad +
                   ": /max_seq_len: missing\n" + "dtsim plan: " + bad + ": /mlp: missing\n" +
                   "dtsim plan: " + bad + ": /norm: missing\n" + "dtsim plan: " + bad +
                   ": /positions: missing\n");
  expect_error(model + " --gpus 8 --simulate-timeout -1",
               "dtsim plan: --simulate-timeout: expected a number of seconds >= 0\n");
  expect_error(model + " --gpus 8 --image-size 224",
               "dtsim plan: --image-size 224: gpt3-1.3b is a transformer (--seq-len sets its "
               "input)\n");
  expect_error(model + " --gpus 8 --strategies tp,spatial",
               "dtsim plan: --strategies tp,spatial: gpt3-1.3b is a transformer: its plan takes "
               "tp, pp, dp, cp, zero, recompute, sp, tp-overlap\n");
  expect_error(model + " --gpus 8 --strategies tp,tp-overlap",
               "dtsim plan: --strategies tp,tp-overlap: tp-overlap needs tp and sp (TP is "
               "overlapped with sequence parallelism)\n");
  // The report never overwrites the platform it plans on.
  const Result same =
      run("plan " + model + " --gpus 8 --report tests/testdata/dgx_a100_2nodes.json");
  EXPECT_EQ(same.exit_code, 2);
  EXPECT_EQ(same.err,
            "dtsim plan: --report tests/testdata/dgx_a100_2nodes.json: the same file as "
            "--platform\n");
}

// A CNN's plan: resnet50 on the 8 GPUs of one node, fp32 on V100s.
const std::string kCnn =
    "--model resnet50 --device v100 --precision fp32 --platform "
    "tests/testdata/dgx_a100_2nodes.json --gpus 8 --global-batch 64";

TEST_F(PlanCli, PlansACnnWithItsSplitsInSamples) {
  const Result r = run("plan " + kCnn + " --simulate 2 --top 40 --report " + report());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("global batch 64 samples"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("smp/s/gpu"), std::string::npos) << r.out;
  // Splits of every kind are estimated (the search space's test counts them).
  for (const char* split : {" data ", " spatial2x2 ", " filter2 ", " channel4 "}) {
    EXPECT_NE(slurp(csv()).find(split), std::string::npos) << split;
  }
  const json plan = json::parse(slurp(report()));
  const json& best = plan.at("configurations").at(0);
  ASSERT_TRUE(best.contains("simulated")) << best.dump();
  // Samples per second per GPU of the simulated step: the global batch over its time and the
  // GPUs.
  const double sec = best.at("simulated").at("iteration_time_sec").get<double>();
  EXPECT_NEAR(best.at("simulated").at("samples_per_sec_per_gpu").get<double>(), 64 / sec / 8,
              1e-9 * 64 / sec / 8);
  EXPECT_EQ(slurp(csv()).rfind("rank,configuration,tp,pp,dp,cp,", 0), 0u);
  EXPECT_NE(slurp(csv()).find("samples_per_sec_per_gpu"), std::string::npos);
  // No published model-parallel CNN step time was checked (issue #17): the plan says so.
  EXPECT_EQ(plan.at("error_bars").at(0).at("class"), "hybrid-cnn");
  EXPECT_EQ(plan.at("error_bars").at(0).at("rows"), 0);
}

TEST_F(PlanCli, DropsACnnThatDoesNotFitAndKeepsItsSplits) {
  // cosmoflow at 512^3, one sample per GPU on 8 V100s (32 GiB): a whole replica keeps 49 GiB
  // of activations (the cnn-strategies study's memory table), so every data-parallel and
  // pipeline configuration of dp 8 is dropped; a 2x2x2 grid holds an eighth of each map.
  const Result r =
      run("plan --model cosmoflow --image-size 512 --device v100 --precision fp32 --platform "
          "tests/testdata/dgx_a100_2nodes.json --gpus 8 --global-batch 8 --simulate 0 --top 3 "
          "--report " +
          report());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("out of memory (largest part: activations)"), std::string::npos) << r.out;
  const json plan = json::parse(slurp(report()));
  ASSERT_FALSE(plan.at("configurations").empty());
  for (const json& c : plan.at("configurations")) {
    const std::string name = c.at("configuration");
    EXPECT_EQ(name.find("dp8 pp1 data"), std::string::npos) << name;
    EXPECT_LE(c.at("peak_memory_bytes").get<double>(), plan.at("plan").at("capacity_bytes"));
  }
}

TEST_F(PlanCli, RefusesCnnInputNamingTheFlag) {
  expect_error(kCnn + " --seq-len 128",
               "dtsim plan: --seq-len 128: resnet50 is a CNN, with no sequence (--image-size "
               "sets its input)\n");
  expect_error(kCnn + " --strategies dp,zero",
               "dtsim plan: --strategies dp,zero: resnet50 is a CNN: its plan takes dp, pp, "
               "spatial, filter, channel\n");
  expect_error(kSmall + " --strategies tp,pp,dp --checkpoint-early-stop",
               "dtsim plan: --checkpoint-early-stop: --strategies tp,pp,dp leaves out recompute, "
               "so no configuration recomputes\n");
  expect_error(kCnn + " --checkpoint-early-stop",
               "dtsim plan: --checkpoint-early-stop: resnet50 is a CNN, whose plan recomputes "
               "nothing\n");
  expect_error(kCnn + " --image-size 16",
               "dtsim plan: --image-size 16: resnet50 needs at least 32 pixels\n");
}

}  // namespace
