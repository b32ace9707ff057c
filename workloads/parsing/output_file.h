// Writing an output file so that it is either complete or not there at all: the text goes to a
// temporary file in the target's folder, which is checked after it is flushed and closed and only
// then renamed over the target. A full disk, a file-size limit or an unwritable folder leave
// nothing behind (and an existing target as it was).
//
//   parsing::write_output_file("results/R.json", report.dump(2) + "\n");  // throws OutputError
#ifndef DTSIM_WORKLOADS_PARSING_OUTPUT_FILE_H_
#define DTSIM_WORKLOADS_PARSING_OUTPUT_FILE_H_

#include <stdexcept>
#include <string>
#include <string_view>

namespace dtsim::parsing {

// Why an output could not be written, e.g. "No space left on device"; what() is only the reason,
// so that the caller names the file and the flag its own way.
class OutputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Writes `text` to `path`. A regular file (or a new one) is replaced atomically as described
// above. An existing target that is not a regular file (/dev/stdout, a pipe, /dev/full) is
// written in place, every write and the close checked, because a device cannot be renamed over.
// Throws OutputError with the reason on any failure; a temporary file is removed again.
// REQUIRES: `path` is not empty.
void write_output_file(const std::string& path, std::string_view text);

}  // namespace dtsim::parsing

#endif  // DTSIM_WORKLOADS_PARSING_OUTPUT_FILE_H_
