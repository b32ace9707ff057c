#include "workloads/parsing/input_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <sys/stat.h>

namespace dtsim::parsing {

std::string read_input_file(const std::string& path, const std::string& what) {
  const std::string article =
      std::string("aeiou").find(what.front()) == std::string::npos ? "a " : "an ";
  struct stat info {};
  if (::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) {
    throw InputFileError(path + ": a directory, not " + article + what);
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int error = errno;
    throw InputFileError(
        path + ": cannot open " + what +
        (error == ENOENT || error == 0 ? "" : " (" + std::string(std::strerror(error)) + ")"));
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) {
    throw InputFileError(path + ": cannot read " + what);
  }
  return text.str();
}

nlohmann::json read_json_file(const std::string& path, const std::string& what) {
  const std::string text = read_input_file(path, what);
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range for 1e400
    throw InputFileError(path + ": " + e.what());
  }
}

}  // namespace dtsim::parsing
