// `dtsim sweep` as a user runs it: rows equal direct `dtsim simulate` runs, failures recorded,
// resume, Slurm emission, verbatim errors. DTSIM_BINARY is set by CMake.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_support.h"
#include <sys/wait.h>

namespace {

namespace fs = std::filesystem;

using dtsim::cli_test::Result;
using dtsim::cli_test::slurp;

void spit(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::istringstream in(text);
  for (std::string part; std::getline(in, part, sep);) {
    parts.push_back(part);
  }
  return parts;
}

class Sweep : public dtsim::cli_test::DtsimTest {
 protected:
  [[nodiscard]] std::string csv() const { return (dir_ / "results.csv").string(); }
};

const std::string kFourPoints = "tests/testdata/sweep_four_points.json";

TEST_F(Sweep, EachRowEqualsADirectSimulateOfItsPoint) {
  const Result r = run("sweep " + kFourPoints + " --jobs 2 --out " + csv());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto lines = split(slurp(csv()), '\n');
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(lines[0],
            "point,ranks,algorithm,status,iteration_time_sec,compute_sec,exposed_comm_sec,"
            "scaling_efficiency,samples_per_sec_per_device,limiter,limiter_level,error");
  // Product order, the last key fastest: (2, ring), (2, tree), (4, ring), (4, tree).
  const std::vector<std::pair<std::string, std::string>> points{
      {"2", "ring"}, {"2", "tree"}, {"4", "ring"}, {"4", "tree"}};
  for (std::size_t i = 0; i < points.size(); ++i) {
    const auto row = split(lines[i + 1], ',');
    ASSERT_EQ(row.size(), 11u) << lines[i + 1];  // the empty error column ends the line
    EXPECT_EQ(row[0], std::to_string(i));
    EXPECT_EQ(row[1], points[i].first);
    EXPECT_EQ(row[2], points[i].second);
    EXPECT_EQ(row[3], "ok");
    const std::string report = (dir_ / "direct.json").string();
    const Result direct =
        run("simulate --workload tests/testdata/sim_three_layers.json --platform "
            "tests/testdata/sim_star16_25GBps.json --iterations 2 --ranks " +
            points[i].first + " --algorithm " + points[i].second + " --report " + report);
    ASSERT_EQ(direct.exit_code, 0) << direct.err;
    const auto result = nlohmann::ordered_json::parse(slurp(report))["result"];
    EXPECT_EQ(row[4], result["iteration_time_sec"].dump());
    EXPECT_EQ(row[5], result["compute_sec"].dump());
    EXPECT_EQ(row[6], result["exposed_comm_sec"].dump());
    EXPECT_EQ(row[7], result["scaling_efficiency"].dump());
    EXPECT_EQ(row[8], result["samples_per_sec_per_device"].dump());
    EXPECT_EQ(row[9], result["limiter"]["kind"].get<std::string>());
  }
}

// A sweep of execution graphs (--graph): the columns a graph's report has are filled, the
// others (efficiency, samples/s, limiter) left empty. Two all-reduces of 8 bytes one after the
// other on 2 ranks, 1 ms per link: 2 x 2(p-1) x 2 ms = 8 ms with unbounded bandwidth, the same
// plus 2 x 8 B / 1 GB/s = 16 ns with sim_star2_1ms.json's 1 GB/s.
TEST_F(Sweep, GraphPointsFillTheColumnsTheirReportHas) {
  const Result r = run("sweep tests/testdata/sweep_graph.json --out " + csv());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto lines = split(slurp(csv()), '\n');
  ASSERT_EQ(lines.size(), 3u);
  for (std::size_t i = 1; i < 3; ++i) {
    const auto row = split(lines[i], ',');
    ASSERT_EQ(row.size(), 10u) << lines[i];  // platform, status, 3 times, then empty columns
    EXPECT_EQ(row[2], "ok");
    EXPECT_NEAR(std::stod(row[3]), 8e-3, 1e-7) << lines[i];
    EXPECT_EQ(std::stod(row[4]), 0.0);  // no compute in the graph
    EXPECT_EQ(row[6] + row[7] + row[8] + row[9], "");
  }
}

TEST_F(Sweep, SameCsvWhateverTheJobs) {
  const Result r = run("sweep " + kFourPoints + " --jobs 4 --out " + csv());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "dtsim sweep: 4 points -> " + csv() + "\n");
  const std::string serial = (dir_ / "serial.csv").string();
  ASSERT_EQ(run("sweep " + kFourPoints + " --jobs 1 --out " + serial).exit_code, 0);
  EXPECT_EQ(slurp(csv()), slurp(serial));
}

TEST_F(Sweep, BadJobs) {
  const Result r = run("sweep " + kFourPoints + " --jobs 0 --out " + csv());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "dtsim sweep: --jobs 0: expected an integer >= 1\n");
  EXPECT_FALSE(fs::exists(csv()));
}

// Every point has its line, and the exit status says one failed (it used to be 0, hiding the
// failure from scripts); a --resume of the complete file still says so.
TEST_F(Sweep, AFailedPointIsRecordedWithItsErrorAndTheSweepExitsOne) {
  const Result r = run("sweep tests/testdata/sweep_failing_point.json --jobs 2 --out " + csv());
  ASSERT_EQ(r.exit_code, 1) << r.err;
  const auto lines = split(slurp(csv()), '\n');
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[1].substr(0, 7), "0,2,ok,");
  EXPECT_EQ(lines[2],
            "1,100,failed (exit 2),,,,,,,,\"dtsim simulate: tests/testdata/sim_star16_25GBps.json: "
            "the platform has 16 hosts, fewer than --ranks 100\"");
  EXPECT_NE(r.err.find("2/2 points, 1 failed"), std::string::npos) << r.err;
  EXPECT_NE(
      r.err.find("dtsim sweep: 1 of 2 points failed (their lines in " + csv() + " say why)\n"),
      std::string::npos)
      << r.err;
  const std::string complete = slurp(csv());
  const Result resumed =
      run("sweep tests/testdata/sweep_failing_point.json --resume --out " + csv());
  EXPECT_EQ(resumed.exit_code, 1) << resumed.err;
  EXPECT_EQ(slurp(csv()), complete);
}

TEST_F(Sweep, ResumeRunsOnlyMissingPointsAndGivesTheSameCsv) {
  ASSERT_EQ(run("sweep " + kFourPoints + " --jobs 2 --out " + csv()).exit_code, 0);
  const std::string complete = slurp(csv());
  // The last row deleted, as if the sweep had been killed before it finished.
  spit(csv(), complete.substr(0, complete.rfind('\n', complete.size() - 2) + 1));
  Result r = run("sweep " + kFourPoints + " --jobs 2 --resume --out " + csv());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(slurp(csv()), complete);
  EXPECT_EQ(r.err.find("3/4"), std::string::npos) << "only point 3 should have run: " << r.err;
  // A torn last line (a kill in the middle of a write) is dropped and its point rerun.
  spit(csv(), complete.substr(0, complete.size() - 20));
  r = run("sweep " + kFourPoints + " --resume --out " + csv());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(slurp(csv()), complete);
}

TEST_F(Sweep, KilledThenResumedLosesAndDuplicatesNothing) {
  // Killed (SIGKILL) once its first point is in; whenever the kill lands, the file holds whole
  // lines only, and --resume completes it to what an uninterrupted sweep writes. (TMPDIR: the
  // killed sweep cannot remove its temporary directory.)
  const std::string full = (dir_ / "full.csv").string();
  ASSERT_EQ(run("sweep " + kFourPoints + " --jobs 1 --out " + full).exit_code, 0);
  const std::string script = "TMPDIR=" + dir_.string() + " " + std::string(DTSIM_BINARY) +
                             " sweep " + kFourPoints + " --jobs 1 --out " + csv() +
                             " 2>/dev/null & pid=$!; for i in $(seq 6000); do "
                             "[ \"$(cat " +
                             csv() +
                             " 2>/dev/null | wc -l)\" -ge 2 ] && break; sleep 0.01; done; "
                             "kill -9 $pid; wait $pid; true";
  ASSERT_EQ(std::system(script.c_str()), 0);
  const std::string partial = slurp(csv());
  EXPECT_EQ(partial.back(), '\n');
  const Result r = run("sweep " + kFourPoints + " --jobs 2 --resume --out " + csv());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(slurp(csv()), slurp(full));
}

// The pids of live processes whose command line mentions `text`.
std::vector<std::string> processes_mentioning(const std::string& text) {
  std::vector<std::string> pids;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) {
      continue;
    }
    std::string cmdline = slurp(entry.path() / "cmdline");
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    if (cmdline.find(text) != std::string::npos) {
      pids.push_back(name + ": " + cmdline);
    }
  }
  return pids;
}

// SIGINT (Ctrl-C) or SIGTERM while points run (about 1.5 s each): the sweep stops its
// `dtsim simulate` children, removes its temporary folder, exits 128 + the signal's number, and
// leaves only whole lines, which --resume completes.
TEST_F(Sweep, SigintAndSigtermStopTheChildrenAndRemoveTheTemporaryFolder) {
  const std::string slow = "tests/testdata/sweep_slow_points.json";
  for (const auto& [signal, code] : {std::pair{"INT", 130}, std::pair{"TERM", 143}}) {
    const fs::path tmp = dir_ / ("tmp-" + std::string(signal));
    fs::create_directories(tmp);
    const std::string out = (dir_ / (std::string(signal) + ".csv")).string();
    // Signalled once both children have started (their stderr files exist).
    const std::string script = "TMPDIR=" + tmp.string() + " " + DTSIM_BINARY + " sweep " + slow +
                               " --jobs 2 --out " + out + " 2>" + (dir_ / "err").string() +
                               " & pid=$!; for i in $(seq 3000); do " + "[ $(ls " + tmp.string() +
                               "/dtsim-sweep-*/*.err 2>/dev/null | wc -l) -ge 2 ] && break; " +
                               "sleep 0.01; done; kill -" + signal + " $pid; wait $pid; exit $?";
    const int status = std::system(script.c_str());
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), code) << signal;
    EXPECT_TRUE(fs::is_empty(tmp)) << signal << ": the temporary folder is left behind";
    EXPECT_EQ(processes_mentioning(tmp.string()), std::vector<std::string>{}) << signal;
    EXPECT_NE(slurp(dir_ / "err")
                  .find("dtsim sweep: SIG" + std::string(signal) +
                        ": stopped; the points that ended are in " + out +
                        " (--resume runs the others)\n"),
              std::string::npos)
        << slurp(dir_ / "err");
    const std::string partial = slurp(out);
    EXPECT_EQ(partial.back(), '\n');
    EXPECT_LT(std::count(partial.begin(), partial.end(), '\n'), 5) << "every point ended";
  }
}

// SIGKILL at several moments of the same sweep (before the first point ended, after some,
// near the end), resuming the same file each time: after every kill the file holds whole lines
// of distinct points, each one a line of the uninterrupted run; the last --resume gives that
// run's file byte for byte.
TEST_F(Sweep, KilledAtSeveralMomentsAndResumedEachTimeLosesAndDuplicatesNothing) {
  const std::string eight = "tests/testdata/sweep_eight_points.json";
  const std::string full = (dir_ / "full.csv").string();
  ASSERT_EQ(run("sweep " + eight + " --jobs 2 --out " + full).exit_code, 0);
  const std::string complete = slurp(full);
  const auto full_lines = split(complete, '\n');
  for (int lines_before_kill : {1, 2, 4, 7}) {  // 1: the header only
    const std::string script =
        "TMPDIR=" + dir_.string() + " " + DTSIM_BINARY + " sweep " + eight +
        " --jobs 2 --resume --out " + csv() + " 2>/dev/null & pid=$!; for i in $(seq 6000); do " +
        "[ \"$(cat " + csv() + " 2>/dev/null | wc -l)\" -ge " + std::to_string(lines_before_kill) +
        " ] && break; sleep 0.002; done; kill -9 $pid; " + "wait $pid; true";
    ASSERT_EQ(std::system(script.c_str()), 0);
    const std::string partial = slurp(csv());
    ASSERT_FALSE(partial.empty());
    EXPECT_EQ(partial.back(), '\n') << lines_before_kill;
    std::set<std::string> points;
    for (const std::string& line : split(partial, '\n')) {
      EXPECT_NE(std::find(full_lines.begin(), full_lines.end(), line), full_lines.end()) << line;
      EXPECT_TRUE(points.insert(line.substr(0, line.find(','))).second) << "twice: " << line;
    }
  }
  const Result r = run("sweep " + eight + " --jobs 2 --resume --out " + csv());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(slurp(csv()), complete);
}

TEST_F(Sweep, ExistingResultsNeedResume) {
  spit(csv(), "anything\n");
  Result r = run("sweep " + kFourPoints + " --out " + csv());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "dtsim sweep: --out " + csv() + ": the file exists (--resume continues it)\n");
  r = run("sweep " + kFourPoints + " --resume --out " + csv());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "dtsim sweep: --resume: " + csv() +
                       " does not start with this sweep's header (the results of another "
                       "sweep?)\n");
  EXPECT_EQ(slurp(csv()), "anything\n");
}

TEST_F(Sweep, EmitSlurmRefusesOut) {
  // --out used to be ignored silently: the Slurm jobs write their own results.
  const std::string slurm = (dir_ / "slurm").string();
  const Result r = run("sweep " + kFourPoints + " --emit-slurm " + slurm + " --out " + csv());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "dtsim sweep: --out " + csv() +
                       ": not with --emit-slurm (the Slurm jobs write the results; see their "
                       "script)\n");
  EXPECT_FALSE(std::filesystem::exists(slurm));
}

TEST_F(Sweep, SlurmFlagsNeedSlurm) {
  Result r = run("sweep " + kFourPoints + " --partition debug --out " + csv());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "dtsim sweep: --partition: only with --slurm\n");
  r = run("sweep " + kFourPoints + " --max-parallel 2 --out " + csv());
  EXPECT_EQ(r.err, "dtsim sweep: --max-parallel: only with --slurm\n");
  r = run("sweep " + kFourPoints + " --slurm --emit-slurm " + (dir_ / "s").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "dtsim sweep: --slurm: not with --emit-slurm (one submits, the other writes a "
            "script)\n");
  EXPECT_FALSE(fs::exists(csv()));
}

// Without sbatch on PATH, --slurm fails before anything runs, and says why.
TEST_F(Sweep, SlurmWithoutSbatchSaysSo) {
  const std::string cmd = "PATH=/nonexistent " + std::string(DTSIM_BINARY) + " sweep " +
                          kFourPoints + " --slurm --out " + csv() + " 2>" + (dir_ / "e").string();
  const int status = std::system(cmd.c_str());
  EXPECT_EQ(WEXITSTATUS(status), 2);
  EXPECT_EQ(slurp(dir_ / "e"), "dtsim sweep: --slurm: sbatch " + csv() +
                                   ".slurm/sweep.sbatch failed: cannot run sbatch (No such file "
                                   "or directory)\n");
  EXPECT_FALSE(fs::exists(csv()));
}

TEST_F(Sweep, HelpCannotBeSetInASweep) {
  const std::string spec = (dir_ / "help.json").string();
  std::ofstream(spec) << R"({"fixed": {"help": "yes"}, "vary": {}})";
  const Result r = run("sweep " + spec + " --out " + csv());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "dtsim sweep: " + spec +
                       ": /fixed/help: --help cannot be set in a sweep (it runs nothing)\n");
}

TEST_F(Sweep, BadSweepFileNamesEveryJsonPath) {
  const Result r = run("sweep tests/testdata/sweep_bad.json --out " + csv());
  EXPECT_EQ(r.exit_code, 2);
  const std::string f = "dtsim sweep: tests/testdata/sweep_bad.json: ";
  EXPECT_EQ(
      r.err,
      f + "/extra: unknown key (expected fixed, vary)\n" + f +
          "/fixed/report: --report cannot be set in a sweep (the sweep sets each point's "
          "report; an output file would be overwritten by every point)\n" +
          f +
          "/fixed/ranks: expected a string (one line), a number or a non-empty array of "
          "them, got boolean true\n" +
          f + "/fixed/bucket-mb/1: expected a string (one line) or a number, got boolean false\n" +
          f + "/vary/algoritm: not a flag of dtsim simulate (see dtsim simulate --help)\n" + f +
          "/vary/iterations: expected a non-empty array of values, got array []\n" + f +
          "/vary/chunk: expected a non-empty array of values, got string \"1MB\"\n");
  EXPECT_FALSE(fs::exists(csv()));
}

TEST_F(Sweep, MalformedSweepFile) {
  const Result r = run("sweep tests/testdata/sweep_malformed.json --out " + csv());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "dtsim sweep: tests/testdata/sweep_malformed.json: [json.exception.parse_error.101] "
            "parse error at line 1, column 12: syntax error while parsing object key - unexpected "
            "end of input; expected string literal\n");
}

TEST_F(Sweep, MissingSweepFile) {
  const Result r = run("sweep tests/testdata/no_such_sweep.json --out " + csv());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "dtsim sweep: tests/testdata/no_such_sweep.json: cannot open sweep file\n");
}

TEST_F(Sweep, EmitSlurmWritesAJobArrayAndThePoints) {
  const std::string slurm = (dir_ / "slurm").string();
  const Result r = run("sweep " + kFourPoints + " --emit-slurm " + slurm);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto points = split(slurp(slurm + "/points.txt"), '\n');
  ASSERT_EQ(points.size(), 4u);
  EXPECT_EQ(points[1],
            "'--workload' 'tests/testdata/sim_three_layers.json' '--platform' "
            "'tests/testdata/sim_star16_25GBps.json' '--iterations' '2' '--ranks' '2' "
            "'--algorithm' 'tree'");
  const std::string script = slurp(slurm + "/sweep.sbatch");
  EXPECT_EQ(script.rfind("#!/bin/bash\n", 0), 0u);
  EXPECT_NE(script.find("#SBATCH --array=0-3\n"), std::string::npos);
  EXPECT_NE(script.find(" simulate $args --report '" + slurm + "/reports/'point-$point.json"),
            std::string::npos);
  EXPECT_TRUE(fs::is_directory(slurm + "/reports"));
}

TEST_F(Sweep, HelpNamesEveryFlag) {
  const Result r = run("sweep --help");
  EXPECT_EQ(r.exit_code, 0);
  for (const char* flag : {"--out", "--jobs", "--resume", "--emit-slurm", "--merge", "--slurm",
                           "--partition", "--max-parallel"}) {
    EXPECT_NE(r.out.find(flag), std::string::npos) << flag;
  }
}

}  // namespace
