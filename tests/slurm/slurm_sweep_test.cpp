// `dtsim sweep --slurm` on a real Slurm: each test starts a single-node Slurm (munged,
// slurmctld, slurmd) under its own folder with tests/slurm/start_slurm.sh, and stops it at the
// end. If Slurm cannot start, the test fails with the daemons' logs: it never skips. Needs root
// and Debian's slurm-wlm and munge (.ci/setup installs them). DTSIM_BINARY is set by CMake.
#include <cstdlib>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "cli_support.h"

namespace {

namespace fs = std::filesystem;

using dtsim::cli_test::Result;
using dtsim::cli_test::slurp;

// Ports no other test uses (slurm-notes.md's example uses 16817 and 16818).
constexpr const char* kPorts = "16917 16918";
const std::string kSlow = "tests/testdata/sweep_slow_points.json";  // about 1.5 s a point

class RealSlurm : public dtsim::cli_test::DtsimTest {
 protected:
  void SetUp() override {
    DtsimTest::SetUp();
    slurm_ = dir_ / "slurm";
    const std::string start = "tests/slurm/start_slurm.sh " + slurm_.string() + " " + kPorts +
                              " >" + (dir_ / "start.out").string() + " 2>" +
                              (dir_ / "start.err").string();
    const int status = std::system(start.c_str());
    started_ = true;
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << "Slurm did not start: " << slurp(dir_ / "start.err");
    setenv("SLURM_CONF", (slurm_ / "slurm.conf").c_str(), 1);
  }
  void TearDown() override {
    if (started_) {
      [[maybe_unused]] const int ignored =
          std::system(("tests/slurm/stop_slurm.sh " + slurm_.string()).c_str());
    }
    unsetenv("SLURM_CONF");
    DtsimTest::TearDown();
  }
  // The local sweep's file for `sweep` (its exit status must be `code`).
  [[nodiscard]] std::string local(const std::string& sweep, int code) const {
    const std::string out = (dir_ / "local.csv").string();
    const Result r = run("sweep " + sweep + " --jobs 2 --out " + out);
    EXPECT_EQ(r.exit_code, code) << r.err;
    return slurp(out);
  }
  [[nodiscard]] std::string csv() const { return (dir_ / "slurm.csv").string(); }
  [[nodiscard]] std::string err() const { return (dir_ / "sweep.err").string(); }

  // Starts the slow sweep through Slurm (one task at a time) in the background, waits until
  // task 0's script runs dtsim (its stderr file exists; squeue's RUNNING alone came too early:
  // one scancel in four was lost while the task was being launched), runs `then` (the task's id
  // in $task) and returns the sweep's exit status.
  [[nodiscard]] int slow_sweep_interrupted(const std::string& then) const {
    const std::string script =
        std::string(DTSIM_BINARY) + " sweep " + kSlow + " --slurm --max-parallel 1 --out " + csv() +
        " >/dev/null 2>" + err() + " & pid=$!; for i in $(seq 600); do " + "[ -e " + csv() +
        ".slurm/logs/point-0.err ] && " +
        "task=$(squeue --noheader --array --format '%i %T' | awk '/_0 RUNNING/ {print $1}') && " +
        "[ -n \"$task\" ] && break; sleep 0.05; done; " + then + "; wait $pid; exit $?";
    const int status = std::system(script.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  fs::path slurm_;
  bool started_ = false;
};

TEST_F(RealSlurm, ASweepThroughSlurmEqualsTheLocalRunByteForByte) {
  const std::string four = "tests/testdata/sweep_four_points.json";
  const Result r =
      run("sweep " + four + " --slurm --partition debug --max-parallel 2 --out " + csv());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "dtsim sweep: 4 of 4 points -> " + csv() + "\n");
  EXPECT_NE(r.err.find("dtsim sweep: Slurm job "), std::string::npos) << r.err;
  EXPECT_EQ(slurp(csv()), local(four, 0));
  EXPECT_TRUE(fs::exists(csv() + ".slurm/status/point-3"));
}

// Task 0 cancelled (scancel) while it runs, the other three (one at a time: --max-parallel 1)
// run to the end: the sweep names point 0, exits 1 and writes the three lines; --resume
// resubmits point 0 only, and the file becomes the local run's byte for byte.
TEST_F(RealSlurm, ACancelledTaskIsReportedAndResumeResubmitsIt) {
  EXPECT_EQ(slow_sweep_interrupted("scancel \"$task\""), 1) << slurp(err());
  const std::string log = slurp(err());
  EXPECT_NE(log.find("dtsim sweep: no result for point 0 (its Slurm task of job "),
            std::string::npos)
      << log;
  const std::string partial = slurp(csv());
  EXPECT_EQ(partial.find("\n0,"), std::string::npos) << partial;
  for (const char* point : {"\n1,", "\n2,", "\n3,"}) {
    EXPECT_NE(partial.find(point), std::string::npos) << partial;
  }
  const Result r = run("sweep " + kSlow + " --slurm --resume --out " + csv());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find(": 1 tasks ("), std::string::npos) << "only point 0 resubmitted: " << r.err;
  EXPECT_EQ(slurp(csv()), local(kSlow, 0));
}

// SIGTERM while the sweep waits on its job: the job is cancelled (squeue shows nothing left of
// it), the sweep exits 128 + 15, and the file has whole lines only.
TEST_F(RealSlurm, SigtermCancelsTheJob) {
  EXPECT_EQ(slow_sweep_interrupted("kill -TERM $pid"), 143) << slurp(err());
  EXPECT_NE(slurp(err()).find("dtsim sweep: SIGTERM: cancelled Slurm job "), std::string::npos)
      << slurp(err());
  // Nothing of the job pending or running any more; its cancelled tasks may still be completing
  // (CG) for a moment, then leave the queue.
  const std::string left = (dir_ / "squeue.out").string();
  const std::string squeue = "squeue --noheader --array --format %t >" + left;
  ASSERT_EQ(std::system(squeue.c_str()), 0);
  EXPECT_EQ(slurp(left).find_first_of("PR"), std::string::npos) << slurp(left);
  for (int i = 0; i < 200 && !slurp(left).empty(); ++i) {
    ASSERT_EQ(std::system(("sleep 0.1; " + squeue).c_str()), 0);
  }
  EXPECT_EQ(slurp(left), "");
  EXPECT_EQ(slurp(csv()).back(), '\n');
}

}  // namespace
