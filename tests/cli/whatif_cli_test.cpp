// dtsim whatif as a user runs it, on a one-layer trace (tests/testdata/whatif_one_layer_v100.json)
// over 2 ranks of a 1 GB/s star without latency, with --overlap none so that an iteration is
// forward + backward + the one all-reduce + optimizer. By hand: compute 0.01 + 0.02 = 0.03 s; a
// ring all-reduce of S = 10^6 bytes on p = 2 ranks takes 2(p-1) S/(p B) = S/B = 1 ms.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_support.h"

namespace {

using dtsim::cli_test::Result;
using dtsim::cli_test::slurp;

class WhatIfCli : public dtsim::cli_test::DtsimTest {
 protected:
  [[nodiscard]] nlohmann::json report() const {
    return nlohmann::json::parse(slurp(dir_ / "r.json"));
  }
  [[nodiscard]] std::string report_flag() const {
    return " --report " + (dir_ / "r.json").string();
  }
};

const std::string kJob =
    "whatif --workload tests/testdata/whatif_one_layer_v100.json --platform "
    "tests/testdata/whatif_star2_1GBps.json --ranks 2 --overlap none";

TEST_F(WhatIfCli, EachApplyAgainstTheBaselineByHand) {
  const Result r =
      run(kJob + " --apply network=2x --apply amp --apply bucket-mb=0.5 --each" + report_flag());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = report();
  ASSERT_EQ(j["runs"].size(), 4u);
  // Baseline: 0.03 + 0.001 s.
  EXPECT_NEAR(j["runs"][0]["report"]["result"]["iteration_time_sec"].get<double>(), 0.031, 1e-9);
  // network=2x: the all-reduce takes S/(2B) = 0.5 ms: speedup 0.031 / 0.0305.
  EXPECT_NEAR(j["runs"][1]["speedup"].get<double>(), 0.031 / 0.0305, 1e-9);
  // amp on a V100: the layer is compute-bound (the only one with FLOPs): 0.03 x 15.7/125, plus
  // the weight cast, 10^6 x 6/4 bytes at 0.9 x 900 GB/s; the all-reduce stays fp32 (1 ms).
  const double amp_sec = 0.03 * 15.7 / 125 + 1.5e6 / (0.9 * 900e9) + 0.001;
  EXPECT_NEAR(j["runs"][2]["report"]["result"]["iteration_time_sec"].get<double>(), amp_sec, 1e-9);
  EXPECT_NEAR(j["runs"][2]["speedup"].get<double>(), 0.031 / amp_sec, 1e-6);
  // A knob re-runs simulate with the flag: one bucket either way, so the same time.
  EXPECT_EQ(j["runs"][3]["simulate_args"].back(), "0.5");
  EXPECT_NEAR(j["runs"][3]["speedup"].get<double>(), 1.0, 1e-12);
  EXPECT_NE(r.out.find("network=2x"), std::string::npos);
  EXPECT_NE(r.out.find("speedup"), std::string::npos);
}

TEST_F(WhatIfCli, EachSpeedupStatesTheValidatedErrorOfItsKind) {
  // The figures are experiments/what-if's (error_bars.py --check pins the table to them); this
  // pins which class each what-if reads and that a never-validated one says so.
  const Result r =
      run(kJob + " --apply network=2x --apply amp --apply bucket-mb=0.5 --each" + report_flag());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = report();
  EXPECT_FALSE(j["runs"][0].contains("speedup_error_bars"));  // the baseline predicts no speedup
  EXPECT_EQ(j["runs"][1]["speedup_error_bars"][0]["class"], "whatif-network");
  EXPECT_EQ(j["runs"][1]["speedup_error_bars"][0]["rows"], 0);
  EXPECT_EQ(j["runs"][2]["speedup_error_bars"][0]["class"], "whatif-amp");
  EXPECT_GT(j["runs"][2]["speedup_error_bars"][0]["rows"].get<int>(), 0);
  EXPECT_EQ(j["runs"][3]["speedup_error_bars"][0]["class"], "whatif-bucket");
  EXPECT_NE(r.out.find("speedup of network=2x:\n  validated error         none: no published "
                       "measurement of speedups of a network what-if was checked\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("speedup of amp:\n  validated error         "), std::string::npos);
}

TEST_F(WhatIfCli, SimulateWithAnApplySaysSoAndAddsItsErrorBar) {
  // dtsim simulate --apply: the report names the pass and quotes its class beside the run's own.
  const std::string simulate =
      "simulate --workload tests/testdata/whatif_one_layer_v100.json --platform "
      "tests/testdata/whatif_star2_1GBps.json --ranks 2 --overlap none";
  const Result r = run(simulate + " --apply network=2x" + report_flag());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = report();
  EXPECT_EQ(j["what_if"], nlohmann::json::array({"network=2x"}));
  ASSERT_EQ(j["error_bars"].size(), 2u);
  EXPECT_EQ(j["error_bars"][0]["class"].get<std::string>().rfind("dp-", 0), 0u);
  EXPECT_EQ(j["error_bars"][1]["class"], "whatif-network");
  EXPECT_NE(r.out.find(", with --apply network=2x)\n"), std::string::npos) << r.out;
  // Without one, neither.
  const Result plain = run(simulate + report_flag());
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_FALSE(report().contains("what_if"));
  EXPECT_EQ(report()["error_bars"].size(), 1u);
}

TEST_F(WhatIfCli, AllAppliesTogetherByDefault) {
  // network=2x and compute=2x: (0.03 + 0.001) / 2.
  const Result r = run(kJob + " --apply network=2x --apply compute=2x" + report_flag());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = report();
  ASSERT_EQ(j["runs"].size(), 2u);
  EXPECT_EQ(j["runs"][1]["name"], "network=2x compute=2x");
  EXPECT_NEAR(j["runs"][1]["speedup"].get<double>(), 2.0, 1e-9);
}

TEST_F(WhatIfCli, CompressionScalesBytesAndAddsCodecs) {
  // compress=0.5: the all-reduce carries 5e5 bytes (0.5 ms); encode and decode each stream
  // 1.5 x 10^6 bytes at 0.9 x 900 GB/s on the compute stream.
  const Result r = run(kJob + " --apply compress=0.5" + report_flag());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const double codec_sec = 1.5e6 / (0.9 * 900e9);
  EXPECT_NEAR(report()["runs"][1]["report"]["result"]["iteration_time_sec"].get<double>(),
              0.03 + 2 * codec_sec + 0.0005, 1e-9);
}

TEST_F(WhatIfCli, WhatIfFileListsThePasses) {
  const std::string file = (dir_ / "w.json").string();
  std::ofstream(file) << R"({"apply": ["network=2x"], "each": true})";
  const Result r = run(kJob + " --whatif " + file + report_flag());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NEAR(report()["runs"][1]["speedup"].get<double>(), 0.031 / 0.0305, 1e-9);
  std::ofstream(file) << R"({"apply": ["network=2x", 3]})";
  const Result bad = run(kJob + " --whatif " + file);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err, "dtsim whatif: " + file + ": /apply/1: expected a string, got 3\n");
}

TEST_F(WhatIfCli, BadInputIsRefusedBeforeAnyRun) {
  Result r = run(kJob + " --apply zap" + report_flag());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "dtsim whatif: --apply zap: unknown what-if (expected amp, fp16, bf16, gpu=NAME, "
            "compress=R, fused-optimizer=sgd|adamw|lamb, p3=SIZE, algorithm@ROLE=NAME, "
            "compute=Kx, network=Kx, latency=Kx, or FLAG=VALUE for a flag of dtsim simulate)\n");
  EXPECT_FALSE(std::filesystem::exists(dir_ / "r.json"));
  r = run(kJob);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "dtsim whatif: expected at least one --apply WHAT-IF (or --whatif W.json; see dtsim "
            "whatif --help)\n");
  r = run(kJob + " --apply amp --timeline t.json");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "dtsim whatif: --timeline: not with dtsim whatif (both runs would write it; run dtsim "
            "simulate with --apply for one)\n");
}

TEST_F(WhatIfCli, AGraphPassThatNeedsTheDeviceNamesIt) {
  const Result r =
      run("simulate --graph tests/testdata/graph_pipeline_2stage.json --platform "
          "tests/testdata/whatif_star2_1GBps.json --apply amp");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "dtsim simulate: --apply amp: needs the GPU and precision of "
            "tests/testdata/graph_pipeline_2stage.json, which dtsim does not know here: amp, "
            "bf16, gpu=, compress= and fused-optimizer= rewrite data-parallel --workload runs on "
            "a catalogue GPU; "
            "for --model, re-run the generator with precision=bf16 or device=h100 (WHATIF.md)\n");
}

TEST_F(WhatIfCli, IdenticalRunsWriteIdenticalReports) {
  const std::string first = (dir_ / "a.json").string(), second = (dir_ / "b.json").string();
  ASSERT_EQ(run(kJob + " --apply amp --report " + first).exit_code, 0);
  ASSERT_EQ(run(kJob + " --apply amp --report " + second).exit_code, 0);
  EXPECT_EQ(slurp(first), slurp(second));
  const Result help = run("whatif --help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("--apply WHAT-IF"), std::string::npos);
}

TEST_F(WhatIfCli, StrategyKnobsOfAHybridJob) {
  // GPT-3 1.3B, tp = pp = dp = 2, 4 micro-batches per replica. ZeRO-1 shards the optimizer
  // states over the 2 DP ranks (Rajbhandari et al. 2020): less memory. GPipe keeps all 4
  // micro-batches' activations where 1F1B keeps at most pp = 2 on stage 0 (Narayanan et al.
  // 2021): more memory.
  const Result r = run(
      "whatif --model gpt3-1.3b --device a100 --precision bf16 --platform "
      "platforms/files/presets/dgx-a100.json --ranks 8 --parallel tp=2,pp=2,dp=2 --micro-batch 1 "
      "--global-batch 8 --seq-len 1024 --iterations 1 --apply zero=1 --apply schedule=gpipe "
      "--each" +
      report_flag());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("bubble (%)"), std::string::npos);
  EXPECT_NE(r.out.find("peak memory (GiB)"), std::string::npos);
  const nlohmann::json runs = report()["runs"];
  ASSERT_EQ(runs.size(), 3u);
  const auto peak = [&](std::size_t k) {
    return runs[k]["report"]["memory"]["peak_bytes"].get<double>();
  };
  EXPECT_LT(peak(1), peak(0));
  EXPECT_GT(peak(2), peak(0));
}

TEST_F(WhatIfCli, NcclChannelsBeyondTheGpusSmsAreRefused) {
  const Result r =
      run("simulate --workload tests/testdata/whatif_one_layer_v100.json --platform "
          "tests/testdata/whatif_star2_1GBps.json --ranks 2 --nccl-channels 100");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "dtsim simulate: --nccl-channels 100: expected 0 to the SMs of the run's GPU (v100 "
            "80, a100 108, h100 and h200 132), and tests/testdata/whatif_one_layer_v100.json was "
            "measured on \"NVIDIA V100-SXM2\"\n");
}

TEST_F(WhatIfCli, BucketKernelsCostTheGpusFixedKernelCostPerBucket) {
  // One bucket, two kernels before its all-reduce at a V100's 1.83 us each (CSCS's ReFrame
  // reference, sim/whatif/bucket_cost.h): 0.03 + 2 x 1.83e-6 + 0.001 s.
  const Result r =
      run("simulate --workload tests/testdata/whatif_one_layer_v100.json --platform "
          "tests/testdata/whatif_star2_1GBps.json --ranks 2 --overlap none --bucket-kernels 2" +
          report_flag());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NEAR(report()["result"]["iteration_time_sec"].get<double>(), 0.031 + 3.66e-6, 1e-12);
  // Under --apply gpu=a100 the kernels are the A100's, 2.7 us each: two add 5.4 us to the
  // same run without them.
  const std::string on_a100 =
      "simulate --workload tests/testdata/whatif_one_layer_v100.json --platform "
      "tests/testdata/whatif_star2_1GBps.json --ranks 2 --overlap none --apply gpu=a100";
  ASSERT_EQ(run(on_a100 + report_flag()).exit_code, 0);
  const double a100_sec = report()["result"]["iteration_time_sec"].get<double>();
  ASSERT_EQ(run(on_a100 + " --bucket-kernels 2" + report_flag()).exit_code, 0);
  EXPECT_NEAR(report()["result"]["iteration_time_sec"].get<double>() - a100_sec, 5.4e-6, 1e-12);
  // An A100 under a power limit launches its kernels as fast (bucket_cost.h): 5.4 us again.
  const std::string on_capped = on_a100 + "@200W";
  ASSERT_EQ(run(on_capped + report_flag()).exit_code, 0);
  const double capped_sec = report()["result"]["iteration_time_sec"].get<double>();
  EXPECT_GT(capped_sec, a100_sec);  // its compute is slower
  const Result kernels = run(on_capped + " --bucket-kernels 2" + report_flag());
  ASSERT_EQ(kernels.exit_code, 0) << kernels.err;
  EXPECT_NEAR(report()["result"]["iteration_time_sec"].get<double>() - capped_sec, 5.4e-6, 1e-12);
  const Result bad =
      run("simulate --workload tests/testdata/whatif_one_layer_v100.json --platform "
          "tests/testdata/whatif_star2_1GBps.json --ranks 2 --bucket-kernels 17");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err, "dtsim simulate: --bucket-kernels 17: expected 0 to 16 kernels per bucket\n");
}

// P3 on two layers a, b (tests/testdata/whatif_two_layers_v100.json): 1 ms forward and 1 ms
// backward each, 4 MB of gradients each (one bucket each), on the 2-rank 1 GB/s star: an
// all-reduce of S bytes takes S/B (4 ms a bucket, 1 ms a 1 MB slice). By hand, in ms:
//  - as DDP: fwd a 0-1, fwd b 1-2, bwd b 2-3, bwd a 3-4; b's all-reduce 3-7, a's 7-11, the
//    optimizer (0 s) at 11, the next forward at 11: 11 ms an iteration.
//  - p3=1MB: b1 3-4; then a's four slices first (priority: layer a is needed first) 4-8; b2-b4
//    8-11. Update a at 8, the next forward a 8-9 overlaps b's slices; update b at 11, forward b
//    11-12, backward b 12-13: one iteration every 10 ms (speedup 1.1).
//  - p3=4MB: slices as large as the buckets: b's all-reduce has started (3) when a's is ready
//    (4) and runs to 7, a's 7-11, forward a at 11: 11 ms, no gain without slicing.
TEST_F(WhatIfCli, PriorityPropagationByHand) {
  const Result r =
      run("whatif --workload tests/testdata/whatif_two_layers_v100.json --platform "
          "tests/testdata/whatif_star2_1GBps.json --ranks 2 --bucket-mb 4 --apply p3=1MB "
          "--apply p3=4MB --each" +
          report_flag());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = report();
  ASSERT_EQ(j["runs"].size(), 3u);
  const auto iteration_sec = [&](std::size_t k) {
    return j["runs"][k]["report"]["result"]["iteration_time_sec"].get<double>();
  };
  EXPECT_NEAR(iteration_sec(0), 0.011, 1e-9);
  EXPECT_NEAR(iteration_sec(1), 0.010, 1e-9);
  EXPECT_NEAR(j["runs"][1]["speedup"].get<double>(), 1.1, 1e-6);
  EXPECT_NEAR(iteration_sec(2), 0.011, 1e-9);

  // Its graph, dumped, replays with --graph to the same 10 ms (the priorities it carries order
  // the program again; its compute stream interleaves step k's updates with step k+1's forward).
  const std::string graph = (dir_ / "p3.json").string();
  const std::string job =
      "simulate --workload tests/testdata/whatif_two_layers_v100.json --platform "
      "tests/testdata/whatif_star2_1GBps.json --ranks 2 --bucket-mb 4 --apply p3=1MB";
  const Result dumped = run(job + " --dump-graph " + graph);
  ASSERT_EQ(dumped.exit_code, 0) << dumped.err;
  const Result replayed = run("simulate --graph " + graph +
                              " --platform tests/testdata/whatif_star2_1GBps.json" + report_flag());
  ASSERT_EQ(replayed.exit_code, 0) << replayed.err;
  EXPECT_NEAR(report()["result"]["iteration_time_sec"].get<double>(), 0.010, 1e-9);

  const Result bad =
      run("simulate --workload tests/testdata/whatif_two_layers_v100.json --platform "
          "tests/testdata/whatif_star2_1GBps.json --ranks 2 --apply p3=0");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err,
            "dtsim simulate: --apply p3=0: expected a slice size of at least 1 byte, e.g. "
            "p3=4MB\n");
}

// A collective's own algorithm (set_algorithm): naming tree for every collective on role dp is
// the run with --algorithm tree, to the last digit (one bucket schedule either way); the graph
// dumped with it names the algorithm per collective and replays to the same time with the run's
// --algorithm left at ring.
TEST_F(WhatIfCli, AnAlgorithmPerCommunicatorRoleIsTheGlobalFlagWhereItCoversAll) {
  const std::string job =
      "simulate --workload tests/testdata/whatif_two_layers_v100.json --platform "
      "platforms/files/fat_tree_256.json --ranks 16 --bucket-mb 4";
  const std::string graph = (dir_ / "g.json").string();
  const Result per_role =
      run(job + " --algorithm ring --apply algorithm@dp=tree --dump-graph " + graph);
  const Result global = run(job + " --algorithm tree");
  const Result ring = run(job + " --algorithm ring");
  ASSERT_EQ(per_role.exit_code, 0) << per_role.err;
  ASSERT_EQ(global.exit_code, 0) << global.err;
  const auto iteration = [](const std::string& out) {
    const auto at = out.find("iteration time");
    return out.substr(at, out.find('\n', at) - at);
  };
  EXPECT_EQ(iteration(per_role.out), iteration(global.out));
  EXPECT_NE(iteration(per_role.out), iteration(ring.out));  // the choice matters here
  EXPECT_NE(slurp(graph).find(R"("algorithm": "tree")"), std::string::npos);
  const Result replayed = run("simulate --graph " + graph +
                              " --platform platforms/files/fat_tree_256.json --algorithm ring");
  ASSERT_EQ(replayed.exit_code, 0) << replayed.err;
  EXPECT_EQ(iteration(replayed.out), iteration(global.out));

  const Result bad = run(job + " --apply algorithm@tp=tree");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err,
            "dtsim simulate: --apply algorithm@tp=tree: tests/testdata/whatif_two_layers_v100.json "
            "has no collective on a communicator role \"tp\"\n");
  const Result unknown = run(job + " --apply algorithm@dp=rings");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("expected algorithm@ROLE=NAME"), std::string::npos) << unknown.err;
}

}  // namespace
