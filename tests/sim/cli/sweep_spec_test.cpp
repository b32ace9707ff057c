// Sweep files and results lines, without processes.
#include "sim/cli/sweep_spec.h"

#include <gtest/gtest.h>

#include "sim/cli/sweep_csv.h"
#include "sim/config_error.h"

namespace dtsim::sim {
namespace {

const std::vector<std::string> kFlags{"workload", "platform", "ranks", "bucket-mb", "cfg"};

SweepSpec parse(const char* text) {
  return sweep_from_json(nlohmann::ordered_json::parse(text), "s.json", kFlags);
}

TEST(SweepSpec, ProductInFileOrderLastKeyFastest) {
  const SweepSpec spec = parse(
      R"({"fixed": {"workload": "w.json", "cfg": ["a:1", "b:2"]},
          "vary": {"ranks": [2, 4, 8], "bucket-mb": [0.5, "25"]}})");
  const auto points = sweep_points(spec);
  ASSERT_EQ(points.size(), 6u);  // 3 x 2
  EXPECT_EQ(points[1].vary, (std::vector<std::string>{"2", "25"}));
  EXPECT_EQ(points[4].vary, (std::vector<std::string>{"8", "0.5"}));
  EXPECT_EQ(points[4].args,
            (std::vector<std::string>{"--workload", "w.json", "--cfg", "a:1", "--cfg", "b:2",
                                      "--ranks", "8", "--bucket-mb", "0.5"}));
}

TEST(SweepSpec, NothingVariedIsOnePoint) {
  EXPECT_EQ(sweep_points(parse(R"({"fixed": {"ranks": 2}, "vary": {}})")).size(), 1u);
}

TEST(SweepSpec, FlagInBothFixedAndVary) {
  try {
    (void)parse(R"({"fixed": {"ranks": 2}, "vary": {"ranks": [4]}})");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(), "s.json: /vary/ranks: also set in /fixed");
  }
}

TEST(SweepCsv, FieldsWithCommasOrQuotesAreQuoted) {
  const SweepSpec spec = parse(R"({"vary": {"platform": ["a,b.json"]}})");
  const auto points = sweep_points(spec);
  EXPECT_EQ(sweep_csv_failed_row(points[0], "failed (exit 2)", "x: \"y\"\nz\n"),
            "0,\"a,b.json\",failed (exit 2),,,,,,,,\"x: \"\"y\"\"; z\"\n");
}

TEST(SweepCsv, SortedByPointIndexNotText) {
  EXPECT_EQ(sort_sweep_csv("h\n10,a\n2,b\n0,c\n"), "h\n0,c\n2,b\n10,a\n");
}

TEST(SweepCsv, ResumeDropsATornLine) {
  const SweepSpec spec = parse(R"({"vary": {"ranks": [2, 4]}})");
  const auto points = sweep_points(spec);
  const std::string header = sweep_csv_header(spec);
  const std::string text = header + "1,4,ok,1,2,3,4,5,compute-bound,,\n0,2,o";
  const ExistingResults r = read_sweep_csv(text, "r.csv", header, points);
  EXPECT_EQ(r.done, std::set<int>{1});
  EXPECT_EQ(r.complete_length, text.size() - 5);
}

TEST(SweepCsv, ResumeRefusesALineOfAnotherSweep) {
  const SweepSpec spec = parse(R"({"vary": {"ranks": [2, 4]}})");
  const std::string header = sweep_csv_header(spec);
  try {
    (void)read_sweep_csv(header + "1,8,ok\n", "r.csv", header, sweep_points(spec));
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(), "--resume: r.csv line 2 is not a point of this sweep");
  }
}

}  // namespace
}  // namespace dtsim::sim
