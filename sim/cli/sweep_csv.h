// The results file of a sweep (`dtsim sweep --out R.csv`): a header line, then one line per
// finished point, appended as each finishes and sorted by point once all are done.
// Columns: point, one per "vary" flag (its value), status ("ok", or "failed (exit N)" /
// "failed (signal N)"), then from the point's report: iteration_time_sec, compute_sec,
// exposed_comm_sec, scaling_efficiency, samples_per_sec_per_device, limiter, limiter_level;
// last, error (the failed run's stderr, lines joined by "; "). Fields with a comma, a quote or
// a newline are quoted as RFC 4180 says. Pure: no files.
#ifndef DTSIM_SIM_CLI_SWEEP_CSV_H_
#define DTSIM_SIM_CLI_SWEEP_CSV_H_

#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/cli/sweep_spec.h"

namespace dtsim::sim {

[[nodiscard]] std::string sweep_csv_header(const SweepSpec& spec);

// The line (ending in '\n') of a point that ran, from its `dtsim simulate` report.
[[nodiscard]] std::string sweep_csv_ok_row(const SweepPoint& point,
                                           const nlohmann::ordered_json& report);

// The line of a point that failed: `status` and the error message.
[[nodiscard]] std::string sweep_csv_failed_row(const SweepPoint& point, const std::string& status,
                                               const std::string& error);

struct ExistingResults {
  std::set<int> done;               // points with a line
  std::set<int> failed;             // those of them whose status is not "ok"
  std::size_t complete_length = 0;  // bytes up to the last '\n': a torn last line is dropped
};

// Reads the `text` of an existing results file of this sweep (file `path`). Throws ConfigError
// if its header is not `header` or a line does not belong to the point it names (another
// sweep's file).
[[nodiscard]] ExistingResults read_sweep_csv(const std::string& text, const std::string& path,
                                             const std::string& header,
                                             const std::vector<SweepPoint>& points);

// `text` (complete lines) with the point lines sorted by point index: the same for any order in
// which points finished.
[[nodiscard]] std::string sort_sweep_csv(const std::string& text);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_CLI_SWEEP_CSV_H_
