// Every uncontended algorithm against its closed-form alpha-beta time, on the schedule itself
// (critical_path_sec: each transfer alpha + bytes/B, in dependency and channel order), for the
// rank counts of the collectives issue: 2, 3, 4, 7, 8, 64, 1000, 1024. Engine tests
// (collective_engine_test.cpp) check that SimGrid replays the same times on small cases.
#include <bit>
#include <cmath>

#include <gtest/gtest.h>

#include "sim/collectives/direct.h"
#include "sim/collectives/halving_doubling.h"
#include "sim/collectives/hierarchical.h"
#include "sim/collectives/ring.h"
#include "sim/collectives/schedule_cost.h"

namespace dtsim::sim {
namespace {

constexpr double kAlpha = 2e-6;  // per transfer
constexpr double kB = 25e9;      // bytes/s
const TopologyHints kHints{.route_latency_sec = [](int, int) { return kAlpha; },
                           .injection_bytes_per_sec = kB};

const std::vector<int> kRanks{2, 3, 4, 7, 8, 64, 1000, 1024};

double path_sec(const CollectiveAlgorithm& a, CollectiveOp op, int p, std::uint64_t n,
                const TopologyHints& hints = kHints) {
  return critical_path_sec(a.build({.op = op, .ranks = p, .bytes = n}, hints), hints);
}

void expect_close(double got, double expected, const std::string& what) {
  EXPECT_NEAR(got, expected, 1e-6 * expected) << what;
}

// n divisible by p and by every power of two up to 1024, so every chunk and half is whole.
std::uint64_t bytes_for(int p) {
  return static_cast<std::uint64_t>(p) * 1024 * 1000;
}

TEST(ClosedForm, RingAllReduceReduceScatterAllGather) {
  // Ring: 2(p-1) steps for all-reduce, p-1 for the halves, each alpha + (n/p)/B.
  for (bool collapse : {false, true}) {
    const RingAlgorithm ring({.collapse = collapse});
    for (int p : kRanks) {
      if (!collapse && p > 64) {
        continue;  // 2p^2 ops: covered by the collapsed form, which equals it (below)
      }
      const auto n = bytes_for(p);
      const double step = kAlpha + static_cast<double>(n) / p / kB;
      const std::string what = "p=" + std::to_string(p) + (collapse ? " collapsed" : " step");
      expect_close(path_sec(ring, CollectiveOp::kAllReduce, p, n), 2.0 * (p - 1) * step, what);
      expect_close(path_sec(ring, CollectiveOp::kReduceScatter, p, n), (p - 1.0) * step, what);
      expect_close(path_sec(ring, CollectiveOp::kAllGather, p, n), (p - 1.0) * step, what);
    }
  }
}

TEST(ClosedForm, RingBroadcastAndReduceArePipelinedChains) {
  // A chain of p ranks, c chunks: the last chunk leaves the root after c-1 stages and needs p-1
  // more: (c + p - 2) stages of alpha + (n/c)/B.
  for (int p : kRanks) {
    const int c = 16;
    const auto n = static_cast<std::uint64_t>(c) * 65536;
    const RingAlgorithm ring({.chunk_bytes = n / c});
    const double expected = (c + p - 2) * (kAlpha + static_cast<double>(n) / c / kB);
    expect_close(path_sec(ring, CollectiveOp::kBroadcast, p, n), expected, std::to_string(p));
    expect_close(path_sec(ring, CollectiveOp::kReduce, p, n), expected, std::to_string(p));
  }
}

TEST(ClosedForm, HalvingDoublingAllReduce) {
  // P = 2^floor(log2 p): recursive halving then doubling, log2(P) steps each, step s moving
  // n/2^s: 2 log2(P) alpha + 2 (1 - 1/P) n/B. Not a power of two: plus the fold and unfold of
  // whole vectors, 2 (alpha + n/B).
  const HalvingDoublingAlgorithm hd;
  for (int p : kRanks) {
    const auto n = bytes_for(p);
    const int P = static_cast<int>(std::bit_floor(static_cast<unsigned>(p)));
    const double k = std::log2(P);
    double expected = 2 * k * kAlpha + 2 * (1 - 1.0 / P) * static_cast<double>(n) / kB;
    if (P != p) {
      expected += 2 * (kAlpha + static_cast<double>(n) / kB);
    }
    expect_close(path_sec(hd, CollectiveOp::kAllReduce, p, n), expected, std::to_string(p));
  }
}

TEST(ClosedForm, HalvingDoublingReduceScatterAndAllGatherOnPowersOfTwo) {
  // One half each: log2(p) alpha + (1 - 1/p) n/B.
  const HalvingDoublingAlgorithm hd;
  for (int p : {2, 4, 8, 64, 1024}) {
    const auto n = bytes_for(p);
    const double expected = std::log2(p) * kAlpha + (1 - 1.0 / p) * static_cast<double>(n) / kB;
    expect_close(path_sec(hd, CollectiveOp::kReduceScatter, p, n), expected, std::to_string(p));
    expect_close(path_sec(hd, CollectiveOp::kAllGather, p, n), expected, std::to_string(p));
  }
}

TEST(ClosedForm, RecursiveDoublingAllReduce) {
  // log2(P) exchanges of the whole vector, plus fold and unfold when p is not a power of two.
  const RecursiveDoublingAlgorithm rd;
  for (int p : kRanks) {
    const std::uint64_t n = 4096;
    const int P = static_cast<int>(std::bit_floor(static_cast<unsigned>(p)));
    const double steps = std::log2(P) + (P != p ? 2 : 0);
    expect_close(path_sec(rd, CollectiveOp::kAllReduce, p, n),
                 steps * (kAlpha + static_cast<double>(n) / kB), std::to_string(p));
  }
}

TEST(ClosedForm, HierarchicalAllReduce) {
  // g ranks per node, m nodes: ring reduce-scatter and all-gather inside nodes (2(g-1) steps of
  // n/g) and a ring all-reduce of n/g across nodes (2(m-1) steps of n/(gm)).
  const HierarchicalAlgorithm h;
  for (auto [p, g] :
       std::vector<std::pair<int, int>>{{8, 4}, {64, 8}, {1000, 8}, {1024, 8}, {4, 1}, {7, 7}}) {
    const TopologyHints hints{.route_latency_sec = kHints.route_latency_sec,
                              .injection_bytes_per_sec = kB,
                              .ranks_per_node = g};
    const auto n = bytes_for(p);
    const int m = p / g;
    const double expected = 2.0 * (g - 1) * (kAlpha + static_cast<double>(n) / g / kB) +
                            2.0 * (m - 1) * (kAlpha + static_cast<double>(n) / p / kB);
    expect_close(path_sec(h, CollectiveOp::kAllReduce, p, n, hints), expected,
                 std::to_string(p) + "/" + std::to_string(g));
  }
}

TEST(ClosedForm, Torus2dAllReduce) {
  // Rings along x (X ranks) around an all-reduce along y (Y ranks) of n/X.
  const Torus2dAlgorithm t;
  for (auto [x, y] : std::vector<std::pair<int, int>>{{2, 2}, {4, 2}, {8, 8}, {32, 32}, {8, 125}}) {
    const TopologyHints hints{.route_latency_sec = kHints.route_latency_sec,
                              .injection_bytes_per_sec = kB,
                              .grid = {x, y}};
    const int p = x * y;
    const auto n = bytes_for(p);
    const double expected = 2.0 * (x - 1) * (kAlpha + static_cast<double>(n) / x / kB) +
                            2.0 * (y - 1) * (kAlpha + static_cast<double>(n) / p / kB);
    expect_close(path_sec(t, CollectiveOp::kAllReduce, p, n, hints), expected,
                 std::to_string(x) + "x" + std::to_string(y));
  }
}

TEST(ClosedForm, DirectAllReduceIsTwoStepsWithQuadraticDependencies) {
  // Every rank sends its chunk n/p to each peer (reduce-scatter), then the reduced chunk to each
  // (all-gather): 2 (alpha + n/(p B)) when every transfer has its own link. The all-gather waits
  // on one zero-time join per rank of its p - 1 receipts: 2 p (p - 1) dependencies in all, not
  // p (p - 1)^2 (which made 1024 ranks a 4 GB schedule).
  const DirectAlgorithm d;
  for (int p : {2, 5, 64}) {
    const auto n = bytes_for(p);
    expect_close(path_sec(d, CollectiveOp::kAllReduce, p, n),
                 2 * (kAlpha + static_cast<double>(n) / p / kB), std::to_string(p));
    const Schedule s = d.build({.op = CollectiveOp::kAllReduce, .ranks = p, .bytes = n}, kHints);
    std::size_t deps = 0;
    for (const ScheduleOp& op : s.ops) {
      deps += op.deps.size();
    }
    EXPECT_EQ(deps, 2u * p * (p - 1)) << p;
  }
}

TEST(ClosedForm, DirectSendRecvIsOneTransfer) {
  const DirectAlgorithm d;
  expect_close(path_sec(d, CollectiveOp::kSendRecv, 7, 1'000'000), kAlpha + 1e6 / kB, "send-recv");
}

}  // namespace
}  // namespace dtsim::sim
