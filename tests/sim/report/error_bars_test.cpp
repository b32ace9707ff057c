#include "sim/report/error_bars.h"

#include <gtest/gtest.h>

namespace dtsim::sim {
namespace {

// The figures come from experiments/validation (error_bars.py, whose --check the suite runs);
// these tests pin which class a run falls in and how a class without rows reads.

TEST(ErrorBars, TrainingClassFollowsTimingAndScope) {
  const auto calibrated = training_error_bars("calibrated", false, "v100");
  ASSERT_EQ(calibrated.size(), 1u);  // the compute was measured: no compute class
  EXPECT_EQ(calibrated[0].error_class, "dp-calibrated-one-node");
  EXPECT_GT(calibrated[0].rows, 0);
  EXPECT_LE(calibrated[0].median_abs_pct, calibrated[0].p90_abs_pct);
  const auto modelled = training_error_bars("op-class", true, "a100");
  ASSERT_EQ(modelled.size(), 2u);
  EXPECT_EQ(modelled[0].error_class, "dp-op-class-multi-node");
  EXPECT_EQ(modelled[1].error_class, "compute-op-class-a100");
  EXPECT_GT(modelled[1].rows, 0);
}

TEST(ErrorBars, AClassNoRowCoversSaysSo) {
  // No published B200 single-GPU time was checked, nor a profiler trace end to end.
  const auto b200 = training_error_bars("roofline", true, "b200");
  ASSERT_EQ(b200.size(), 2u);
  EXPECT_EQ(b200[1].error_class, "compute-roofline-b200");
  EXPECT_EQ(b200[1].rows, 0);
  const auto measured = training_error_bars("measured", false, "h200");
  EXPECT_EQ(measured[0].rows, 0);
  EXPECT_EQ(error_bars_summary(measured),
            "  validated error         none: no published measurement of data-parallel "
            "training on one node, compute measured by a profiler was checked\n");
  const auto json = error_bars_json(measured);
  EXPECT_EQ(json[0]["rows"], 0);
  EXPECT_FALSE(json[0].contains("median_abs_error_pct"));  // no figure without rows
}

TEST(ErrorBars, CollectivesAndHybridRuns) {
  EXPECT_EQ(collective_error_bars("all-reduce", true)[0].error_class, "allreduce-multi-node");
  EXPECT_GT(collective_error_bars("all-reduce", false)[0].rows, 0);
  EXPECT_EQ(collective_error_bars("all-to-all", false)[0].rows, 0);
  EXPECT_EQ(hybrid_error_bars(true)[0].error_class, "hybrid-transformer");
  const ErrorBar bar = collective_error_bars("all-reduce", false)[0];
  EXPECT_EQ(error_bars_summary({bar}).find("  validated error         "), 0u);
  EXPECT_NE(error_bars_summary({bar}).find(std::to_string(bar.rows) + " published rows"),
            std::string::npos);
}

TEST(ErrorBars, PeakMemory) {
  EXPECT_EQ(memory_error_bar(true).error_class, "memory-transformer");
  EXPECT_GT(memory_error_bar(true).rows, 0);
  EXPECT_EQ(memory_error_bar(false).error_class, "memory-cnn");
  EXPECT_EQ(memory_error_bar(false).rows, 0);  // no published CNN peak memory was checked
}

TEST(ErrorBars, WhatIfSpeedupsByKind) {
  // Knobs (flags of dtsim simulate) by the flag; graph and platform passes by name.
  EXPECT_EQ(whatif_error_bar("bucket-mb", true).error_class, "whatif-bucket");
  EXPECT_EQ(whatif_error_bar("workload", true).error_class, "whatif-workload");
  EXPECT_EQ(whatif_error_bar("precision", true).error_class, "whatif-knob-precision");
  EXPECT_EQ(whatif_error_bar("amp", false).error_class, "whatif-amp");
  EXPECT_EQ(whatif_error_bar("bf16", false).error_class, "whatif-amp");
  EXPECT_EQ(whatif_error_bar("algorithm@", false).error_class, "whatif-algorithm");
  for (const char* validated : {"bucket-mb", "workload", "precision"}) {
    EXPECT_GT(whatif_error_bar(validated, true).rows, 0) << validated;
  }
  // A knob no measured pair changed borrows no other knob's figure.
  EXPECT_EQ(whatif_error_bar("zero", true).rows, 0);
  const ErrorBar gpu = whatif_error_bar("gpu", false);
  EXPECT_EQ(gpu.error_class, "whatif-gpu");
  EXPECT_EQ(gpu.rows, 0);  // no published pair of two GPUs was checked
  EXPECT_EQ(gpu.description, "speedups of a gpu what-if");
}

}  // namespace
}  // namespace dtsim::sim
