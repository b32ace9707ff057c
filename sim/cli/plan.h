// `dtsim plan --model M --platform P.json --gpus N --global-batch G ...`: the planner
// (sim/planner/planner.h) over every configuration, then the best --simulate of them simulated
// as `dtsim simulate` child processes (one SimGrid engine each, --jobs at a time) and ranked by
// simulated time. Part of the dtsim command line.
#ifndef DTSIM_SIM_CLI_PLAN_H_
#define DTSIM_SIM_CLI_PLAN_H_

#include <string>
#include <vector>

namespace dtsim::sim {

// Runs the plan verb on `args` (what follows "dtsim plan"): prints the summary, writes --report
// R.json and R.csv beside it. Returns 0. Throws ConfigError for bad input (naming the flag),
// platforms::PlatformError for a bad platform, boost's errors for bad flags.
int run_plan(const std::vector<std::string>& args);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_CLI_PLAN_H_
