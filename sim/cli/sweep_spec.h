// A parameter sweep of `dtsim simulate` (`dtsim sweep`, format in sim/SWEEP.md): flags fixed for
// every point, and flags that take each value of a list, combined as a cartesian product.
// Pure: no processes, no SimGrid.
//
//   {"fixed": {"workload": "w.json", "platform": "p.json"},
//    "vary": {"ranks": [2, 4], "algorithm": ["ring", "tree"]}}
//
// gives 4 points, the last "vary" key varying fastest: (2, ring), (2, tree), (4, ring), (4, tree).
#ifndef DTSIM_SIM_CLI_SWEEP_SPEC_H_
#define DTSIM_SIM_CLI_SWEEP_SPEC_H_

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace dtsim::sim {

// The value of one flag: usually one word; several for a repeatable flag (--cfg a --cfg b).
using FlagValue = std::vector<std::string>;

struct SweepSpec {
  std::string file;
  std::vector<std::pair<std::string, FlagValue>> fixed;              // in file order
  std::vector<std::pair<std::string, std::vector<FlagValue>>> vary;  // in file order
};

struct SweepPoint {
  int index = 0;                  // 0 .. points - 1, in product order
  std::vector<std::string> vary;  // the value of each "vary" flag, as the CSV shows it
  std::vector<std::string> args;  // `dtsim simulate` arguments: --flag value ...
};

// Flags a sweep may not set: the sweep sets --report itself, and one output file per point
// would be overwritten by every point.
inline constexpr const char* kFlagsNotInSweeps[] = {"help", "report", "timeline", "link-report"};

// Reads and validates `doc` (the contents of `file`). `flags` are the long names of
// `dtsim simulate`'s flags. Throws ConfigError listing every problem, one per line, as
// "<file>: <JSON pointer>: <what was expected>".
[[nodiscard]] SweepSpec sweep_from_json(const nlohmann::ordered_json& doc, const std::string& file,
                                        const std::vector<std::string>& flags);

// Reads the file at `path` (ConfigError if it cannot be read or parsed) and validates it.
[[nodiscard]] SweepSpec read_sweep(const std::string& path, const std::vector<std::string>& flags);

// Every point of the product (1 point if nothing varies).
[[nodiscard]] std::vector<SweepPoint> sweep_points(const SweepSpec& spec);

// How a flag value is shown in the CSV: its words separated by spaces.
[[nodiscard]] std::string flag_value_text(const FlagValue& value);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_CLI_SWEEP_SPEC_H_
