// Fuzz target: collective algorithm files (sim/collectives/ALGORITHMS.md), read, validated and
// checked symbolically. Any input must read or throw ConfigError.
#include <cstddef>
#include <cstdint>

#include "sim/collectives/algorithm_file.h"
#include "sim/config_error.h"
#include "tests/fuzz/fuzz_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    (void)dtsim::sim::read_algorithm_file(dtsim::fuzz::write_input(data, size, ".json"));
  } catch (const dtsim::sim::ConfigError&) {
  }
  return 0;
}
