#include "sim/report.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

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

namespace {

// The end of node `i` of `rank`: a compute node's, a transfer's, or a collective's exit.
double end_of(const ExecutionGraph& g, const LoweredGraph& lowered, const ReplayTimes& times,
              int rank, std::int32_t i) {
  const Node& node = g.program_of(rank).nodes[static_cast<std::size_t>(i)];
  if (node.kind != NodeKind::kCollective) {
    return node_end_sec(lowered, times, rank, i);
  }
  const CollectiveInstance& inst =
      lowered.instances[static_cast<std::size_t>(lowered.node(rank, i).instance)];
  return max_end(inst.exits_of(local_rank(g.communicator_of(rank, node), rank)), times);
}

// Per iteration, the latest end of any node of any rank.
std::vector<double> iteration_ends(const ExecutionGraph& g, const LoweredGraph& lowered,
                                   const ReplayTimes& times) {
  std::vector<double> ends;
  for (int r = 0; r < g.rank_count(); ++r) {
    if (lowered.stands_for[static_cast<std::size_t>(r)] != r) {
      continue;  // its times are those of the rank it stands for
    }
    const Program& p = g.program_of(r);
    for (std::size_t i = 0; i < p.nodes.size(); ++i) {
      const auto it = static_cast<std::size_t>(p.nodes[i].iteration);
      if (ends.size() <= it) {
        ends.resize(it + 1, 0.0);
      }
      ends[it] = std::max(ends[it], end_of(g, lowered, times, r, static_cast<std::int32_t>(i)));
    }
  }
  return ends;
}

// Rank 0's compute of iteration `it` on a healthy device: per micro-batch forward and backward
// summed in layer order, then the optimizer.
void measure_compute(const Program& p, std::int32_t it, TrainingTimes& t) {
  std::map<std::int32_t, std::vector<std::pair<std::int32_t, double>>> forward, backward;
  double optimizer_sec = 0;
  for (const Node& node : p.nodes) {
    if (node.kind != NodeKind::kCompute || node.iteration != it) {
      continue;
    }
    if (node.phase == Phase::kForward || node.phase == Phase::kRecompute) {
      forward[node.micro_batch].emplace_back(node.layer, node.duration_sec);
    } else if (node.phase == Phase::kBackward) {
      backward[node.micro_batch].emplace_back(node.layer, node.duration_sec);
    } else if (node.phase == Phase::kOptimizer) {
      optimizer_sec += node.duration_sec;
    }
  }
  auto in_layer_order = [](std::vector<std::pair<std::int32_t, double>> nodes) {
    std::stable_sort(nodes.begin(), nodes.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    double total = 0;
    for (const auto& [layer, sec] : nodes) {
      total += sec;
    }
    return total;
  };
  std::set<std::int32_t> micro_batches;
  for (const auto& [m, nodes] : forward) {
    micro_batches.insert(m);
  }
  for (const auto& [m, nodes] : backward) {
    micro_batches.insert(m);
  }
  t.compute_sec = 0;
  for (std::int32_t m : micro_batches) {
    t.forward_sec = in_layer_order(forward[m]);
    t.backward_sec = in_layer_order(backward[m]);
    t.compute_sec += t.forward_sec + t.backward_sec;
  }
  t.optimizer_sec = optimizer_sec;
  t.compute_sec += optimizer_sec;
  t.micro_batches = std::max<int>(1, static_cast<int>(micro_batches.size()));
}

}  // namespace

TrainingTimes measure_training(const ExecutionGraph& g, const LoweredGraph& lowered,
                               const ReplayTimes& times) {
  TrainingTimes t;
  t.iteration_end_sec = iteration_ends(g, lowered, times);
  const std::size_t last = t.iteration_end_sec.size() - 1;
  const double start_sec = last == 0 ? 0.0 : t.iteration_end_sec[last - 1];
  t.iteration_time_sec = t.iteration_end_sec[last] - start_sec;
  const auto it = static_cast<std::int32_t>(last);
  measure_compute(g.program_of(0), it, t);

  // Per rank, its backward node of each layer in the last iteration (the last micro-batch's).
  double backward_end = 0;
  std::map<std::pair<int, std::int32_t>, double> backward_layer_end;  // (rank, layer)
  for (int r = 0; r < g.rank_count(); ++r) {
    if (lowered.stands_for[static_cast<std::size_t>(r)] != r) {
      continue;
    }
    const Program& p = g.program_of(r);
    for (std::size_t i = 0; i < p.nodes.size(); ++i) {
      const Node& node = p.nodes[i];
      if (node.kind == NodeKind::kCompute && node.iteration == it &&
          node.phase == Phase::kBackward) {
        const double end = node_end_sec(lowered, times, r, static_cast<std::int32_t>(i));
        backward_end = std::max(backward_end, end);
        backward_layer_end[{r, node.layer}] = end;
      }
    }
  }
  t.backward_end_sec = backward_end - start_sec;
  const Program& p0 = g.program_of(0);
  for (std::size_t i = 0; i < p0.nodes.size(); ++i) {
    const Node& node = p0.nodes[i];
    if (node.kind != NodeKind::kCollective || node.iteration != it) {
      continue;
    }
    const std::int32_t index = lowered.node(0, static_cast<std::int32_t>(i)).instance;
    const CollectiveInstance& c = lowered.instances[static_cast<std::size_t>(index)];
    double ready = 0;
    for (int r : g.communicator_of(0, node).ranks) {
      const auto found =
          backward_layer_end.find({lowered.stands_for[static_cast<std::size_t>(r)], node.layer});
      if (found != backward_layer_end.end()) {
        ready = std::max(ready, found->second);
      }
    }
    TrainingTimes::CollectiveTimes ct{.node = static_cast<std::int32_t>(i),
                                      .instance = index,
                                      .ready_sec = ready - start_sec};
    if (c.first == c.end) {  // a single rank: nothing to reduce
      ct.start_sec = ct.end_sec = ct.ready_sec;
    } else {
      ct.start_sec =
          *std::min_element(times.start_sec.begin() + c.first, times.start_sec.begin() + c.end) -
          start_sec;
      ct.end_sec =
          *std::max_element(times.end_sec.begin() + c.first, times.end_sec.begin() + c.end) -
          start_sec;
    }
    t.collectives.push_back(ct);
  }
  return t;
}

ordered_json training_result(const ExecutionGraph& g, const LoweredGraph& lowered,
                             const TrainingTimes& t, int batch_per_device) {
  const double compute_sec = t.compute_sec;
  ordered_json r;
  r["iteration_time_sec"] = t.iteration_time_sec;
  r["compute_sec"] = compute_sec;
  r["forward_sec"] = t.forward_sec;
  r["backward_sec"] = t.backward_sec;
  r["optimizer_sec"] = t.optimizer_sec;
  // Never negative: float sums of the same durations may differ in the last bit.
  r["exposed_comm_sec"] = std::max(0.0, t.iteration_time_sec - compute_sec);
  r["scaling_efficiency"] = t.iteration_time_sec > 0 ? compute_sec / t.iteration_time_sec : 1.0;
  r["samples_per_sec_per_device"] =
      t.iteration_time_sec > 0 ? 1.0 * batch_per_device * t.micro_batches / t.iteration_time_sec
                               : 0.0;
  r["backward_end_sec"] = t.backward_end_sec;
  r["iteration_end_sec"] = t.iteration_end_sec;
  ordered_json buckets = ordered_json::array();
  const Program& p0 = g.program_of(0);
  for (std::size_t b = 0; b < t.collectives.size(); ++b) {
    const auto& ct = t.collectives[b];
    const Node& node = p0.nodes[static_cast<std::size_t>(ct.node)];
    const CollectiveInstance& c = lowered.instances[static_cast<std::size_t>(ct.instance)];
    auto layer_name = [&g](std::int32_t layer) {
      return layer < 0 ? std::string() : g.layers[static_cast<std::size_t>(layer)];
    };
    buckets.push_back({{"index", b},
                       {"bytes", node.bytes},
                       {"algorithm", lowered.choices[static_cast<std::size_t>(c.choice)].algorithm},
                       {"first_layer", layer_name(node.layer)},
                       {"last_layer", layer_name(node.last_layer)},
                       {"ready_sec", ct.ready_sec},
                       {"start_sec", ct.start_sec},
                       {"end_sec", ct.end_sec},
                       {"duration_sec", ct.end_sec - ct.start_sec}});
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
