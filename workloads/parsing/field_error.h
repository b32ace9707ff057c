// Errors that name the configuration field at fault (a struct field such as "iterations" or
// "image_size"), never a command-line flag, so that every front end can say it its own way: the
// command line as "--iterations 0: ...", a job file by its JSON pointer. The layers' error types
// (sim::ConfigError, workloads::GeneratorError) carry one.
#ifndef DTSIM_WORKLOADS_PARSING_FIELD_ERROR_H_
#define DTSIM_WORKLOADS_PARSING_FIELD_ERROR_H_

#include <string>
#include <utility>

namespace dtsim::parsing {

// A field and what is wrong with it. `detail` starts with the value at fault and a colon, or
// with the colon: ("iterations", "0: expected an integer >= 1"), ("chunk_bytes", ": expected a
// size >= 1 byte").
class FieldProblem {
 public:
  FieldProblem() = default;
  FieldProblem(std::string field, std::string detail)
      : field_(std::move(field)), detail_(std::move(detail)) {}

  [[nodiscard]] const std::string& field() const { return field_; }  // empty: no one field
  [[nodiscard]] const std::string& detail() const { return detail_; }

  // "<name> <detail>", or "<name><detail>" when detail starts with ':' (name: the field, a flag,
  // a JSON pointer).
  [[nodiscard]] static std::string join(const std::string& name, const std::string& detail) {
    return name + (detail.starts_with(":") ? "" : " ") + detail;
  }

 private:
  std::string field_;
  std::string detail_;
};

}  // namespace dtsim::parsing

#endif  // DTSIM_WORKLOADS_PARSING_FIELD_ERROR_H_
