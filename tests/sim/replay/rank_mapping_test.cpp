// Placement policies (platforms/FORMAT.md "Rank placement"): each policy's host order, worked out
// by hand on small platforms. Pure: no SimGrid engine.
#include "sim/replay/rank_mapping.h"

#include <algorithm>
#include <random>
#include <vector>

#include <gtest/gtest.h>

namespace dtsim::sim {
namespace {

using Order = std::vector<std::size_t>;
using Kind = Placement::Kind;

TEST(Placement, ParsesEveryPolicyAndSeed) {
  EXPECT_EQ(parse_placement("linear"), Placement{.kind = Kind::kLinear});
  EXPECT_EQ(parse_placement("round-robin"), Placement{.kind = Kind::kRoundRobin});
  EXPECT_EQ(parse_placement("topology-aware"), Placement{.kind = Kind::kTopologyAware});
  EXPECT_EQ(parse_placement("random"), (Placement{.kind = Kind::kRandom, .seed = 0}));
  EXPECT_EQ(parse_placement("random:42"), (Placement{.kind = Kind::kRandom, .seed = 42}));
  EXPECT_EQ(parse_placement("random:18446744073709551615"),
            (Placement{.kind = Kind::kRandom, .seed = 18446744073709551615ull}));
}

TEST(Placement, RejectsMalformedPolicies) {
  for (const char* bad : {"", "Linear", "random:", "random:-1", "random:1x", "random:+1",
                          "random:18446744073709551616", "round_robin", "stride:2"}) {
    EXPECT_EQ(parse_placement(bad), std::nullopt) << bad;
  }
}

TEST(Placement, LinearIsTheCanonicalOrder) {
  EXPECT_EQ(place_ranks({.kind = Kind::kLinear}, {.hosts = 8}, 5), (Order{0, 1, 2, 3, 4}));
}

TEST(Placement, RoundRobinDealsRanksToNodesInTurn) {
  // 3 nodes of 2 GPUs (hosts 0-1, 2-3, 4-5): rank r on node r mod 3, GPU r div 3.
  // r=0: node 0 GPU 0 = host 0; r=1: node 1 GPU 0 = 2; r=2: host 4; r=3: node 0 GPU 1 = 1;
  // r=4: node 1 GPU 1 = 3.
  EXPECT_EQ(place_ranks({.kind = Kind::kRoundRobin}, {.hosts = 6, .gpus_per_node = 2}, 5),
            (Order{0, 2, 4, 1, 3}));
}

TEST(Placement, RoundRobinOverSingleGpuHostsIsLinear) {
  // Every host is a node of one GPU: node r mod 8 = host r for r < 8.
  EXPECT_EQ(place_ranks({.kind = Kind::kRoundRobin}, {.hosts = 8}, 4), (Order{0, 1, 2, 3}));
}

TEST(Placement, RandomIsASeededPermutationOfAllHosts) {
  const Placement seven{.kind = Kind::kRandom, .seed = 7};
  const Order all = place_ranks(seven, {.hosts = 64}, 64);
  Order sorted = all;
  std::sort(sorted.begin(), sorted.end());
  Order identity(64);
  for (std::size_t i = 0; i < 64; ++i) {
    identity[i] = i;
  }
  EXPECT_EQ(sorted, identity);
  EXPECT_NE(all, identity);
  // Same seed, same order; fewer ranks take its first entries; another seed, another order.
  EXPECT_EQ(place_ranks(seven, {.hosts = 64}, 64), all);
  EXPECT_EQ(place_ranks(seven, {.hosts = 64}, 10), Order(all.begin(), all.begin() + 10));
  EXPECT_NE(place_ranks({.kind = Kind::kRandom, .seed = 8}, {.hosts = 64}, 64), all);
}

TEST(Placement, RandomDrawsFromMt19937With64BitOutputs) {
  // Two hosts: one Fisher-Yates step, i = 1, j = (first output) mod 2 (2^64 mod 2 = 0: nothing
  // is rejected). j = 0 swaps the hosts. The engine's outputs are fixed by the C++ standard.
  for (std::uint64_t seed : {0ull, 1ull, 2ull, 3ull, 42ull}) {
    const bool swapped = std::mt19937_64(seed)() % 2 == 0;
    EXPECT_EQ(place_ranks({.kind = Kind::kRandom, .seed = seed}, {.hosts = 2}, 2),
              swapped ? Order({1, 0}) : Order({0, 1}))
        << seed;
  }
}

TEST(Placement, TopologyAwareIsLinearOffTheTorus) {
  EXPECT_EQ(place_ranks({.kind = Kind::kTopologyAware}, {.hosts = 8, .gpus_per_node = 2}, 8),
            (Order{0, 1, 2, 3, 4, 5, 6, 7}));
}

TEST(Placement, TopologyAwareSnakesThroughATorusAndClosesTheRingInOneHop) {
  // dims [4, 3], index = x + 4y. Dimension 0 (size 4) is the even one, so it is walked
  // outermost and y innermost: x=0: y 0,1,2; x=1: y 2,1,0; x=2: y 0,1,2; x=3: y 2,1,0.
  // Every step changes one coordinate by 1; the last, (3,0), is one x-wrap from (0,0).
  EXPECT_EQ(place_ranks({.kind = Kind::kTopologyAware}, {.hosts = 12, .torus_dims = {4, 3}}, 12),
            (Order{0, 4, 8, 9, 5, 1, 2, 6, 10, 11, 7, 3}));
}

TEST(Placement, TopologyAwareOnAnAllOddTorusKeepsTheDimensionOrder) {
  // dims [3, 3]: x innermost. y=0: x 0,1,2; y=1: x 2,1,0; y=2: x 0,1,2. The ring closes from
  // (2,2) to (0,0): one wrap in x and one in y.
  EXPECT_EQ(place_ranks({.kind = Kind::kTopologyAware}, {.hosts = 9, .torus_dims = {3, 3}}, 9),
            (Order{0, 1, 2, 5, 4, 3, 6, 7, 8}));
}

TEST(Placement, TopologyAwareKeepsANodesGpusTogether) {
  // A 2x2 torus of nodes with 2 GPUs: nodes 0, 1, 3, 2 (y=0: x 0,1; y=1: x 1,0), GPUs of node
  // k are hosts 2k, 2k+1.
  EXPECT_EQ(place_ranks({.kind = Kind::kTopologyAware},
                        {.hosts = 8, .gpus_per_node = 2, .torus_dims = {2, 2}}, 8),
            (Order{0, 1, 2, 3, 6, 7, 4, 5}));
}

TEST(Placement, NamesArePolicyNames) {
  EXPECT_EQ(placement_name({.kind = Kind::kLinear}), "linear");
  EXPECT_EQ(placement_name({.kind = Kind::kRoundRobin}), "round-robin");
  EXPECT_EQ(placement_name({.kind = Kind::kRandom, .seed = 3}), "random");
  EXPECT_EQ(placement_name({.kind = Kind::kTopologyAware}), "topology-aware");
}

}  // namespace
}  // namespace dtsim::sim
