// What every verb of the command line shares: the width of its --help, parsing its flags (no
// stray words, no empty values), and writing its report with the run's provenance. Part of the
// dtsim command line.
#ifndef DTSIM_SIM_CLI_VERB_H_
#define DTSIM_SIM_CLI_VERB_H_

#include <string>
#include <utility>
#include <vector>

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include "sim/cli/provenance.h"

namespace dtsim::sim {

// Columns of a verb's --help; boost wraps the flags' descriptions at half of them.
inline constexpr unsigned kHelpColumns = 100;

// `args` parsed against `flags`, which take no positional arguments: a stray word ("tree"
// without --algorithm) is a ConfigError naming it, not ignored as boost would.
[[nodiscard]] boost::program_options::parsed_options parse_flags_only(
    const std::vector<std::string>& args, const boost::program_options::options_description& flags);

// Parses `args` against the flags of `dtsim VERB`. Returns false if --help was given, after
// printing the usage line, `what` and the flags. Throws ConfigError for a flag given an empty
// text (`--report ""` was ignored as if absent), boost's errors for bad flags. `vm`, if given,
// receives the values parsed.
[[nodiscard]] bool parse_verb_flags(const std::vector<std::string>& args,
                                    const boost::program_options::options_description& flags,
                                    const std::string& verb, const char* what,
                                    boost::program_options::variables_map* vm = nullptr);

// Writes `report` with the provenance of `inputs` to `path` (nothing for an empty path).
void write_report(const std::string& path, nlohmann::ordered_json report,
                  const std::vector<InputFile>& inputs);

// `files` (flag, path) followed by every input's, for check_distinct_outputs: no output may name
// another output or an input.
[[nodiscard]] std::vector<std::pair<std::string, std::string>> with_inputs(
    std::vector<std::pair<std::string, std::string>> files, const std::vector<InputFile>& inputs);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_CLI_VERB_H_
