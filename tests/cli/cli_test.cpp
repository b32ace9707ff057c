// The dtsim binary as a user runs it: exit codes, verbatim error messages, no report on failure,
// byte-identical reports for identical runs. DTSIM_BINARY is set by CMake.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "cli_support.h"
#include <sys/wait.h>

namespace {

namespace fs = std::filesystem;

using dtsim::cli_test::Result;
using dtsim::cli_test::slurp;

class Cli : public dtsim::cli_test::DtsimTest {
 protected:
  [[nodiscard]] std::string report() const { return (dir_ / "report.json").string(); }

  // Runs a failing command: exit code 2, exactly `message` on stderr, no report written.
  void expect_error(const std::string& args, const std::string& message) const {
    const Result r = run(args + " --report " + report());
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(r.err, message);
    EXPECT_EQ(r.out, "");
    EXPECT_FALSE(fs::exists(report()));
  }
};

const std::string kResnet = "--workload workloads/traces/resnet50_v100_b32.json";
const std::string kStar = "--platform tests/testdata/sim_star16_25GBps.json";

TEST_F(Cli, HelpExplainsVerbsAndUnits) {
  const Result r = run("--help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("simulate"), std::string::npos);
  EXPECT_NE(r.out.find("collective"), std::string::npos);
  EXPECT_NE(r.out.find("\"200Gbps\" (bits/s)"), std::string::npos);
  EXPECT_NE(r.out.find("at most 1 PiB"), std::string::npos);
}

TEST_F(Cli, UnknownVerbNamesEveryVerb) {
  const Result r = run("simulat");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "dtsim: unknown verb \"simulat\" (expected simulate, memory, collective, plan, "
            "sweep, whatif, platform, chakra or workload; see dtsim --help)\n");
}

TEST_F(Cli, SimGridSettingsAreCheckedBeforeSimGridSeesThem) {
  // Each of these aborted or hung SimGrid, or ran another network model than the report said.
  const std::string run =
      "collective --platform tests/testdata/sim_star16_25GBps.json --ranks 2 "
      "--bytes 1MB --cfg ";
  expect_error(run + "foo",
               "dtsim collective: --cfg foo: expected KEY:VALUE, e.g. "
               "network/maxmin-selective-update:yes\n");
  expect_error(run + "network/model:LV08",
               "dtsim collective: --cfg network/model:LV08: dtsim sets network/model itself; "
               "choose the network model with --network-model exact|lv08\n");
  expect_error(run + "contexts/factory:bogus",
               "dtsim collective: --cfg contexts/factory:bogus: dtsim sets contexts/factory "
               "itself (actor contexts and their stacks)\n");
  expect_error(run + "surf/precision:-1",
               "dtsim collective: --cfg surf/precision:-1: expected a precision > 0, e.g. "
               "surf/precision:1e-9\n");
  expect_error(run + "foo:bar",
               "dtsim collective: --cfg foo:bar: SimGrid refused it: Bad config key: foo\n");
  expect_error(run + "network/bandwidth-factor:0",
               "dtsim collective: --cfg network/bandwidth-factor:0: expected a factor > 0, e.g. "
               "network/bandwidth-factor:0.97\n");
  expect_error(run + "maxmin/concurrency-limit:0",
               "dtsim collective: --cfg maxmin/concurrency-limit:0: expected -1 (no limit) or a "
               "limit >= 1 (0 deadlocks every transfer)\n");
}

TEST_F(Cli, ExtraSimGridSettingsAreReported) {
  const Result r = run("simulate " + kResnet + " " + kStar +
                       " --ranks 2 --cfg network/maxmin-selective-update:yes --report " + report());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("exact network model, with --cfg network/maxmin-selective-update:yes)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(slurp(report()).find("\"extra_cfg\": [\n      \"network/maxmin-selective-update:yes\""),
            std::string::npos);
}

TEST_F(Cli, AStrayArgumentIsAnError) {
  // "tree" without --algorithm used to be ignored: the run used the ring.
  expect_error("simulate " + kResnet + " " + kStar + " --ranks 8 tree",
               "dtsim simulate: unexpected argument \"tree\": every value follows its flag (see "
               "--help)\n");
  expect_error("collective " + kStar + " --ranks 8 --bytes 1MB extra",
               "dtsim collective: unexpected argument \"extra\": every value follows its flag "
               "(see --help)\n");
}

TEST_F(Cli, SimulateHelpNamesEveryFlagWithItsUnit) {
  const Result r = run("simulate --help");
  EXPECT_EQ(r.exit_code, 0);
  for (const char* flag :
       {"--workload",    "--platform",      "--ranks",   "--algorithm",   "--bucket-mb",
        "--iterations",  "--report",        "--replay",  "--chunk",       "--ranks-per-node",
        "--grid",        "--network-model", "--cfg",     "--placement",   "round-robin",
        "random[:SEED]", "topology-aware",  "dragonfly", "perturbations", "--timeline",
        "--link-report", "--overlap"}) {
    EXPECT_NE(r.out.find(flag), std::string::npos) << flag;
  }
  EXPECT_NE(r.out.find("MiB (2^20 bytes)"), std::string::npos);
}

TEST_F(Cli, CollectiveAcceptsSizeSuffixes) {
  Result r = run("collective " + kStar + " --ranks 4 --bytes 100MB --report " + report());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(slurp(report()).find("\"bytes\": 100000000,"), std::string::npos);
  r = run("collective " + kStar + " --ranks 4 --bytes 1GiB --report " + report());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(slurp(report()).find("\"bytes\": 1073741824,"), std::string::npos);
}

TEST_F(Cli, SameRunTwiceGivesByteIdenticalReports) {
  const std::string args = "simulate " + kResnet + " " + kStar + " --ranks 16 --report ";
  ASSERT_EQ(run(args + report()).exit_code, 0);
  const std::string first = slurp(report());
  ASSERT_EQ(run(args + report()).exit_code, 0);
  EXPECT_EQ(slurp(report()), first);
  EXPECT_FALSE(first.empty());
}

TEST_F(Cli, TimelineIsAChromeTraceAndDeterministic) {
  const std::string timeline = (dir_ / "t.json").string();
  const std::string args =
      "simulate " + kResnet + " " + kStar + " --ranks 4 --timeline " + timeline;
  ASSERT_EQ(run(args).exit_code, 0);
  const std::string first = slurp(timeline);
  EXPECT_EQ(first.rfind("{\"traceEvents\":[{\"name\":\"process_name\",\"ph\":\"M\"", 0), 0u);
  EXPECT_NE(first.find("\"name\":\"all-reduce bucket 0\""), std::string::npos);
  ASSERT_EQ(run(args).exit_code, 0);
  EXPECT_EQ(slurp(timeline), first);
}

TEST_F(Cli, LinkReportIsACsvAndTheSummaryNamesTheLimiter) {
  // Ring on 4 ranks of a star: each used link direction carries 1.5 x the gradient bytes.
  const std::string csv = (dir_ / "links.csv").string();
  const Result r = run("simulate " + kResnet + " " + kStar + " --ranks 4 --link-report " + csv);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string text = slurp(csv);
  EXPECT_EQ(text.rfind("link,level,bandwidth_bytes_per_sec,bytes,utilization\nlink-0_DOWN,hosts - "
                       "switch,25000000000,",
                       0),
            0u);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 9);  // header + 4 hosts x 2 directions
  EXPECT_NE(r.out.find("  limited by              "), std::string::npos);
  EXPECT_NE(r.out.find("  busiest link per level  hosts - switch: link-0_DOWN "),
            std::string::npos);
}

// The rows of a link report after the header, as (link, level).
std::vector<std::pair<std::string, std::string>> link_levels(const std::string& csv) {
  std::vector<std::pair<std::string, std::string>> rows;
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) {
    const auto comma = line.find(',');
    rows.emplace_back(line.substr(0, comma),
                      line.substr(comma + 1, line.find(',', comma + 1) - comma - 1));
  }
  return rows;
}

TEST_F(Cli, LinkReportNamesDragonflyKindsAndTorusDimensions) {
  // A dragonfly of 2 groups x 1 chassis x 2 routers x 2 nodes: a ring over its 8 hosts crosses
  // host links, the green link between a chassis's two routers and the one blue link between the
  // groups (one chassis per group: no black link). SimGrid names each link by its kind.
  const std::string csv = (dir_ / "links.csv").string();
  ASSERT_EQ(
      run("simulate " + kResnet +
          " --platform tests/testdata/sim_dragonfly8_kinds.json --ranks 8 --link-report " + csv)
          .exit_code,
      0);
  std::set<std::string> levels;
  for (const auto& [link, level] : link_levels(slurp(csv))) {
    const std::string expected = link.starts_with("local_link")   ? "hosts - routers"
                                 : link.starts_with("green_link") ? "intra-chassis (green)"
                                 : link.starts_with("blue_link")  ? "inter-group (blue)"
                                                                  : "?";
    EXPECT_EQ(level, expected) << link;
    levels.insert(level);
  }
  EXPECT_EQ(levels.size(), 3u);
  // A 4 x 4 torus: host index x + 4 y; a link from a to b runs along x if a mod 4 != b mod 4.
  ASSERT_EQ(run("simulate " + kResnet +
                " --platform tests/testdata/sim_torus4x4.json --ranks 16 --link-report " + csv)
                .exit_code,
            0);
  int x_links = 0, y_links = 0;
  for (const auto& [link, level] : link_levels(slurp(csv))) {
    unsigned a = 0, b = 0;
    ASSERT_EQ(std::sscanf(link.c_str(), "torus_link_from_%u_to_%u", &a, &b), 2) << link;
    EXPECT_EQ(level, a % 4 != b % 4 ? "torus x links" : "torus y links") << link;
    (a % 4 != b % 4 ? x_links : y_links)++;
  }
  EXPECT_GT(x_links, 0);
  EXPECT_GT(y_links, 0);  // the ring's row changes (3 -> 4, ...) go along y
}

TEST_F(Cli, LinkReportIntoAMissingDirectory) {
  expect_error(
      "simulate " + kResnet + " " + kStar + " --ranks 4 --link-report /nonexistent/l.csv",
      "dtsim simulate: --link-report /nonexistent/l.csv: no such directory /nonexistent\n");
}

TEST_F(Cli, TimelineIntoAMissingDirectory) {
  expect_error("simulate " + kResnet + " " + kStar + " --ranks 4 --timeline /nonexistent/t.json",
               "dtsim simulate: --timeline /nonexistent/t.json: no such directory /nonexistent\n");
}

TEST_F(Cli, NetworkModelIsSelectableAndRecorded) {
  // SimGrid's LV08 model multiplies latencies by 13.01 and bandwidths by 0.97 (SimGrid notes,
  // Table A), so the same all-reduce must take longer than on the exact model.
  const std::string args = "collective " + kStar + " --ranks 4 --bytes 1MB --report " + report();
  ASSERT_EQ(run(args).exit_code, 0);
  const std::string exact = slurp(report());
  EXPECT_NE(exact.find("\"name\": \"exact\""), std::string::npos);
  EXPECT_NE(exact.find("\"network/model:CM02\""), std::string::npos);
  ASSERT_EQ(run(args + " --network-model lv08").exit_code, 0);
  const std::string lv08 = slurp(report());
  EXPECT_NE(lv08.find("\"name\": \"lv08\""), std::string::npos);
  auto time_sec = [](const std::string& json) {
    const auto at = json.find("\"time_sec\": ");
    return std::stod(json.substr(at + 12));
  };
  EXPECT_GT(time_sec(lv08), time_sec(exact) * 1.05);
}

TEST_F(Cli, GeneratedWorkloadFeedsASimulation) {
  const std::string trace = (dir_ / "gpt2.json").string();
  const Result gen =
      run("workload generate --model gpt2 --batch 2 --seq-len 256 --device h200 "
          "--precision bf16 -o " +
          trace);
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  const Result sim = run("simulate --workload " + trace + " " + kStar + " --ranks 4");
  EXPECT_EQ(sim.exit_code, 0) << sim.err;
  EXPECT_NE(sim.out.find("gpt2 (batch 2/device) on 4 ranks"), std::string::npos);
}

TEST_F(Cli, GeneratorRefusesAPrecisionTheDeviceLacks) {
  const std::string trace = (dir_ / "x.json").string();
  const Result r =
      run("workload generate --model resnet50 --batch 8 --device v100 "
          "--precision bf16 -o " +
          trace);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "dtsim workload generate: --precision bf16: NVIDIA V100-SXM2 does not support it\n");
  EXPECT_FALSE(fs::exists(trace));
}

TEST_F(Cli, GeneratorTimesWithTheOpClassModelWhenAsked) {
  const std::string trace = (dir_ / "oc.json").string();
  const std::string base = "workload generate --model resnet50 --batch 8 --device a100 -o " + trace;
  ASSERT_EQ(run(base + " --compute-model op-class --fuse-norm-relu --conv-layout nchw").exit_code,
            0);
  EXPECT_NE(slurp(trace).find("op-class compute model (workloads/COMPUTE.md)"), std::string::npos);
  EXPECT_NE(slurp(trace).find("ReLU and add + ReLU fused"), std::string::npos);
  EXPECT_NE(slurp(trace).find("NCHW activations, transposed"), std::string::npos);
  auto refused = [&](const std::string& flags, const std::string& message) {
    fs::remove(trace);
    const Result r = run(base + flags);
    EXPECT_EQ(r.exit_code, 2) << flags;
    EXPECT_EQ(r.err, message);
    EXPECT_FALSE(fs::exists(trace)) << flags;
  };
  // The op-class knobs are refused with the roofline; bad values name their flag.
  const std::string roofline_only =
      "dtsim workload generate: --compute-model roofline: the GEMM efficiencies, fusions and "
      "layouts are the op-class model's (give --compute-model op-class)\n";
  refused(" --fuse-norm-relu", roofline_only);
  refused(" --conv-layout nchw", roofline_only);
  refused(" --compute-model op-class --conv-layout NHWC",
          "dtsim workload generate: --conv-layout NHWC: expected nhwc or nchw\n");
  refused(" --cuda-core-efficiency 0.6", roofline_only);
  refused(" --compute-model measured",
          "dtsim workload generate: --compute-model measured: expected roofline or "
          "op-class\n");
  refused(" --compute-model op-class --tensor-core-efficiency 0",
          "dtsim workload generate: --tensor-core-efficiency 0: expected a fraction in (0, "
          "1]\n");
  // The figure is the H200's; an A100's is 0.869 / 0.803 = 1.082 times it (the MAMF table,
  // workloads/roofline.cpp), so 0.95 would be 1.03 of the A100's peak: at most 1 / 1.082 = 0.924.
  refused(" --compute-model op-class --tensor-core-efficiency 0.95",
          "dtsim workload generate: --tensor-core-efficiency 0.95: on NVIDIA A100-SXM4-80GB that "
          "is 1.03 of its peak (the figure is the H200's, times this GPU's measured matmul share "
          "over the H200's, 1.08; workloads/COMPUTE.md): expected at most 0.924\n");
  fs::remove(trace);
  EXPECT_EQ(run(base + " --compute-model op-class --tensor-core-efficiency 0.92").exit_code, 0);
}

TEST_F(Cli, EveryOperationRunsFromTheCommandLine) {
  for (const char* op : {"all-reduce", "reduce-scatter", "all-gather", "broadcast", "reduce",
                         "all-to-all", "send-recv"}) {
    const std::string algorithm =
        std::string(op) == "all-to-all" || std::string(op) == "send-recv" ? "direct" : "ring";
    const Result r = run("collective " + kStar + " --ranks 4 --bytes 1MB --root 1 --op " + op +
                         " --algorithm " + algorithm + " --report " + report());
    EXPECT_EQ(r.exit_code, 0) << op << ": " << r.err;
    EXPECT_NE(slurp(report()).find(std::string("\"op\": \"") + op + "\""), std::string::npos);
  }
}

TEST_F(Cli, AlgorithmWithoutTheOperation) {
  expect_error("collective " + kStar + " --ranks 4 --bytes 1MB --op all-to-all --algorithm tree",
               "dtsim collective: --algorithm tree: tree has no all-to-all (it has all-reduce, "
               "broadcast and reduce)\n");
}

TEST_F(Cli, HalvingDoublingReduceScatterNeedsAPowerOfTwo) {
  expect_error("collective " + kStar +
                   " --ranks 6 --bytes 1MB --op reduce-scatter "
                   "--algorithm halving-doubling",
               "dtsim collective: --algorithm halving-doubling: halving-doubling reduce-scatter "
               "needs a power-of-two number of ranks, not 6 (all-reduce works for any number)\n");
}

TEST_F(Cli, BadGrid) {
  expect_error("collective " + kStar + " --ranks 4 --bytes 1MB --algorithm torus-2d --grid 2by2",
               "dtsim collective: --grid 2by2: expected XxY with X, Y >= 1, e.g. 8x16\n");
}

TEST_F(Cli, BadReplay) {
  expect_error("collective " + kStar + " --ranks 4 --bytes 1MB --replay quick",
               "dtsim collective: --replay quick: expected collapsed, fast or step\n");
}

TEST_F(Cli, PlacementAndSeedAreRecorded) {
  const std::string args = "collective " + kStar + " --ranks 4 --bytes 1MB --report " + report();
  ASSERT_EQ(run(args).exit_code, 0);
  EXPECT_NE(slurp(report()).find("\"rank_placement\": \"linear\","), std::string::npos);
  ASSERT_EQ(run(args + " --placement random:7").exit_code, 0);
  const std::string random = slurp(report());
  EXPECT_NE(random.find("\"rank_placement\": \"random\",\n  \"rank_placement_seed\": 7,"),
            std::string::npos);
}

TEST_F(Cli, BadPlacement) {
  expect_error("collective " + kStar + " --ranks 4 --bytes 1MB --placement random:x",
               "dtsim collective: --placement random:x: expected linear, round-robin, random, "
               "random:SEED (an integer >= 0) or topology-aware\n");
}

TEST_F(Cli, UnknownOperation) {
  expect_error("collective " + kStar + " --ranks 4 --bytes 1MB --op scan",
               "dtsim collective: --op scan: unknown operation (expected one of all-reduce, "
               "reduce-scatter, all-gather, broadcast, reduce, all-to-all, send-recv)\n");
}

TEST_F(Cli, ExportedXmlGivesTheSameAllReduce) {
  // A tapered fat-tree exported to SimGrid XML and read back: same hosts in the same order, so
  // the same ring all-reduce time (to the printed digits).
  const std::string xml = (dir_ / "taper.xml").string();
  ASSERT_EQ(run("platform export tests/testdata/sim_fat_tree16.json --xml -o " + xml).exit_code, 0);
  const Result from_json =
      run("collective --platform tests/testdata/sim_fat_tree16.json "
          "--ranks 16 --bytes 100MB");
  const Result from_xml = run("collective --platform " + xml + " --ranks 16 --bytes 100MB");
  ASSERT_EQ(from_xml.exit_code, 0) << from_xml.err;
  EXPECT_EQ(from_xml.out, from_json.out);
}

TEST_F(Cli, TorusDimensionsOfSizeOneAddNothing) {
  // SimGrid aborted on a torus with two dimensions of size 1 (and so did the tpu-torus preset
  // for a prime chip count). [4, 1, 1] is the ring of 4 hosts: a ring all-reduce there takes
  // 2(p-1) (alpha + S/(pB)) = 6 (1 us + 100 MB / (4 x 25 GB/s)) = 6.006 ms.
  const std::string torus = (dir_ / "torus_4x1x1.json").string();
  std::ofstream(torus) << R"({"topology": "torus", "dims": [4, 1, 1], "link_bandwidth": "25GBps", )"
                       << R"("link_latency": "1us"})";
  const Result r = run("collective --platform " + torus + " --ranks 4 --bytes 100MB");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.substr(0, r.out.find('\n') + 1),
            "dtsim collective: all-reduce of 95.37 MiB on 4 ranks, ring: 0.006006 s (bus "
            "bandwidth 24.98 GB/s)\n");
  // Exported to SimGrid XML, the same torus gives the same time (the export used to write the
  // size-1 dimensions, and SimGrid aborted reading them back).
  const std::string xml = (dir_ / "torus_4x1x1.xml").string();
  ASSERT_EQ(run("platform export " + torus + " --xml -o " + xml).exit_code, 0);
  const Result from_xml = run("collective --platform " + xml + " --ranks 4 --bytes 100MB");
  ASSERT_EQ(from_xml.exit_code, 0) << from_xml.err;
  EXPECT_EQ(from_xml.out, r.out);
  const std::string chips = (dir_ / "tpu7.json").string();
  std::ofstream(chips) << R"({"preset": "tpu-torus", "nodes": 7})";
  const Result seven = run("platform describe " + chips);
  ASSERT_EQ(seven.exit_code, 0) << seven.err;
  EXPECT_NE(seven.out.find("torus, 7 hosts"), std::string::npos) << seven.out;
}

TEST_F(Cli, XmlPlatformWithoutARouteOrWithABadLinkIsAnError) {
  // SimGrid segfaulted on the missing route and aborted on the negative bandwidth.
  expect_error("collective --platform tests/testdata/pf_xml_no_route.xml --ranks 3 --bytes 1MB",
               "dtsim collective: tests/testdata/pf_xml_no_route.xml: no route from host \"a\" to "
               "host \"c\" (declare a <route> between them with at least one link_ctn)\n");
  // Ranks 0 and 1 sit on hosts a and b, which have a route: that run is fine.
  EXPECT_EQ(run("collective --platform tests/testdata/pf_xml_no_route.xml --ranks 2 --bytes 1MB")
                .exit_code,
            0);
  // A background flow needs a route too (SimGrid aborted: "no connecting path").
  expect_error(
      "collective --platform tests/testdata/pf_xml_no_route_background.json --ranks 2 "
      "--bytes 1MB",
      "dtsim collective: tests/testdata/pf_xml_no_route_background.json: no route from "
      "host \"a\" to host \"c\" (declare a <route> between them with at least one "
      "link_ctn)\n");
  expect_error(
      "collective --platform tests/testdata/pf_xml_negative_bandwidth.xml --ranks 2 --bytes 1MB",
      "dtsim collective: tests/testdata/pf_xml_negative_bandwidth.xml: link \"ab\": expected a "
      "bandwidth > 0, got -1e+09 bytes/s\n");
}

TEST_F(Cli, SlowGpuFactorsThatMultiplyToInfinityAreAnError) {
  // Each factor is in range, but 52 of 1e6 for one rank multiply to 1e312 > DBL_MAX (SimGrid
  // aborted on the infinite duration).
  const std::string spec = (dir_ / "slow.json").string();
  std::ofstream out(spec);
  out << R"({"topology": "star", "hosts": 4, "link_bandwidth": "25GBps", "link_latency": "1us",)"
      << R"( "perturbations": {"slow_gpus": [)";
  for (int i = 0; i < 52; ++i) {
    out << (i > 0 ? ", " : "") << R"({"rank": 1, "compute_factor": 1e6})";
  }
  out << "]}}";
  out.close();
  expect_error("simulate " + kResnet + " --platform " + spec + " --ranks 2",
               "dtsim simulate: " + spec +
                   ": /perturbations/slow_gpus: the compute factors of rank 1 multiply to inf "
                   "(expected a finite number > 0)\n");
}

TEST_F(Cli, DescribeNamesLevelsAndBisection) {
  const Result r = run("platform describe platforms/files/fat_tree_256.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // 16 leaves x 16 hosts at 100 Gb/s = 12.5 GB/s: 256 * 12.5 / 2 = 1600 GB/s.
  EXPECT_EQ(r.out,
            "platform platforms/files/fat_tree_256.json: fat-tree, 256 hosts, 1025 SimGrid links\n"
            "  hosts -> level 1: 256 links of 12.5 GB/s, switches above 1:1 (down:up)\n"
            "  level 1 -> level 2: 256 links of 12.5 GB/s\n"
            "  bisection bandwidth 1600 GB/s per direction\n");
}

TEST_F(Cli, HgxH200NodeReducesInItsSwitchAndAutoPicksNvlsThere) {
  // The hgx-h200 preset's NVSwitch reduces (NVLink SHARP); describe says so, and plain auto
  // picks nvls for 1 GiB on its 8 GPUs: S(n+1)/n per GPU link beats the ring's 2S(n-1)/n
  // (nvls.h), while on the A100 node, whose switch does not reduce, nvls is skipped.
  const std::string h200 = (dir_ / "h200.json").string();
  std::ofstream(h200) << R"({"preset": "hgx-h200", "nodes": 1})";
  const Result described = run("platform describe " + h200);
  ASSERT_EQ(described.exit_code, 0) << described.err;
  EXPECT_NE(described.out.find("1 nodes of 8 GPUs, NVSwitch reducing in the network (nvls)\n"),
            std::string::npos)
      << described.out;
  const std::string args = " --ranks 8 --bytes 1GiB --algorithm auto --report " + report();
  ASSERT_EQ(run("collective --platform " + h200 + args).exit_code, 0);
  EXPECT_NE(slurp(report()).find("\"chosen\": \"nvls\""), std::string::npos) << slurp(report());
  const std::string a100 = (dir_ / "a100.json").string();
  std::ofstream(a100) << R"({"preset": "dgx-a100", "nodes": 1})";
  ASSERT_EQ(run("collective --platform " + a100 + args).exit_code, 0);
  const std::string a100_report = slurp(report());
  EXPECT_EQ(a100_report.find("\"chosen\": \"nvls\""), std::string::npos);
  EXPECT_NE(a100_report.find("nvls needs nodes whose NVSwitch reduces"), std::string::npos);
}

TEST_F(Cli, NvlsRefusesRanksThatThePlacementSpreadsOverNodes) {
  // 4 ranks fit in one 8-GPU node, but round-robin over 2 nodes puts rank 1 on node 1: nvls
  // used to run there anyway, as if one switch reduced for both nodes.
  const std::string h200 = (dir_ / "h200x2.json").string();
  std::ofstream(h200) << R"({"preset": "hgx-h200", "nodes": 2})";
  const std::string args = "collective --platform " + h200 + " --ranks 4 --bytes 64MB ";
  expect_error(args + "--algorithm nvls --placement round-robin",
               "dtsim collective: --algorithm nvls: nvls needs every rank on one NVSwitch node, "
               "and the placement puts rank 1 on node 1, rank 0 on node 0 (use --placement "
               "linear)\n");
  EXPECT_EQ(run(args + "--algorithm nvls --placement linear").exit_code, 0);
  ASSERT_EQ(run(args + "--algorithm auto --placement round-robin --report " + report()).exit_code,
            0);
  EXPECT_EQ(slurp(report()).find("\"chosen\": \"nvls\""), std::string::npos);
}

TEST_F(Cli, HierarchicalGroupsRanksByTheNodeThePlacementPutsThemOn) {
  // 16 ranks on two 8-GPU nodes: whichever ranks share a node, the schedule on the hosts is the
  // same (the nodes are alike), so every placement gives the linear time. Its "nodes" used to
  // be 8 consecutive ranks: under round-robin, rings across both nodes, 5.7x slower.
  const std::string a100 = (dir_ / "a100x2.json").string();
  std::ofstream(a100) << R"({"preset": "dgx-a100", "nodes": 2})";
  const std::string args = "collective --platform " + a100 +
                           " --ranks 16 --bytes 256MB --algorithm hierarchical --placement ";
  const Result linear = run(args + "linear");
  ASSERT_EQ(linear.exit_code, 0) << linear.err;
  EXPECT_EQ(run(args + "round-robin").out, linear.out);
  EXPECT_EQ(run(args + "random:5").out, linear.out);
}

TEST_F(Cli, DragonflyDescribesAndExportsToTheSameRing) {
  const Result r = run("platform describe tests/testdata/sim_dragonfly8.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Links, each split-duplex (2 SimGrid links): 8 host links, 1 green link in each group's
  // chassis, 1 blue link: 2 x (8 + 2 + 1) = 22, plus SimGrid's loopback. Bisection: the one
  // blue link, 25 GB/s.
  EXPECT_EQ(r.out,
            "platform tests/testdata/sim_dragonfly8.json: dragonfly, 8 hosts, 23 SimGrid links\n"
            "  hosts - routers: 8 links of 25 GB/s\n"
            "  intra-chassis (green): 2 links of 25 GB/s\n"
            "  inter-group (blue): 1 links of 25 GB/s\n"
            "  bisection bandwidth 25 GB/s per direction\n");
  // Per kind of link, as the spec gives them (host links 25, green 10, black 1, blue 5 GB/s).
  EXPECT_NE(run("platform describe tests/testdata/sim_dragonfly8_kinds.json")
                .out.find("  intra-chassis (green): 2 links of 10 GB/s\n"
                          "  inter-group (blue): 1 links of 5 GB/s\n"),
            std::string::npos);
  // A 4 x 4 torus: a link per host along each dimension, 2 x (16 + 16) + 1 SimGrid links.
  EXPECT_EQ(run("platform describe tests/testdata/sim_torus4x4.json").out,
            "platform tests/testdata/sim_torus4x4.json: torus, 16 hosts, 65 SimGrid links\n"
            "  torus x (4 hosts): 16 links of 25 GB/s\n"
            "  torus y (4 hosts): 16 links of 25 GB/s\n"
            "  bisection bandwidth 200 GB/s per direction\n");
  const std::string xml = (dir_ / "dragonfly.xml").string();
  ASSERT_EQ(run("platform export tests/testdata/sim_dragonfly8.json --xml -o " + xml).exit_code, 0);
  const Result from_json =
      run("collective --platform tests/testdata/sim_dragonfly8.json --ranks 8 --bytes 100MB");
  const Result from_xml = run("collective --platform " + xml + " --ranks 8 --bytes 100MB");
  ASSERT_EQ(from_xml.exit_code, 0) << from_xml.err;
  EXPECT_EQ(from_xml.out, from_json.out);
}

TEST_F(Cli, DescribeListsPerturbationsAndExportRefusesThem) {
  const Result r = run("platform describe platforms/files/fat_tree_256_degraded.json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(
      r.out.find(
          "  perturbations (not counted above): 1 slow-link entries, 0 failed links, 1 slow GPUs, "
          "1 background flows\n"),
      std::string::npos)
      << r.out;
  const Result e = run("platform export platforms/files/fat_tree_256_degraded.json --xml");
  EXPECT_EQ(e.exit_code, 2);
  EXPECT_EQ(e.err,
            "dtsim platform export: platforms/files/fat_tree_256_degraded.json: perturbations "
            "cannot be written into a SimGrid <cluster>; export the spec without its "
            "\"perturbations\" section\n");
}

TEST_F(Cli, MissingWorkloadFile) {
  expect_error("simulate --workload tests/testdata/no_such_trace.json " + kStar + " --ranks 2",
               "dtsim simulate: tests/testdata/no_such_trace.json: cannot open workload trace\n");
}

TEST_F(Cli, ADirectoryIsNotAnInputFile) {
  // These ended in "internal error: basic_filebuf::underflow" or SimGrid's flex scanner.
  const std::string dir = dir_.string();
  expect_error("simulate --workload " + dir + " " + kStar + " --ranks 2",
               "dtsim simulate: " + dir + ": a directory, not a workload trace\n");
  expect_error("simulate " + kResnet + " --platform " + dir + " --ranks 2",
               "dtsim simulate: " + dir + ": a directory, not a platform file\n");
  const std::string spec = (dir_ / "p.json").string();
  std::ofstream(spec) << R"({"topology": "xml", "file": "."})";
  expect_error("collective --platform " + spec + " --ranks 2 --bytes 1MB",
               "dtsim collective: " + spec + ": /file: \"" + dir + "/.\" is a directory, not a " +
                   "SimGrid XML platform\n");
}

TEST_F(Cli, MalformedJson) {
  expect_error(
      "simulate --workload tests/testdata/cli_malformed.json " + kStar + " --ranks 2",
      "dtsim simulate: tests/testdata/cli_malformed.json: [json.exception.parse_error.101] "
      "parse error at line 2, column 1: syntax error while parsing object key - unexpected "
      "end of input; expected string literal\n");
}

TEST_F(Cli, WrongTypesAreAllReportedWithTheirJsonPointer) {
  expect_error("simulate --workload tests/testdata/cli_wrong_type.json " + kStar + " --ranks 2",
               "dtsim simulate: tests/testdata/cli_wrong_type.json: /layers/0/forward_sec: "
               "expected a number, got string \"fast\"\n"
               "dtsim simulate: tests/testdata/cli_wrong_type.json: /layers/0/backward_sec: "
               "expected a finite number >= 0, got -1\n");
}

TEST_F(Cli, NegativeBandwidth) {
  expect_error(
      "collective --platform tests/testdata/cli_negative_bandwidth.json --ranks 2 "
      "--bytes 1MB",
      "dtsim collective: tests/testdata/cli_negative_bandwidth.json: /link_bandwidth: "
      "expected a bandwidth > 0 such as \"25GBps\" (bytes/s) or \"200Gbps\" (bits/s), got "
      "\"-25GBps\"\n");
}

TEST_F(Cli, ZeroBandwidth) {
  expect_error("collective --platform tests/testdata/cli_zero_bandwidth.json --ranks 2 --bytes 1MB",
               "dtsim collective: tests/testdata/cli_zero_bandwidth.json: /link_bandwidth: "
               "expected a bandwidth > 0 such as \"25GBps\" (bytes/s) or \"200Gbps\" (bits/s), got "
               "\"0GBps\"\n");
}

TEST_F(Cli, UnknownTopology) {
  expect_error(
      "collective --platform tests/testdata/cli_unknown_topology.json --ranks 2 "
      "--bytes 1MB",
      "dtsim collective: tests/testdata/cli_unknown_topology.json: /topology: unknown "
      "topology \"hypercube\" (expected one of star, fat-tree, torus, dragonfly, xml)\n");
}

TEST_F(Cli, EveryPlatformProblemAtOnce) {
  expect_error(
      "collective --platform tests/testdata/cli_wrong_types_platform.json --ranks 2 --bytes 1MB",
      "dtsim collective: tests/testdata/cli_wrong_types_platform.json: /levels: expected an "
      "integer >= 0, got string \"two\"\n"
      "dtsim collective: tests/testdata/cli_wrong_types_platform.json: /down/1: expected an "
      "integer between 1 and 16777216, got 0\n"
      "dtsim collective: tests/testdata/cli_wrong_types_platform.json: /link_bandwidth: expected "
      "a string, got number 25\n");
}

TEST_F(Cli, UnknownAlgorithm) {
  expect_error("collective " + kStar + " --ranks 2 --bytes 1MB --algorithm butterfly",
               "dtsim collective: --algorithm butterfly: unknown algorithm (expected one of ring, "
               "tree, double-tree, halving-doubling, recursive-doubling, direct, hierarchical, "
               "torus-2d, nvls, nvls-tree, file:PATH, auto, auto:NAME,NAME...)\n");
}

TEST_F(Cli, MoreRanksThanHosts) {
  expect_error("simulate " + kResnet + " " + kStar + " --ranks 17",
               "dtsim simulate: tests/testdata/sim_star16_25GBps.json: the platform has 16 hosts, "
               "fewer than --ranks 17\n");
}

TEST_F(Cli, MissingPlatformFile) {
  expect_error("simulate " + kResnet + " --platform tests/testdata/no_such_platform.json --ranks 2",
               "dtsim simulate: tests/testdata/no_such_platform.json: cannot open platform file\n");
}

TEST_F(Cli, BadSize) {
  expect_error("collective " + kStar + " --ranks 2 --bytes 12XB",
               "dtsim collective: --bytes 12XB: expected a size such as 1048576, 100MB or 1GiB\n");
}

TEST_F(Cli, SizesBeyondOnePebibyteAndBucketsBelowOneByte) {
  // 17,000,000 TB overflowed the collapsed ring's 64-bit byte sums (a bus bandwidth above the
  // links'); --bucket-mb 1e13 was silently clamped to 2^63 bytes, 1e-7 rounded to 0 bytes.
  expect_error("collective " + kStar + " --ranks 8 --bytes 17000000TB",
               "dtsim collective: --bytes 17000000TB: expected at most 2^50 bytes (1 PiB)\n");
  for (const auto& [given, shown] : {std::pair{"1e13", "1e+13"}, {"1e-7", "1e-07"}, {"0", "0"}}) {
    expect_error("simulate " + kResnet + " " + kStar + " --ranks 2 --bucket-mb " + given,
                 std::string("dtsim simulate: --bucket-mb ") + shown +
                     ": expected a size from 2^-20 MiB (1 byte) to 2^30 MiB (1 PiB)\n");
  }
}

TEST_F(Cli, ScheduleOfMoreThanTwentyMillionTransfersIsRefused) {
  // A chunked tree of 1 TB on 16 ranks: 2 x 16 x (1e12 / 512 KiB + 1) = 6.1e7 transfers.
  expect_error("collective " + kStar + " --ranks 16 --bytes 1TB --algorithm tree",
               "dtsim collective: --algorithm tree: all-reduce of 1000000000000 bytes on 16 "
               "ranks: about 6.1e+07 transfers to schedule (at most 2e7, ~5 GB); use a larger "
               "--chunk, --replay fast, or auto\n");
  // A ring broadcast is a chain of p - 1 edges, each carrying every chunk, even collapsed:
  // 15 x (2^40 / 2^19 + 1) = 3.1e7 (it ran out of memory).
  expect_error("collective " + kStar + " --ranks 16 --op broadcast --bytes 1TiB --algorithm ring",
               "dtsim collective: --algorithm ring: broadcast of 1099511627776 bytes on 16 ranks: "
               "about 3.15e+07 transfers to schedule (at most 2e7, ~5 GB); use a larger --chunk, "
               "or auto\n");
}

// Issue #21: --report naming the --workload file overwrote the input. No output (--report,
// --timeline, --link-report, --dump-graph) may name an input: refused before anything runs, the
// input left as it was.
TEST_F(Cli, NoOutputMayNameAnInput) {
  const fs::path workload = dir_ / "w.json";
  fs::copy_file("tests/testdata/sim_three_layers.json", workload);
  expect_error(
      "simulate --workload " + workload.string() + " " + kStar + " --ranks 2 --timeline " +
          workload.string(),
      "dtsim simulate: --workload " + workload.string() + ": the same file as --timeline\n");
  EXPECT_EQ(slurp(workload), slurp("tests/testdata/sim_three_layers.json"));
  const fs::path graph = dir_ / "g.json";
  fs::copy_file("tests/testdata/graph_pipeline_2stage.json", graph);
  expect_error(
      "simulate --graph " + graph.string() + " " + kStar + " --dump-graph " + graph.string(),
      "dtsim simulate: --graph " + graph.string() + ": the same file as --dump-graph\n");
  EXPECT_EQ(slurp(graph), slurp("tests/testdata/graph_pipeline_2stage.json"));
}

TEST_F(Cli, TwoOutputsInOneFileAndEndlessIterationsAreRefused) {
  // The timeline used to overwrite the report; 2e9 iterations allocated until killed.
  const std::string same = (dir_ / "." / "report.json").string();
  expect_error("simulate " + kResnet + " " + kStar + " --ranks 2 --timeline " + same,
               "dtsim simulate: --timeline " + same + ": the same file as --report\n");
  // Folded ranks, ResNet-50's 5 buckets of distinct sizes: the first iteration has 7 compute
  // tasks (forward, 5 backward segments, optimizer) and 5 all-reduces of 16 + 2 operations
  // (collapsed ring) between 2 joins: 107 tasks; every later one 7 + 5 memoized all-reduces of
  // 2 tasks (join, wait): 17. 107 + (2e9 - 1) x 17 = 3.4e10.
  expect_error("simulate " + kResnet + " " + kStar + " --ranks 16 --iterations 2000000000",
               "dtsim simulate: --iterations 2000000000: about 3.4e+10 tasks to replay, more than "
               "--max-tasks 5e+07; the last of 3 iterations is already the steady state\n");
  // The bound is the flag's: 107 + 2 x 17 = 141 tasks for 3 iterations, refused under 100.
  expect_error("simulate " + kResnet + " " + kStar + " --ranks 16 --max-tasks 100",
               "dtsim simulate: --iterations 3: about 141 tasks to replay, more than --max-tasks "
               "100; the last of 3 iterations is already the steady state\n");
}

TEST_F(Cli, ANamedAlgorithmStartingTooManyTransfersAtOnceIsRefused) {
  // A direct all-reduce of p ranks starts a reduce-scatter transfer from every rank to every
  // other at once: 16 x 15 = 240 (on 1024 ranks 1.05e6, 40 GB in the replay: it was killed).
  expect_error(
      "collective " + kStar + " --ranks 16 --bytes 1MB --algorithm direct --max-concurrent 100",
      "dtsim collective: --algorithm direct: all-reduce on 16 ranks starts about 240 "
      "transfers at once, more than --max-concurrent 100 (the replay holds each, about "
      "40 KB: 0.0096 GB); use ring, a tree or auto, or raise --max-concurrent\n");
  const Result r = run("collective " + kStar +
                       " --ranks 16 --bytes 1MB --algorithm direct --max-concurrent 240");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  expect_error("collective " + kStar + " --ranks 2 --bytes 1MB --max-concurrent 0",
               "dtsim collective: --max-concurrent 0: expected a number >= 1\n");
}

TEST_F(Cli, BadCollectiveLatency) {
  expect_error("collective " + kStar + " --ranks 2 --bytes 1MB --collective-latency -1us",
               "dtsim collective: --collective-latency -1us: expected a duration >= 0 such as "
               "8.4us\n");
}

TEST_F(Cli, BadAccumulationSteps) {
  expect_error("simulate " + kResnet + " " + kStar + " --ranks 2 --accumulation-steps 0",
               "dtsim simulate: --accumulation-steps 0: expected an integer >= 1\n");
}

TEST_F(Cli, OverlapIsSelectableAndRecorded) {
  const std::string args = "simulate " + kResnet + " " + kStar + " --ranks 4 --report " + report();
  Result r = run(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(slurp(report()).find("\"overlap\": \"backward\","), std::string::npos);
  EXPECT_EQ(r.out.find("--overlap none"), std::string::npos);
  r = run(args + " --overlap none");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(slurp(report()).find("\"overlap\": \"none\","), std::string::npos);
  EXPECT_NE(r.out.find("after the backward pass (--overlap none: all start after it)"),
            std::string::npos);
}

TEST_F(Cli, BadOverlap) {
  expect_error("simulate " + kResnet + " " + kStar + " --ranks 2 --overlap full",
               "dtsim simulate: --overlap full: expected backward or none\n");
}

TEST_F(Cli, MissingRequiredFlag) {
  expect_error("simulate " + kStar + " --ranks 2",
               "dtsim simulate: expected --workload W.json, --model NAME or --graph G.json (see "
               "dtsim simulate --help)\n");
}

}  // namespace
