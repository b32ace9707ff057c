// Where a report comes from, written into it so that a published figure can be reproduced from
// its report alone: dtsim's version and git commit, SimGrid's version, and the SHA-256 of every
// input file. Part of the dtsim command line.
//
//   "provenance": {"dtsim_version": "0.1.0", "git_commit": "b9cb82b...", "simgrid_version":
//                  "3.32.0", "inputs": [{"flag": "workload", "path": "w.json", "sha256": "..."}]}
#ifndef DTSIM_SIM_CLI_PROVENANCE_H_
#define DTSIM_SIM_CLI_PROVENANCE_H_

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace dtsim::sim {

// An input file of a run: the flag that named it ("workload"; "platform file" for the SimGrid XML
// a platform spec names), and its path as given.
struct InputFile {
  std::string flag;
  std::string path;
  bool operator==(const InputFile&) const = default;
};

// The input files of a run: the ones named by `flags` (flag, path; empty paths left out) and,
// for a platform spec that names a SimGrid XML file, that file (flag "platform file"). A spec
// that does not read adds nothing: the run reports its error.
[[nodiscard]] std::vector<InputFile> input_files(
    const std::vector<std::pair<std::string, std::string>>& flags);

// The provenance object for `inputs`, each with its SHA-256. The commit is DTSIM_GIT_COMMIT, set
// at build time (sim/cli/git_commit.cmake). Throws ConfigError if an input cannot be read again.
[[nodiscard]] nlohmann::ordered_json provenance_json(const std::vector<InputFile>& inputs);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_CLI_PROVENANCE_H_
