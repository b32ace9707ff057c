// Fuzz target: the execution graph reader and validator (sim/graph/GRAPH.md). Any input must
// read or throw GraphError.
#include <cstddef>
#include <cstdint>

#include "sim/graph/graph_error.h"
#include "sim/graph/graph_reader.h"
#include "tests/fuzz/fuzz_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    (void)dtsim::sim::read_execution_graph(dtsim::fuzz::write_input(data, size, ".json"));
  } catch (const dtsim::sim::GraphError&) {
  }
  return 0;
}
