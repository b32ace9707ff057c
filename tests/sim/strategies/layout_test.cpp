// Rank layout against Megatron-LM's rule (megatron/core/parallel_state.py): the first dimension
// of the order varies fastest. Expected groups written out by hand from that rule.
#include "sim/strategies/layout.h"

#include <gtest/gtest.h>

namespace dtsim::sim {
namespace {

constexpr std::array<Dim, kDims> kMegatron{Dim::kTp, Dim::kCp, Dim::kDp, Dim::kPp};

TEST(ParseParallel, ReadsDegreesInAnyOrder) {
  bool dp_given = false;
  std::string why;
  const auto d = parse_parallel("pp=4,tp=8,dp=2", &dp_given, &why);
  ASSERT_TRUE(d) << why;
  EXPECT_EQ(*d, (ParallelDegrees{.tp = 8, .cp = 1, .dp = 2, .pp = 4, .ep = 1}));
  EXPECT_TRUE(dp_given);
  EXPECT_EQ(d->ranks(), 64);
  const auto e = parse_parallel("tp=2,ep=4,cp=2", &dp_given, &why);
  ASSERT_TRUE(e) << why;
  EXPECT_FALSE(dp_given);
  EXPECT_EQ(e->ep, 4);
  EXPECT_EQ(parallel_name(*e), "tp=2,cp=2,dp=1,pp=1,ep=4");
}

TEST(ParseParallel, RefusesBadText) {
  bool dp_given = false;
  for (const char* text : {"", "tp", "tp=0", "tp=x", "tp=8,tp=2", "zp=2", "tp=2,", "tp=-1",
                           "tp=99999999999", "tp=2.5"}) {
    std::string why;
    EXPECT_FALSE(parse_parallel(text, &dp_given, &why)) << text;
    EXPECT_FALSE(why.empty()) << text;
  }
}

TEST(ParseOrder, PermutationsOnly) {
  std::string why;
  const auto order = parse_order("pp-dp-cp-tp", &why);
  ASSERT_TRUE(order);
  EXPECT_EQ(order_name(*order), "pp-dp-cp-tp");
  for (const char* text : {"tp-cp-dp", "tp-tp-dp-pp", "tp-cp-dp-pp-ep", "", "tp-cp-dp-xx"}) {
    EXPECT_FALSE(parse_order(text, &why)) << text;
  }
}

// tp=2, dp=2, pp=2 in Megatron's order: rank = tp + 2*dp + 4*pp.
TEST(RankLayout, TensorFastestThenDataThenPipeline) {
  const RankLayout layout({.tp = 2, .dp = 2, .pp = 2}, kMegatron);
  EXPECT_EQ(layout.ranks(), 8);
  EXPECT_EQ(layout.coordinate(5, Dim::kTp), 1);
  EXPECT_EQ(layout.coordinate(5, Dim::kDp), 0);
  EXPECT_EQ(layout.coordinate(5, Dim::kPp), 1);
  EXPECT_EQ(layout.group(5, {Dim::kTp}), (std::vector<int>{4, 5}));
  EXPECT_EQ(layout.group(5, {Dim::kDp}), (std::vector<int>{5, 7}));
  EXPECT_EQ(layout.group(5, {Dim::kPp}), (std::vector<int>{1, 5}));
  // Megatron-LM's docstring example (parallel_state.initialize_model_parallel): 16 GPUs, tp=2,
  // pp=4 -> dp=2; tensor groups [g0, g1], [g2, g3], ...; pipeline groups [g0, g4, g8, g12], ...;
  // data groups [g0, g2], [g1, g3], ...
  const RankLayout megatron({.tp = 2, .dp = 2, .pp = 4}, kMegatron);
  EXPECT_EQ(megatron.group(0, {Dim::kPp}), (std::vector<int>{0, 4, 8, 12}));
  EXPECT_EQ(megatron.group(3, {Dim::kDp}), (std::vector<int>{1, 3}));
  EXPECT_EQ(megatron.group(6, {Dim::kTp}), (std::vector<int>{6, 7}));
}

TEST(RankLayout, OtherOrderAndContextGroups) {
  // dp fastest: rank = dp + 2*tp.
  const RankLayout dp_first({.tp = 2, .dp = 2}, {Dim::kDp, Dim::kTp, Dim::kCp, Dim::kPp});
  EXPECT_EQ(dp_first.group(0, {Dim::kTp}), (std::vector<int>{0, 2}));
  // tp=2, cp=2, dp=2: rank = tp + 2*cp + 4*dp; the data x context group, context fastest.
  const RankLayout cp({.tp = 2, .cp = 2, .dp = 2}, kMegatron);
  EXPECT_EQ(cp.group(1, {Dim::kCp}), (std::vector<int>{1, 3}));
  EXPECT_EQ(cp.group(1, {Dim::kCp, Dim::kDp}), (std::vector<int>{1, 3, 5, 7}));
  EXPECT_EQ(cp.rank_at({1, 1, 1, 0}), 7);
}

TEST(RankLayout, ExpertGroupsSplitTheDataDimension) {
  // dp=4, ep=2: expert groups are data indices {0,1} and {2,3}; expert-data groups {0,2}, {1,3}.
  const RankLayout layout({.tp = 2, .dp = 4, .ep = 2}, kMegatron);
  // rank = tp + 2*dp
  EXPECT_EQ(layout.expert_group(4), (std::vector<int>{4, 6}));
  EXPECT_EQ(layout.expert_group(3), (std::vector<int>{1, 3}));
  EXPECT_EQ(layout.expert_data_group(2), (std::vector<int>{2, 6}));  // data index 1: {1, 3}
  EXPECT_EQ(layout.expert_data_group(7), (std::vector<int>{3, 7}));
}

}  // namespace
}  // namespace dtsim::sim
