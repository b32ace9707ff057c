// The command line's Chakra execution traces (workloads/CHAKRA.md): `dtsim simulate --chakra
// PREFIX`, `--dump-chakra PREFIX`, and `dtsim chakra microbenchmark`. Part of the dtsim binary.
#ifndef DTSIM_SIM_CLI_CHAKRA_CLI_H_
#define DTSIM_SIM_CLI_CHAKRA_CLI_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/chakra/chakra_reader.h"

namespace dtsim::sim {

// Reads the trace at `prefix` for `ranks` ranks (0: as many as there are files) and writes each
// of its warnings to stderr as "dtsim simulate: warning: <line>". Throws ChakraError.
[[nodiscard]] ChakraImport read_chakra_for_simulate(const std::string& prefix, int ranks);

// The summary's line about the trace: "chakra: 8 ranks, 8 nodes (8 collectives), 0 unknown".
[[nodiscard]] std::string chakra_summary(const ChakraImport& trace);

// `dtsim chakra microbenchmark --op OP --ranks N --bytes SIZE -o PREFIX`: writes an ASTRA-sim
// microbenchmark trace. Returns the exit code; throws ConfigError or ChakraError.
int run_chakra(const std::vector<std::string>& args);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_CLI_CHAKRA_CLI_H_
