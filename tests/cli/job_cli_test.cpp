// `dtsim simulate --job J.json` (sim/cli/JOB.md) as a user runs it: a job file is the same run as
// its flags, flags override it, its paths are its folder's, and every bad file is a located
// error (exit 2, no report). DTSIM_BINARY is set by CMake.
#include <fstream>
#include <initializer_list>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_support.h"

namespace {

namespace fs = std::filesystem;

using dtsim::cli_test::Result;
using dtsim::cli_test::slurp;
using nlohmann::json;

// tests/testdata/job_gpt3_1.3b.json, as flags.
const std::string kFlags =
    "--model gpt3-1.3b --device a100 --platform tests/testdata/dgx_a100_2nodes.json --ranks 16 "
    "--parallel tp=2,pp=2,dp=4 --global-batch 16 --seq-len 1024 --iterations 2";
const std::string kJob = "tests/testdata/job_gpt3_1.3b.json";

// Each of `problems` as a line of dtsim simulate's stderr about `file`.
std::string said(const std::string& file, std::initializer_list<std::string> problems) {
  std::string text;
  for (const std::string& p : problems) {
    text += "dtsim simulate: " + file + ": " + p + "\n";
  }
  return text;
}

// `report` without its "provenance" object (the rest printed again as dtsim prints it).
std::string without_provenance(const std::string& report) {
  auto doc = nlohmann::ordered_json::parse(report);
  doc.erase("provenance");
  return doc.dump(2) + "\n";
}

class JobCli : public dtsim::cli_test::DtsimTest {
 protected:
  [[nodiscard]] fs::path path(const std::string& name) const { return dir_ / name; }

  // The job file J.json of this test's directory, holding `text`; its path.
  [[nodiscard]] std::string job(const std::string& text) const {
    std::ofstream(path("J.json"), std::ios::binary) << text;
    return path("J.json").string();
  }

  // The example job's keys, its platform as an absolute path, to go in "{...}".
  [[nodiscard]] static std::string example_keys() {
    return "\"model\": \"gpt3-1.3b\", \"device\": \"a100\", \"platform\": \"" +
           fs::absolute("tests/testdata/dgx_a100_2nodes.json").string() +
           "\", \"ranks\": 16, \"parallel\": \"tp=2,pp=2,dp=4\", \"global-batch\": 16, "
           "\"seq-len\": 1024, \"iterations\": 2";
  }

  // Runs `simulate ARGS --report <dir>/REPORT`; returns the report's text without its provenance
  // (whose inputs rightly differ: a job file is one).
  std::string simulate(const std::string& args, const std::string& report) const {
    const Result r = run("simulate " + args + " --report " + path(report).string());
    EXPECT_EQ(r.exit_code, 0) << args << ": " << r.err;
    return without_provenance(slurp(path(report)));
  }

  // `simulate --job <J.json holding text> ARGS` fails with exactly `message` on stderr, exit 2,
  // and writes no report (asked for with --report, unless `report_flag` is false).
  void expect_error(const std::string& text, const std::string& message,
                    const std::string& args = "", bool report_flag = true) const {
    const std::string file = job(text);
    const Result r = run("simulate --job " + file + " " + args +
                         (report_flag ? " --report " + path("bad.json").string() : ""));
    EXPECT_EQ(r.exit_code, 2) << text;
    EXPECT_EQ(r.err, message) << text;
    EXPECT_FALSE(fs::exists(path("bad.json"))) << text;
  }
};

TEST_F(JobCli, JobFileGivesTheReportOfTheSameFlags) {
  const Result flags = run("simulate " + kFlags + " --report " + path("flags.json").string());
  const Result job = run("simulate --job " + kJob + " --report " + path("job.json").string());
  ASSERT_EQ(flags.exit_code, 0) << flags.err;
  ASSERT_EQ(job.exit_code, 0) << job.err;
  EXPECT_EQ(without_provenance(slurp(path("job.json"))),
            without_provenance(slurp(path("flags.json"))));
  EXPECT_EQ(job.out, flags.out);
}

TEST_F(JobCli, FlagOnTheCommandLineOverridesTheFile) {
  // Before or after --job alike; the file's other keys still apply.
  const std::string overridden =
      simulate("--parallel tp=4,pp=1,dp=4 --job " + kJob + " --iterations 3", "job.json");
  const std::string flags = simulate(
      "--model gpt3-1.3b --device a100 --platform tests/testdata/dgx_a100_2nodes.json --ranks 16 "
      "--parallel tp=4,pp=1,dp=4 --global-batch 16 --seq-len 1024 --iterations 3",
      "flags.json");
  EXPECT_EQ(overridden, flags);
  const json report = json::parse(overridden);
  EXPECT_EQ(report["iterations_simulated"], 3);
  EXPECT_EQ(report["result"]["stages"].size(), 1u);
}

TEST_F(JobCli, RelativePathsResolveFromTheJobFilesFolder) {
  fs::create_directories(path("sub/out"));
  fs::copy_file("tests/testdata/dgx_a100_2nodes.json", path("sub/p.json"));
  const std::string timeline = path("t.json").string();  // absolute: stays
  std::ofstream(path("sub/J.json"))
      << "{\"model\": \"gpt3-1.3b\", \"device\": \"a100\", \"platform\": \"p.json\", \"ranks\": "
         "16, \"parallel\": {\"tp\": 2, \"pp\": 2, \"dp\": 4}, \"global-batch\": 16, "
         "\"seq-len\": 1024, \"iterations\": 2, \"report\": \"out/r.json\", \"timeline\": \""
      << timeline << "\"}";
  const Result r = run("simulate --job " + path("sub/J.json").string());  // from the repository
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json report = json::parse(slurp(path("sub/out/r.json")));
  EXPECT_EQ(report["platform"]["file"], path("sub/p.json").string());
  EXPECT_TRUE(fs::exists(timeline));
}

TEST_F(JobCli, DataParallelWorkloadRunsFromAJobFile) {
  const std::string workload = fs::absolute("workloads/traces/resnet50_v100_b32.json").string();
  const std::string platform = fs::absolute("tests/testdata/sim_fat_tree16.json").string();
  const std::string file =
      job("{\"workload\": \"" + workload + "\", \"platform\": \"" + platform +
          "\", \"ranks\": 8, \"bucket-mb\": 12.5, \"overlap\": \"none\", \"cfg\": "
          "[\"network/maxmin-selective-update:yes\"]}");
  EXPECT_EQ(simulate("--job " + file, "job.json"),
            simulate("--workload " + workload + " --platform " + platform +
                         " --ranks 8 --bucket-mb 12.5 --overlap none --cfg "
                         "network/maxmin-selective-update:yes",
                     "flags.json"));
}

TEST_F(JobCli, BadFilesAreLocatedErrorsWithNoReport) {
  const std::string j = path("J.json").string();
  expect_error("{\"ranks\": 16,\n",
               said(j, {"[json.exception.parse_error.101] parse error at line 2, column 1: syntax "
                        "error while parsing object key - unexpected end of input; expected "
                        "string literal"}));
  expect_error("[1, 2]", said(j, {"/: expected an object of flag: value, got array [1,2]"}));
  // Every problem at once, in key order.
  expect_error(
      "{\"global_batch\": 16, \"xyzzy\": 1, \"ranks\": \"16\", \"sequence-parallel\": \"yes\", "
      "\"cfg\": [\"a:1\", 3], \"parallel\": {\"tp\": 0, \"xp\": 2}, \"stage-layers\": [6, \"x\"], "
      "\"bucket-mb\": \"25\", \"iterations\": 2.0, \"model\": \"\", \"help\": true, "
      "\"job\": \"other.json\"}",
      said(j, {"/bucket-mb: expected a number, got string \"25\"",
               "/cfg/1: expected a non-empty string, got number 3",
               "/global_batch: unknown key: not a flag of dtsim simulate (did you mean "
               "\"global-batch\"?)",
               "/help: not a flag a job file can set (it prints the flags and runs nothing)",
               "/iterations: expected an integer from -2147483648 to 2147483647, got number 2.0",
               "/job: a job file cannot name another job file (--job is for the command line "
               "only)",
               "/model: expected a non-empty string, got string \"\"",
               "/parallel/tp: expected an integer from 1 to 2147483647, got number 0",
               "/parallel/xp: unknown key (expected one of tp, cp, dp, pp, ep)",
               "/ranks: expected an integer from -2147483648 to 2147483647, got string \"16\"",
               "/sequence-parallel: expected true or false, got string \"yes\"",
               "/stage-layers/1: expected an integer from 0 to 2147483647, got string \"x\"",
               "/xyzzy: unknown key: not a flag of dtsim simulate (see dtsim simulate --help)"}));
  expect_error(
      "{\"ranks\": 4294967296, \"cfg\": [], \"parallel\": 8}",
      said(j, {"/cfg: expected a string or a non-empty array of strings, got array []",
               "/parallel: expected a string such as \"tp=8,pp=4,dp=8\" or an object such as "
               "{\"tp\": 8, \"pp\": 4, \"dp\": 8}, got number 8",
               "/ranks: expected an integer from -2147483648 to 2147483647, got number "
               "4294967296"}));
  // Keys that are no flag's name (issue #21: Boost threw on "", which libFuzzer found).
  expect_error("{\"\": {\"tp\": 2}, \"-o\": \"x.json\", \"--ranks\": 4}",
               said(j, {"/: the empty key is not a flag name (a key is a flag without its "
                        "dashes, such as \"ranks\")",
                        "/--ranks: a key with dashes is not a flag name (a key is a flag "
                        "without its dashes, such as \"ranks\")",
                        "/-o: a key with dashes is not a flag name (a key is a flag without its "
                        "dashes, such as \"ranks\")"}));
  // Nesting is bounded in messages as in every reader.
  expect_error("{\"ranks\": " + std::string(40, '[') + std::string(40, ']') + "}",
               said(j, {"/ranks: expected an integer from -2147483648 to 2147483647, got array "
                        "nested more than 32 levels deep"}));
  const Result missing = run("simulate --job " + path("missing.json").string());
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_EQ(missing.err,
            "dtsim simulate: " + path("missing.json").string() + ": cannot open job file\n");
  const Result directory = run("simulate --job " + dir_.string());
  EXPECT_EQ(directory.exit_code, 2);
  EXPECT_EQ(directory.err, "dtsim simulate: " + dir_.string() + ": a directory, not a job file\n");
}

TEST_F(JobCli, OutputsNeverOverwriteTheJobFile) {
  const std::string j = path("J.json").string();
  expect_error("{" + example_keys() + ", \"report\": \"J.json\", \"timeline\": \"./J.json\"}",
               said(j, {"/report: \"J.json\" is this job file: an output never overwrites an input",
                        "/timeline: \"./J.json\" is this job file: an output never overwrites an "
                        "input"}),
               "", /*report_flag=*/false);
  EXPECT_EQ(job("{" + example_keys() + "}"), j);
  const Result r = run("simulate --job " + j + " --report " + j);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "dtsim simulate: --job " + j + ": the same file as --report\n");
  EXPECT_EQ(slurp(j), "{" + example_keys() + "}");
}

TEST_F(JobCli, ValueErrorsNameTheKeyTheyCameFrom) {
  const std::string j = path("J.json").string();
  const std::string keys = "{" + example_keys();
  expect_error(keys + ", \"zero\": 4}", said(j, {"/zero: 4: expected 0, 1, 2 or 3"}));
  // The command line's value is the one at fault, and said as its flag.
  expect_error(keys + ", \"zero\": 1}", "dtsim simulate: --zero 4: expected 0, 1, 2 or 3\n",
               "--zero 4");
  // A configuration field's error (flag_of), and "parallel" as an object, said as its text.
  expect_error(keys + ", \"iterations\": 0}", said(j, {"/iterations: 0, expected 1 or more"}));
  expect_error(keys + ", \"parallel\": {\"tp\": 8, \"pp\": 4, \"dp\": 8}}",
               said(j, {"/parallel: tp=8,cp=1,dp=8,pp=4,ep=1 makes 256 ranks, not 16"}));
  expect_error(keys + ", \"report\": \"nowhere/r.json\"}",
               said(j, {"/report: " + path("nowhere/r.json").string() + ": no such directory " +
                        path("nowhere").string()}),
               "", /*report_flag=*/false);
}

TEST_F(JobCli, AKeyTheRunDoesNotUseIsLocatedInTheFile) {
  // flag_scope.h: a hybrid run refuses --overlap; set by the file, the error names its key.
  const std::string j = path("J.json").string();
  expect_error("{" + example_keys() + ", \"overlap\": \"none\"}",
               said(j, {"/overlap: none: applies to a data-parallel --workload run only"}));
}

TEST_F(JobCli, SweepPointsRunAJobFile) {
  // "job" is a flag of dtsim simulate, so a sweep may fix it; each point's flags override it.
  std::ofstream(path("s.json")) << "{\"fixed\": {\"job\": \"" << kJob
                                << "\"}, \"vary\": {\"iterations\": [2, 3]}}";
  const Result r =
      run("sweep " + path("s.json").string() + " --jobs 1 --out " + path("s.csv").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json report = json::parse(simulate("--job " + kJob, "job.json"));
  const std::string csv = slurp(path("s.csv"));
  EXPECT_NE(csv.find("\n0,2,ok," + report["result"]["iteration_time_sec"].dump() + ","),
            std::string::npos)
      << csv;
  EXPECT_NE(csv.find("\n1,3,ok,"), std::string::npos) << csv;
}

TEST_F(JobCli, HelpNamesTheFlagAndTheSchemaKeysAreTheFlags) {
  const Result help = run("simulate --help");
  ASSERT_EQ(help.exit_code, 0);
  std::set<std::string> flags;
  const std::regex flag_line("^  --([a-z0-9-]+)");
  std::istringstream lines(help.out);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_search(line, m, flag_line)) {
      flags.insert(m[1]);
    }
  }
  EXPECT_TRUE(flags.contains("job"));
  flags.erase("job");
  flags.erase("help");
  std::set<std::string> keys;
  const json schema = json::parse(slurp("sim/cli/job.schema.json"));
  for (const auto& [key, unused] : schema["properties"].items()) {
    keys.insert(key);
  }
  EXPECT_EQ(keys, flags);
}

}  // namespace
