// Fuzz target: the platform spec reader (platforms/FORMAT.md), JSON specs. Any input must read
// or throw PlatformError.
#include <cstddef>
#include <cstdint>

#include "platforms/platform_spec.h"
#include "tests/fuzz/fuzz_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    (void)dtsim::platforms::read_platform_spec(dtsim::fuzz::write_input(data, size, ".json"));
  } catch (const dtsim::platforms::PlatformError&) {
  }
  return 0;
}
