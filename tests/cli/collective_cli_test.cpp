// `dtsim collective` with algorithms as files and size sweeps, as a user runs them.
#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_support.h"

namespace {

namespace fs = std::filesystem;

using dtsim::cli_test::Result;
using dtsim::cli_test::slurp;
using nlohmann::json;

// 16 hosts, each on one 25 GB/s link of 1 us to a central switch: a route is two links, 2 us.
const std::string kStar = "--platform tests/testdata/sim_star16_25GBps.json";

class CollectiveCli : public dtsim::cli_test::DtsimTest {
 protected:
  [[nodiscard]] fs::path path(const std::string& name) const { return dir_ / name; }

  // The report of `dtsim collective ARGS`.
  json collective(const std::string& args, const std::string& name) const {
    const Result r =
        run("collective " + kStar + " " + args + " --report " + path(name + ".json").string());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(slurp(path(name + ".json")));
  }

  void write(const std::string& name, const json& doc) const {
    std::ofstream(path(name)) << doc.dump(1);
  }
};

// A ring all-reduce over p ranks by hand (the format of sim/collectives/ALGORITHMS.md).
json hand_ring(int p) {
  json steps = json::array();
  for (int s = 0; s < 2 * (p - 1); ++s) {
    json step = json::array();
    for (int i = 0; i < p; ++i) {
      step.push_back({{"src", i},
                      {"dst", (i + 1) % p},
                      {"chunk", ((i - s - 1) % p + p) % p},
                      {"reduce", s < p - 1}});
    }
    steps.push_back(step);
  }
  return {{"format", "dtsim-collective-algorithm"},
          {"version", 1},
          {"operation", "all-reduce"},
          {"ranks", p},
          {"chunks", p},
          {"steps", steps}};
}

TEST_F(CollectiveCli, HandWrittenRingTakesTheRingsClosedForm) {
  write("ring4.json", hand_ring(4));
  // 2(p - 1) steps of alpha + (S/p) / B: 6 (2 us + 1 MB / 25 GB/s) = 6 x 42 us = 252 us.
  const json r =
      collective("--ranks 4 --bytes 4MB --algorithm file:" + path("ring4.json").string(), "hand");
  EXPECT_NEAR(r["time_sec"].get<double>(), 252e-6, 1e-12);
  EXPECT_EQ(r["transfers"].get<int>(), 24);
}

TEST_F(CollectiveCli, MscclAlgorithmsTakeTheirClosedForms) {
  // 4 MB on 4 ranks of the star (alpha = 2 us, 25 GB/s per host link; local steps are free):
  //  - ring: 6 steps of one 1 MB chunk: 6 (2 + 40) us = 252 us;
  //  - two-level: 3 phases (intra, inter, intra) of one 2 MB half each: 3 (2 + 80) = 246 us;
  //  - all-pairs: 2 phases in which every host sends 3 chunks of 1 MB at once on its link:
  //    2 (2 + 120) = 244 us.
  for (const auto& [file, expected_sec] : {std::pair{"ring_allreduce_4.xml", 252e-6},
                                           std::pair{"hierarchical_allreduce_4.xml", 246e-6},
                                           std::pair{"allpairs_allreduce_4.xml", 244e-6}}) {
    const json r = collective(
        std::string("--ranks 4 --bytes 4MB --algorithm file:tests/testdata/msccl/") + file, file);
    EXPECT_NEAR(r["time_sec"].get<double>(), expected_sec, 1e-12) << file;
  }
}

TEST_F(CollectiveCli, EveryBuiltInDumpedAndReadBackTakesTheSameTime) {
  for (const std::string algorithm : {"ring", "tree", "double-tree", "halving-doubling",
                                      "recursive-doubling", "direct", "hierarchical"}) {
    const std::string file = path(algorithm + ".alg.json").string();
    const json built_in = collective(
        "--ranks 6 --ranks-per-node 2 --bytes 10MB --replay step "
        "--algorithm " +
            algorithm + " --dump-algorithm " + file,
        algorithm);
    const json from_file =
        collective("--ranks 6 --bytes 10MB --algorithm file:" + file, algorithm + "-file");
    // The same schedule (AlgorithmFile tests), so the same replay to the last bit.
    EXPECT_EQ(from_file["time_sec"].get<double>(), built_in["time_sec"].get<double>()) << algorithm;
    EXPECT_EQ(from_file["transfers"], built_in["transfers"]) << algorithm;
  }
}

TEST_F(CollectiveCli, SimulateRunsEveryBucketWithTheFile) {
  // The MSCCL ring is the built-in ring's schedule with free local steps: every bucket's
  // all-reduce, and so the iteration, takes what the step-level built-in ring takes.
  auto iteration_sec = [&](const std::string& algorithm, const std::string& name) {
    const Result r =
        run("simulate --workload workloads/traces/resnet50_v100_b32.json " + kStar +
            " --ranks 4 --algorithm " + algorithm + " --report " + path(name).string());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(slurp(path(name)))["result"]["iteration_time_sec"].get<double>();
  };
  EXPECT_NEAR(iteration_sec("file:tests/testdata/msccl/ring_allreduce_4.xml", "file.json"),
              iteration_sec("ring --replay step", "ring.json"), 1e-12);
}

TEST_F(CollectiveCli, AFileCompetesInAuto) {
  write("ring4.json", hand_ring(4));
  const json r = collective(
      "--ranks 4 --bytes 4MB --algorithm auto:tree,file:" + path("ring4.json").string(), "auto");
  ASSERT_EQ(r["auto"]["candidates"].size(), 2u);
  EXPECT_EQ(r["auto"]["candidates"][1]["algorithm"], "file:" + path("ring4.json").string());
  // At 4 MB on 4 ranks the ring's 252 us beats the chunked tree's pipeline (estimates of both
  // are in the report; the chosen one is the lower).
  const double tree_sec = r["auto"]["candidates"][0]["estimated_sec"].get<double>();
  const double ring_sec = r["auto"]["candidates"][1]["estimated_sec"].get<double>();
  EXPECT_EQ(r["auto"]["chosen"],
            ring_sec < tree_sec ? "file:" + path("ring4.json").string() : "tree");
}

TEST_F(CollectiveCli, AWrongOrBadFileIsRefusedBeforeSimulating) {
  json wrong = hand_ring(4);
  wrong["steps"][3][2]["reduce"] = true;  // an all-gather step that adds instead of copying
  write("wrong.json", wrong);
  const Result r = run("collective " + kStar +
                       " --ranks 4 --bytes 4MB --algorithm file:" + path("wrong.json").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(path("wrong.json").string() + ": /steps/3/2: not a correct all-reduce"),
            std::string::npos)
      << r.err;

  const Result ranks = run("collective " + kStar + " --ranks 8 --bytes 4MB --algorithm file:" +
                           path("wrong.json").string());
  EXPECT_EQ(ranks.exit_code, 2);

  json bad = hand_ring(4);
  bad["steps"][0][0]["src"] = "zero";
  write("bad.json", bad);
  const Result b = run("collective " + kStar +
                       " --ranks 4 --bytes 4MB --algorithm file:" + path("bad.json").string());
  EXPECT_EQ(b.exit_code, 2);
  EXPECT_NE(b.err.find("/steps/0/0/src"), std::string::npos) << b.err;
}

TEST_F(CollectiveCli, TimelineAndLinkReportAsSimulateWrites) {
  const Result r = run("collective " + kStar + " --ranks 4 --bytes 4MB --timeline " +
                       path("t.json").string() + " --link-report " + path("l.csv").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // A ring all-reduce moves 2(p - 1)/p S = 6 MB through each host link direction, in 252 us
  // (6 (2 us + 1 MB / 25 GB/s)): utilization 6e6 / (25e9 x 252e-6) = 0.952380952.
  const std::string links = slurp(path("l.csv"));
  EXPECT_EQ(std::count(links.begin(), links.end(), '\n'), 1 + 8);
  EXPECT_NE(links.find("link-0_UP,hosts - switch,25000000000,6000000,0.952380952\n"),
            std::string::npos)
      << links;
  const json timeline = json::parse(slurp(path("t.json")));
  int collectives = 0;
  for (const json& e : timeline["traceEvents"]) {
    if (e["ph"] == "X") {
      EXPECT_EQ(e["name"], "all-reduce on all");
      EXPECT_DOUBLE_EQ(e["dur"].get<double>(), 252.0);  // microseconds
      ++collectives;
    }
  }
  EXPECT_EQ(collectives, 4);  // one per rank
}

// The rows of a sweep's CSV after the header, split at commas.
std::vector<std::vector<std::string>> csv_rows(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(text);
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) {
    std::vector<std::string> fields;
    std::istringstream f(line);
    for (std::string field; std::getline(f, field, ',');) {
      fields.push_back(field);
    }
    rows.push_back(fields);
  }
  return rows;
}

TEST_F(CollectiveCli, SizeSweepRunsEverySizeAndAlgorithm) {
  const Result r = run("collective " + kStar + " --ranks 4 --bytes 1KiB..16KiB --algorithm ring " +
                       "--algorithm tree --csv " + path("sweep.csv").string() + " --jobs 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto rows = csv_rows(slurp(path("sweep.csv")));
  // 1, 2, 4, 8, 16 KiB (factor 2), each with both algorithms.
  ASSERT_EQ(rows.size(), 10u);
  EXPECT_EQ(rows[0][0], "1024");
  EXPECT_EQ(rows[0][1], "256");  // floats, as nccl-tests counts
  EXPECT_EQ(rows[0][3], "ring");
  EXPECT_EQ(rows[1][3], "tree");
  EXPECT_EQ(rows[9][0], "16384");
  // Each point is the single run's: the ring at 16 KiB, closed form 6 (2 us + 4096 B / 25 GB/s).
  EXPECT_NEAR(std::stod(rows[8][5]), 6 * (2e-6 + 4096 / 25e9), 1e-12);
  // The table has a header of two lines and a row per size.
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 2 + 5);
}

TEST_F(CollectiveCli, SweepFlagsAreChecked) {
  const Result factor =
      run("collective " + kStar + " --ranks 4 --bytes 1KiB..16KiB --step-factor 1");
  EXPECT_EQ(factor.exit_code, 2);
  EXPECT_NE(factor.err.find("--step-factor 1: expected a number > 1"), std::string::npos)
      << factor.err;
  EXPECT_EQ(
      run("collective " + kStar + " --ranks 4 --bytes 1KiB..16KiB --step-factor 2x").exit_code, 2);
  const Result order = run("collective " + kStar + " --ranks 4 --bytes 16KiB..1KiB");
  EXPECT_EQ(order.exit_code, 2);
  // Every point would write the same file.
  const Result timeline = run("collective " + kStar + " --ranks 4 --bytes 1KiB..2KiB --timeline " +
                              path("t.json").string());
  EXPECT_EQ(timeline.exit_code, 2);
  EXPECT_NE(timeline.err.find("--timeline: writes one run's output; not with a sweep"),
            std::string::npos)
      << timeline.err;
  // A point that cannot run names itself and passes on the point's own error.
  const Result point =
      run("collective " + kStar + " --ranks 4 --op all-gather --bytes 1KiB..2KiB --algorithm tree");
  EXPECT_EQ(point.exit_code, 2);
  EXPECT_NE(point.err.find("the sweep's point --bytes 1024 --algorithm tree failed"),
            std::string::npos)
      << point.err;
  EXPECT_NE(point.err.find("tree has no all-gather"), std::string::npos) << point.err;
}

}  // namespace
