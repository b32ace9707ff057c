// Fuzz target: the workload trace reader (workloads/FORMAT.md). Any input must either read or
// throw TraceError; anything else (a crash, another exception) is a finding.
#include <cstddef>
#include <cstdint>

#include "tests/fuzz/fuzz_file.h"
#include "workloads/trace_error.h"
#include "workloads/trace_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    (void)dtsim::workloads::read_workload(dtsim::fuzz::write_input(data, size, ".json"));
  } catch (const dtsim::workloads::TraceError&) {  // bad input, said as such
  }
  return 0;
}
