#include "sim/planner/plan_report.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <map>
#include <utility>

namespace dtsim::sim {

namespace {

using nlohmann::ordered_json;

// Steps closer than this (relative) are the same time: the sentence speaks of memory then.
constexpr double kSameTimeFraction = 1e-3;

std::string fmt(const char* format, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, value);
  return buffer;
}

std::string gib(std::uint64_t bytes) {
  return fmt("%.2f", static_cast<double>(bytes) / (1 << 30));
}

const SimulatedRun* simulation_of(const PlanOutcome& plan, int rank) {
  for (const SimulatedRun& s : plan.simulated) {
    if (s.rank == rank) {
      return &s;
    }
  }
  return nullptr;
}

// The estimate's terms with what they stand for in a sentence.
std::array<std::pair<const char*, double>, 9> terms(const Estimate& e) {
  return {{{"compute (recomputation, smaller shards' GEMM efficiency)", e.compute_sec},
           {"tensor-parallel collectives", e.tp_sec},
           {"ring-attention transfers", e.cp_sec},
           {"halo exchanges", e.halo_sec},
           {"the spatial split's collectives", e.spatial_sec},
           {"the pipeline bubble", e.bubble_sec},
           {"pipeline transfers", e.pp_sec},
           {"exposed gradient reduction and ZeRO gathers", e.dp_sec},
           {"the optimizer step", e.optimizer_sec}}};
}

std::string cell(std::string text, std::size_t width) {
  return text.size() >= width ? text + " " : text + std::string(width - text.size(), ' ');
}

// The table's simulated step: seconds, "timeout", "failed" or "-" (not simulated).
std::string sim_cell(const SimulatedRun* sim) {
  if (sim == nullptr) {
    return "-";
  }
  if (sim->ok) {
    return fmt("%.4f", sim->iteration_sec);
  }
  return sim->error.rfind("timed out", 0) == 0 ? "timeout" : "failed";
}

ordered_json row_json(const PlanOutcome& plan, int rank, int position) {
  const PlannedCandidate& p = plan.result.ranked[static_cast<std::size_t>(rank)];
  const Estimate& e = p.estimate;
  ordered_json j{
      {"rank", position + 1},
      {"configuration", candidate_name(p.candidate)},
      {"estimated_iteration_sec", e.iteration_sec},
      {"estimated",
       {{"compute_sec", e.compute_sec},
        {"tp_sec", e.tp_sec},
        {"cp_sec", e.cp_sec},
        {"halo_sec", e.halo_sec},
        {"spatial_sec", e.spatial_sec},
        {"bubble_sec", e.bubble_sec},
        {"pp_sec", e.pp_sec},
        {"dp_sec", e.dp_sec},
        {"optimizer_sec", e.optimizer_sec}}},
      {plan.seq_len > 0 ? "estimated_tokens_per_sec_per_gpu" : "estimated_samples_per_sec_per_gpu",
       p.tokens_per_sec_per_gpu},
      {"estimated_mfu", p.mfu},
      {"peak_memory_bytes", p.peak_bytes},
      {"limiter", e.limiter}};
  if (const SimulatedRun* s = simulation_of(plan, rank)) {
    j["simulated"] =
        s->ok
            ? ordered_json{{"iteration_time_sec", s->iteration_sec},
                           {plan.seq_len > 0 ? "tokens_per_sec_per_gpu" : "samples_per_sec_per_gpu",
                            s->tokens_per_sec_per_gpu},
                           {"mfu", s->mfu}}
            : ordered_json{{"error", s->error}};
  }
  return j;
}

}  // namespace

std::vector<int> final_order(const PlanOutcome& plan) {
  std::vector<int> simulated;
  for (const SimulatedRun& s : plan.simulated) {
    if (s.ok) {
      simulated.push_back(s.rank);
    }
  }
  std::stable_sort(simulated.begin(), simulated.end(), [&](int a, int b) {
    return simulation_of(plan, a)->iteration_sec < simulation_of(plan, b)->iteration_sec;
  });
  std::vector<int> order = simulated;
  for (int i = 0; i < static_cast<int>(plan.result.ranked.size()); ++i) {
    if (std::find(simulated.begin(), simulated.end(), i) == simulated.end()) {
      order.push_back(i);
    }
  }
  return order;
}

std::string why_winner(const PlanOutcome& plan) {
  const std::vector<int> order = final_order(plan);
  if (order.size() < 2) {
    return "";
  }
  const PlannedCandidate& a = plan.result.ranked[static_cast<std::size_t>(order[0])];
  const PlannedCandidate& b = plan.result.ranked[static_cast<std::size_t>(order[1])];
  const SimulatedRun* sa = simulation_of(plan, order[0]);
  const SimulatedRun* sb = simulation_of(plan, order[1]);
  const bool simulated = sa != nullptr && sb != nullptr && sa->ok && sb->ok;
  const double ta = simulated ? sa->iteration_sec : a.estimate.iteration_sec;
  const double tb = simulated ? sb->iteration_sec : b.estimate.iteration_sec;
  const std::string versus = candidate_name(a.candidate) + " beats " + candidate_name(b.candidate) +
                             " by " + fmt("%.1f", 100 * (tb - ta) / tb) + " % (" +
                             (simulated ? "simulated" : "estimated") + ")";
  if (tb - ta <= kSameTimeFraction * tb && a.peak_bytes == b.peak_bytes) {
    return candidate_name(a.candidate) + " ties with " + candidate_name(b.candidate) + " (" +
           (simulated ? "simulated" : "estimated") + " " + fmt("%.4f", ta) + " s against " +
           fmt("%.4f", tb) + " s, " + gib(a.peak_bytes) + " GiB per GPU each).";
  }
  if (tb - ta <= kSameTimeFraction * tb) {
    // Equal estimates rank the smaller peak first; a simulation may put the larger first.
    return a.peak_bytes < b.peak_bytes
               ? versus + ": the same time; it needs less memory, " + gib(a.peak_bytes) +
                     " GiB against " + gib(b.peak_bytes) + " GiB per GPU."
               : versus + ": the same time within 0.1 %; the runner-up needs less memory, " +
                     gib(b.peak_bytes) + " GiB against " + gib(a.peak_bytes) + " GiB per GPU.";
  }
  const auto wa = terms(a.estimate);
  const auto wb = terms(b.estimate);
  std::size_t most = 0;
  for (std::size_t i = 1; i < wa.size(); ++i) {
    if (wb[i].second - wa[i].second > wb[most].second - wa[most].second) {
      most = i;
    }
  }
  return versus + ": it spends " + fmt("%.3f", wb[most].second - wa[most].second) +
         " s less per step on " + wa[most].first + " (" + fmt("%.3f", wa[most].second) +
         " s against " + fmt("%.3f", wb[most].second) + " s, estimated).";
}

std::string plan_summary(const PlanOutcome& plan, int top) {
  const PlanResult& r = plan.result;
  int dropped = 0;
  for (const auto& [why, count] : r.dropped) {
    dropped += count;
  }
  const std::string batch = plan.seq_len > 0 ? std::to_string(plan.global_batch) + " x " +
                                                   std::to_string(plan.seq_len) + " tokens"
                                             : std::to_string(plan.global_batch) + " samples";
  std::string s = "dtsim plan: " + plan.model + " on " + std::to_string(plan.gpus) + " " +
                  plan.device + " GPUs (" + plan.platform + "), global batch " + batch +
                  (plan.checkpoint_early_stop ? ", full recompute stopping early" : "") + "\n  " +
                  std::to_string(r.enumerated) + " configurations, " + std::to_string(dropped) +
                  " dropped:\n";
  for (const auto& [why, count] : r.dropped) {
    s += "    " + std::to_string(count) + "  " + why + "\n";
  }
  s += "  " + std::to_string(r.ranked.size()) + " estimated, " +
       std::to_string(plan.simulated.size()) + " simulated (SimGrid)\n\n";
  const std::vector<int> order = final_order(plan);
  const std::size_t rows = std::min(order.size(), static_cast<std::size_t>(std::max(top, 0)));
  std::size_t width = 38;  // the longest name shown, and a space
  for (std::size_t i = 0; i < rows; ++i) {
    const PlannedCandidate& p = r.ranked[static_cast<std::size_t>(order[i])];
    width = std::max(width, candidate_name(p.candidate).size() + 1);
  }
  s += cell("rank", 5) + cell("configuration", width) + cell("est_s", 10) + cell("sim_s", 10) +
       cell(plan.seq_len > 0 ? "tok/s/gpu" : "smp/s/gpu", 10) + cell("mfu", 7) +
       cell("peak_GiB", 9) + "limiter\n";
  for (std::size_t i = 0; i < rows; ++i) {
    const PlannedCandidate& p = r.ranked[static_cast<std::size_t>(order[i])];
    const SimulatedRun* sim = simulation_of(plan, order[i]);
    const bool ok = sim != nullptr && sim->ok;
    s += cell(std::to_string(i + 1), 5) + cell(candidate_name(p.candidate), width) +
         cell(fmt("%.4f", p.estimate.iteration_sec), 10) + cell(sim_cell(sim), 10) +
         cell(fmt(plan.seq_len > 0 ? "%.0f" : "%.2f",
                  ok ? sim->tokens_per_sec_per_gpu : p.tokens_per_sec_per_gpu),
              10) +
         cell(fmt("%.1f%%", 100 * (ok ? sim->mfu : p.mfu)), 7) + cell(gib(p.peak_bytes), 9) +
         p.estimate.limiter + "\n";
  }
  const std::string why = why_winner(plan);
  return why.empty() ? s : s + "\n" + why + "\n";
}

ordered_json plan_json(const PlanOutcome& plan) {
  ordered_json dropped = ordered_json::object();
  for (const auto& [why, count] : plan.result.dropped) {
    dropped[why] = count;
  }
  ordered_json rows = ordered_json::array();
  const std::vector<int> order = final_order(plan);
  for (std::size_t i = 0; i < order.size(); ++i) {
    rows.push_back(row_json(plan, order[i], static_cast<int>(i)));
  }
  return {{"plan",
           {{"model", plan.model},
            {"device", plan.device},
            {"platform", plan.platform},
            {"gpus", plan.gpus},
            {"global_batch", plan.global_batch},
            {"seq_len", plan.seq_len},
            {"checkpoint_early_stop", plan.checkpoint_early_stop},
            {"capacity_bytes", plan.result.capacity_bytes}}},
          {"enumerated", plan.result.enumerated},
          {"dropped", std::move(dropped)},
          {"why_winner", why_winner(plan)},
          {"configurations", std::move(rows)}};
}

std::string plan_csv(const PlanOutcome& plan) {
  std::string s = std::string(
                      "rank,configuration,tp,pp,dp,cp,micro_batch,schedule,zero,recompute,"
                      "sequence_parallel,tp_overlap,estimated_iteration_sec,"
                      "simulated_iteration_sec,") +
                  (plan.seq_len > 0 ? "tokens" : "samples") +
                  "_per_sec_per_gpu,mfu,"
                  "peak_memory_bytes,limiter,compute_sec,tp_sec,cp_sec,bubble_sec,pp_sec,dp_sec,"
                  "optimizer_sec,halo_sec,spatial_sec\n";
  const std::vector<int> order = final_order(plan);
  for (std::size_t i = 0; i < order.size(); ++i) {
    const PlannedCandidate& p = plan.result.ranked[static_cast<std::size_t>(order[i])];
    const PlanCandidate& c = p.candidate;
    const Estimate& e = p.estimate;
    const SimulatedRun* sim = simulation_of(plan, order[i]);
    const bool ok = sim != nullptr && sim->ok;
    s += std::to_string(i + 1) + "," + candidate_name(c) + "," + std::to_string(c.degrees.tp) +
         "," + std::to_string(c.degrees.pp) + "," + std::to_string(c.degrees.dp) + "," +
         std::to_string(c.degrees.cp) + "," + std::to_string(c.micro_batch) + "," +
         pipeline_schedule_name(c.schedule) + "," + std::to_string(c.zero_stage) + "," +
         std::string(workloads::recompute_name(c.recompute)) + "," +
         (c.sequence_parallel ? "1" : "0") + "," + (c.tp_overlap ? "1" : "0") + "," +
         fmt("%.9g", e.iteration_sec) + "," + (ok ? fmt("%.9g", sim->iteration_sec) : "") + "," +
         fmt("%.9g", ok ? sim->tokens_per_sec_per_gpu : p.tokens_per_sec_per_gpu) + "," +
         fmt("%.6g", ok ? sim->mfu : p.mfu) + "," + std::to_string(p.peak_bytes) + "," + e.limiter;
    for (double t : {e.compute_sec, e.tp_sec, e.cp_sec, e.bubble_sec, e.pp_sec, e.dp_sec,
                     e.optimizer_sec, e.halo_sec, e.spatial_sec}) {
      s += "," + fmt("%.9g", t);
    }
    s += "\n";
  }
  return s;
}

}  // namespace dtsim::sim
