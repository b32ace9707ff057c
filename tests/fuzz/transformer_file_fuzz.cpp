// Fuzz target: transformer architecture files (workloads/TRANSFORMER.md, "Your own model"). Any
// input must either read or throw TraceError; one that reads must give a parameter count and
// the pieces of a small shard, or a GeneratorError (a shard its shape refuses). Anything else
// (a crash, another exception, undefined behaviour under the sanitizers) is a finding.
#include <cstddef>
#include <cstdint>

#include "tests/fuzz/fuzz_file.h"
#include "workloads/generator_error.h"
#include "workloads/trace_error.h"
#include "workloads/transformer_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace dtsim::workloads;
  TransformerArch arch;
  try {
    arch = read_transformer_file(dtsim::fuzz::write_input(data, size, ".json"));
  } catch (const TraceError&) {  // bad input, said as such
    return 0;
  }
  (void)parameter_count(arch);  // read files are consistent: no GeneratorError here
  try {
    (void)transformer_pieces(for_sequence(arch, 128), {.micro_batch = 1, .seq_len = 128});
  } catch (const GeneratorError&) {  // e.g. a learned position table shorter than 128
  }
  return 0;
}
