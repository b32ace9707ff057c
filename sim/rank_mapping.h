// Rank placement: which host runs which rank. Explicit, never the order SimGrid lists hosts in.
#ifndef DTSIM_SIM_RANK_MAPPING_H_
#define DTSIM_SIM_RANK_MAPPING_H_

#include <string>
#include <vector>

#include <simgrid/forward.h>

#include "platforms/build_platform.h"

namespace dtsim::sim {

// The "linear" policy: rank r runs on platform.hosts[r], the platform's canonical order (see
// platforms::Platform). On a fat-tree, consecutive ranks share a leaf switch, so ring neighbours
// are close. Throws ConfigError naming `platform_file` if ranks exceeds the hosts.
// REQUIRES: ranks >= 1.
[[nodiscard]] std::vector<simgrid::s4u::Host*> place_ranks_linear(
    const platforms::Platform& platform, int ranks, const std::string& platform_file);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_RANK_MAPPING_H_
