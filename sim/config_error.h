// The exception type of the sim layer: a job configuration that cannot run.
#ifndef DTSIM_SIM_CONFIG_ERROR_H_
#define DTSIM_SIM_CONFIG_ERROR_H_

#include <stdexcept>
#include <string>

#include "workloads/parsing/field_error.h"

namespace dtsim::sim {

// Library code names the configuration field at fault (a field of SimulateConfig, RunOptions,
// ...: "iterations", "simgrid_cfg"), never a command-line flag (workloads/parsing/field_error.h).
class ConfigError : public std::runtime_error, public parsing::FieldProblem {
 public:
  // A problem that is not one field's (a file, a combination): what() is `message`.
  explicit ConfigError(const std::string& message) : std::runtime_error(message) {}

  // A problem with field `field`: what() is FieldProblem::join(field, detail), e.g.
  // "iterations 0: expected an integer >= 1".
  ConfigError(const std::string& field, const std::string& detail)
      : std::runtime_error(join(field, detail)), FieldProblem(field, detail) {}
};

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_CONFIG_ERROR_H_
