// Golden end-to-end tests: each case under tests/golden/ runs `dtsim ARGS` (its `args` file) and
// must print its expected summary and write its expected report (and, for simulate, its link
// report) byte for byte. README.md says where each case's expected outputs come from and which
// tests check their figures independently.
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/cli/cli_support.h"

namespace dtsim::cli_test {
namespace {

class Golden : public DtsimTest, public testing::WithParamInterface<const char*> {};

// `report` (JSON, as dtsim writes it: dump(2) and a newline) without its "provenance" object,
// which holds the build's git commit: it changes with every commit, and the expected reports pin
// what a run predicts. Re-printing the parsed rest gives dtsim's own bytes back (nlohmann prints
// every number as the shortest text that reads back the same), so the comparison stays byte for
// byte; Provenance.* in cli tests pin the provenance itself. Nor its "error_bars": they come from
// the validation results, not from the run (error_bars.py --check pins them to those).
std::string without_provenance(const std::string& report) {
  auto json = nlohmann::ordered_json::parse(report);
  EXPECT_TRUE(json.contains("provenance"));
  EXPECT_TRUE(json.contains("error_bars"));
  json.erase("provenance");
  json.erase("error_bars");
  return json.dump(2) + "\n";
}

// A summary without its "validated error" lines, for the same reason.
std::string without_error_bars(const std::string& summary) {
  std::string kept;
  std::size_t start = 0;
  while (start < summary.size()) {
    const std::size_t end = summary.find('\n', start);
    const std::string line =
        summary.substr(start, end == std::string::npos ? end : end - start + 1);
    if (!line.starts_with("  validated error ")) {
      kept += line;
    }
    start = end == std::string::npos ? summary.size() : end + 1;
  }
  return kept;
}

TEST_P(Golden, OutputsAreByteIdentical) {
  const fs::path dir = fs::path("tests/golden") / GetParam();
  std::string args = slurp(dir / "args");
  ASSERT_FALSE(args.empty()) << dir;
  args.erase(args.find_last_not_of("\n") + 1);
  const bool simulate = args.starts_with("simulate ");
  std::string outputs = " --report " + (dir_ / "report.json").string();
  if (simulate) {
    outputs += " --link-report " + (dir_ / "links.csv").string();
  }
  const Result r = run(args + outputs);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("  validated error "), std::string::npos);
  EXPECT_EQ(without_error_bars(r.out), slurp(dir / "expected_summary.txt"));
  EXPECT_EQ(without_provenance(slurp(dir_ / "report.json")), slurp(dir / "expected_report.json"));
  if (simulate) {
    EXPECT_EQ(slurp(dir_ / "links.csv"), slurp(dir / "expected_links.csv"));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, Golden,
    testing::Values("sim_ring_fat_tree", "sim_tree_fast", "sim_tree_chunked", "sim_auto_dgx",
                    "sim_accumulation_step", "sim_accumulation_folded", "sim_overlap_none",
                    "sim_slow_gpu_link", "sim_background", "sim_hierarchical_rails",
                    "sim_hybrid_gpt", "coll_double_tree", "coll_all_to_all"),
    [](const testing::TestParamInfo<const char*>& p) { return std::string(p.param); });

}  // namespace
}  // namespace dtsim::cli_test
