// dtsim against an independent implementation: SimGrid's SMPI runs a real MPI_Allreduce (MPICH's
// logical ring, smpi/allreduce:lr) on the same XML platform with the same network model, and the
// two times must agree. One small case of experiments/smpi-crosscheck/ (see its README for the
// full matrix). Needs smpicc/smpirun (Debian libsimgrid-dev, installed by .ci/setup): without
// them the test fails rather than skips, since a missing reference must not read as a pass.
// DTSIM_BINARY and DTSIM_SOURCE_DIR are set by CMake. Everything is built and run in a temporary
// directory; nothing is written to the source tree.
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include <unistd.h>

namespace {

namespace fs = std::filesystem;

const fs::path kExperiment = fs::path(DTSIM_SOURCE_DIR) / "experiments" / "smpi-crosscheck";

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The number after `key` in `text`, or NaN if `key` is absent.
double number_after(const std::string& text, const std::string& key) {
  const std::size_t at = text.find(key);
  if (at == std::string::npos) {
    return std::nan("");
  }
  return std::stod(text.substr(at + key.size()));
}

class SmpiCrosscheck : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("dtsim_smpi_crosscheck_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs `command` in the temporary directory, stdout and stderr to `log`; returns the status.
  int run(const std::string& command, const std::string& log) const {
    const std::string line =
        "cd '" + dir_.string() + "' && " + command + " >'" + (dir_ / log).string() + "' 2>&1";
    return std::system(line.c_str());
  }

  fs::path dir_;
};

TEST_F(SmpiCrosscheck, RingAllReduceMatchesMpichLogicalRingWithinOnePercent) {
  ASSERT_EQ(std::system("command -v smpicc >/dev/null 2>&1 && command -v smpirun >/dev/null 2>&1"),
            0)
      << "smpicc/smpirun not found on PATH: install Debian's libsimgrid-dev (.ci/setup does), "
         "which ships SimGrid's SMPI, the reference this test compares dtsim against";
  ASSERT_EQ(
      run("smpicc -O2 -o allreduce_mpi '" + (kExperiment / "allreduce_mpi.c").string() + "' -lm",
          "smpicc.log"),
      0)
      << slurp(dir_ / "smpicc.log");

  // 8 ranks on the first two leaves of a 16-host fat-tree (25 GB/s, 1 us links), 4 MiB.
  const std::string platform = (kExperiment / "fattree16.xml").string();
  const std::string bytes = "4194304";
  // smpirun's own defaults (network/model:SMPI with its latency/bandwidth factors) are overridden
  // by dtsim's exact model: CM02, no cross-traffic, no TCP window cap.
  const std::string exact =
      " --cfg=network/model:CM02 --cfg=network/crosstraffic:0 --cfg=network/TCP-gamma:1e12";
  ASSERT_EQ(run("timeout 120 smpirun -np 8 -platform '" + platform + "' -hostfile '" +
                    (kExperiment / "hostfile16").string() + "'" + exact +
                    " --cfg=smpi/simulate-computation:no --cfg=smpi/wtime:0"
                    " --cfg=smpi/allreduce:lr --log=root.thres:error"
                    " ./allreduce_mpi " +
                    bytes + " allreduce common noop",
                "smpi.log"),
            0)
      << slurp(dir_ / "smpi.log");
  const std::string smpi_out = slurp(dir_ / "smpi.log");
  const double smpi_sec = number_after(smpi_out, "SMPI_TIME ");
  ASSERT_TRUE(std::isfinite(smpi_sec)) << smpi_out;
  // All ranks start the collective together (allreduce_mpi.c's "common" start), as in dtsim.
  EXPECT_LE(number_after(smpi_out, "SMPI_START_SKEW "), 1e-8) << smpi_out;

  const fs::path report = dir_ / "report.json";
  ASSERT_EQ(run(std::string(DTSIM_BINARY) + " collective --platform '" + platform +
                    "' --ranks 8 --op all-reduce --bytes " + bytes +
                    " --algorithm ring --network-model exact --report '" + report.string() + "'",
                "dtsim.log"),
            0)
      << slurp(dir_ / "dtsim.log");
  const double dtsim_sec = number_after(slurp(report), "\"time_sec\": ");
  ASSERT_TRUE(std::isfinite(dtsim_sec)) << slurp(report);

  // Tolerance: 1 % is the collectives issue's requirement for this cross-check. Measured here:
  // dtsim 349.601 us, SMPI 349.610 us (-0.003 %: SMPI is ~0.6 ns a ring step slower); the same
  // pair agrees within 0.02 % over the whole matrix of experiments/smpi-crosscheck/ wherever the
  // vector divides into p equal blocks.
  EXPECT_NEAR(dtsim_sec / smpi_sec, 1.0, 0.01)
      << "dtsim " << dtsim_sec << " s, SMPI " << smpi_sec << " s";
}

}  // namespace
