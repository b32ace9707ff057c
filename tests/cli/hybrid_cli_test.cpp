// `dtsim simulate --model/--parallel` as a user runs it: plain data parallelism unchanged, a
// transformer job end to end, and every bad combination a located error (exit 2, no report).
#include <cmath>
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

class HybridCli : public dtsim::cli_test::DtsimTest {
 protected:
  [[nodiscard]] fs::path path(const std::string& name) const { return dir_ / name; }

  json simulate(const std::string& args, const std::string& report) const {
    const Result r = run("simulate " + args + " --report " + path(report).string());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(slurp(path(report)));
  }

  void expect_error(const std::string& args, const std::string& message) const {
    const Result r = run("simulate " + args + " --report " + path("bad.json").string());
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_EQ(r.err, message) << args;
    EXPECT_FALSE(fs::exists(path("bad.json"))) << args;
  }
};

const std::string kResnet =
    "--workload workloads/traces/resnet50_v100_b32.json --platform "
    "tests/testdata/sim_fat_tree16.json";
// Two DGX A100 nodes (platforms/PRESETS.md): 8 GPUs on NVSwitch each.
const std::string kGpt =
    "--model gpt3-1.3b --device a100 --platform "
    "tests/testdata/dgx_a100_2nodes.json --ranks 16";

TEST_F(HybridCli, DataParallelAloneIsTodaysRunToTheLastDigit) {
  // The issue's rule: tp = pp = cp = ep = 1 is today's data-parallel model. Same iteration,
  // compute and per-bucket all-reduce times, with and without gradient accumulation.
  for (const std::string& steps : {std::string("1"), std::string("2")}) {
    const json dp = simulate(kResnet + " --ranks 8 --accumulation-steps " + steps, "dp.json");
    const json hybrid = simulate(kResnet + " --ranks 8 --parallel dp=8 --global-batch " +
                                     std::to_string(32 * 8 * std::stoi(steps)),
                                 "hybrid.json");
    EXPECT_EQ(hybrid["result"]["iteration_time_sec"], dp["result"]["iteration_time_sec"]);
    for (const char* phase : {"compute_sec", "forward_sec", "backward_sec", "optimizer_sec"}) {
      EXPECT_EQ(hybrid["result"]["rank0"][phase], dp["result"][phase]) << phase;
    }
    const json& buckets = dp["result"]["buckets"];
    const json& collectives = hybrid["result"]["collectives"];
    ASSERT_EQ(buckets.size(), collectives.size());
    for (std::size_t b = 0; b < buckets.size(); ++b) {
      EXPECT_EQ(collectives[b]["bytes"], buckets[b]["bytes"]);
      EXPECT_EQ(collectives[b]["start_sec"], buckets[b]["start_sec"]);
      EXPECT_EQ(collectives[b]["end_sec"], buckets[b]["end_sec"]);
    }
  }
}

TEST_F(HybridCli, TransformerJobReportsThroughputAndStages) {
  const std::string args = kGpt + " --parallel tp=2,pp=2,dp=4 --global-batch 16 --seq-len 1024";
  const json r = simulate(args, "r.json");
  const json& result = r["result"];
  EXPECT_EQ(r["parallel"]["micro_batches"], 4);  // 16 / (1 * 4)
  ASSERT_EQ(result["stages"].size(), 2u);
  EXPECT_EQ(result["stages"][0]["first_layer"], "embedding");
  EXPECT_EQ(result["stages"][1]["last_layer"], "head");
  // tokens/s per GPU = global batch * seq_len / iteration time / GPUs (the report's own terms).
  const double time = result["iteration_time_sec"];
  EXPECT_NEAR(result["tokens_per_sec_per_gpu"].get<double>(), 16.0 * 1024 / time / 16, 1e-6);
  const double mfu = result["mfu"];
  EXPECT_GT(mfu, 0.0);
  EXPECT_LT(mfu, 1.0);
  EXPECT_GT(result["exposed_sec"]["tp"].get<double>(), 0.0);
  EXPECT_GT(result["bubble_fraction"].get<double>(), 0.0);
  // Deterministic: the same run gives the same report, byte for byte.
  simulate(args, "again.json");
  EXPECT_EQ(slurp(path("r.json")), slurp(path("again.json")));
}

TEST_F(HybridCli, TpOverlapRunsTheSameComputeWithLessTensorParallelWaiting) {
  // The same job with TP's gathers and reduce-scatters beside their GEMMs (HYBRID.md,
  // "Overlapped TP"): the stages compute as long (the GEMMs' chunks add up to them) and wait
  // less for TP; the report says which ran.
  const std::string args =
      kGpt + " --parallel tp=4,dp=4 --global-batch 16 --seq-len 1024 --sequence-parallel";
  const json plain = simulate(args, "plain.json");
  const json overlapped = simulate(args + " --tp-overlap", "overlapped.json");
  EXPECT_EQ(plain["parallel"]["tp_overlap"], false);
  EXPECT_EQ(overlapped["parallel"]["tp_overlap"], true);
  const json& a = plain["result"];
  const json& b = overlapped["result"];
  EXPECT_NEAR(b["stages"][0]["compute_sec"].get<double>(),
              a["stages"][0]["compute_sec"].get<double>(), 1e-9);
  EXPECT_LT(b["exposed_sec"]["tp"].get<double>(), a["exposed_sec"]["tp"].get<double>());
  EXPECT_LT(b["iteration_time_sec"].get<double>(), a["iteration_time_sec"].get<double>());
}

TEST_F(HybridCli, CheckpointEarlyStopRecomputesLessOfEveryBlock) {
  // PyTorch's non-reentrant checkpoint (TRANSFORMER.md, "Recompute"): full recompute stopping
  // at each block's last saved tensor. MPT 1B (GPT-3 1.3B's shape, no dropout) skips each
  // block's down projection: its stages compute less than with the whole forward again and
  // more than without recomputing; the report and the summary say which ran; memory is full
  // recompute's (the same tensors are rebuilt). GPT-3 trains with dropout, whose mask is saved
  // last: its blocks are redone whole, as without early stop.
  const std::string args =
      "--model mpt-1b --device a100 --platform tests/testdata/dgx_a100_2nodes.json --ranks 16 "
      "--parallel tp=2,pp=2,dp=4 --global-batch 16 --seq-len 1024";
  const json none = simulate(args, "none.json");
  const json full = simulate(args + " --recompute full", "full.json");
  const json early = simulate(args + " --recompute full --checkpoint-early-stop", "early.json");
  EXPECT_EQ(full["parallel"]["checkpoint_early_stop"], false);
  EXPECT_EQ(early["parallel"]["checkpoint_early_stop"], true);
  EXPECT_EQ(early["parallel"]["recompute"], "full");
  for (int stage : {0, 1}) {
    const double compute = early["result"]["stages"][stage]["compute_sec"];
    EXPECT_LT(compute, full["result"]["stages"][stage]["compute_sec"].get<double>());
    EXPECT_GT(compute, none["result"]["stages"][stage]["compute_sec"].get<double>());
  }
  const std::string gpt = kGpt + " --parallel tp=2,pp=2,dp=4 --global-batch 16 --seq-len 1024";
  EXPECT_EQ(simulate(gpt + " --recompute full --checkpoint-early-stop",
                     "gpt_early.json")["result"]["iteration_time_sec"],
            simulate(gpt + " --recompute full", "gpt_full.json")["result"]["iteration_time_sec"]);
  EXPECT_EQ(early["memory"]["peak_bytes"], full["memory"]["peak_bytes"]);
  const Result r = run("simulate " + args + " --recompute full:2 --checkpoint-early-stop");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(", recompute full:2 (early stop))"), std::string::npos) << r.out;
  expect_error(args + " --checkpoint-early-stop",
               "dtsim simulate: --checkpoint-early-stop: needs --recompute full or full:N "
               "(--recompute none)\n");
  expect_error(args + " --recompute selective --checkpoint-early-stop",
               "dtsim simulate: --checkpoint-early-stop: needs --recompute full or full:N "
               "(--recompute selective)\n");
}

TEST_F(HybridCli, TheComputeSourceNamesTheGemmsShareOfThePeak) {
  // 0.5 on an H200, times the GPU's MAMF share over the H200's (workloads/roofline.cpp): an
  // A100's bf16 0.5 x 0.869 / 0.803 = 0.541; an H100's bf16 0.5 and its fp8 0.5 x 0.709 / 0.803
  // = 0.441 of the fp8 peak.
  const std::string job = " --parallel dp=16 --global-batch 16 --seq-len 256";
  EXPECT_NE(simulate(kGpt + job, "a100.json")["model"]["compute_source"].get<std::string>().find(
                "GEMMs at 0.541 of peak, attention"),
            std::string::npos);
  const std::string h100 =
      "--model gpt3-1.3b --device h100 --precision fp8 --platform "
      "platforms/files/presets/dgx-h100.json --ranks 8 --parallel dp=8 --global-batch 8 "
      "--seq-len 256";
  EXPECT_NE(simulate(h100, "h100.json")["model"]["compute_source"].get<std::string>().find(
                "GEMMs at 0.5 of peak, fp8 GEMMs at 0.441 of the fp8 peak"),
            std::string::npos);
}

TEST_F(HybridCli, TheFp8RecipeCastsWeightsAsTheFrameworkDoesAndTpGathersFp8) {
  // workloads/TRANSFORMER.md, "Float8". Per micro-batch's forward, torchao casts every weight
  // with an amax pass (6 bytes an element), Transformer Engine called per micro-batch without
  // one (4), Megatron-LM once a step (none counted): the stages compute longest under torchao,
  // least under megatron-te. With TP and sequence parallelism every recipe gathers in fp8, half
  // the bytes of bf16's gathers, its reduce-scatters the same: the exposed TP time is below
  // bf16's (no TP overlap, so every TP collective is exposed).
  const std::string job =
      "--model gpt3-1.3b --device h100 --platform platforms/files/presets/dgx-h100.json "
      "--ranks 8 --parallel tp=4,dp=2 --sequence-parallel --global-batch 8 --seq-len 1024";
  std::map<std::string, json> runs;
  for (const char* recipe : {"torchao", "te", "megatron-te"}) {
    runs[recipe] =
        simulate(job + " --precision fp8 --fp8-recipe " + recipe, std::string(recipe) + ".json");
    const std::string source = runs[recipe]["model"]["compute_source"];
    EXPECT_NE(source.find(std::string("fp8 peak, ") + recipe + " casts, attention"),
              std::string::npos)
        << source;
  }
  runs["bf16"] = simulate(job + " --precision bf16", "bf16.json");
  const auto compute = [&](const char* run) {
    return runs[run]["result"]["stages"][0]["compute_sec"].get<double>();
  };
  EXPECT_GT(compute("torchao"), compute("te"));
  EXPECT_GT(compute("te"), compute("megatron-te"));
  const auto tp = [&](const char* run) {
    return runs[run]["result"]["exposed_sec"]["tp"].get<double>();
  };
  for (const char* recipe : {"torchao", "te", "megatron-te"}) {
    EXPECT_LT(tp(recipe), tp("bf16")) << recipe;
    EXPECT_GT(tp(recipe), 0.5 * tp("bf16")) << recipe;  // the reduce-scatters stay 16-bit
  }
  expect_error(
      job + " --fp8-recipe TE",
      "dtsim simulate: --fp8-recipe TE: expected torchao, torchao-rowwise, te or megatron-te\n");
}

TEST_F(HybridCli, APowerLimitSlowsTheComputeNotTheNetwork) {
  // An A100 SXM held to 200 W of its 400 W TDP: every kernel's FLOP rate x (1/2)^(1/3) = 0.7937
  // (workloads/COMPUTE.md, "Power limit"), its memory-bound kernels and the network unchanged.
  // So each stage computes longer than at the TDP but less than 1 / 0.7937 times as long; the
  // GEMMs' share of the peak in the compute source follows (0.5411 x 0.7937 = 0.4295); MFU keeps
  // the datasheet peak (312 TFLOP/s) as its denominator.
  const std::string job = " --parallel tp=2,pp=2,dp=4 --global-batch 16 --seq-len 1024";
  const json full = simulate(kGpt + job, "full.json");
  const std::string capped_gpt =
      "--model gpt3-1.3b --device a100@200W --platform tests/testdata/dgx_a100_2nodes.json "
      "--ranks 16";
  const json capped = simulate(capped_gpt + job, "capped.json");
  for (int stage : {0, 1}) {
    const double t = full["result"]["stages"][stage]["compute_sec"];
    const double c = capped["result"]["stages"][stage]["compute_sec"];
    EXPECT_GT(c, t) << stage;
    EXPECT_LT(c, t / std::cbrt(0.5)) << stage;
  }
  EXPECT_EQ(capped["model"]["device"], "NVIDIA A100-SXM4-80GB at a 200 W power limit");
  EXPECT_EQ(capped["result"]["peak_flops_per_sec"], full["result"]["peak_flops_per_sec"]);
  EXPECT_NE(capped["model"]["compute_source"].get<std::string>().find("GEMMs at 0.429 of peak"),
            std::string::npos)
      << capped["model"]["compute_source"];
  std::string over = capped_gpt + job;
  over.replace(over.find("a100@200W"), 9, "a100@500W");
  expect_error(over,
               "dtsim simulate: --device a100@500W: expected NAME@WATTS with a power limit in "
               "watts ('500W') from half the NVIDIA A100-SXM4-80GB's TDP to all of it, 200W to "
               "400W\n");
}

TEST_F(HybridCli, PyTorchsInterleavedScheduleRunsAndSaysSo) {
  // interleaved-torch:2 (torch.distributed.pipelining's, HYBRID.md) with m = p = 2 micro-batches
  // per replica: the last stage starts its backwards before its last forwards, so it holds
  // fewer activations than under Megatron-LM's schedule, which runs every forward first; the
  // first stage runs all its forwards first in both (pipeline_schedule_test.cpp by hand).
  const std::string job = " --parallel tp=2,pp=2,dp=4 --global-batch 8 --seq-len 1024";
  const json megatron = simulate(kGpt + job + " --schedule interleaved:2", "megatron.json");
  const json torch = simulate(kGpt + job + " --schedule interleaved-torch:2", "torch.json");
  EXPECT_EQ(torch["parallel"]["schedule"], "interleaved-torch:2");
  EXPECT_EQ(megatron["parallel"]["schedule"], "interleaved:2");
  const auto activations = [](const json& report, int stage) {
    return report["memory"]["stages"][stage]["activations_bytes"].get<double>();
  };
  EXPECT_LT(activations(torch, 1), activations(megatron, 1));
  EXPECT_EQ(activations(torch, 0), activations(megatron, 0));
}

TEST_F(HybridCli, BadJobsAreLocatedErrors) {
  expect_error(kGpt + " --parallel tp=8,pp=4,dp=8",
               "dtsim simulate: --parallel: tp=8,cp=1,dp=8,pp=4,ep=1 makes 256 ranks, not 16\n");
  expect_error(kGpt + " --parallel tp=2,pp=32",
               "dtsim simulate: --parallel tp=2,pp=32: tp*cp*pp = 64 does not divide --ranks "
               "16\n");
  expect_error(kGpt + " --parallel tp=2,pp=8,dp=1 --stage-layers 3,3,3,3,3,3,3,4",
               "dtsim simulate: --stage-layers: the counts add up to 25, the model has 24 "
               "layers\n");
  expect_error(kGpt + " --parallel tp=2,dp=8 --global-batch 12",
               "dtsim simulate: --global-batch 12: not a multiple of the micro-batch times dp "
               "(8)\n");
  expect_error(kGpt + " --parallel tp=2,pp=2,dp=4 --schedule interleaved:2 --global-batch 12",
               "dtsim simulate: --schedule: interleaved:2 needs micro-batches divisible by "
               "pipeline stages, got 3 micro-batches over 2 stages\n");
  expect_error(kGpt + " --parallel tp=2,pp=4,dp=2 --schedule 2f2b",
               "dtsim simulate: --schedule 2f2b: unknown pipeline schedule \"2f2b\"; expected "
               "\"gpipe\", \"1f1b\", \"interleaved:V\" or \"interleaved-torch:V\"\n");
  expect_error(kGpt + " --parallel tp=2,pp=2,dp=4 --schedule interleaved-torch:2 --global-batch 12",
               "dtsim simulate: --schedule: interleaved-torch:2 needs micro-batches divisible by "
               "pipeline stages, got 3 micro-batches over 2 stages\n");
  expect_error(kGpt + " --parallel dp=16 --zero 4",
               "dtsim simulate: --zero 4: expected 0, 1, 2 or 3\n");
  expect_error(kGpt + " --parallel dp=16 --zero 3 --fsdp-unshard layer",
               "dtsim simulate: --fsdp-unshard layer: expected auto, unit, micro-batch or step\n");
  expect_error(kGpt + " --parallel dp=16 --zero 1 --fsdp-unshard step",
               "dtsim simulate: --fsdp-unshard: how long gathered weights are kept applies to "
               "ZeRO-3 only\n");
  expect_error(kGpt + " --parallel tp=2,dp=8 --tp-overlap",
               "dtsim simulate: --tp-overlap: overlapped TP communication needs sequence "
               "parallelism (it overlaps the gathers and reduce-scatters that replace the "
               "all-reduces)\n");
  expect_error(kGpt + " --parallel tp=2,dp=8 --graph x.json",
               "dtsim simulate: --graph G.json replays a graph as it is: --model and --parallel "
               "do not apply\n");
}

TEST_F(HybridCli, FlagsTheRunDoesNotUseAreRefusedNotIgnored) {
  // A flag of one kind of run given to another used to change nothing: --zero 3 on a DDP replay
  // reported plain data parallelism. Each is now an error naming the flag (flag_scope.h).
  const std::string hybrid_only =
      ": applies to a hybrid-parallel run (--model or --parallel), and this one replays "
      "--workload as data-parallel training (give --parallel dp=N)\n";
  expect_error(kResnet + " --ranks 8 --zero 3", "dtsim simulate: --zero 3" + hybrid_only);
  expect_error(kResnet + " --ranks 8 --recompute full",
               "dtsim simulate: --recompute full" + hybrid_only);
  expect_error(kResnet + " --ranks 8 --sequence-parallel",
               "dtsim simulate: --sequence-parallel" + hybrid_only);
  // Recomputation on a hybrid run of a trace or a zoo CNN: their pieces have none to redo.
  expect_error(kResnet + " --ranks 8 --parallel dp=8 --global-batch 256 --recompute full",
               "dtsim simulate: --recompute full: recomputation is modelled for a transformer's "
               "blocks; a trace has none\n");
  expect_error(
      "--model resnet50 --device v100 --precision fp32 --platform "
      "tests/testdata/sim_fat_tree16.json --ranks 8 --parallel dp=8 --recompute full:2",
      "dtsim simulate: --recompute full:2: recomputation is modelled for a transformer's "
      "blocks; resnet50 has none\n");
  // Given at its default value, it is still given: the user meant something by it.
  expect_error(kResnet + " --ranks 8 --schedule 1f1b",
               "dtsim simulate: --schedule 1f1b" + hybrid_only);
  expect_error(kGpt + " --parallel tp=2,dp=8 --accumulation-steps 4",
               "dtsim simulate: --accumulation-steps 4: applies to a data-parallel --workload "
               "run only (a hybrid run accumulates by --global-batch)\n");
  expect_error(kGpt + " --parallel tp=2,dp=8 --overlap none",
               "dtsim simulate: --overlap none: applies to a data-parallel --workload run "
               "only\n");
  expect_error(kGpt + " --parallel tp=2,dp=8 --nccl-channels 4",
               "dtsim simulate: --nccl-channels 4: applies to a data-parallel --workload run "
               "only\n");
  expect_error(kGpt + " --parallel tp=2,dp=8 --bucket-kernels 1",
               "dtsim simulate: --bucket-kernels 1: applies to a data-parallel --workload run "
               "only\n");
  const std::string graph =
      "--graph tests/testdata/graph_pipeline_2stage.json --platform "
      "tests/testdata/sim_fat_tree16.json";
  expect_error(graph + " --iterations 2",
               "dtsim simulate: --iterations 2: does not apply to --graph or --chakra, replayed "
               "as it is\n");
  expect_error(graph + " --bucket-mb 1",
               "dtsim simulate: --bucket-mb 1: does not apply to --graph or --chakra, replayed "
               "as it is\n");
  expect_error(graph + " --zero 1",
               "dtsim simulate: --zero 1: applies to a hybrid-parallel run (--model or "
               "--parallel), and this one replays a graph as it is\n");
  // The flags each kind does use still run: the data-parallel replay with its own.
  const json dp = simulate(kResnet + " --ranks 8 --accumulation-steps 2 --overlap none", "dp.json");
  EXPECT_GT(dp["result"]["iteration_time_sec"].get<double>(), 0);
}

TEST_F(HybridCli, MaxTasksBoundsTheReplayItCounts) {
  // The bound is checked on the lowered graph before any task is built (lowering.h): the count
  // it checks is the count the run then replays, so that count passes and one less is refused.
  const std::string job = kGpt + " --parallel tp=2,pp=2,dp=4 --global-batch 16 --seq-len 1024";
  const json ok = simulate(job, "ok.json");
  const auto tasks = ok["tasks_replayed"].get<std::uint64_t>();
  ASSERT_GT(tasks, 1u);
  EXPECT_EQ(simulate(job + " --max-tasks " + std::to_string(tasks), "same.json")["tasks_replayed"],
            tasks);
  const Result r = run("simulate " + job + " --max-tasks " + std::to_string(tasks - 1));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(r.err.starts_with("dtsim simulate: about ")) << r.err;
  EXPECT_NE(r.err.find(" tasks to replay, more than --max-tasks "), std::string::npos) << r.err;
}

TEST_F(HybridCli, ShardingThatDoesNotDivideIsRefused) {
  // gpt3-1.3b: 24 layers, 16 heads of 128, hidden 2048 (Brown et al. 2020, table 2.1, with the
  // heads that make its hidden size). Each run: exit 2, the flag named, no report.
  const std::string model =
      "simulate --model gpt3-1.3b --device a100 --platform "
      "tests/testdata/dgx_a100_2nodes.json ";
  const std::vector<std::pair<std::string, std::string>> cases{
      {"--ranks 6 --parallel tp=3,dp=2", "dtsim simulate: --parallel: tp 3: does not divide"},
      {"--ranks 8 --parallel tp=1,pp=8 --schedule interleaved:4 --global-batch 8",
       "dtsim simulate: --parallel: pp: 32 virtual pipeline stages for 24 layers"},
      {"--ranks 16 --parallel dp=16,ep=2", "dtsim simulate: --parallel: ep"},
      {"--ranks 16 --parallel dp=16 --seq-len 4096", "dtsim simulate: --seq-len 4096"},
  };
  for (const auto& [args, prefix] : cases) {
    const Result r = run(model + args + " --report " + path("bad.json").string());
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_TRUE(r.err.starts_with(prefix)) << args << ": " << r.err;
    EXPECT_FALSE(fs::exists(path("bad.json"))) << args;
  }
  const Result device =
      run("simulate --model gpt3-1.3b --device x100 --platform "
          "tests/testdata/dgx_a100_2nodes.json --ranks 16 --parallel dp=16");
  EXPECT_EQ(device.exit_code, 2);
  EXPECT_TRUE(device.err.starts_with("dtsim simulate: --device x100")) << device.err;
  const Result unknown =
      run("simulate --model gpt-17 --platform "
          "tests/testdata/dgx_a100_2nodes.json --ranks 16 --parallel dp=16");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_TRUE(
      unknown.err.starts_with("dtsim simulate: --model gpt-17: not in the catalogue "
                              "(gpt3-1.3b, "))
      << unknown.err;
}

// GPT-3 1.3B as the catalogue holds it (Brown et al. 2020, table 2.1; workloads/TRANSFORMER.md),
// in an architecture file's keys, under another name (so that only its fields can make it so).
const char* kGpt3In13bFile = R"({"name": "my-gpt", "layers": 24, "hidden": 2048,
    "heads": 16, "ffn_hidden": 8192, "vocab": 50257, "max_seq_len": 2048, "mlp": "gelu",
    "norm": "layernorm", "positions": "learned", "tied_embeddings": true,
    "linear_biases": true, "dropout": true})";

TEST_F(HybridCli, ArchitectureFileRunsAsTheCatalogueEntry) {
  std::ofstream(path("gpt.json")) << kGpt3In13bFile;
  const std::string job =
      " --device a100 --platform tests/testdata/dgx_a100_2nodes.json "
      "--ranks 16 --parallel tp=2,pp=2,dp=4 --global-batch 16 --seq-len 256";
  const json named = simulate("--model gpt3-1.3b" + job, "named.json");
  const json file = simulate("--model " + path("gpt.json").string() + job, "file.json");
  EXPECT_EQ(file["result"], named["result"]);  // every time, to the last digit
  EXPECT_EQ(file["memory"], named["memory"]);
  EXPECT_EQ(file["model"]["name"], "my-gpt");
  json model = file["model"];
  model["name"] = "gpt3-1.3b";
  EXPECT_EQ(model, named["model"]);
  // The file is an input like the platform: its hash is in the report.
  const json& inputs = file["provenance"]["inputs"];
  ASSERT_EQ(inputs.size(), 2u);
  EXPECT_EQ(inputs[0]["flag"], "model");
  EXPECT_EQ(inputs[0]["path"], path("gpt.json").string());
  // In a job file, a relative architecture file is beside the job file (as a platform is).
  std::ofstream(path("job.json"))
      << R"({"model": "gpt.json", "device": "a100", "ranks": 16, "global-batch": 16,
            "parallel": {"tp": 2, "pp": 2, "dp": 4}, "seq-len": 256, "platform": ")"
      << fs::absolute("tests/testdata/dgx_a100_2nodes.json").string() << "\"}";
  EXPECT_EQ(simulate("--job " + path("job.json").string(), "job_report.json")["result"],
            named["result"]);
}

TEST_F(HybridCli, ArchitectureTooLargeToSimulateIsBadInput) {
  // A RoPE model whose trained context (the default --seq-len) is 2^31 - 1 tokens: its attention
  // alone, 2 (2^31)^2 x 65536 FLOPs a layer forward, passes the graph's 1e9 s per pass at any
  // H100 rate. Exit 2, not an internal error.
  std::ofstream(path("long.json")) << R"({"name": "long", "layers": 2, "hidden": 65536,
      "heads": 64, "ffn_hidden": 256, "vocab": 100, "max_seq_len": 2147483647, "mlp": "gelu",
      "norm": "layernorm", "positions": "rope"})";
  const Result r = run("simulate --model " + path("long.json").string() +
                       " --platform tests/testdata/dgx_a100_2nodes.json --ranks 16 "
                       "--parallel dp=16 --report " +
                       path("bad.json").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(r.err.starts_with("dtsim simulate: --model " + path("long.json").string() +
                                " in micro-batches of 1 x 2147483647 tokens is too large to "
                                "simulate (--micro-batch, --seq-len): its passes take "))
      << r.err;
  EXPECT_FALSE(fs::exists(path("bad.json")));
}

TEST_F(HybridCli, ZeroThreeShardsAMixtureOfExperts) {
  // Mixtral 8x7B under FSDP with 8-way expert parallelism on two DGX nodes runs end to end (it
  // was refused before): the experts' gathers and reduce-scatters go over the expert-data group
  // (ranks r and r + 8, one per node), whose bytes hybrid_test checks (HYBRID.md).
  const json r = simulate(
      "--model mixtral-8x7b --device h100 --platform tests/testdata/dgx_a100_2nodes.json "
      "--ranks 16 --parallel dp=16,ep=8 --zero 3 --global-batch 16 --seq-len 256 "
      "--algorithm auto",
      "moe.json");
  EXPECT_EQ(r["parallel"]["zero_stage"], 3);
  EXPECT_EQ(r["parallel"]["degrees"], "tp=1,cp=1,dp=16,pp=1,ep=8");
  EXPECT_GT(r["result"]["exposed_sec"]["dp"].get<double>(), 0.0);
  EXPECT_GT(r["result"]["exposed_sec"]["ep"].get<double>(), 0.0);
}

TEST_F(HybridCli, BadArchitectureFileIsALocatedError) {
  std::ofstream(path("gpt.json")) << R"({"name": "g", "layers": 24, "hidden": 2048,
      "heads": 24, "ffn_hidden": 8192, "vocab": 50257, "max_seq_len": 2048, "mlp": "gelu",
      "norm": "layernorm", "positions": "learned"})";
  expect_error("--model " + path("gpt.json").string() +
                   " --platform tests/testdata/dgx_a100_2nodes.json --ranks 16 --parallel dp=16",
               "dtsim simulate: " + path("gpt.json").string() +
                   ": /heads: 24: does not divide hidden 2048\n");
  expect_error(
      "--model " + path("none.json").string() +
          " --platform tests/testdata/dgx_a100_2nodes.json --ranks 16 --parallel dp=16",
      "dtsim simulate: " + path("none.json").string() + ": cannot open transformer architecture\n");
}

}  // namespace
