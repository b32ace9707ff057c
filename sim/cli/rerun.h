// Running dtsim again in the same process image: what the command line does when a verified
// fold did not hold (sim/lowering/fold.h), since SimGrid runs one engine per process.
#ifndef DTSIM_SIM_CLI_RERUN_H_
#define DTSIM_SIM_CLI_RERUN_H_

#include <string>
#include <vector>

namespace dtsim::sim {

// `args` (argv without the program name) with --fold set to the next fold to try: node after
// verified (the default), exact after node. An existing --fold VALUE or --fold=VALUE is replaced,
// else "--fold node" appended (flags override a job file's keys).
[[nodiscard]] std::vector<std::string> with_next_fold(const std::vector<std::string>& args);

// Says on stderr why (`verb`, the check that failed) and replaces this process with dtsim run on
// with_next_fold of its arguments. Returns only if that fails (after saying so).
void rerun_with_next_fold(const std::string& verb, const std::string& why, int argc, char** argv);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_CLI_RERUN_H_
