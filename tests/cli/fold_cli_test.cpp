// Verified folding (sim/lowering/fold.h) as a user meets it: the ranks of each pipeline stage
// fold and the prediction is the unfolded replay's; where a folded rank's communication does not
// match its representative's, dtsim says so and simulates again without the fold.
#include <map>
#include <sstream>
#include <string>
#include <utility>

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

// A fat-tree of two 12-host leaves (25 GB/s, 1 us links): TP 4 x PP 2 x DP 2 on 16 ranks puts
// stage 0 on hosts 0-7 and stage 1 on hosts 8-15, so ranks 0-3 send their activations to peers
// on their own leaf (2 links, 2 us) and ranks 4-7 to peers on the other (4 links through a spine,
// 4 us). One class per stage would not hold (rank 12's first transfer ended 44 us after rank
// 8's, before routes separated classes); one per stage and route shape does, without a second
// replay, and predicts what the unfolded replay does.
TEST_F(FoldCli, StageRanksWhosePeersAreOnOtherLeavesFoldApart) {
  const std::string job =
      "--model gpt3-1.3b --device a100 --platform tests/testdata/sim_fat_tree24_leaves12.json "
      "--ranks 16 --parallel tp=4,pp=2,dp=2 --global-batch 4 --seq-len 1024 --iterations 2";
  const Result r = run("simulate " + job + " --report " + path("folded.json").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const json folded = json::parse(slurp(path("folded.json")));
  const json unfolded = simulate(job + " --fold exact", "unfolded");
  EXPECT_EQ(folded["fold"]["mode"], "verified");
  EXPECT_GT(folded["fold"]["checks"].get<int>(), 0);
  EXPECT_LT(folded["tasks_replayed"].get<int>(), unfolded["tasks_replayed"].get<int>());
  const double t = unfolded["result"]["iteration_time_sec"].get<double>();
  EXPECT_NEAR(folded["result"]["iteration_time_sec"].get<double>(), t, 1e-12 * t);
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
// 6.002 ms.
const std::string kTwoPairs = "simulate --graph tests/testdata/graph_two_pairs_send.json --ranks 4";

TEST_F(FoldCli, RanksWithTheSameProgramAndRoutesFold) {
  const Result r = run(kTwoPairs + " --platform tests/testdata/sim_star16_25GBps.json --report " +
                       path("r.json").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const json folded = json::parse(slurp(path("r.json")));
  EXPECT_EQ(folded["fold"]["mode"], "verified");
  EXPECT_NEAR(folded["result"]["iteration_time_sec"].get<double>(), 6.002e-3, 1e-12);
}

// With host 2's link at half bandwidth, rank 2's route differs from rank 0's (12.5 GB/s): the
// senders are not one class, nothing is tried and undone, and rank 2's transfer takes
// 2 us + 1e8 / 12.5e9 s = 8.002 ms: the step ends at 1 + 8.002 + 1 = 10.002 ms.
TEST_F(FoldCli, RanksWhoseRoutesDifferDoNotFold) {
  const Result r =
      run(kTwoPairs + " --platform tests/testdata/sim_star4_slow_host2.json --report " +
          path("r.json").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const json report = json::parse(slurp(path("r.json")));
  EXPECT_EQ(report["fold"]["mode"], "none");
  EXPECT_NEAR(report["result"]["iteration_time_sec"].get<double>(), 10.002e-3, 1e-12);
}

// Rank 2's GPU at half speed: it sends 1 ms after rank 0 does, so rank 3's receive ends 1 ms
// after rank 1's. The receivers are therefore not one class either (a receive ends after its
// sender sent: classes split until each one's sources are of one class), nothing folds, and the
// step ends at 2 + 4.002 + 1 = 7.002 ms. With rank 3's GPU slow instead, the senders still fold
// (a send does not wait for its receiver), and the step ends at 1 + 4.002 + 2 = 7.002 ms.
TEST_F(FoldCli, AReceiverOfASlowerSenderFoldsApartButASenderOfASlowReceiverDoesNot) {
  for (const auto& [platform, mode] :
       {std::pair<std::string, std::string>{"sim_star4_slow_gpu2", "none"},
        std::pair<std::string, std::string>{"sim_star4_slow_gpu3", "verified"}}) {
    const Result r = run(kTwoPairs + " --platform tests/testdata/" + platform + ".json --report " +
                         path("r.json").string());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err, "") << platform;
    const json report = json::parse(slurp(path("r.json")));
    EXPECT_EQ(report["fold"]["mode"], mode) << platform;
    EXPECT_NEAR(report["result"]["iteration_time_sec"].get<double>(), 7.002e-3, 1e-12) << platform;
  }
}

// Ranks 0-3 compute 1 ms, all-reduce 100 MB in groups {0, 1} and {2, 3}, and compute 1 ms. With
// host 2's link at half bandwidth, group {2, 3}'s ring crosses it: its collective's routes
// differ from group {0, 1}'s, so the two groups fold apart (each an exact class) instead of as
// one class whose shadow group ends late. With rank 3's GPU slow instead, rank 2 shares its
// routes and speed with ranks 0 and 1 but waits in its all-reduce for rank 3: its group holds
// ranks of other classes than group {0, 1}, so it folds apart too. Either way nothing is tried
// and undone, and the times are the unfolded replay's.
TEST_F(FoldCli, RanksWhoseCollectivesDifferFoldApart) {
  for (const std::string platform : {"sim_star4_slow_host2", "sim_star4_slow_gpu3"}) {
    const std::string job =
        "--graph tests/testdata/graph_two_groups_compute_all_reduce.json "
        "--ranks 4 --platform tests/testdata/" +
        platform + ".json";
    const Result r = run("simulate " + job + " --report " + path("folded.json").string());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err, "") << platform;
    const json folded = json::parse(slurp(path("folded.json")));
    const json unfolded = simulate(job + " --fold exact", "unfolded");
    EXPECT_TRUE(folded["ranks_folded"].get<bool>()) << platform;  // group {0, 1}
    EXPECT_EQ(folded["fold"]["shadows"].get<int>(), 0) << platform;
    const double t = unfolded["result"]["iteration_time_sec"].get<double>();
    EXPECT_GT(t, 2e-3 + 1e8 / 25e9) << platform;  // slower than group {0, 1} alone
    EXPECT_NEAR(folded["result"]["iteration_time_sec"].get<double>(), t, 1e-12 * t) << platform;
  }
}

// The same routes, but a background flow from host 2 to host 3 capped at 12.5 GB/s: max-min
// sharing leaves rank 2's transfer the other 12.5 GB/s of both links, so it ends 4 ms after rank
// 0's (8.002 ms, as above): the fold does not hold, dtsim says so and replays again with --fold
// node (nothing folds: every host is a node of its own), and the step ends at 10.002 ms.
TEST_F(FoldCli, AFoldThatDoesNotHoldIsSimulatedAgainWithoutIt) {
  for (const std::string& fold : {std::string(""), std::string(" --fold verified")}) {
    const Result r = run(kTwoPairs + " --platform tests/testdata/sim_star4_background_host2.json" +
                         fold + " --report " + path("r.json").string());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("did not all match their representative (rank 2's node 1"),
              std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("simulating again with --fold node"), std::string::npos) << r.err;
    const json report = json::parse(slurp(path("r.json")));
    EXPECT_EQ(report["fold"]["mode"], "none");
    EXPECT_NEAR(report["result"]["iteration_time_sec"].get<double>(), 10.002e-3, 1e-12);
  }
}

// Ranks 0 and 1 (node 0 of a two-node star: 4 GPUs on 10 GB/s GPU links, one 25 GB/s NIC link
// per node, 7 us between nodes) each send 100 MB to ranks 4 and 5 (node 1), on routes of the same
// shape; a background flow from host 1 to host 2, capped at 5 GB/s, shares host 1's GPU link with
// rank 1's transfer. Max-min: rank 0's transfer gets its GPU link's 10 GB/s, rank 1's and the
// flow 5 GB/s each (the NIC link carries 15 of its 25 GB/s). The senders share a node, so they
// fold under --fold node as under verified, and rank 1's transfer ends long after rank 0's both
// times: dtsim falls back twice, to --fold exact. Rank 1's transfer: 7 us + 1e8 / 5e9 s, then
// its receiver computes 1 ms.
TEST_F(FoldCli, ANodeFoldThatDoesNotHoldFallsBackToExact) {
  const Result r =
      run("simulate --graph tests/testdata/graph_two_senders_one_node.json --platform "
          "tests/testdata/sim_two_nodes_gpu1_background.json --report " +
          path("r.json").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::size_t node = r.err.find("simulating again with --fold node");
  ASSERT_NE(node, std::string::npos) << r.err;
  EXPECT_NE(r.err.find("simulating again with --fold exact", node), std::string::npos) << r.err;
  const json report = json::parse(slurp(path("r.json")));
  EXPECT_EQ(report["fold"]["mode"], "exact");  // the idle ranks 2 and 3: an exact class
  const double expected = 7e-6 + 1e8 / 5e9 + 1e-3;
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
