// `dtsim whatif`: one baseline run of dtsim simulate and one transformed run (or one per --apply
// with --each), each a child process (SimGrid runs one engine per process), printed side by side
// and written as one report. Part of the dtsim command line; sim/whatif/WHATIF.md documents it.
#ifndef DTSIM_SIM_CLI_WHATIF_H_
#define DTSIM_SIM_CLI_WHATIF_H_

#include <string>
#include <vector>

namespace dtsim::sim {

// Runs `dtsim whatif ARGS`: `args` are simulate's flags plus --apply WHAT-IF (repeatable),
// --each, --whatif W.json and --report R.json; `simulate_flags` are the long names of
// simulate's flags (the knobs an --apply KEY=VALUE may set). Returns the exit code: 0, or a
// failed child's (2 for bad input). Throws ConfigError for bad flags, before any run.
[[nodiscard]] int run_whatif(const std::vector<std::string>& args,
                             const std::vector<std::string>& simulate_flags);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_CLI_WHATIF_H_
