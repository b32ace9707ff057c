// `dtsim collective ... --bytes 1KiB..1GiB [--step-factor 2] [--algorithm A --algorithm B]
// [--csv F.csv] [--report F.json] [--jobs N]`: a size sweep as nccl-tests runs one, every point
// a `dtsim collective` child process (SimGrid allows one engine per process), printed as
// nccl-tests-like columns with the algorithms side by side. Part of the dtsim command line.
#ifndef DTSIM_SIM_CLI_COLLECTIVE_SWEEP_H_
#define DTSIM_SIM_CLI_COLLECTIVE_SWEEP_H_

#include <string>
#include <vector>

namespace dtsim::sim {

// Whether the collective verb's `args` ask for a sweep: --bytes MIN..MAX, more than one
// --algorithm, or a sweep-only flag (--step-factor, --csv, --jobs).
[[nodiscard]] bool is_collective_sweep(const std::vector<std::string>& args);

// Runs the sweep; returns the exit code (2 if a point fails, with its error on stderr). Throws
// ConfigError for bad sweep flags, before any point runs.
int run_collective_sweep(const std::vector<std::string>& args);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_CLI_COLLECTIVE_SWEEP_H_
