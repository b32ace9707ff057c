// A CNN plan's enumeration, counted by hand on small cases.
#include "sim/planner/cnn_space.h"

#include <gtest/gtest.h>

namespace dtsim::sim {
namespace {

std::vector<std::string> names(const std::vector<PlanCandidate>& all) {
  std::vector<std::string> out;
  for (const PlanCandidate& c : all) {
    out.push_back(candidate_name(c));
  }
  return out;
}

TEST(EnumerateCnnCandidates, CountsSplitsPipelinesAndMicroBatchesByHand) {
  // resnet50 (224x224) on 2 GPUs of one node, global batch 2. Per split of k ranks, pp | 2/k,
  // dp = 2/(k pp), micro-batches mb | 2/dp; pp = 1 runs 1f1b, pp > 1 gpipe and 1f1b:
  //   data:       pp1 dp2 mb 1 -> 1;  pp2 dp1 mb 1, 2, two schedules -> 4
  //   spatial 1x2 and 2x1 (2 divides 224): pp1 dp1 mb 1, 2            -> 2 each
  //   filter 2, channel 2:                 pp1 dp1 mb 1, 2            -> 2 each
  // 13 in all.
  const CnnSearchSpace space{.model = "resnet50", .gpus = 2, .global_batch = 2, .gpus_per_node = 2};
  const std::vector<PlanCandidate> all = enumerate_cnn_candidates(space);
  EXPECT_EQ(all.size(), 13u);
  EXPECT_EQ(
      names(all),
      (std::vector<std::string>{
          "dp2 pp1 data mb1 1f1b", "dp1 pp2 data mb1 gpipe", "dp1 pp2 data mb1 1f1b",
          "dp1 pp2 data mb2 gpipe", "dp1 pp2 data mb2 1f1b", "dp1 pp1 spatial1x2 mb1 1f1b",
          "dp1 pp1 spatial1x2 mb2 1f1b", "dp1 pp1 spatial2x1 mb1 1f1b",
          "dp1 pp1 spatial2x1 mb2 1f1b", "dp1 pp1 filter2 mb1 1f1b", "dp1 pp1 filter2 mb2 1f1b",
          "dp1 pp1 channel2 mb1 1f1b", "dp1 pp1 channel2 mb2 1f1b"}));
  // The split is the tensor or context degree the hybrid engine runs.
  EXPECT_EQ(all[5].degrees.cp, 2);
  EXPECT_EQ(all[9].degrees.tp, 2);
  EXPECT_EQ(all[2].micro_batches, 2);
  EXPECT_EQ(candidate_flags(all[5]),
            (std::vector<std::string>{"--parallel", "dp=1,pp=1,spatial=1x2", "--micro-batch", "1",
                                      "--schedule", "1f1b"}));
}

TEST(EnumerateCnnCandidates, VolumesSplitInThreeDimensionsAndGridsMustTile) {
  // cosmoflow (128^3) on 2 GPUs: the 3 grids 1x1x2, 1x2x1, 2x1x1 (2 each) beside data (5) and
  // filter, channel (2 each): 15.
  const CnnSearchSpace cube{
      .model = "cosmoflow", .image_size = 128, .gpus = 2, .global_batch = 2, .gpus_per_node = 2};
  EXPECT_EQ(enumerate_cnn_candidates(cube).size(), 15u);
  // resnet50 on 3 GPUs, global batch 3: 3 does not divide 224, so no spatial grid; data pp1
  // dp3 (1) and pp3 dp1 mb 1, 3 x 2 schedules (4); filter 3 and channel 3 mb 1, 3 (2 each): 9.
  const CnnSearchSpace three{.model = "resnet50", .gpus = 3, .global_batch = 3, .gpus_per_node = 4};
  EXPECT_EQ(enumerate_cnn_candidates(three).size(), 9u);
}

TEST(EnumerateCnnCandidates, FilterAndChannelStayInANodeAndStrategiesSwitchOff) {
  // One GPU per node: filter and channel splits would cross nodes; 13 - 4 = 9.
  CnnSearchSpace space{.model = "resnet50", .gpus = 2, .global_batch = 2, .gpus_per_node = 1};
  EXPECT_EQ(enumerate_cnn_candidates(space).size(), 9u);
  space.tp_across_nodes = true;
  EXPECT_EQ(enumerate_cnn_candidates(space).size(), 13u);
  // dp,pp only: the 5 data-parallel ones; dp,spatial only: 1 + 4.
  std::string why;
  space.strategies = *parse_strategies("dp,pp", &why);
  EXPECT_EQ(enumerate_cnn_candidates(space).size(), 5u);
  space.strategies = *parse_strategies("dp,spatial", &why);
  EXPECT_EQ(enumerate_cnn_candidates(space).size(), 5u);
}

}  // namespace
}  // namespace dtsim::sim
