// The platform and algorithm flags every simulating verb shares, and the RunOptions they make.
#ifndef DTSIM_SIM_CLI_RUN_FLAGS_H_
#define DTSIM_SIM_CLI_RUN_FLAGS_H_

#include <cstdint>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "sim/run/simulation.h"

namespace dtsim::sim {

// The flags both verbs share, parsed into strings first (units and lists are converted later).
struct RunFlags {
  std::string platform, placement, algorithm, replay, fold, chunk, network_model, grid, report,
      collective_latency;
  std::vector<std::string> cfg;
  std::vector<std::string> apply;  // simulate --apply: what-if passes (sim/whatif/WHATIF.md)
  int ranks = 0;
  int ranks_per_node = 0;
  double max_hosts = dtsim::sim::kDefaultMaxHosts;
  double max_events = dtsim::sim::kDefaultMaxEvents;
  double max_tasks = dtsim::sim::kDefaultMaxTasks;
  double max_concurrent = dtsim::sim::kDefaultMaxConcurrent;
};

// The flags, bound to `f`; --ranks and --platform optional where the verb finds them elsewhere.
[[nodiscard]] boost::program_options::options_description run_flags(RunFlags& f,
                                                                    bool ranks_required = true,
                                                                    bool platform_required = true);

// `text` as a size in bytes for --`flag` (at most 1 PiB). Throws ConfigError.
[[nodiscard]] std::uint64_t parse_size_flag(const std::string& flag, const std::string& text);

// The RunOptions of parsed flags. Throws ConfigError naming the flag.
[[nodiscard]] RunOptions run_options(const RunFlags& f);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_CLI_RUN_FLAGS_H_
