// A sweep's points as a Slurm job array: the folder a job array runs from (`--emit-slurm DIR`,
// for people who submit by hand), the results gathered from it (`--merge DIR`), and the whole
// round trip (`--slurm`: sbatch, wait on squeue, gather). The folder holds sweep.json (a copy
// of the sweep file), points.txt (line I+1: point I's `dtsim simulate` arguments, shell-quoted),
// sweep.sbatch, and per point reports/point-I.json, logs/point-I.{out,err} and status/point-I
// (the exit status, written once the run ended; a task cancelled or killed writes none).
// Part of the dtsim command line.
#ifndef DTSIM_SIM_CLI_SLURM_SWEEP_H_
#define DTSIM_SIM_CLI_SLURM_SWEEP_H_

#include <string>
#include <vector>

#include "sim/cli/sweep_spec.h"

namespace dtsim::sim {

// Writes the job array folder `dir` for every point (nothing runs). Throws ConfigError if it
// cannot be written.
void emit_slurm(const std::string& dir, const SweepSpec& spec,
                const std::vector<SweepPoint>& points);

struct MergeFlags {
  std::string dir;  // a folder --emit-slurm or --slurm wrote
  std::string out;  // the results file
  bool resume = false;
};

// Writes the line of every point whose task ended into `flags.out` (as a local sweep does,
// sorted by point); `simulate_flags` are `dtsim simulate`'s long flag names. Returns 0 if every
// point has an "ok" line, 1 if one failed or has no result yet (named on stderr). Throws
// ConfigError for a folder that is not a sweep's.
[[nodiscard]] int merge_slurm(const MergeFlags& flags,
                              const std::vector<std::string>& simulate_flags);

struct SlurmFlags {
  std::string out;        // the results file; the job array's folder is `out` + ".slurm"
  std::string partition;  // sbatch --partition (empty: the cluster's default)
  int max_parallel = 0;   // tasks running at once (the array's %N; 0: no limit)
  bool resume = false;    // keep out's lines and submit only the points without one
};

// Submits the points without a line in `flags.out` as one job array, waits for it (squeue,
// progress on stderr), and appends every ended task's line. Returns 0 if every point has an
// "ok" line, 1 if one failed or its task ended without a result (cancelled, killed: named on
// stderr; --resume resubmits them), 128 + N if signal N (SIGINT, SIGTERM) stopped the wait (the
// job is cancelled). Throws ConfigError if sbatch fails.
[[nodiscard]] int run_sweep_on_slurm(const SlurmFlags& flags, const SweepSpec& spec,
                                     const std::vector<SweepPoint>& points);

// Slurm's --array list of `indices` (ascending): runs of consecutive indices as ranges,
// e.g. {0, 1, 2, 5, 7, 8} -> "0-2,5,7-8".
[[nodiscard]] std::string slurm_array_list(const std::vector<int>& indices);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_CLI_SLURM_SWEEP_H_
