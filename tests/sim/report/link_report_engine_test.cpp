// Per-link bytes (--link-report) and the limiter of the summary, against hand calculations.
// Every TEST runs in its own process (one SimGrid engine per process).
#include <cmath>
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "platforms/platform_spec.h"
#include "sim/report/limiter.h"
#include "sim/report/link_report.h"
#include "sim/run/simulation.h"

namespace dtsim::sim {
namespace {

using nlohmann::ordered_json;

// tests/testdata/sim_three_layers.json has two gradient buckets, 1 MiB and 3 MiB: 4 MiB of
// gradients all-reduced per iteration.
constexpr double kMiB = 1048576;
constexpr double kGradientBytes = 4 * kMiB;

struct SimRun {
  ordered_json report;
  std::vector<LinkLoad> links;
};

SimRun simulate(const std::string& workload, const std::string& platform, int ranks,
                const std::string& algorithm) {
  SimulateConfig config{.run = {.platform_path = platform, .ranks = ranks, .algorithm = algorithm},
                        .workload_path = workload};
  SimulateOutputs outputs;
  SimRun run;
  run.report = report_json(simulate_data_parallel(config, &outputs));
  run.links = std::move(outputs.links);
  return run;
}

SimRun three_layers(const std::string& platform, int ranks, const std::string& algorithm) {
  return simulate("tests/testdata/sim_three_layers.json", "tests/testdata/" + platform, ranks,
                  algorithm);
}

// Link directions per level name.
std::map<std::string, std::vector<const LinkLoad*>> by_level(const std::vector<LinkLoad>& links) {
  std::map<std::string, std::vector<const LinkLoad*>> levels;
  for (const LinkLoad& l : links) {
    levels[l.level_name].push_back(&l);
  }
  return levels;
}

TEST(LinkReport, RingOnAStar) {
  // Ring all-reduce of n bytes on p = 4 ranks: each rank sends 2 (p-1) n / p = 1.5 n to its
  // successor, so every used host link carries 1.5 x 4 MiB = 6291456 bytes in each direction
  // (UP: what the host sends, DOWN: what it receives). Hosts 4..15 carry nothing: left out.
  const SimRun run = three_layers("sim_star16_25GBps.json", 4, "ring");
  ASSERT_EQ(run.links.size(), 8u);
  const double iteration_sec = run.report["result"]["iteration_time_sec"].get<double>();
  for (const LinkLoad& l : run.links) {
    EXPECT_EQ(l.level_name, "hosts - switch") << l.name;
    EXPECT_EQ(l.bytes, 6291456u) << l.name;
    EXPECT_EQ(l.bandwidth_bytes_per_sec, 25e9) << l.name;
    EXPECT_NEAR(l.utilization, 6291456 / (25e9 * iteration_sec), 1e-12) << l.name;
  }
  EXPECT_EQ(run.links[0].name, "link-0_DOWN");
  EXPECT_EQ(run.links[1].name, "link-0_UP");
}

TEST(LinkReport, RingOnATwoLevelFatTree) {
  // sim_fat_tree16: leaves of 4 hosts, 4 spines. Ring on p = 8 (hosts 0-3 on leaf 0, 4-7 on
  // leaf 1): every edge carries 2 (p-1) n / p = 1.75 n = 7340032 bytes. Host links: 8 hosts x 2
  // directions. Only edges 3->4 and 7->0 cross leaves, each up one leaf-spine link and down
  // another: 4 leaf-spine link directions, each with one edge's bytes.
  const SimRun run = three_layers("sim_fat_tree16.json", 8, "ring");
  const auto levels = by_level(run.links);
  ASSERT_EQ(levels.size(), 2u);
  ASSERT_EQ(levels.at("hosts - level 1").size(), 16u);
  ASSERT_EQ(levels.at("level 1 - level 2").size(), 4u);
  for (const LinkLoad& l : run.links) {
    EXPECT_EQ(l.bytes, 7340032u) << l.name;
  }
  EXPECT_EQ(run.report["links"][1]["level"], "level 1 - level 2");
  EXPECT_EQ(run.report["links"][1]["links"], 4);
  EXPECT_EQ(run.report["links"][1]["bytes"], 4u * 7340032u);
}

TEST(LinkReport, CsvHasOneLinePerLinkDirection) {
  const std::vector<LinkLoad> loads{{.name = "a_UP",
                                     .level = 0,
                                     .level_name = "hosts - switch",
                                     .bandwidth_bytes_per_sec = 25e9,
                                     .bytes = 1000,
                                     .utilization = 0.25},
                                    {.name = "b_DOWN",
                                     .level = 1,
                                     .level_name = "level 1 - level 2",
                                     .bandwidth_bytes_per_sec = 1.25e10,
                                     .bytes = 7,
                                     .utilization = 1.0 / 3}};
  EXPECT_EQ(link_report_csv(loads),
            "link,level,bandwidth_bytes_per_sec,bytes,utilization\n"
            "a_UP,hosts - switch,25000000000,1000,0.25\n"
            "b_DOWN,level 1 - level 2,12500000000,7,0.333333333\n");
}

TEST(Limiter, ComputeBoundOnAnInfinitelyFastNetwork) {
  // 10^21 bytes/s, no latency: the all-reduces take ~0 s, nothing is exposed.
  const SimRun run = simulate("workloads/traces/resnet50_v100_b32.json",
                              "tests/testdata/sim_star8_infinite.json", 8, "ring");
  EXPECT_EQ(run.report["result"]["limiter"]["kind"], "compute-bound");
}

TEST(Limiter, BandwidthBoundOnSlowLinks) {
  // 2 ranks, 1 GB/s, alpha = 2 us per route. Ring of n bytes on 2 ranks: 2 steps of alpha +
  // (n/2)/B. Latency terms: 2 buckets x 2 steps x 2 us = 8 us; bandwidth terms: the busiest link
  // carries n per bucket, 4 MiB / 1 GB/s = 4.19 ms. Exposed: 3.4 ms of 9.7 ms (hand timeline of
  // data_parallel_engine_test.cpp).
  const SimRun run = three_layers("sim_star2_1GBps.json", 2, "ring");
  const auto& limiter = run.report["result"]["limiter"];
  EXPECT_EQ(limiter["kind"], "bandwidth-bound");
  EXPECT_NEAR(limiter["collective_latency_sec"].get<double>(), 8e-6, 1e-15);
  EXPECT_NEAR(limiter["collective_bandwidth_sec"].get<double>(), kGradientBytes / 1e9, 1e-15);
}

TEST(Limiter, LatencyBoundOnLongRoutes) {
  // As above with 1 ms per link: alpha = 2 ms per route, 2 x 2 x 2 ms = 8 ms of latency terms
  // against the same 4.19 ms of bandwidth terms.
  const SimRun run = three_layers("sim_star2_1ms.json", 2, "ring");
  const auto& limiter = run.report["result"]["limiter"];
  EXPECT_EQ(limiter["kind"], "latency-bound");
  EXPECT_NEAR(limiter["collective_latency_sec"].get<double>(), 8e-3, 1e-15);
  EXPECT_NEAR(limiter["collective_bandwidth_sec"].get<double>(), kGradientBytes / 1e9, 1e-15);
}

TEST(Limiter, OversubscribedLevelOfAFatTree) {
  // sim_fat_tree8_oversubscribed: 2 leaves of 4 hosts, one 1 GB/s uplink each (4:1). Direct
  // all-reduce on 8 ranks: a reduce-scatter then an all-gather, each rank sending n/8 to each of
  // the 7 others. Host link (each direction): 2 x 7 x n/8 = 1.75 n = 7340032 bytes.
  // Leaf uplink (each direction): 4 hosts x 4 hosts across x n/8 x 2 = 4 n = 16777216 bytes,
  // 2.3 times a host link's: the upper level is the bottleneck.
  const SimRun run = three_layers("sim_fat_tree8_oversubscribed.json", 8, "direct");
  const auto levels = by_level(run.links);
  ASSERT_EQ(levels.at("hosts - level 1").size(), 16u);
  for (const LinkLoad* l : levels.at("hosts - level 1")) {
    EXPECT_EQ(l->bytes, 7340032u) << l->name;
  }
  ASSERT_EQ(levels.at("level 1 - level 2").size(), 4u);
  for (const LinkLoad* l : levels.at("level 1 - level 2")) {
    EXPECT_EQ(l->bytes, 16777216u) << l->name;
  }
  const auto& limiter = run.report["result"]["limiter"];
  EXPECT_EQ(limiter["kind"], "oversubscribed-level");
  EXPECT_EQ(limiter["level"], "level 1 - level 2");
}

TEST(Limiter, RulesInOrder) {
  const std::vector<LinkLoad> host_busiest{
      {.name = "h", .level = 0, .level_name = "hosts - level 1", .utilization = 0.5},
      {.name = "u", .level = 1, .level_name = "level 1 - level 2", .utilization = 0.5}};
  const std::vector<LinkLoad> upper_busiest{
      {.name = "h", .level = 0, .level_name = "hosts - level 1", .utilization = 0.5},
      {.name = "u", .level = 1, .level_name = "level 1 - level 2", .utilization = 0.9}};
  const CommCost beta{.latency_sec = 1, .bandwidth_sec = 2};
  const CommCost alpha{.latency_sec = 2, .bandwidth_sec = 1};
  // 9.5 % exposed: compute-bound whatever the links.
  EXPECT_EQ(find_limiter(1.0, 0.905, alpha, upper_busiest).kind, "compute-bound");
  EXPECT_EQ(find_limiter(1.0, 0.5, alpha, upper_busiest).kind, "latency-bound");
  EXPECT_EQ(find_limiter(1.0, 0.5, beta, upper_busiest).kind, "oversubscribed-level");
  // A tie with the host links is not the upper level's fault.
  EXPECT_EQ(find_limiter(1.0, 0.5, beta, host_busiest).kind, "bandwidth-bound");
  EXPECT_EQ(find_limiter(1.0, 0.5, beta, {}).kind, "bandwidth-bound");
  // A straggler computing 0.3 s longer than the healthy 0.5 s: of the 0.5 s exposed, 0.3 s is
  // waiting for it (more than the 0.2 s of communication): straggler-bound, whatever the links.
  const Limiter straggler =
      find_limiter(1.0, 0.5, beta, upper_busiest, {.compute_sec = 0.8, .rank = 5});
  EXPECT_EQ(straggler.kind, "straggler-bound");
  EXPECT_NE(straggler.explanation.find("rank 5 computes 300 ms longer"), std::string::npos)
      << straggler.explanation;
  EXPECT_NE(straggler.explanation.find("communication itself exposes 200 ms"), std::string::npos)
      << straggler.explanation;
  // 0.2 s of waiting against 0.3 s of communication: the network's, as before.
  EXPECT_EQ(find_limiter(1.0, 0.5, beta, upper_busiest, {.compute_sec = 0.7}).kind,
            "oversubscribed-level");
  // The upper level busiest: oversubscribed where its switches are (4:1), a routing hot spot
  // where they are not (1:1), and as before where the topology does not say (NaN).
  const std::vector<double> four_to_one{std::nan(""), 4.0};
  const std::vector<double> one_to_one{std::nan(""), 1.0};
  EXPECT_EQ(find_limiter(1.0, 0.5, beta, upper_busiest, {}, four_to_one).kind,
            "oversubscribed-level");
  const Limiter hot = find_limiter(1.0, 0.5, beta, upper_busiest, {}, one_to_one);
  EXPECT_EQ(hot.kind, "routing-hot-spot");
  EXPECT_EQ(hot.level, "level 1 - level 2");
  EXPECT_EQ(find_limiter(1.0, 0.5, beta, upper_busiest, {}, {std::nan(""), std::nan("")}).kind,
            "oversubscribed-level");
}

TEST(Limiter, LevelOversubscriptionOfAFatTree) {
  // Link level 1 rises from the leaves: 4 hosts down, 1 uplink of the same speed: 4:1
  // (sim_fat_tree8_oversubscribed); fat_tree_256's 16 leaves have 16 down and 16 up: 1:1.
  const auto over = level_oversubscription(
      platforms::read_platform_spec("tests/testdata/sim_fat_tree8_oversubscribed.json"));
  ASSERT_EQ(over.size(), 2u);
  EXPECT_TRUE(std::isnan(over[0]));  // the hosts' own links
  EXPECT_DOUBLE_EQ(over[1], 4.0);
  const auto flat =
      level_oversubscription(platforms::read_platform_spec("platforms/files/fat_tree_256.json"));
  ASSERT_EQ(flat.size(), 2u);
  EXPECT_DOUBLE_EQ(flat[1], 1.0);
  EXPECT_TRUE(
      level_oversubscription(platforms::read_platform_spec("tests/testdata/sim_torus4x4.json"))
          .empty());
}

}  // namespace
}  // namespace dtsim::sim
