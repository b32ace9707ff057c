// Fuzz target: the job file reader (sim/cli/JOB.md) against flags of each kind it converts
// (text, integer, number, switch, repeatable, the parallel degrees). Any input must read or
// throw ConfigError.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "sim/cli/job_file.h"
#include "sim/config_error.h"
#include "tests/fuzz/fuzz_file.h"

namespace po = boost::program_options;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static std::string text;
  static int count = 0;
  static double number = 0;
  static bool on = false;
  static std::vector<std::string> repeated;
  static const po::options_description flags = [] {
    po::options_description d;
    d.add_options()("workload", po::value(&text))("platform", po::value(&text))(
        "ranks", po::value(&count))("iterations", po::value(&count))(
        "bucket-mb", po::value(&number))("sequence-parallel", po::bool_switch(&on))(
        "cfg", po::value(&repeated)->composing())("parallel", po::value(&text))(
        "stage-layers", po::value(&text))("report", po::value(&text));
    return d;
  }();
  try {
    const dtsim::sim::JobFile job(dtsim::fuzz::write_input(data, size, ".json"), flags, {"report"});
    (void)job.locate("--ranks 0: expected an integer >= 1");
  } catch (const dtsim::sim::ConfigError&) {
  }
  return 0;
}
