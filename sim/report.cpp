#include "sim/report.h"

#include <algorithm>

#include "platforms/units.h"

namespace dtsim::sim {

using nlohmann::ordered_json;
using platforms::format_number;

namespace {

double max_end(const std::vector<TaskId>& ids, const ReplayTimes& times) {
  double t = 0;
  for (TaskId id : ids) {
    t = std::max(t, times.end_sec[static_cast<std::size_t>(id)]);
  }
  return t;
}

// What limits scaling and the busiest link of each level (reports from before they existed have
// neither).
std::string limits_summary(const ordered_json& report) {
  std::string s;
  if (report["result"].contains("limiter")) {
    s += "  limited by              " +
         report["result"]["limiter"]["explanation"].get<std::string>() + "\n";
  }
  if (!report.contains("links")) {
    return s;
  }
  const char* heading = "  busiest link per level ";
  for (const auto& level : report["links"]) {
    const auto& top = level["busiest"][0];
    s += heading + (" " + level["level"].get<std::string>()) + ": " +
         top["link"].get<std::string>() + " " +
         format_number("%.1f %% utilized", 100 * top["utilization"].get<double>()) + ", " +
         platforms::format_bytes(top["bytes"].get<std::uint64_t>()) + " per iteration\n";
    heading = "                         ";
  }
  return s;
}

}  // namespace

DataParallelTimes measure_data_parallel(const DataParallelGraph& dp, const ReplayTimes& times) {
  DataParallelTimes t;
  for (const auto& iter : dp.iterations) {
    t.iteration_end_sec.push_back(max_end(iter.optimizer, times));
  }
  const std::size_t last = dp.iterations.size() - 1;
  const double start_sec = last == 0 ? 0.0 : t.iteration_end_sec[last - 1];
  t.iteration_time_sec = t.iteration_end_sec[last] - start_sec;
  const auto& iter = dp.iterations[last];
  t.backward_end_sec = max_end(iter.backward_end, times) - start_sec;
  for (std::size_t b = 0; b < dp.buckets.size(); ++b) {
    const CollectiveTasks& c = iter.all_reduce[b];
    DataParallelTimes::BucketTimes bt{.ready_sec = max_end(iter.ready[b], times) - start_sec};
    if (c.first == c.end) {  // a single rank: nothing to reduce
      bt.start_sec = bt.end_sec = bt.ready_sec;
    } else {
      bt.start_sec =
          *std::min_element(times.start_sec.begin() + c.first, times.start_sec.begin() + c.end) -
          start_sec;
      bt.end_sec =
          *std::max_element(times.end_sec.begin() + c.first, times.end_sec.begin() + c.end) -
          start_sec;
    }
    t.buckets.push_back(bt);
  }
  return t;
}

ordered_json data_parallel_result(const workloads::Workload& w, const DataParallelGraph& dp,
                                  const DataParallelTimes& t) {
  const int steps = dp.accumulation_steps;
  // Micro-batch by micro-batch, then the optimizer step.
  double compute_sec = 0;
  for (int m = 0; m < steps; ++m) {
    compute_sec += w.forward_sec() + w.backward_sec();
  }
  compute_sec += w.optimizer_sec;
  ordered_json r;
  r["iteration_time_sec"] = t.iteration_time_sec;
  r["compute_sec"] = compute_sec;
  r["forward_sec"] = w.forward_sec();
  r["backward_sec"] = w.backward_sec();
  r["optimizer_sec"] = w.optimizer_sec;
  // Never negative: float sums of the same durations may differ in the last bit.
  r["exposed_comm_sec"] = std::max(0.0, t.iteration_time_sec - compute_sec);
  r["scaling_efficiency"] = t.iteration_time_sec > 0 ? compute_sec / t.iteration_time_sec : 1.0;
  r["samples_per_sec_per_device"] =
      t.iteration_time_sec > 0 ? 1.0 * w.batch_per_device * steps / t.iteration_time_sec : 0.0;
  r["backward_end_sec"] = t.backward_end_sec;
  r["iteration_end_sec"] = t.iteration_end_sec;
  ordered_json buckets = ordered_json::array();
  for (std::size_t b = 0; b < dp.buckets.size(); ++b) {
    const Bucket& bucket = dp.buckets[b];
    const auto& bt = t.buckets[b];
    buckets.push_back({{"index", b},
                       {"bytes", bucket.bytes},
                       {"algorithm", dp.choices[b].algorithm},
                       {"first_layer", w.layers[static_cast<std::size_t>(bucket.first_layer)].name},
                       {"last_layer", w.layers[static_cast<std::size_t>(bucket.last_layer)].name},
                       {"ready_sec", bt.ready_sec},
                       {"start_sec", bt.start_sec},
                       {"end_sec", bt.end_sec},
                       {"duration_sec", bt.end_sec - bt.start_sec}});
  }
  r["buckets"] = std::move(buckets);
  return r;
}

namespace {

// Which fast path ran: " with ranks folded, N all-reduces memoized", or nothing.
std::string folded_note(const ordered_json& report) {
  if (!report.value("ranks_folded", false)) {
    return "";
  }
  return " with ranks folded, " +
         std::to_string(report.value("all_reduces_memoized", std::size_t{0})) +
         " all-reduces memoized";
}

// ", with --cfg A, --cfg B" when the user added SimGrid settings: the model is then not only the
// named one.
std::string extra_cfg_note(const ordered_json& report) {
  std::string note;
  for (const auto& setting : report["network_model"]["extra_cfg"]) {
    note += (note.empty() ? ", with --cfg " : ", --cfg ") + setting.get<std::string>();
  }
  return note;
}

}  // namespace

std::string simulate_summary(const ordered_json& report) {
  const auto& r = report["result"];
  const double iteration_sec = r["iteration_time_sec"].get<double>();
  std::string s = "dtsim simulate: " + report["workload"]["model"].get<std::string>() + " (batch " +
                  std::to_string(report["workload"]["batch_per_device"].get<int>()) +
                  "/device) on " + std::to_string(report["ranks"].get<int>()) + " ranks, " +
                  report["platform"]["topology"].get<std::string>() + ", " +
                  report["algorithm"].get<std::string>() + " all-reduce (" +
                  report["replay"].get<std::string>() + " replay" + folded_note(report) + ", " +
                  report["network_model"]["name"].get<std::string>() + " network model" +
                  extra_cfg_note(report) + ")\n";
  s += "  iteration time          " + format_number("%.6f s", iteration_sec) + "\n";
  s +=
      "  compute (fwd+bwd+opt)   " + format_number("%.6f s", r["compute_sec"].get<double>()) + "\n";
  s += "  exposed communication   " + format_number("%.6f s", r["exposed_comm_sec"].get<double>()) +
       "\n";
  s += "  scaling efficiency      " +
       format_number("%.1f %%", 100 * r["scaling_efficiency"].get<double>()) + "\n";
  const auto& buckets = r["buckets"];
  if (!buckets.empty()) {
    const double last_end = buckets.back()["end_sec"].get<double>();
    s += "  gradient buckets        " + std::to_string(buckets.size()) + ", last all-reduce ends " +
         format_number("%.6f s", last_end - r["backward_end_sec"].get<double>()) +
         " after the backward pass" +
         (report.value("overlap", "backward") == "none" ? " (--overlap none: all start after it)"
                                                        : "") +
         "\n";
  }
  return s + limits_summary(report);
}

std::string collective_summary(const ordered_json& report) {
  return "dtsim collective: " + report["op"].get<std::string>() + " of " +
         platforms::format_bytes(report["bytes"].get<std::uint64_t>()) + " on " +
         std::to_string(report["ranks"].get<int>()) + " ranks, " +
         report["algorithm"].get<std::string>() + ": " +
         format_number("%.9g s", report["time_sec"].get<double>()) + " (bus bandwidth " +
         format_number("%.4g GB/s", report["bus_bandwidth_bytes_per_sec"].get<double>() / 1e9) +
         ")\n";
}

}  // namespace dtsim::sim
