// `dtsim sweep --merge DIR` on an --emit-slurm folder whose tasks ran as Slurm runs them: the
// batch script, executed by bash with SLURM_ARRAY_TASK_ID set (the #SBATCH lines are comments to
// bash). The merged file must equal a local sweep's byte for byte, failed points included.
// DTSIM_BINARY is set by CMake.
#include <cstdlib>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "cli_support.h"

namespace {

namespace fs = std::filesystem;

using dtsim::cli_test::Result;
using dtsim::cli_test::slurp;

class SweepMerge : public dtsim::cli_test::DtsimTest {
 protected:
  // Runs task `point` of the job array in `dir` as Slurm would; returns its exit status.
  [[nodiscard]] int run_task(const fs::path& dir, int point) const {
    const std::string cmd = "SLURM_ARRAY_TASK_ID=" + std::to_string(point) + " bash " +
                            (dir / "sweep.sbatch").string() + " >/dev/null 2>&1";
    const int status = std::system(cmd.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  // The local sweep's file for `sweep` (its exit status must be `code`).
  [[nodiscard]] std::string local(const std::string& sweep, int code) const {
    const std::string out = (dir_ / "local.csv").string();
    const Result r = run("sweep " + sweep + " --jobs 2 --out " + out);
    EXPECT_EQ(r.exit_code, code) << r.err;
    return slurp(out);
  }
};

const std::string kFourPoints = "tests/testdata/sweep_four_points.json";

TEST_F(SweepMerge, EqualsTheLocalRunByteForByte) {
  const fs::path slurm = dir_ / "slurm";
  ASSERT_EQ(run("sweep " + kFourPoints + " --emit-slurm " + slurm.string()).exit_code, 0);
  for (int i = 3; i >= 0; --i) {  // in any order
    EXPECT_EQ(run_task(slurm, i), 0) << i;
  }
  const std::string out = (dir_ / "merged.csv").string();
  const Result r = run("sweep --merge " + slurm.string() + " --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "dtsim sweep: 4 of 4 points -> " + out + "\n");
  EXPECT_EQ(slurp(out), local(kFourPoints, 0));
}

// A point that fails (more ranks than hosts) has the same line as locally: "failed (exit 2)"
// and dtsim simulate's stderr; the merge exits 1 as the local sweep does.
TEST_F(SweepMerge, AFailedTaskHasTheLocalRunsLine) {
  const std::string failing = "tests/testdata/sweep_failing_point.json";
  const fs::path slurm = dir_ / "slurm";
  ASSERT_EQ(run("sweep " + failing + " --emit-slurm " + slurm.string()).exit_code, 0);
  EXPECT_EQ(run_task(slurm, 0), 0);
  EXPECT_EQ(run_task(slurm, 1), 2);
  const std::string out = (dir_ / "merged.csv").string();
  const Result r = run("sweep --merge " + slurm.string() + " --out " + out);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(slurp(out), local(failing, 1));
}

// A task that has not run (or was cancelled) leaves its point out; the merge says which and
// exits 1, and --resume adds it once it ran.
TEST_F(SweepMerge, ATaskWithoutResultIsNamedAndResumeAddsIt) {
  const fs::path slurm = dir_ / "slurm";
  ASSERT_EQ(run("sweep " + kFourPoints + " --emit-slurm " + slurm.string()).exit_code, 0);
  for (int i : {0, 1, 3}) {
    EXPECT_EQ(run_task(slurm, i), 0) << i;
  }
  const std::string out = (dir_ / "merged.csv").string();
  Result r = run("sweep --merge " + slurm.string() + " --out " + out);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "dtsim sweep: 3 of 4 points -> " + out + "\n");
  EXPECT_EQ(r.err,
            "dtsim sweep: no result for point 2 (its task has not ended, was cancelled or "
            "never ran: see " +
                slurm.string() + "/logs; --resume adds it later)\n");
  EXPECT_EQ(slurp(out).find("\n2,"), std::string::npos);
  EXPECT_EQ(run_task(slurm, 2), 0);
  r = run("sweep --merge " + slurm.string() + " --resume --out " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(slurp(out), local(kFourPoints, 0));
}

TEST_F(SweepMerge, RefusesAFolderWithoutASweep) {
  const Result r = run("sweep --merge " + dir_.string() + " --out " + (dir_ / "m.csv").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "dtsim sweep: --merge " + dir_.string() +
                       ": no sweep.json there (not a folder that --emit-slurm or --slurm "
                       "wrote)\n");
}

TEST_F(SweepMerge, TakesNoSweepFile) {
  const Result r = run("sweep " + kFourPoints + " --merge " + dir_.string() + " --out " +
                       (dir_ / "m.csv").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "dtsim sweep: --merge " + dir_.string() +
                       ": takes no SWEEP.json, --slurm or --emit-slurm (DIR has the sweep)\n");
}

}  // namespace
