// `dtsim simulate` and `dtsim memory`: their flags (which a job file's keys name), the run the
// flags ask for (data-parallel, hybrid-parallel, or an execution graph or Chakra trace replayed as
// it is), and its outputs. Part of the dtsim command line.
#ifndef DTSIM_SIM_CLI_SIMULATE_VERB_H_
#define DTSIM_SIM_CLI_SIMULATE_VERB_H_

#include <string>
#include <vector>

#include "sim/cli/job_file.h"

namespace dtsim::sim {

// Runs `dtsim simulate ARGS` or, with `memory`, `dtsim memory ARGS` (the same flags, --platform
// not required: the memory model printed, nothing simulated). Sets `job_file` to the --job file
// read, which says the errors of its flags. Returns 0. Throws ConfigError and the readers' errors
// for bad input, boost's errors for bad flags.
[[nodiscard]] int run_simulate(const std::vector<std::string>& args, JobFile& job_file,
                               bool memory = false);

// The long names of simulate's flags: what dtsim sweep and dtsim whatif may set.
[[nodiscard]] std::vector<std::string> simulate_flag_names();

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_CLI_SIMULATE_VERB_H_
