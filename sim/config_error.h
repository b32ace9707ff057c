// The exception type of the sim layer: a job configuration that cannot run.
#ifndef DTSIM_SIM_CONFIG_ERROR_H_
#define DTSIM_SIM_CONFIG_ERROR_H_

#include <stdexcept>
#include <string>
#include <utility>

namespace dtsim::sim {

// Library code names the configuration field at fault (a field of SimulateConfig, RunOptions,
// ...: "iterations", "simgrid_cfg"), never a command-line flag, so that every front end can say
// it its own way: the command line as "--iterations 0: ...", a job file by its JSON pointer.
class ConfigError : public std::runtime_error {
 public:
  // A problem that is not one field's (a file, a combination): what() is `message`.
  explicit ConfigError(const std::string& message) : std::runtime_error(message) {}

  // A problem with field `field`; `detail` starts with the value at fault and a colon, or with
  // the colon: what() is "iterations 0: expected an integer >= 1" for ("iterations", "0: expected
  // an integer >= 1"), "chunk_bytes: expected ..." for ("chunk_bytes", ": expected ...").
  ConfigError(std::string field, std::string detail)
      : std::runtime_error(join(field, detail)),
        field_(std::move(field)),
        detail_(std::move(detail)) {}

  [[nodiscard]] const std::string& field() const { return field_; }  // empty: no one field
  [[nodiscard]] const std::string& detail() const { return detail_; }

  // "<name> <detail>", or "<name><detail>" when detail starts with ':'.
  [[nodiscard]] static std::string join(const std::string& name, const std::string& detail) {
    return name + (detail.starts_with(":") ? "" : " ") + detail;
  }

 private:
  std::string field_;
  std::string detail_;
};

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_CONFIG_ERROR_H_
