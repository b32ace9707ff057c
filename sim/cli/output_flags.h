// The optional output files of `dtsim simulate` beyond the report: their flags, the checks made
// before the simulation, and the writing once it ran. Part of the dtsim command line.
#ifndef DTSIM_SIM_CLI_OUTPUT_FLAGS_H_
#define DTSIM_SIM_CLI_OUTPUT_FLAGS_H_

#include <string>
#include <utility>
#include <vector>

#include <boost/program_options.hpp>

#include "sim/run/simulation.h"

namespace dtsim::sim {

struct OutputFlags {
  std::string timeline;     // --timeline FILE.json
  std::string link_report;  // --link-report FILE.csv
  std::string dump_graph;   // --dump-graph FILE.json
  std::string dump_chakra;  // --dump-chakra PREFIX (PREFIX.<rank>.et)
};

// Throws ConfigError naming --`flag` if the directory of `path` does not exist, so that an output
// that could not be written fails before any simulation. Nothing for an empty path.
void check_output_path(const std::string& flag, const std::string& path);

// Throws ConfigError if two of `files` (flag, path; empty paths left out) are the same file: an
// output would silently overwrite another output or an input. The later one of the pair is named.
void check_distinct_outputs(const std::vector<std::pair<std::string, std::string>>& files);

// The "Outputs" flags of `dtsim simulate`, bound to `flags`.
[[nodiscard]] boost::program_options::options_description output_flags(OutputFlags& flags);

// What simulate_data_parallel must produce for `flags`. Throws ConfigError, before any
// simulation, if an output's directory does not exist.
[[nodiscard]] SimulateOutputs requested_outputs(const OutputFlags& flags);

// Writes `text` to `path` (parsing::write_output_file: complete or not at all). Throws
// ConfigError "--<flag> <path>: cannot write (<reason>)".
void write_text(const std::string& flag, const std::string& path, const std::string& text);

// Writes the requested files. Throws ConfigError naming the flag and file if one cannot be
// written.
void write_outputs(const OutputFlags& flags, const SimulateOutputs& outputs);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_CLI_OUTPUT_FLAGS_H_
