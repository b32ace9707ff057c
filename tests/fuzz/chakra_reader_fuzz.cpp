// Fuzz target: the Chakra execution-trace reader (workloads/CHAKRA.md) on a one-rank trace. Any
// input must read or throw ChakraError.
#include <cstddef>
#include <cstdint>
#include <string>

#include "sim/chakra/chakra_error.h"
#include "sim/chakra/chakra_reader.h"
#include "tests/fuzz/fuzz_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = dtsim::fuzz::write_input(data, size, ".0.et");
  try {
    (void)dtsim::sim::read_chakra_trace(path.substr(0, path.size() - 5), 1);
  } catch (const dtsim::sim::ChakraError&) {
  }
  return 0;
}
