// `dtsim memory` as a user runs it: simulate's flags (and job files), a per-stage table and a
// JSON report, nothing simulated; bad input a located error (exit 2, no report).
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

class MemoryCli : public dtsim::cli_test::DtsimTest {
 protected:
  [[nodiscard]] std::string report() const { return (dir_ / "memory.json").string(); }

  json memory(const std::string& args) const {
    const Result r = run("memory " + args + " --report " + report());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err, "");
    return json::parse(slurp(report()));
  }

  void expect_error(const std::string& args, const std::string& message) const {
    const Result r = run("memory " + args + " --report " + report());
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_EQ(r.err, message) << args;
    EXPECT_EQ(r.out, "") << args;
    EXPECT_FALSE(fs::exists(report())) << args;
  }
};

// No platform: nothing is simulated. 16 sequences over dp = 4: 4 micro-batches of 1.
const std::string kGpt =
    "--model gpt3-1.3b --device a100 --parallel tp=2,pp=2,dp=4 --global-batch 16 --seq-len 1024";

TEST_F(MemoryCli, PrintsEveryStageAndTheWorstRank) {
  const Result r = run("memory " + kGpt);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("dtsim memory: gpt3-1.3b (bf16, tp=2,cp=1,dp=4,pp=2,ep=1, 1f1b, ZeRO 0, "
                        "recompute none), 4 micro-batches of 1 x 1024 tokens per replica\n",
                        0),
            0u)
      << r.out;
  EXPECT_NE(r.out.find("\n      0          2  "), std::string::npos) << r.out;  // stage 0: 2
  EXPECT_NE(r.out.find("\n      1          1  "), std::string::npos) << r.out;  // stage 1: 1
  EXPECT_NE(r.out.find("  worst rank: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("GiB, NVIDIA A100-SXM4-80GB): fits\n"), std::string::npos) << r.out;
  // How far to trust it: the memory validation's class, its figures from the results.
  EXPECT_NE(r.out.find("  validated error         "), std::string::npos) << r.out;
  EXPECT_EQ(memory(kGpt)["error_bars"][0]["class"], "memory-transformer");
}

TEST_F(MemoryCli, ReportHasTheBreakdownCapacityAndVerdict) {
  const json m = memory(kGpt)["memory"];
  // A100 80 GB: 80 * 2^30 bytes (sim/strategies/MEMORY.md).
  EXPECT_EQ(m["capacity_bytes"], 80ULL << 30);
  EXPECT_EQ(m["oom"], false);
  ASSERT_EQ(m["stages"].size(), 2u);
  // 1F1B holds min(m, p - stage) micro-batches: 2 on stage 0, 1 on stage 1.
  EXPECT_EQ(m["stages"][0]["micro_batches_in_flight"], 2);
  EXPECT_EQ(m["stages"][1]["micro_batches_in_flight"], 1);
  for (const json& s : m["stages"]) {
    std::uint64_t sum = 0;
    for (const char* part :
         {"parameters_bytes", "gradients_bytes", "optimizer_bytes", "activations_bytes",
          "fsdp_buffers_bytes", "communication_buffers_bytes", "framework_reserve_bytes"}) {
      sum += s[part].get<std::uint64_t>();
    }
    EXPECT_EQ(s["peak_bytes"], sum);
    // Mixed precision, ZeRO 0: 2 bytes of bf16 weights, 4 of fp32 gradients, 12 of optimizer.
    EXPECT_EQ(s["gradients_bytes"].get<std::uint64_t>(),
              2 * s["parameters_bytes"].get<std::uint64_t>());
    EXPECT_EQ(s["optimizer_bytes"].get<std::uint64_t>(),
              6 * s["parameters_bytes"].get<std::uint64_t>());
  }
  const int worst = m["worst_stage"];
  EXPECT_EQ(m["peak_bytes"], m["stages"][worst]["peak_bytes"]);
}

TEST_F(MemoryCli, ZeroOneShardsTheOptimizerOverTheFourReplicas) {
  const json zero0 = memory(kGpt)["memory"]["stages"][0];
  const json zero1 = memory(kGpt + " --zero 1")["memory"]["stages"][0];
  const std::uint64_t params = zero0["optimizer_bytes"].get<std::uint64_t>() / 12;
  EXPECT_EQ(zero1["optimizer_bytes"], 12 * ((params + 3) / 4));
  EXPECT_EQ(zero1["parameters_bytes"], zero0["parameters_bytes"]);
}

TEST_F(MemoryCli, ReadsSimulateJobFiles) {
  // The job file names a platform and iterations: accepted, unused.
  const json r = memory("--job tests/testdata/job_gpt3_1.3b.json");
  EXPECT_EQ(r["parallel"]["degrees"], "tp=2,cp=1,dp=4,pp=2,ep=1");
  EXPECT_EQ(r["memory"]["stages"].size(), 2u);
  EXPECT_FALSE(r.contains("result"));
}

TEST_F(MemoryCli, SimulateReportsTheSameMemory) {
  const json alone = memory(kGpt + " --zero 1 --schedule interleaved:2");
  const std::string simulated = (dir_ / "simulated.json").string();
  const Result r = run("simulate " + kGpt +
                       " --zero 1 --schedule interleaved:2 --platform "
                       "tests/testdata/dgx_a100_2nodes.json --ranks 16 --iterations 1 --report " +
                       simulated);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(json::parse(slurp(simulated))["memory"], alone["memory"]);
  EXPECT_NE(r.out.find("\n  peak memory             "), std::string::npos) << r.out;
}

TEST_F(MemoryCli, PytorchCrossEntropyAddsEightBytesPerLogitToTheHeadStage) {
  // Llama 3.1 8B, 2 x 1024 tokens, vocabulary 128256 padded to a multiple of 128 (itself): the
  // last stage holds 8 * 2048 * 128256 bytes more while the loss's backward runs
  // (sim/strategies/MEMORY.md), stage 0 nothing more.
  const std::string llama =
      "--model llama3.1-8b --parallel pp=2 --micro-batch 2 --seq-len 1024 "
      "--recompute selective-op";
  const json fused = memory(llama)["memory"]["stages"];
  const json pytorch = memory(llama + " --cross-entropy pytorch")["memory"]["stages"];
  EXPECT_EQ(pytorch[0]["activations_bytes"], fused[0]["activations_bytes"]);
  EXPECT_EQ(pytorch[1]["activations_bytes"].get<std::uint64_t>(),
            fused[1]["activations_bytes"].get<std::uint64_t>() + 8ULL * 2048 * 128256);
}

TEST_F(MemoryCli, CompiledCrossEntropyHoldsEightBytesPerLogitLessThanEager) {
  // The same under torch.compile (sim/strategies/MEMORY.md): the last stage keeps the bf16
  // logits (2 bytes, not fp32's 4) and its backward writes a bf16 gradient (2, not 8): 8 bytes
  // per logit less, 8 * 2048 * 128256; stage 0 unchanged.
  const std::string llama =
      "--model llama3.1-8b --parallel pp=2 --micro-batch 2 --seq-len 1024 "
      "--recompute selective-op";
  const json pytorch = memory(llama + " --cross-entropy pytorch")["memory"]["stages"];
  const json compiled = memory(llama + " --cross-entropy compiled")["memory"]["stages"];
  EXPECT_EQ(compiled[0]["activations_bytes"], pytorch[0]["activations_bytes"]);
  EXPECT_EQ(compiled[1]["activations_bytes"].get<std::uint64_t>(),
            pytorch[1]["activations_bytes"].get<std::uint64_t>() - 8ULL * 2048 * 128256);
}

TEST_F(MemoryCli, MptsPositionTableFollowsTheSequence) {
  // llm-foundry sizes MPT's learned position table to the run's sequence: at 8192 tokens
  // mpt-125m has 12 (12 d^2 + 13 d) + 50368 d + 8192 d + 2 d = 130,030,080 parameters (d = 768;
  // llm-foundry's benchmark table: 130.0 M), and a sequence past the catalogue's 2048 is not
  // refused as it is for GPT-3's fixed table.
  const json j = memory(
      "--model mpt-125m --device a100 --parallel dp=1 --global-batch 1 "
      "--seq-len 8192");
  EXPECT_EQ(j["model"]["parameters"], 130'030'080u);
}

TEST_F(MemoryCli, OutputIsDeterministic) {
  const Result a = run("memory " + kGpt + " --sequence-parallel --recompute selective");
  const Result b = run("memory " + kGpt + " --sequence-parallel --recompute selective");
  EXPECT_EQ(a.exit_code, 0);
  EXPECT_EQ(a.out, b.out);
}

TEST_F(MemoryCli, ArchitectureFileIsAnInputItNeverOverwrites) {
  // gpt3-1.3b's catalogue entry (workloads/TRANSFORMER.md) in an architecture file's keys.
  const std::string file = (dir_ / "gpt.json").string();
  const std::string text = R"({"name": "my-gpt", "layers": 24, "hidden": 2048, "heads": 16,
      "ffn_hidden": 8192, "vocab": 50257, "max_seq_len": 2048, "mlp": "gelu",
      "norm": "layernorm", "positions": "learned", "tied_embeddings": true,
      "linear_biases": true, "dropout": true})";
  std::ofstream(file) << text;
  const std::string args = kGpt.substr(kGpt.find(" --device"));
  const json m = memory("--model " + file + args);
  EXPECT_EQ(m["memory"], memory(kGpt)["memory"]);
  ASSERT_EQ(m["provenance"]["inputs"].size(), 1u);
  EXPECT_EQ(m["provenance"]["inputs"][0]["flag"], "model");
  EXPECT_EQ(m["provenance"]["inputs"][0]["path"], file);
  const Result r = run("memory --model " + file + args + " --report " + file);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "dtsim memory: --model " + file + ": the same file as --report\n");
  EXPECT_EQ(slurp(file), text);
}

TEST_F(MemoryCli, FullRecomputeOfEveryNthBlock) {
  // torchtitan's layer-level checkpointing (TRANSFORMER.md, "Recompute"): the report names it,
  // and it holds less than none and more than full (a stage of all 24 blocks of gpt3-1.3b).
  const auto activations = [&](const std::string& mode) {
    const json r = memory(kGpt + " --recompute " + mode);
    EXPECT_EQ(r["parallel"]["recompute"], mode);
    return r["memory"]["stages"][0]["activations_bytes"].get<double>();
  };
  const double every2 = activations("full:2");
  EXPECT_LT(every2, activations("none"));
  EXPECT_GT(every2, activations("full"));
  fs::remove(report());
  expect_error(kGpt + " --recompute full:0",
               "dtsim memory: --recompute full:0: expected full:N with N an integer >= 1 (every "
               "N-th block)\n");
  expect_error(kGpt + " --recompute selective:2",
               "dtsim memory: --recompute selective:2: expected full:N with N an integer >= 1 "
               "(every N-th block)\n");
  expect_error(kGpt + " --recompute full:25",
               "dtsim memory: --recompute full:25: above gpt3-1.3b's 24 layers\n");
}

TEST_F(MemoryCli, BadInputIsALocatedError) {
  expect_error(kGpt + " --zero 4", "dtsim memory: --zero 4: expected 0, 1, 2 or 3\n");
  expect_error("--model gpt3-1.3b --bogus 1",
               "dtsim memory: unrecognised option '--bogus' (see dtsim memory --help)\n");
  expect_error("--workload workloads/traces/resnet50_v100_b32.json",
               "dtsim memory: --model: the memory model needs a transformer of the catalogue or "
               "an architecture file (a workload trace has no layer shapes)\n");
  expect_error(kGpt + " --recompute selective-op",
               "dtsim memory: --recompute selective-op: torchtitan's op-level policy is modelled "
               "for dense, bias-free SwiGLU blocks (Llama); gpt3-1.3b is not one (use selective "
               "or full)\n");
  expect_error(kGpt + " --attention flash3",
               "dtsim memory: --attention flash3: expected flash1, flash2 or cudnn\n");
  expect_error(
      kGpt + " --fp8-recipe delayed",
      "dtsim memory: --fp8-recipe delayed: expected torchao, torchao-rowwise, te or megatron-te\n");
  expect_error(kGpt + " --cross-entropy torch",
               "dtsim memory: --cross-entropy torch: expected fused, pytorch or compiled\n");
  expect_error("--model resnet50 --cross-entropy pytorch",
               "dtsim memory: --cross-entropy pytorch: the loss's memory is a transformer's (its "
               "vocabulary's logits); resnet50 has none\n");
  expect_error("--model gpt3-1.3b --graph g.json",
               "dtsim memory: --graph g.json: dtsim memory needs --model NAME (a graph has no "
               "layer shapes)\n");
}

}  // namespace
