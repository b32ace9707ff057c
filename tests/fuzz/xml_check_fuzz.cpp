// Fuzz target: the XML pre-check (platforms/xml_checks.h): SimGrid loads the file in a forked
// child, so that a platform it aborts on is a PlatformError, never the end of this process.
// Any input must pass or throw PlatformError.
#include <cstddef>
#include <cstdint>

#include "platforms/platform_spec.h"
#include "platforms/xml_checks.h"
#include "tests/fuzz/fuzz_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    dtsim::platforms::check_xml_loads(dtsim::fuzz::write_input(data, size, ".xml"));
  } catch (const dtsim::platforms::PlatformError&) {
  }
  return 0;
}
