// Reading an input file whole, with the errors every reader reports the same way.
#ifndef DTSIM_WORKLOADS_PARSING_INPUT_FILE_H_
#define DTSIM_WORKLOADS_PARSING_INPUT_FILE_H_

#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace dtsim::parsing {

// what(): "<path>: <problem>", ready to be rethrown as the reader's own error type.
class InputFileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The bytes of the file at `path`, a `what` (e.g. "workload trace"). Throws InputFileError
// "<path>: a directory, not a <what>" or "<path>: cannot open <what>", followed by the reason
// (" (File name too long)") unless the file does not exist. Never throws std::filesystem_error.
[[nodiscard]] std::string read_input_file(const std::string& path, const std::string& what);

// The file at `path` parsed as JSON. Throws InputFileError as read_input_file does, or
// "<path>: <the parser's message>" for text that is not JSON.
[[nodiscard]] nlohmann::json read_json_file(const std::string& path, const std::string& what);

}  // namespace dtsim::parsing

#endif  // DTSIM_WORKLOADS_PARSING_INPUT_FILE_H_
