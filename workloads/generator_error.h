// The exception type of the analytical generator and the model zoo: a configuration they cannot
// model.
#ifndef DTSIM_WORKLOADS_GENERATOR_ERROR_H_
#define DTSIM_WORKLOADS_GENERATOR_ERROR_H_

#include <stdexcept>
#include <string>

#include "workloads/parsing/field_error.h"

namespace dtsim::workloads {

// Names the field of GeneratorConfig / ModelShape at fault ("device", "image_size"), never a
// command-line flag: what() is FieldProblem::join(field, detail), e.g. "batch 0: expected an
// integer >= 1".
class GeneratorError : public std::invalid_argument, public parsing::FieldProblem {
 public:
  GeneratorError(const std::string& field, const std::string& detail)
      : std::invalid_argument(join(field, detail)), FieldProblem(field, detail) {}
};

}  // namespace dtsim::workloads

#endif  // DTSIM_WORKLOADS_GENERATOR_ERROR_H_
