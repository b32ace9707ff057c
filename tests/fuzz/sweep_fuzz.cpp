// Fuzz target: the sweep file reader (sim/cli/SWEEP.md), and the points of what it reads. Any
// input must read or throw ConfigError.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/cli/sweep_spec.h"
#include "sim/config_error.h"
#include "tests/fuzz/fuzz_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // Some of dtsim simulate's flags: a sweep names flags, and these are the ones seeds use.
  static const std::vector<std::string> kFlags{"workload",   "platform",  "ranks", "algorithm",
                                               "iterations", "bucket-mb", "cfg",   "report"};
  try {
    const auto spec = dtsim::sim::read_sweep(dtsim::fuzz::write_input(data, size, ".json"), kFlags);
    if (spec.vary.size() <= 3) {  // the product of long lists is large by design, not a finding
      (void)dtsim::sim::sweep_points(spec);
    }
  } catch (const dtsim::sim::ConfigError&) {
  }
  return 0;
}
