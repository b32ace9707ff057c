// The optional output files of `dtsim simulate` beyond the report: their flags, the checks made
// before the simulation, and the writing once it ran. Part of the dtsim command line.
#ifndef DTSIM_SIM_CLI_OUTPUT_FLAGS_H_
#define DTSIM_SIM_CLI_OUTPUT_FLAGS_H_

#include <string>

#include <boost/program_options.hpp>

#include "sim/run/simulation.h"

namespace dtsim::sim {

struct OutputFlags {
  std::string timeline;     // --timeline FILE.json
  std::string link_report;  // --link-report FILE.csv
  std::string dump_graph;   // --dump-graph FILE.json
};

// The "Outputs" flags of `dtsim simulate`, bound to `flags`.
[[nodiscard]] boost::program_options::options_description output_flags(OutputFlags& flags);

// What simulate_data_parallel must produce for `flags`. Throws ConfigError, before any
// simulation, if an output's directory does not exist.
[[nodiscard]] SimulateOutputs requested_outputs(const OutputFlags& flags);

// Writes the requested files. Throws ConfigError naming the flag and file if one cannot be
// written.
void write_outputs(const OutputFlags& flags, const SimulateOutputs& outputs);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_CLI_OUTPUT_FLAGS_H_
