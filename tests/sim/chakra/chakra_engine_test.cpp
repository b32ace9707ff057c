// Chakra traces replayed on SimGrid against closed forms: the microbenchmarks ASTRA-sim ships
// and ones this project's generator writes. Every TEST runs in its own process (one engine).
#include <gtest/gtest.h>

#include "sim/chakra/chakra_reader.h"
#include "sim/chakra/chakra_writer.h"
#include "sim/run/simulation.h"
#include "tests/sim/chakra/chakra_test_files.h"

namespace dtsim::sim {
namespace {

using chakra_test::ChakraTest;

// tests/testdata/sim_star16_25GBps.json: a star (one switch), 25 GB/s and 1 us per link, so a
// message between two hosts crosses two links: alpha = 2 us, B = 25e9 bytes/s.
constexpr double kAlphaSec = 2e-6;
constexpr double kBandwidth = 25e9;
const std::string kStar = "tests/testdata/sim_star16_25GBps.json";

double replay(const std::string& prefix, int ranks, const std::string& algorithm = "ring",
              const std::string& platform = kStar) {
  ChakraImport trace = read_chakra_trace(prefix, ranks);
  const GraphReport r = simulate_execution_graph(
      std::move(trace.graph), {.platform_path = platform, .algorithm = algorithm}, prefix);
  return r.iteration_time_sec;
}

// Ring all-reduce: 2(p-1) steps of alpha + n/(pB). p = 8, n = 1 MiB:
// 14 x (2 us + 1048576 / 2e11 s) = 14 x 7.24288 us = 101.40032 us.
TEST(ChakraEngine, ShippedEightRankAllReduceTakesTheRingClosedForm) {
  const double expected = 2 * 7 * (kAlphaSec + 1048576.0 / (8 * kBandwidth));
  const double t = replay("tests/testdata/chakra/all_reduce/8npus_1MB/all_reduce", 8);
  EXPECT_NEAR(t, expected, 1e-9 * expected);
  EXPECT_NEAR(t, 101.40032e-6, 1e-12);
}

// tests/testdata/sim_torus8_ring.json: a ring of 8 hosts (a 1-D torus), one 25 GB/s, 1 us link
// between neighbours, so the ring's edges are one link each: alpha = 1 us.
// 14 x (1 us + 5.24288 us) = 87.40032 us.
TEST(ChakraEngine, ShippedEightRankAllReduceOnARingTakesTheRingClosedForm) {
  const double expected = 2 * 7 * (1e-6 + 1048576.0 / (8 * kBandwidth));
  const double t = replay("tests/testdata/chakra/all_reduce/8npus_1MB/all_reduce", 8, "ring",
                          "tests/testdata/sim_torus8_ring.json");
  EXPECT_NEAR(t, expected, 1e-9 * expected);
}

// Ring reduce-scatter and all-gather: (p-1)(alpha + n/(pB)), p = 4: 3 x (2 us + 10.48576 us).
TEST(ChakraEngine, ShippedFourRankReduceScatterAndAllGatherTakeTheRingClosedForm) {
  const double expected = 3 * (kAlphaSec + 1048576.0 / (4 * kBandwidth));
  EXPECT_NEAR(replay("tests/testdata/chakra/reduce_scatter/4npus_1MB/reduce_scatter", 4), expected,
              1e-9 * expected);
}

TEST(ChakraEngine, ShippedFourRankAllGatherTakesTheRingClosedForm) {
  const double expected = 3 * (kAlphaSec + 1048576.0 / (4 * kBandwidth));
  EXPECT_NEAR(replay("tests/testdata/chakra/all_gather/4npus_1MB/all_gather", 4), expected,
              1e-9 * expected);
}

// Direct all-to-all on a star (sim/collectives/direct.h): alpha + (p-1)/p n/B, every rank's link
// shared by its p-1 transfers. p = 8: 2 us + 7/8 x 41.94304 us.
TEST(ChakraEngine, ShippedEightRankAllToAllTakesTheDirectClosedForm) {
  const double expected = kAlphaSec + 7.0 / 8 * 1048576.0 / kBandwidth;
  EXPECT_NEAR(replay("tests/testdata/chakra/all_to_all/8npus_1MB/all_to_all", 8, "direct"),
              expected, 1e-9 * expected);
}

// A generated 16-rank all-reduce of 64 MiB: 30 x (2 us + 2^26 / (16 x 25e9) s).
TEST_F(ChakraTest, GeneratedSixteenRankAllReduceTakesTheRingClosedForm) {
  write_chakra_microbenchmark({.op = CollectiveOp::kAllReduce, .ranks = 16, .bytes = 1 << 26},
                              prefix_);
  const double expected = 2 * 15 * (kAlphaSec + (1 << 26) / (16 * kBandwidth));
  EXPECT_NEAR(replay(prefix_, 16), expected, 1e-9 * expected);
}

}  // namespace
}  // namespace dtsim::sim
