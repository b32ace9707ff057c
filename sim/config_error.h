// The exception type of the sim layer: a job configuration that cannot run.
#ifndef DTSIM_SIM_CONFIG_ERROR_H_
#define DTSIM_SIM_CONFIG_ERROR_H_

#include <stdexcept>

namespace dtsim::sim {

// what() names the flag or file at fault, e.g. "--ranks 300: platform p.json has 256 hosts".
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_CONFIG_ERROR_H_
