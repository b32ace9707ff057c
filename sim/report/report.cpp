#include "sim/report/report.h"

#include "workloads/parsing/units.h"

namespace dtsim::sim {

using nlohmann::ordered_json;
using parsing::format_number;

namespace {

ordered_json run_json(const RunInfo& run) {
  ordered_json r;
  r["dtsim_version"] = DTSIM_VERSION;
  r["verb"] = run.verb;
  r["platform"] = {{"file", run.platform_file}, {"topology", run.topology}, {"hosts", run.hosts}};
  r["ranks"] = run.ranks;
  r["rank_placement"] = run.placement;
  if (run.placement_seed) {
    r["rank_placement_seed"] = *run.placement_seed;
  }
  r["algorithm"] = run.algorithm;
  r["replay"] = run.replay;
  r["chunk_bytes"] = run.chunk_bytes;
  r["collective_latency_sec"] = run.collective_latency_sec;
  if (run.ranks_per_node) {
    r["ranks_per_node"] = *run.ranks_per_node;
  }
  r["network_model"] = {
      {"name", run.network_model}, {"simgrid_cfg", run.simgrid_cfg}, {"extra_cfg", run.extra_cfg}};
  if (!run.what_if.empty()) {
    r["what_if"] = run.what_if;
  }
  return r;
}

ordered_json result_json(const TrainingResult& t) {
  ordered_json r;
  r["iteration_time_sec"] = t.iteration_time_sec;
  r["compute_sec"] = t.compute_sec;
  r["forward_sec"] = t.forward_sec;
  r["backward_sec"] = t.backward_sec;
  r["optimizer_sec"] = t.optimizer_sec;
  r["exposed_comm_sec"] = t.exposed_comm_sec;
  r["scaling_efficiency"] = t.scaling_efficiency;
  r["samples_per_sec_per_device"] = t.samples_per_sec_per_device;
  r["backward_end_sec"] = t.backward_end_sec;
  r["iteration_end_sec"] = t.iteration_end_sec;
  ordered_json buckets = ordered_json::array();
  for (std::size_t b = 0; b < t.buckets.size(); ++b) {
    const BucketResult& bucket = t.buckets[b];
    ordered_json j{{"index", b},
                   {"bytes", bucket.bytes},
                   {"algorithm", bucket.algorithm},
                   {"first_layer", bucket.first_layer},
                   {"last_layer", bucket.last_layer},
                   {"ready_sec", bucket.ready_sec},
                   {"start_sec", bucket.start_sec},
                   {"end_sec", bucket.end_sec},
                   {"duration_sec", bucket.end_sec - bucket.start_sec}};
    if (bucket.auto_choice) {
      j["auto"] = choice_json(*bucket.auto_choice);
    }
    buckets.push_back(std::move(j));
  }
  r["buckets"] = std::move(buckets);
  r["limiter"] = limiter_json(t.limiter, t.comm_cost);
  return r;
}

// What limits scaling and the busiest link of each level.
std::string limits_summary(const SimulateReport& report) {
  return "  limited by              " + report.result.limiter.explanation + "\n" +
         busiest_links(report.links);
}

// ", with --cfg A, --cfg B" when the user added SimGrid settings: the model is then not only the
// named one; then what_if_note's.
std::string extra_cfg_note(const RunInfo& run) {
  std::string note;
  for (const std::string& setting : run.extra_cfg) {
    note += (note.empty() ? ", with --cfg " : ", --cfg ") + setting;
  }
  return note + what_if_note(run);
}

}  // namespace

std::string what_if_note(const RunInfo& run) {
  std::string note;
  for (std::size_t i = 0; i < run.what_if.size(); ++i) {
    note += (i == 0 ? ", with --apply " : ", --apply ") + run.what_if[i];
  }
  return note;
}

std::string busiest_links(const std::vector<LinkLoad>& links) {
  std::string s;
  const char* heading = "  busiest link per level ";
  for (const auto& level : link_levels_json(links, 1)) {
    const auto& top = level["busiest"][0];
    s += heading + (" " + level["level"].get<std::string>()) + ": " +
         top["link"].get<std::string>() + " " +
         format_number("%.1f %% utilized", 100 * top["utilization"].get<double>()) + ", " +
         parsing::format_bytes(top["bytes"].get<std::uint64_t>()) + " per iteration\n";
    heading = "                         ";
  }
  return s;
}

ordered_json report_json(const SimulateReport& report) {
  ordered_json r = run_json(report.run);
  const WorkloadInfo& w = report.workload;
  r["workload"] = {{"file", w.file},
                   {"model", w.model},
                   {"device", w.device},
                   {"precision", w.precision},
                   {"batch_per_device", w.batch_per_device},
                   {"param_bytes", w.param_bytes}};
  r["bucket_cap_bytes"] = report.bucket_cap_bytes;
  r["first_bucket_cap_bytes"] = report.first_bucket_cap_bytes;
  r["iterations_simulated"] = report.iterations_simulated;
  r["accumulation_steps"] = report.accumulation_steps;
  r["overlap"] = report.overlap;
  r["tasks_replayed"] = report.tasks_replayed;
  r["ranks_folded"] = report.ranks_folded;
  r["all_reduces_memoized"] = report.all_reduces_memoized;
  r["result"] = result_json(report.result);
  r["links"] = link_levels_json(report.links);
  r["error_bars"] = error_bars_json(report.error_bars);
  return r;
}

ordered_json report_json(const CollectiveReport& report) {
  ordered_json r = run_json(report.run);
  r["op"] = report.op;
  if (report.root) {
    r["root"] = *report.root;
  }
  r["bytes"] = report.bytes;
  if (report.auto_choice) {
    r["auto"] = choice_json(*report.auto_choice);
  }
  r["time_sec"] = report.time_sec;
  r["algorithm_bandwidth_bytes_per_sec"] = report.algorithm_bandwidth_bytes_per_sec;
  r["bus_bandwidth_bytes_per_sec"] = report.bus_bandwidth_bytes_per_sec;
  r["transfers"] = report.transfers;
  r["error_bars"] = error_bars_json(report.error_bars);
  return r;
}

ordered_json report_json(const GraphReport& report) {
  ordered_json r = run_json(report.run);
  r["graph"] = {{"file", report.graph_file},
                {"programs", report.programs},
                {"communicators", report.communicators},
                {"nodes", report.nodes}};
  r["iterations_simulated"] = report.iterations_simulated;
  r["tasks_replayed"] = report.tasks_replayed;
  r["ranks_folded"] = report.ranks_folded;
  r["collectives_memoized"] = report.collectives_memoized;
  r["fold"] = {{"mode", report.fold},
               {"shadows", report.shadows},
               {"checks", report.fold_checks},
               {"max_difference_sec", report.fold_max_difference_sec},
               {"repeats_left_out", report.repeats_left_out}};
  ordered_json collectives = ordered_json::array();
  for (const CollectiveResult& c : report.collectives) {
    collectives.push_back({{"communicator", c.communicator},
                           {"op", c.op},
                           {"bytes", c.bytes},
                           {"algorithm", c.algorithm},
                           {"start_sec", c.start_sec},
                           {"end_sec", c.end_sec},
                           {"duration_sec", c.end_sec - c.start_sec}});
  }
  r["result"] = {{"iteration_time_sec", report.iteration_time_sec},
                 {"iteration_end_sec", report.iteration_end_sec},
                 {"compute_sec", report.compute_sec},
                 {"busiest_rank", report.busiest_rank},
                 {"exposed_comm_sec", report.exposed_comm_sec},
                 {"collectives", std::move(collectives)},
                 {"transfers", report.transfers},
                 {"transfer_bytes", report.transfer_bytes}};
  r["links"] = link_levels_json(report.links);
  r["error_bars"] = error_bars_json(report.error_bars);
  return r;
}

std::string report_summary(const GraphReport& report) {
  std::string s = "dtsim simulate: graph " + report.graph_file + " (" +
                  std::to_string(report.run.ranks) + " ranks, " + std::to_string(report.programs) +
                  " programs, " + std::to_string(report.communicators) + " communicators) on " +
                  report.run.topology + ", " + report.run.algorithm + " (" + report.run.replay +
                  " replay" + fold_note(report) + ", " + report.run.network_model +
                  " network model" + extra_cfg_note(report.run) + ")\n";
  s += "  iteration time          " + format_number("%.6f s", report.iteration_time_sec) + "\n";
  s += "  compute (busiest rank)  " + format_number("%.6f s", report.compute_sec) + " (rank " +
       std::to_string(report.busiest_rank) + ")\n";
  s += "  exposed communication   " + format_number("%.6f s", report.exposed_comm_sec) + "\n";
  s += "  communication           " +
       std::to_string(report.collectives.size() + report.last_iteration_left_out) +
       " collectives, " + std::to_string(report.transfers) +
       " send/recv transfers in the last iteration\n";
  return s + busiest_links(report.links) + error_bars_summary(report.error_bars);
}

std::string fold_note(const GraphReport& report) {
  if (!report.ranks_folded) {
    return "";
  }
  return report.fold == "verified" ? " with ranks folded and verified" : " with ranks folded";
}

std::string report_summary(const SimulateReport& report) {
  const TrainingResult& r = report.result;
  const std::string folded = report.ranks_folded ? " with ranks folded, " +
                                                       std::to_string(report.all_reduces_memoized) +
                                                       " all-reduces memoized"
                                                 : "";
  std::string s = "dtsim simulate: " + report.workload.model + " (batch " +
                  std::to_string(report.workload.batch_per_device) + "/device) on " +
                  std::to_string(report.run.ranks) + " ranks, " + report.run.topology + ", " +
                  report.run.algorithm + " all-reduce (" + report.run.replay + " replay" + folded +
                  ", " + report.run.network_model + " network model" + extra_cfg_note(report.run) +
                  ")\n";
  s += "  iteration time          " + format_number("%.6f s", r.iteration_time_sec) + "\n";
  s += "  compute (fwd+bwd+opt)   " + format_number("%.6f s", r.compute_sec) + "\n";
  s += "  exposed communication   " + format_number("%.6f s", r.exposed_comm_sec) + "\n";
  s += "  scaling efficiency      " + format_number("%.1f %%", 100 * r.scaling_efficiency) + "\n";
  if (!r.buckets.empty()) {
    s += "  gradient buckets        " + std::to_string(r.buckets.size()) +
         ", last all-reduce ends " +
         format_number("%.6f s", r.buckets.back().end_sec - r.backward_end_sec) +
         " after the backward pass" +
         (report.overlap == "none" ? " (--overlap none: all start after it)" : "") + "\n";
  }
  return s + limits_summary(report) + error_bars_summary(report.error_bars);
}

std::string report_summary(const CollectiveReport& report) {
  return "dtsim collective: " + report.op + " of " + parsing::format_bytes(report.bytes) + " on " +
         std::to_string(report.run.ranks) + " ranks, " + report.run.algorithm + ": " +
         format_number("%.9g s", report.time_sec) + " (bus bandwidth " +
         format_number("%.4g GB/s", report.bus_bandwidth_bytes_per_sec / 1e9) + ")\n" +
         error_bars_summary(report.error_bars);
}

}  // namespace dtsim::sim
