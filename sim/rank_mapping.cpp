#include "sim/rank_mapping.h"

#include "sim/config_error.h"

namespace dtsim::sim {

std::vector<simgrid::s4u::Host*> place_ranks_linear(const platforms::Platform& platform, int ranks,
                                                    const std::string& platform_file) {
  if (static_cast<std::size_t>(ranks) > platform.hosts.size()) {
    throw ConfigError(platform_file + ": the platform has " +
                      std::to_string(platform.hosts.size()) + " hosts, fewer than --ranks " +
                      std::to_string(ranks));
  }
  return {platform.hosts.begin(), platform.hosts.begin() + ranks};
}

}  // namespace dtsim::sim
