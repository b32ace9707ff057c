#include "sim/collectives/collective_choice.h"

#include <gtest/gtest.h>

#include "sim/config_error.h"

namespace dtsim::sim {
namespace {

const TopologyHints kStar{.route_latency_sec = [](int, int) { return 2e-6; },
                          .injection_bytes_per_sec = 25e9};

const Candidate& find(const CollectiveChoice& c, const std::string& name) {
  for (const Candidate& candidate : c.candidates) {
    if (candidate.algorithm == name) {
      return candidate;
    }
  }
  throw std::runtime_error("no candidate " + name);
}

TEST(CollectiveChooser, AutoPicksTheLowestEstimate) {
  const CollectiveChooser chooser("auto", {});
  const auto c = chooser.choose({.ranks = 8, .bytes = 1 << 20}, kStar);
  double best = 1e300;
  for (const Candidate& candidate : c.candidates) {
    if (candidate.estimated_sec) {
      best = std::min(best, *candidate.estimated_sec);
    }
  }
  EXPECT_EQ(*find(c, c.algorithm).estimated_sec, best);
  EXPECT_FALSE(c.schedule.ops.empty());
}

TEST(CollectiveChooser, AutoSkipsSchedulesTooLargeToBuild) {
  // 4096 ranks: direct needs 2p^2 = 33.5 million transfers, and hierarchical with one rank per
  // node is a step-level ring of as many: both are skipped, with the reason, not built.
  const CollectiveChooser chooser("auto", {});
  const auto c = chooser.choose({.ranks = 4096, .bytes = 1 << 20}, kStar);
  EXPECT_EQ(find(c, "direct").skipped, "schedule too large to evaluate (over 4e6 operations)");
  EXPECT_EQ(find(c, "hierarchical").skipped,
            "schedule too large to evaluate (over 4e6 operations)");
  EXPECT_TRUE(find(c, "ring").estimated_sec.has_value());
}

TEST(CollectiveChooser, AutoSkipsSchedulesWhoseTransfersAllRunAtOnce) {
  // Direct on 320 ranks: its reduce-scatter's p(p-1) = 102,080 transfers start on entry, each on
  // a channel of its own, over the 1e5 the replay can hold (collective_choice.h); the ring's
  // first step starts p = 320, so it is weighed. On 316 ranks, 99,540: direct is weighed too.
  const CollectiveChooser chooser("auto:ring,direct", {});
  const auto big = chooser.choose({.ranks = 320, .bytes = 1 << 20}, kStar);
  EXPECT_EQ(find(big, "direct").skipped,
            "about 1.02e+05 transfers would run at once (over 1e5: the replay holds each, about "
            "40 KB)");
  EXPECT_TRUE(find(big, "ring").estimated_sec.has_value());
  const auto fits = chooser.choose({.ranks = 316, .bytes = 1 << 20}, kStar);
  EXPECT_TRUE(find(fits, "direct").estimated_sec.has_value());
}

TEST(CollectiveChooser, FastReplayCollapsesOnlyTheTreeAllReduce) {
  // --replay fast collapses tree all-reduces, not broadcasts: a 10 GB tree broadcast on 256
  // ranks is still 20,000 chunks x 255 edges, too large to weigh.
  const CollectiveChooser chooser("auto:ring,tree", {.collapse_pipelines = true});
  const auto c = chooser.choose(
      {.op = CollectiveOp::kBroadcast, .ranks = 256, .bytes = 10'000'000'000}, kStar);
  EXPECT_EQ(find(c, "tree").skipped, "schedule too large to evaluate (over 4e6 operations)");
}

TEST(CollectiveChooser, AutoListWeighsOnlyTheNamedCandidates) {
  const CollectiveChooser chooser("auto:ring,double-tree", {});
  const auto c = chooser.choose({.ranks = 8, .bytes = 1 << 20}, kStar);
  ASSERT_EQ(c.candidates.size(), 2u);
  EXPECT_EQ(c.candidates[0].algorithm, "ring");
  EXPECT_EQ(c.candidates[1].algorithm, "double-tree");
  // Bandwidth-bound on 8 ranks: the ring moves 2(p-1)/p n per rank, the trees about 2n.
  EXPECT_EQ(c.algorithm, "ring");
}

TEST(CollectiveChooser, AutoWeighsNvlsOnlyWhereTheSwitchReduces) {
  // On one 8-GPU node nvls moves S(n+1)/n per link, the ring 2S(n-1)/n: for 1 GiB nvls wins
  // where the platform says its switch reduces; elsewhere it is skipped with the reason.
  TopologyHints node = kStar;
  node.ranks_per_node = 8;
  const auto plain = CollectiveChooser("auto", {}).choose({.ranks = 8, .bytes = 1 << 30}, node);
  EXPECT_NE(plain.algorithm, "nvls");
  EXPECT_NE(find(plain, "nvls").skipped.find("nvlink_sharp"), std::string::npos);
  node.in_switch_reduction = true;
  const auto sharp = CollectiveChooser("auto", {}).choose({.ranks = 8, .bytes = 1 << 30}, node);
  EXPECT_EQ(sharp.algorithm, "nvls");
}

TEST(CollectiveChooser, AutoListWithAnUnknownNameIsAnError) {
  try {
    const CollectiveChooser chooser("auto:ring,bogus", {});
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(),
                 "algorithm auto:ring,bogus: unknown algorithm \"bogus\" (expected one of "
                 "ring, tree, double-tree, halving-doubling, recursive-doubling, direct, "
                 "hierarchical, torus-2d, nvls, nvls-tree, file:PATH, auto, auto:NAME,NAME...)");
  }
}

TEST(CollectiveChooser, NamedAlgorithmThatCannotRunIsAnError) {
  const CollectiveChooser chooser("tree", {});
  try {
    chooser.check({.op = CollectiveOp::kAllToAll, .ranks = 4, .bytes = 8}, kStar);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(),
                 "algorithm tree: tree has no all-to-all (it has all-reduce, broadcast and "
                 "reduce)");
  }
}

// 8 ranks on 2 nodes of 4 (rank / 4), 1 us between ranks of a node and 5 us across, in a
// hand-written route table. The group {3, 4, 6} sees, as its local ranks 0, 1, 2: routes 3 -> 4
// (across) and 4 -> 6 (inside), nodes 0, 1, 1, and at most 2 members per node.
TEST(GroupHints, ALocalRankSeesItsGlobalRanksRoutesAndNode) {
  TopologyHints all{.ranks_per_node = 4};
  all.route_latency_sec = [](int src, int dst) {
    return src / 4 == dst / 4 ? 1e-6 : 5e-6;
  };
  all.route_links = [](int src, int dst) {
    return std::vector<std::pair<int, double>>{{src, 1e9}, {100 + dst, 2e9}};
  };
  const TopologyHints g = group_hints(all, {3, 4, 6}, 8);
  EXPECT_EQ(g.latency_sec(0, 1), 5e-6);
  EXPECT_EQ(g.latency_sec(1, 2), 1e-6);
  EXPECT_EQ(g.links(0, 2), (std::vector<std::pair<int, double>>{{3, 1e9}, {106, 2e9}}));
  EXPECT_EQ(g.rank_nodes, (std::vector<int>{0, 1, 1}));
  EXPECT_EQ(g.ranks_per_node, 2);
  EXPECT_TRUE(g.grid.empty());
}

// The group of every rank in order is the run itself: its hints are the run's (the grid of a
// torus-2d run included).
TEST(GroupHints, AllRanksInOrderKeepTheRunsHints) {
  TopologyHints all{.ranks_per_node = 4, .grid = {2, 4}};
  const TopologyHints g = group_hints(all, {0, 1, 2, 3, 4, 5, 6, 7}, 8);
  EXPECT_EQ(g.grid, (std::vector<int>{2, 4}));
  EXPECT_EQ(g.ranks_per_node, 4);
  EXPECT_TRUE(g.rank_nodes.empty());
}

}  // namespace
}  // namespace dtsim::sim
