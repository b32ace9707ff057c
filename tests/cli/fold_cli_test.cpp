// Verified folding (sim/lowering/fold.h) as a user meets it: the ranks of each pipeline stage
// fold and the prediction is the unfolded replay's; where a folded rank's communication does not
// match its representative's, dtsim says so and simulates again without the fold.
#include <map>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_support.h"

namespace {

namespace fs = std::filesystem;

using dtsim::cli_test::Result;
using dtsim::cli_test::slurp;
using nlohmann::json;

class FoldCli : public dtsim::cli_test::DtsimTest {
 protected:
  [[nodiscard]] fs::path path(const std::string& name) const { return dir_ / name; }

  // The report of `args` (and its link report, bytes per link, in `links` if given).
  json simulate(const std::string& args, const std::string& name,
                std::map<std::string, std::string>* links = nullptr) const {
    const Result r = run("simulate " + args + " --report " + path(name + ".json").string() +
                         " --link-report " + path(name + ".csv").string());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    if (links != nullptr) {
      std::istringstream csv(slurp(path(name + ".csv")));
      std::string line;
      std::getline(csv, line);  // link,level,bandwidth_bytes_per_sec,bytes,utilization
      while (std::getline(csv, line)) {
        std::istringstream fields(line);
        std::string link, level, bandwidth, bytes;
        std::getline(fields, link, ',');
        std::getline(fields, level, ',');
        std::getline(fields, bandwidth, ',');
        std::getline(fields, bytes, ',');
        (*links)[link] = bytes;
      }
    }
    return json::parse(slurp(path(name + ".json")));
  }
};

// Two DGX A100 nodes (platforms/PRESETS.md: 8 GPUs on NVSwitch each, NVLink links of their own).
const std::string kGpt =
    "--model gpt3-1.3b --device a100 --platform tests/testdata/dgx_a100_2nodes.json --ranks 16 "
    "--global-batch 16 --seq-len 1024 --iterations 2";

// The reference is the same job with --fold exact: a hybrid graph has no exact class (every
// stage's ranks talk to other stages), so nothing folds and every rank replays its own compute.
// Folding must change nothing but the work: the same times, to SimGrid's last bits, and the same
// bytes on every link (the left-out repeats of private collectives counted as they would run).
TEST_F(FoldCli, VerifiedFoldPredictsWhatTheUnfoldedReplayDoes) {
  for (const std::string& job :
       {std::string("--parallel tp=8,pp=2 --micro-batch 2"), std::string("--parallel tp=8,dp=2"),
        std::string("--parallel tp=8,dp=2 --zero 3"),
        std::string("--parallel tp=8,pp=2 --schedule interleaved:2 --sequence-parallel "
                    "--recompute selective"),
        std::string("--parallel tp=4,pp=2,dp=2 --schedule gpipe --zero 1")}) {
    std::map<std::string, std::string> folded_links, unfolded_links;
    const json folded = simulate(kGpt + " " + job, "folded", &folded_links);
    const json unfolded = simulate(kGpt + " " + job + " --fold exact", "unfolded", &unfolded_links);
    EXPECT_EQ(folded["fold"]["mode"], "verified") << job;
    EXPECT_EQ(unfolded["fold"]["mode"], "none") << job;
    EXPECT_FALSE(unfolded["ranks_folded"].get<bool>()) << job;
    EXPECT_GT(folded["fold"]["checks"].get<int>(), 0) << job;
    EXPECT_LT(folded["tasks_replayed"].get<int>(), unfolded["tasks_replayed"].get<int>()) << job;
    const double t = unfolded["result"]["iteration_time_sec"].get<double>();
    EXPECT_NEAR(folded["result"]["iteration_time_sec"].get<double>(), t, 1e-12 * t) << job;
    const json& stages = unfolded["result"]["stages"];
    for (std::size_t s = 0; s < stages.size(); ++s) {
      EXPECT_NEAR(folded["result"]["stages"][s]["compute_sec"].get<double>(),
                  stages[s]["compute_sec"].get<double>(), 1e-12 * t)
          << job;
    }
    EXPECT_EQ(folded_links, unfolded_links) << job;
  }
}

TEST_F(FoldCli, TensorParallelGroupsOnPrivateNvlinkRepeatOnce) {
  // TP 8 fills a node: its NVLink links carry nothing else (data-parallel traffic takes PCIe to
  // the NIC), so each TP group's repeated all-reduces are memoized and the other node's group's
  // repeats left out (its first replay matched).
  const json r = simulate(kGpt + " --parallel tp=8,dp=2", "tp8");
  EXPECT_GT(r["collectives_memoized"].get<int>(), 0);
  EXPECT_GT(r["fold"]["repeats_left_out"].get<int>(), 0);
  EXPECT_EQ(r["fold"]["max_difference_sec"].get<double>(), 0.0);
}

// Ranks 0 and 2 compute 1 ms, then send 100 MB to ranks 1 and 3, which compute 1 ms more, on a
// 4-host star (25 GB/s, 1 us per link). The senders fold onto rank 0 and the receivers onto
// rank 1 (no exact class: they send), so one compute task stands for two. A transfer takes its
// route's latency plus bytes over bandwidth: 2 us + 1e8 / 25e9 s = 4.002 ms, so the step ends at
// 6.002 ms. With host 2 at half bandwidth rank 2's transfer takes 8.002 ms: it no longer ends with
// rank 0's, dtsim replays again with --fold node (nothing folds: every host is a node of its own),
// and the step ends at
// 1 + 8.002 + 1 = 10.002 ms.
TEST_F(FoldCli, AFoldThatDoesNotHoldIsSimulatedAgainWithoutIt) {
  const std::string args = "simulate --graph tests/testdata/graph_two_pairs_send.json --report " +
                           path("r.json").string();
  const Result even = run(args + " --platform tests/testdata/sim_star16_25GBps.json --ranks 4");
  ASSERT_EQ(even.exit_code, 0) << even.err;
  EXPECT_EQ(even.err, "");
  const json folded = json::parse(slurp(path("r.json")));
  EXPECT_EQ(folded["fold"]["mode"], "verified");
  EXPECT_NEAR(folded["result"]["iteration_time_sec"].get<double>(), 6.002e-3, 1e-12);
  for (const std::string& fold : {std::string(""), std::string(" --fold verified")}) {
    const Result r = run(args + " --platform tests/testdata/sim_star4_slow_host2.json" + fold);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("did not all match their representative (rank 2's node 1"),
              std::string::npos)
        << r.err;
    // Ranks 0 and 2 are on hosts of their own (a star): node classes are singletons, nothing
    // folds under --fold node, and it holds.
    EXPECT_NE(r.err.find("simulating again with --fold node"), std::string::npos) << r.err;
    const json report = json::parse(slurp(path("r.json")));
    EXPECT_EQ(report["fold"]["mode"], "none");
    EXPECT_NEAR(report["result"]["iteration_time_sec"].get<double>(), 10.002e-3, 1e-12);
  }
}

// Ranks 0 and 1 (node 0 of tests/testdata/sim_two_nodes*.json: 4 GPUs, one 25 GB/s NIC link per
// node, 7 us between nodes) each send 100 MB to ranks 4 and 5 (node 1); host 1's GPU link runs at
// 1 % (3 GB/s). The senders share a node, so they fold under --fold node as under verified, and
// rank 1's transfer ends long after rank 0's both times: dtsim falls back twice, to --fold exact.
// Rank 1's transfer is held to 3 GB/s by its own link throughout: 7 us + 1e8 / 3e9 s, then its
// receiver computes 1 ms.
TEST_F(FoldCli, ANodeFoldThatDoesNotHoldFallsBackToExact) {
  const Result r =
      run("simulate --graph tests/testdata/graph_two_senders_one_node.json --platform "
          "tests/testdata/sim_two_nodes_slow_gpu1.json --report " +
          path("r.json").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::size_t node = r.err.find("simulating again with --fold node");
  ASSERT_NE(node, std::string::npos) << r.err;
  EXPECT_NE(r.err.find("simulating again with --fold exact", node), std::string::npos) << r.err;
  const json report = json::parse(slurp(path("r.json")));
  EXPECT_EQ(report["fold"]["mode"], "exact");  // the idle ranks 2 and 3: an exact class
  const double expected = 7e-6 + 1e8 / 3e9 + 1e-3;
  EXPECT_NEAR(report["result"]["iteration_time_sec"].get<double>(), expected, 1e-9 * expected);
}

TEST_F(FoldCli, FoldTakesVerifiedNodeOrExact) {
  const Result r =
      run("simulate --graph tests/testdata/graph_two_pairs_send.json --platform "
          "tests/testdata/sim_star4_slow_host2.json --fold maybe");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--fold maybe: expected verified, node or exact"), std::string::npos)
      << r.err;
}

}  // namespace
