#include "sim/report/error_bars.h"

#include <array>
#include <cstdio>

namespace dtsim::sim {

namespace {

struct Row {
  const char* error_class;
  const char* description;
  int rows;
  double median_abs_pct;
  double p90_abs_pct;
};

constexpr Row kTable[] = {
#include "sim/report/error_bars_table.inc"
};

std::string scope(bool multi_node) {
  return multi_node ? "multi-node" : "one-node";
}

// How a trace's compute was timed, in a report's words (training_error_bars' `timing`).
std::string timing_phrase(const std::string& timing) {
  if (timing == "calibrated") {
    return "calibrated to a measured single-GPU time";
  }
  if (timing == "measured") {
    return "measured by a profiler";
  }
  if (timing == "op-class" || timing == "roofline") {
    return "from the " + timing + " model";
  }
  return "from a trace of unknown origin";
}

std::string format_pct(double pct) {
  std::array<char, 32> buffer{};
  std::snprintf(buffer.data(), buffer.size(), "%.1f %%", pct);
  return buffer.data();
}

}  // namespace

ErrorBar error_bar(const std::string& error_class, const std::string& description) {
  for (const Row& r : kTable) {
    if (error_class == r.error_class) {
      return {.error_class = r.error_class,
              .description = r.description,
              .rows = r.rows,
              .median_abs_pct = r.median_abs_pct,
              .p90_abs_pct = r.p90_abs_pct};
    }
  }
  return {.error_class = error_class, .description = description};
}

std::vector<ErrorBar> training_error_bars(const std::string& timing, bool multi_node,
                                          const std::string& device) {
  const std::string where = multi_node ? "across nodes" : "on one node";
  std::vector<ErrorBar> bars{
      error_bar("dp-" + timing + "-" + scope(multi_node),
                "data-parallel training " + where + ", compute " + timing_phrase(timing))};
  if (timing == "op-class" || timing == "roofline") {
    const std::string gpu = device.empty() ? "unknown" : device;
    bars.push_back(error_bar("compute-" + timing + "-" + gpu,
                             "one " + gpu + " GPU's compute from the " + timing + " model"));
  }
  return bars;
}

std::vector<ErrorBar> collective_error_bars(const std::string& op, bool multi_node) {
  const std::string name = op == "all-reduce" ? "allreduce" : op;
  return {error_bar(name + "-" + scope(multi_node),
                    "a " + op + (multi_node ? " across nodes" : " inside one node"))};
}

std::vector<ErrorBar> hybrid_error_bars(bool transformer) {
  return {transformer ? error_bar("hybrid-transformer", "a hybrid-parallel transformer run")
                      : error_bar("hybrid-cnn", "a model-parallel CNN run")};
}

ErrorBar memory_error_bar(bool transformer) {
  return transformer ? error_bar("memory-transformer", "a transformer rank's peak memory")
                     : error_bar("memory-cnn", "a CNN rank's peak memory from the memory model");
}

ErrorBar whatif_error_bar(const std::string& name, bool knob) {
  if (knob && name == "bucket-mb") {
    return error_bar("whatif-bucket", "bucket-size what-ifs' speedups");
  }
  if (knob && name == "workload") {
    return error_bar("whatif-workload", "speedups of a what-if that swaps the workload trace");
  }
  if (knob) {  // a class per flag: only the knobs a measured pair changed have rows
    return error_bar("whatif-knob-" + name, "speedups of a " + name + " knob changed on a job");
  }
  if (name == "amp" || name == "bf16") {
    return error_bar("whatif-amp", "amp and bf16 what-ifs' speedups");
  }
  // gpu, network, compress, p3, algorithm@ROLE, ...: by the what-if's name, whatever its value
  const std::string kind = name.substr(0, name.find('@'));
  return error_bar("whatif-" + kind, "speedups of a " + kind + " what-if");
}

nlohmann::ordered_json error_bars_json(const std::vector<ErrorBar>& bars) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const ErrorBar& b : bars) {
    nlohmann::ordered_json j{
        {"class", b.error_class}, {"description", b.description}, {"rows", b.rows}};
    if (b.rows > 0) {
      j["median_abs_error_pct"] = b.median_abs_pct;
      j["p90_abs_error_pct"] = b.p90_abs_pct;
    }
    out.push_back(std::move(j));
  }
  return out;
}

std::string error_bars_summary(const std::vector<ErrorBar>& bars) {
  std::string s;
  for (const ErrorBar& b : bars) {
    s += "  validated error         ";
    if (b.rows == 0) {
      s += "none: no published measurement of " + b.description + " was checked\n";
      continue;
    }
    s += format_pct(b.median_abs_pct) + " median, " + format_pct(b.p90_abs_pct) +
         " at the 90th percentile, over " + std::to_string(b.rows) + " published rows of " +
         b.description + "\n";
  }
  return s;
}

}  // namespace dtsim::sim
