// Issue #21: what a hostile user or a newcomer's mistake did to the dtsim binary (crashes,
// internal errors, silent loss of outputs, wrong blame, overlapping timeline slices), each found
// by a black-box run of the command line. Every test here failed before its fix.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_support.h"

namespace {

namespace fs = std::filesystem;

using dtsim::cli_test::Result;
using dtsim::cli_test::slurp;

const std::string kStar = "--platform tests/testdata/sim_star16_25GBps.json";
const std::string kThreeLayers = "--workload tests/testdata/sim_three_layers.json";

class Issue21 : public dtsim::cli_test::DtsimTest {
 protected:
  // Runs a failing command: exit code 2 (bad input, not a crash or an internal error), exactly
  // `message` on stderr, nothing on stdout.
  void expect_error(const std::string& args, const std::string& message) const {
    const Result r = run(args);
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_EQ(r.err, message) << args;
    EXPECT_EQ(r.out, "") << args;
  }

  [[nodiscard]] fs::path write(const std::string& name, const std::string& text) const {
    const fs::path path = dir_ / name;
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }

  // The names of the files in dir_ (dtsim's own "out" and "err" left out).
  [[nodiscard]] std::vector<std::string> files() const {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir_)) {
      const std::string name = entry.path().filename().string();
      if (name != "out" && name != "err") {
        names.push_back(name);
      }
    }
    std::sort(names.begin(), names.end());
    return names;
  }
};

// 100,000 nested arrays (a 200 KB file): rendering the value in the message recursed once per
// level and overflowed the stack (SIGSEGV) in every reader; the sweep reader also copied it.
TEST_F(Issue21, DeeplyNestedJsonIsALocatedErrorInEveryReader) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  const std::string nested = "array nested more than 32 levels deep";
  const fs::path workload = write("w.json", R"({"format_version": 1, "model": )" + deep + "}");
  const Result w = run("simulate --workload " + workload.string() + " " + kStar + " --ranks 2");
  EXPECT_EQ(w.exit_code, 2);
  EXPECT_TRUE(w.err.starts_with("dtsim simulate: " + workload.string() +
                                ": /model: expected a string, got " + nested + "\n"))
      << w.err;
  const fs::path platform = write("p.json", R"({"topology": )" + deep + "}");
  expect_error("simulate " + kThreeLayers + " --platform " + platform.string() + " --ranks 2",
               "dtsim simulate: " + platform.string() + ": /topology: expected a string, got " +
                   nested + "\n");
  const fs::path graph = write("g.json", R"({"format": )" + deep + "}");
  const Result g = run("simulate --graph " + graph.string() + " " + kStar);
  EXPECT_EQ(g.exit_code, 2);
  EXPECT_TRUE(g.err.starts_with("dtsim simulate: " + graph.string() +
                                ": /format: expected a string, got " + nested + "\n"))
      << g.err;
  const fs::path job = write("j.json", R"({"ranks": )" + deep + "}");
  expect_error("simulate --job " + job.string(),
               "dtsim simulate: " + job.string() +
                   ": /ranks: expected an integer from -2147483648 to 2147483647, got " + nested +
                   "\n");
  const fs::path sweep = write("s.json", R"({"vary": {"ranks": )" + deep + "}}");
  expect_error("sweep " + sweep.string() + " --out " + (dir_ / "r.csv").string(),
               "dtsim sweep: " + sweep.string() +
                   ": /vary/ranks/0/0: expected a string (one line) or a number, got " + nested +
                   "\n");
}

// 1e308 s overflowed the simulated clock: a null dereference while folding with auto (SIGSEGV),
// a SimGrid deadlock (internal error) otherwise. Every duration is at most 1e9 s
// (parsing::kMaxDurationSec).
TEST_F(Issue21, HugeCollectiveLatencyIsRefusedBeforeTheRun) {
  expect_error(
      "collective " + kStar + " --ranks 4 --bytes 1MB --algorithm auto --collective-latency 1e308s",
      "dtsim collective: --collective-latency 1e308s: expected at most 1e9 s\n");
  expect_error("simulate " + kThreeLayers + " " + kStar + " --ranks 4 --collective-latency 1e308s",
               "dtsim simulate: --collective-latency 1e308s: expected at most 1e9 s\n");
}

// SimGrid aborted the process (SIGABRT) on these platforms; its own message is now the error.
TEST_F(Issue21, XmlPlatformsSimGridAbortsOnAreLocatedErrors) {
  const std::string refused = ": SimGrid refused the platform: ";
  const std::string run = " --ranks 2 --bytes 1MB";
  const std::string routing = "tests/testdata/pf_xml_unknown_routing.xml";
  expect_error("collective --platform " + routing + run,
               "dtsim collective: " + routing + refused + "Not a valid model!\n");
  const std::string twice = "tests/testdata/pf_xml_duplicate_link.xml";
  expect_error("collective --platform " + twice + run,
               "dtsim collective: " + twice + refused +
                   "Link 'ab' declared several times in the platform.\n");
  const std::string radical = "tests/testdata/pf_xml_fat_tree_radical0.xml";
  expect_error("collective --platform " + radical + run,
               "dtsim collective: " + radical + refused +
                   "Zone(ft): error when creating host number 1 in the zone. Insufficient number "
                   "of radicals available (total = 1). Check the 'radical' parameter in XML\n");
}

// A host id with the byte 0xFF ran the whole simulation, then failed to write the report as
// JSON (internal error, exit 1, only with --report).
TEST_F(Issue21, XmlNameThatIsNotUtf8IsRefusedBeforeTheRun) {
  const std::string report = (dir_ / "r.json").string();
  for (const std::string platform :
       {"tests/testdata/pf_xml_invalid_utf8.xml", "tests/testdata/pf_xml_utf8.json"}) {
    expect_error("collective --platform " + platform + " --ranks 2 --bytes 1MB --report " + report,
                 "dtsim collective: tests/testdata/pf_xml_invalid_utf8.xml: host \"a\\xFF\": the "
                 "name is not valid UTF-8\n");
  }
  expect_error("collective " + kStar + " --ranks 2 --bytes 1MB --placement $(printf 'x\\377')",
               "dtsim collective: argument \"x\\xFF\": not valid UTF-8 (reports are JSON, which "
               "must be)\n");
  EXPECT_FALSE(fs::exists(report));
}

// A path component over 255 bytes made std::filesystem throw: an internal error (exit 1).
TEST_F(Issue21, OverlongFileNamesAreLocatedErrors) {
  const std::string name = std::string(300, 'a') + ".json";
  const std::string report = (dir_ / name).string();
  expect_error("collective " + kStar + " --ranks 2 --bytes 1MB --report " + report,
               "dtsim collective: --report " + report.substr(0, 64) +
                   "...: a file name longer than 255 bytes\n");
  expect_error("simulate --workload " + report + " " + kStar + " --ranks 2",
               "dtsim simulate: " + report + ": cannot open workload trace (File name too long)\n");
}

// The report was written to a stream checked before it was flushed: on a full disk, exit 0 and
// an empty file. /dev/full fails every write with ENOSPC; a device is written in place.
TEST_F(Issue21, OutputOnAFullDeviceIsAnError) {
  expect_error("collective " + kStar + " --ranks 2 --bytes 1MB --report /dev/full",
               "dtsim collective: --report /dev/full: cannot write (No space left on device)\n");
  expect_error("simulate " + kThreeLayers + " " + kStar + " --ranks 2 --timeline /dev/full",
               "dtsim simulate: --timeline /dev/full: cannot write (No space left on device)\n");
}

// Larger outputs exited 2 but left an empty (truncated) file. A file-size limit (RLIMIT_FSIZE,
// `ulimit -f 1`: 1 KiB; SIGXFSZ ignored so that write() fails with EFBIG) stands in for a disk
// that fills up during the write: the old report stays as it was, no temporary file is left.
TEST_F(Issue21, OutputOverTheFileSizeLimitLeavesNothingBehind) {
  const fs::path report = write("r.json", "old report\n");
  const std::string cmd = "trap '' XFSZ; ulimit -f 1; " + std::string(DTSIM_BINARY) +
                          " simulate --workload workloads/traces/resnet50_v100_b32.json " + kStar +
                          " --ranks 2 --report " + report.string() + " >/dev/null 2>" +
                          (dir_ / "err").string();
  const int status = std::system(("sh -c \"" + cmd + "\"").c_str());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 2) << status;
  EXPECT_EQ(slurp(dir_ / "err"),
            "dtsim simulate: --report " + report.string() + ": cannot write (File too large)\n");
  EXPECT_EQ(slurp(report), "old report\n");
  EXPECT_EQ(files(), std::vector<std::string>{"r.json"});
}

// `--report ""` was ignored as if absent: the run succeeded and wrote nothing.
TEST_F(Issue21, EmptyOutputPathIsRefused) {
  expect_error("collective " + kStar + " --ranks 2 --bytes 1MB --report ''",
               "dtsim collective: --report: expected a value, got an empty text\n");
  expect_error("simulate " + kThreeLayers + " " + kStar + " --ranks 2 --timeline ''",
               "dtsim simulate: --timeline: expected a value, got an empty text\n");
}

// Only simulate's own flags were compared: collective and platform export overwrote the platform,
// and simulate the SimGrid XML file a platform spec names.
TEST_F(Issue21, NoOutputMayNameAnInputOfAnyVerb) {
  const fs::path platform = dir_ / "p.json";
  fs::copy_file("tests/testdata/sim_star16_25GBps.json", platform);
  const std::string original = slurp(platform);
  expect_error(
      "collective --platform " + platform.string() + " --ranks 2 --bytes 1MB --report " +
          platform.string(),
      "dtsim collective: --platform " + platform.string() + ": the same file as --report\n");
  expect_error(
      "platform export " + platform.string() + " --xml -o " + platform.string(),
      "dtsim platform export: --platform " + platform.string() + ": the same file as --output\n");
  EXPECT_EQ(slurp(platform), original);
  fs::copy_file("tests/testdata/pf_cluster.xml", dir_ / "pf_cluster.xml");
  fs::copy_file("tests/testdata/pf_xml.json", dir_ / "pf_xml.json");
  const std::string xml = (dir_ / "pf_cluster.xml").string();
  expect_error("simulate " + kThreeLayers + " --platform " + (dir_ / "pf_xml.json").string() +
                   " --ranks 2 --report " + xml,
               "dtsim simulate: --platform file " + xml + ": the same file as --report\n");
  EXPECT_EQ(slurp(xml), slurp("tests/testdata/pf_cluster.xml"));
}

// forward_sec 1e300 ran and printed a 300-digit iteration time; 1e308 + 1e308 overflowed, and
// the error blamed the platform's /perturbations/slow_gpus, which the platform did not have.
TEST_F(Issue21, TraceTimesBeyondABillionSecondsAreRefusedAgainstTheTrace) {
  expect_error("simulate --workload tests/testdata/wl_forward_1e300.json " + kStar + " --ranks 2",
               "dtsim simulate: tests/testdata/wl_forward_1e300.json: /layers/0/forward_sec: "
               "expected at most 1e9 s, got 1e+300\n");
  expect_error("simulate --workload tests/testdata/wl_time_overflow.json " + kStar + " --ranks 2",
               "dtsim simulate: tests/testdata/wl_time_overflow.json: /layers/0/forward_sec: "
               "expected at most 1e9 s, got 1e+308\n"
               "dtsim simulate: tests/testdata/wl_time_overflow.json: /layers/0/backward_sec: "
               "expected at most 1e9 s, got 1e+308\n");
}

// Slices were written as ts = start * 1e6 and dur = (end - start) * 1e6: ts + dur overshot the
// next slice's ts by ~1e-10 us, and a trace viewer drew a rank's compute track as a staircase
// of nested slices. On a binary grid (timeline.h) ts + dur is exact: no slice of a track may
// start before the previous one ends.
TEST_F(Issue21, TimelineSlicesOfATrackDoNotOverlap) {
  const fs::path timeline = dir_ / "t.json";
  const Result r = run("simulate --workload workloads/traces/resnet50_v100_b32.json " + kStar +
                       " --ranks 2 --timeline " + timeline.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto trace = nlohmann::json::parse(slurp(timeline));
  std::map<std::pair<int, int>, double> track_end;  // (pid, tid) -> end of its last slice
  int slices = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] != "X") {
      continue;
    }
    const auto track = std::pair{e["pid"].get<int>(), e["tid"].get<int>()};
    const double ts = e["ts"].get<double>();
    if (track_end.contains(track)) {
      EXPECT_GE(ts, track_end[track]) << e.dump();
    }
    track_end[track] = ts + e["dur"].get<double>();
    ++slices;
  }
  EXPECT_GT(slices, 1000);  // ResNet-50's 161 layers forward and backward, 3 iterations, 2 ranks
}

// Accepted inputs whose cost grew without bound, each now refused before anything runs with its
// estimate and the flag that allows it (sim/run/work_limits.h). A layer of 1e6 s with a
// background transfer every 10 ms: 3 iterations are 3e8 transfers (about 1.5 h); a star of 1e6
// hosts for 4 ranks: over 30 s and 2 GB to build.
TEST_F(Issue21, RunsBeyondTheWorkLimitsAreRefusedWithTheirEstimate) {
  const std::string background = "tests/testdata/sim_star4_background_periodic.json";
  expect_error("simulate --workload tests/testdata/wl_long_layer.json --platform " + background +
                   " --ranks 4",
               "dtsim simulate: " + background +
                   ": /perturbations/background/0: a transfer every 0.01 s for at least 3e+06 s (3 "
                   "iterations of tests/testdata/wl_long_layer.json): about 3e+08 transfers, more "
                   "than --max-events 1e+06 (--max-events 3.1e+08 allows it)\n");
  // The graph's longest program computes 25 ms: 2.5 transfers of the flow every 10 ms.
  expect_error("simulate --graph tests/testdata/graph_pipeline_2stage.json --platform " +
                   background + " --max-events 2",
               "dtsim simulate: " + background +
                   ": /perturbations/background/0: a transfer every 0.01 s for at least 0.025 s "
                   "(the compute or collective latencies of "
                   "tests/testdata/graph_pipeline_2stage.json): about 2.5 "
                   "transfers, more than --max-events 2 (--max-events 2.5 allows it)\n");
  // The estimate is a lower bound: the pipeline's communication makes the run longer than its
  // compute, so the flow needs more than 2.5 transfers, which the run itself then refuses.
  expect_error("simulate --graph tests/testdata/graph_pipeline_2stage.json --platform " +
                   background + " --max-events 2.5",
               "dtsim simulate: " + background +
                   ": /perturbations/background/0: the periodic background flows reached "
                   "--max-events 2.5 transfers at t = 0.02 s, before the job ended (its "
                   "communication outlasts the estimate from compute); a larger --max-events "
                   "allows more, each costing about 5-20 us\n");
  EXPECT_EQ(run("simulate --graph tests/testdata/graph_pipeline_2stage.json --platform " +
                background + " --max-events 10")
                .exit_code,
            0);
  const std::string star = "tests/testdata/pf_star_1m_hosts.json";
  expect_error("simulate " + kThreeLayers + " --platform " + star + " --ranks 4",
               "dtsim simulate: " + star +
                   ": 1000000 hosts, more than --max-hosts 131072 (building them takes about 2.4 "
                   "GB and 30 s; --max-hosts 1000000 allows it)\n");
  expect_error("collective " + kStar + " --ranks 2 --bytes 1MB --max-events 0",
               "dtsim collective: --max-events 0: expected a number >= 1\n");
}

TEST_F(Issue21, RunsWhoseCommunicationOutlastsTheComputeEnd) {
  // experiments/fuzz/README.md's two hangs: a periodic background flow (every 10 ms) in a run
  // whose length comes from communication, which the estimate from compute missed.
  const std::string background = "tests/testdata/sim_star4_background_periodic.json";
  // Refused before the run: at least one all-reduce of 1e9 s per iteration, 3 iterations.
  expect_error(
      "simulate --workload tests/testdata/sim_three_layers.json --platform " + background +
          " --ranks 4 --collective-latency 1e9s",
      "dtsim simulate: " + background +
          ": /perturbations/background/0: a transfer every 0.01 s for at least 3e+09 s (3 "
          "iterations of tests/testdata/sim_three_layers.json): about 3e+11 transfers, more "
          "than --max-events 1e+06 (--max-events 3.1e+11 allows it)\n");
  // A petabyte takes 40,000 s at 25 GB/s; no estimate before the run: the flow stops after
  // --max-events transfers (10 s of it) and the run is refused after it.
  expect_error("collective --platform " + background +
                   " --ranks 4 --bytes 1PiB --replay step --max-events 1000",
               "dtsim collective: " + background +
                   ": /perturbations/background/0: the periodic background flows reached "
                   "--max-events 1000 transfers at t = 10 s, before the job ended (its "
                   "communication outlasts the estimate from compute); a larger --max-events "
                   "allows more, each costing about 5-20 us\n");
  // The CLI mutator's hang (experiments/fuzz/README.md): one collective of 1e9 s of software
  // latency, refused before the run instead of after 10^6 background transfers.
  expect_error(
      "collective --platform " + background + " --ranks 3 --bytes 1 --collective-latency 1e9s",
      "dtsim collective: " + background +
          ": /perturbations/background/0: a transfer every 0.01 s for at least 1e+09 s "
          "(the collective latency of one all-reduce): about 1e+11 transfers, more than "
          "--max-events 1e+06 (--max-events 1e+11 allows it)\n");
}

TEST_F(Issue21, MicroBatchCountsNoJobRunsAreRefusedBeforeTheyAreListed) {
  // The CLI mutator's internal error (experiments/fuzz/README.md): 2^31 - 1 sequences of one
  // made as many micro-batches, and the memory model's pipeline order ran out of memory listing
  // them (std::bad_alloc, exit 1). The bound is 10^6 per replica and step (README, "Limits").
  for (const std::string verb : {"memory", "simulate"}) {
    expect_error(verb +
                     " --model gpt3-1.3b --global-batch 2147483647 --platform "
                     "tests/testdata/dgx_a100_2nodes.json --ranks 1",
                 "dtsim " + verb +
                     ": --global-batch 2147483647: 2147483647 micro-batches of 1 per replica "
                     "and step, more than 1000000 (a larger --micro-batch makes fewer)\n");
  }
  // 10^6 is still taken: one replica, a million micro-batches of one, memory only.
  EXPECT_EQ(run("memory --model gpt3-1.3b --global-batch 1000000").exit_code, 0);
}

// Issue #21, item 5: a report says where it comes from. The digests are sha256sum's of the
// files; the versions are this build's (CMake's project version, Debian's SimGrid 3.32).
TEST_F(Issue21, ReportHasItsProvenanceAndIsByteIdenticalAcrossRuns) {
  const std::string args =
      "simulate " + kThreeLayers + " --platform tests/testdata/pf_xml.json --ranks 2 --report ";
  const fs::path first = dir_ / "r1.json", second = dir_ / "r2.json";
  ASSERT_EQ(run(args + first.string()).exit_code, 0);
  ASSERT_EQ(run(args + second.string()).exit_code, 0);
  EXPECT_EQ(slurp(first), slurp(second));
  const auto provenance = nlohmann::ordered_json::parse(slurp(first))["provenance"];
  EXPECT_EQ(provenance["dtsim_version"], "0.1.0");
  EXPECT_EQ(provenance["simgrid_version"], "3.32.0");
  const std::string commit = provenance["git_commit"].get<std::string>();
  const bool from_git = commit.size() >= 40 && commit.find_first_not_of("0123456789abcdef") >= 40 &&
                        (commit.size() == 40 || commit.substr(40) == "-dirty");
  EXPECT_TRUE(from_git || commit == "unknown (not built from a git checkout)") << commit;
  EXPECT_EQ(provenance["inputs"].dump(),
            R"([{"flag":"workload","path":"tests/testdata/sim_three_layers.json","sha256":)"
            R"("7337ed4828d00890788eeff9149ceb48a0dd7e4df9538da6f6f8ac19953cfeab"},)"
            R"({"flag":"platform","path":"tests/testdata/pf_xml.json","sha256":)"
            R"("ade2f184d193d30d416bb905522661ca3f60405043c697a16f06b84527fc5fc1"},)"
            R"({"flag":"platform file","path":"tests/testdata/pf_cluster.xml","sha256":)"
            R"("ad5f2ee059046c00492dc7b90f35bf934a74975b52bf96b744ebaf6aee3eb9a1"}])");
}

}  // namespace
