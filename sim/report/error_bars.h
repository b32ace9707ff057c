// How far to trust a prediction: the validated error of its class of prediction, from the
// project's own validation against published measurements. The table is written by
// experiments/validation/error_bars.py from experiments/validation/results/ and compiled in
// (error_bars_table.inc); the test suite checks that it matches the results it came from.
// Every report lists the bars of its classes (README, "Error bars"); a class no published row
// covers says so (rows 0) rather than borrowing another's figure.
#ifndef DTSIM_SIM_REPORT_ERROR_BARS_H_
#define DTSIM_SIM_REPORT_ERROR_BARS_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace dtsim::sim {

struct ErrorBar {
  std::string error_class;  // "dp-calibrated-one-node", "allreduce-multi-node", ...
  std::string description;
  int rows = 0;               // published rows behind it; 0: never validated
  double median_abs_pct = 0;  // of |predicted - measured| / measured
  double p90_abs_pct = 0;     // the 90th percentile (nearest rank)
};

// The bar of `error_class`; an unknown class gets rows 0 and `description`.
[[nodiscard]] ErrorBar error_bar(const std::string& error_class, const std::string& description);

// A data-parallel training prediction: its end-to-end class by how the compute was timed
// (`timing`: "calibrated", "op-class", "roofline", "measured" or "unknown") and whether its
// ranks span nodes, and for a modelled compute the compute class of `device` (a catalogue name,
// "" when the trace's GPU is not in the catalogue).
[[nodiscard]] std::vector<ErrorBar> training_error_bars(const std::string& timing, bool multi_node,
                                                        const std::string& device);
// A collective `op` ("all-reduce", ...) inside one node or across nodes.
[[nodiscard]] std::vector<ErrorBar> collective_error_bars(const std::string& op, bool multi_node);
// A hybrid-parallel run of a transformer (`transformer`) or a CNN.
[[nodiscard]] std::vector<ErrorBar> hybrid_error_bars(bool transformer);
// The peak memory of a rank of a transformer (`transformer`) or a CNN, from the memory model.
[[nodiscard]] ErrorBar memory_error_bar(bool transformer);
// The speedup a what-if predicts (sim/whatif/WHATIF.md): `name` is the what-if's ("amp", "gpu",
// or, with `knob`, the simulate flag it sets: "bucket-mb", "workload", "precision", ...). Its
// error is that of the predicted speedup against measured pairs' (s / m - 1).
[[nodiscard]] ErrorBar whatif_error_bar(const std::string& name, bool knob);

// The report's "error_bars" array, and a line per bar for the text summary.
[[nodiscard]] nlohmann::ordered_json error_bars_json(const std::vector<ErrorBar>& bars);
[[nodiscard]] std::string error_bars_summary(const std::vector<ErrorBar>& bars);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_REPORT_ERROR_BARS_H_
