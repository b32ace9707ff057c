// Fuzz target: MSCCL algorithm XML (sim/collectives/msccl_xml.h), converted and checked. Any
// input must read or throw ConfigError.
#include <cstddef>
#include <cstdint>

#include "sim/collectives/msccl_xml.h"
#include "sim/config_error.h"
#include "tests/fuzz/fuzz_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    (void)dtsim::sim::read_msccl_xml(dtsim::fuzz::write_input(data, size, ".xml"));
  } catch (const dtsim::sim::ConfigError&) {
  }
  return 0;
}
