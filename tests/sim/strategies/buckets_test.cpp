#include "sim/strategies/buckets.h"

#include <gtest/gtest.h>

namespace dtsim::sim {
namespace {

constexpr std::uint64_t kMiB = 1024 * 1024;

workloads::Workload with_params(std::vector<std::uint64_t> param_bytes) {
  workloads::Workload w{.model = "m", .batch_per_device = 1};
  for (std::size_t i = 0; i < param_bytes.size(); ++i) {
    w.layers.push_back({.name = "l" + std::to_string(i), .param_bytes = param_bytes[i]});
  }
  return w;
}

TEST(AssignBuckets, FollowsDdpRuleByHand) {
  // Layers (forward order) with gradients of 0.5, 3, 0, 2, 0.75 and 0.5 MiB; caps 1 MiB first,
  // then 4 MiB. Walking backward (gradient-ready order), by hand:
  //   l5 0.5 -> 0.5 < 1;  l4 0.75 -> 1.25 >= 1: close {l4, l5} (first bucket, 1 MiB cap)
  //   l3 2 -> 2 < 4;  l2 has no gradient;  l1 3 -> 5 >= 4: close {l1..l3}
  //   l0 0.5: left open, closed at the end.
  const auto w = with_params({kMiB / 2, 3 * kMiB, 0, 2 * kMiB, 3 * kMiB / 4, kMiB / 2});
  const auto buckets = assign_buckets(w, 4 * kMiB, kMiB);
  ASSERT_EQ(buckets.size(), 3u);
  EXPECT_EQ(buckets[0], (Bucket{.bytes = 5 * kMiB / 4, .first_layer = 4, .last_layer = 5}));
  EXPECT_EQ(buckets[1], (Bucket{.bytes = 5 * kMiB, .first_layer = 1, .last_layer = 3}));
  EXPECT_EQ(buckets[2], (Bucket{.bytes = kMiB / 2, .first_layer = 0, .last_layer = 0}));
}

TEST(AssignBuckets, ABucketClosesExactlyAtItsCap) {
  // 1 MiB reaches the 1 MiB first cap (DDP closes when size >= cap).
  const auto buckets = assign_buckets(with_params({kMiB, kMiB}), 25 * kMiB, kMiB);
  ASSERT_EQ(buckets.size(), 2u);
  EXPECT_EQ(buckets[0].first_layer, 1);
  EXPECT_EQ(buckets[1].first_layer, 0);
}

TEST(AssignBuckets, SumOfBucketsIsAllGradients) {
  const auto w = with_params({7, 0, 123456789, 42, 0, 99999});
  std::uint64_t total = 0;
  for (const Bucket& b : assign_buckets(w, 1000, 10)) {
    total += b.bytes;
  }
  EXPECT_EQ(total, w.param_bytes());
}

TEST(AssignBuckets, ModelWithoutGradientsHasNoBuckets) {
  EXPECT_TRUE(assign_buckets(with_params({0, 0}), kMiB, kMiB).empty());
}

}  // namespace
}  // namespace dtsim::sim
