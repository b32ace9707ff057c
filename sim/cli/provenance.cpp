#include "sim/cli/provenance.h"

#include <variant>

#include <simgrid/forward.h>  // xbt/base.h, which simgrid/version.h needs and lacks
#include <simgrid/version.h>

#include "platforms/platform_spec.h"
#include "sim/config_error.h"
#include "workloads/parsing/input_file.h"
#include "workloads/parsing/sha256.h"

#include "dtsim_git_commit.h"

namespace dtsim::sim {

std::vector<InputFile> input_files(const std::vector<std::pair<std::string, std::string>>& flags) {
  std::vector<InputFile> inputs;
  for (const auto& [flag, path] : flags) {
    if (path.empty()) {
      continue;
    }
    inputs.push_back({.flag = flag, .path = path});
    if (flag != "platform") {
      continue;
    }
    try {
      const platforms::PlatformSpec spec = platforms::read_platform_spec(path);
      const auto* xml = std::get_if<platforms::XmlSpec>(&spec.topology);
      if (xml != nullptr && xml->path != path) {
        inputs.push_back({.flag = "platform file", .path = xml->path});
      }
    } catch (const platforms::PlatformError&) {  // the run reports it, in its own order
    }
  }
  return inputs;
}

nlohmann::ordered_json provenance_json(const std::vector<InputFile>& inputs) {
  int major = 0, minor = 0, patch = 0;
  sg_version_get(&major, &minor, &patch);  // the library linked, not the headers compiled
  nlohmann::ordered_json files = nlohmann::ordered_json::array();
  for (const InputFile& input : inputs) {
    std::string bytes;
    try {
      bytes = parsing::read_input_file(input.path, "input file");
    } catch (const parsing::InputFileError& e) {
      throw ConfigError(input.flag, std::string(": ") + e.what());
    }
    files.push_back(
        {{"flag", input.flag}, {"path", input.path}, {"sha256", parsing::sha256_hex(bytes)}});
  }
  return {{"dtsim_version", DTSIM_VERSION},
          {"git_commit", DTSIM_GIT_COMMIT},
          {"simgrid_version",
           std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch)},
          {"inputs", std::move(files)}};
}

}  // namespace dtsim::sim
