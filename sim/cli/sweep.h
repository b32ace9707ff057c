// `dtsim sweep SWEEP.json --out R.csv`: runs every point of a sweep (sim/cli/sweep_spec.h) as its
// own `dtsim simulate` process (SimGrid allows one engine per process), --jobs at a time, and
// appends each finished point's line to R.csv (sim/cli/sweep_csv.h) with a single write() on an
// O_APPEND descriptor, so that a killed sweep leaves only whole lines and --resume runs only
// the points missing. Once every point is in, the file is rewritten sorted by point (temporary
// file, then rename). SIGINT or SIGTERM stops the running points and removes the temporary
// folder. `--slurm` runs the points as a Slurm job array instead, `--emit-slurm DIR` writes one
// without running it, and `--merge DIR` gathers its results (sim/cli/slurm_sweep.h).
// Part of the dtsim command line.
#ifndef DTSIM_SIM_CLI_SWEEP_H_
#define DTSIM_SIM_CLI_SWEEP_H_

#include <string>
#include <vector>

namespace dtsim::sim {

// Runs the sweep verb on `args` (what follows "dtsim sweep"); `simulate_flags` are the long
// names of `dtsim simulate`'s flags. Returns the exit code: 0 once every point has an "ok" line,
// 1 if a point failed (its line says why) or has no result (a Slurm task cancelled), 128 + N
// if signal N (SIGINT, SIGTERM) stopped the sweep. Throws ConfigError for bad input, boost's errors
// for bad flags.
int run_sweep(const std::vector<std::string>& args, const std::vector<std::string>& simulate_flags);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_CLI_SWEEP_H_
