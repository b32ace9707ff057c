#include "sim/report/hybrid_report.h"

#include "sim/report/error_bars.h"
#include "sim/report/memory_report.h"
#include "workloads/parsing/units.h"

namespace dtsim::sim {

using nlohmann::ordered_json;
using parsing::format_number;

namespace {

ordered_json stage_json(const StageResult& s) {
  ordered_json waiting = ordered_json::object();
  for (const auto& [kind, sec] : s.waiting_sec) {
    waiting[kind] = sec;
  }
  return {{"stage", s.stage},
          {"rank", s.rank},
          {"first_layer", s.first_layer},
          {"last_layer", s.last_layer},
          {"compute_sec", s.compute_sec},
          {"waiting_sec", std::move(waiting)},
          {"idle_sec", s.idle_sec}};
}

// The report's "model" and "parallel" objects.
void add_job(const HybridReport& report, ordered_json& r) {
  r["model"] = {{"name", report.model},
                {"compute_source", report.compute_source},
                {"device", report.device},
                {"precision", report.precision},
                {"parameters", report.parameters}};
  r["parallel"] = {
      {"degrees", report.parallel},
      {"order", report.order},
      {"schedule", report.schedule},
      {"zero_stage", report.zero_stage},
      {"fsdp_unshard",
       report.fsdp_unshard.empty() ? ordered_json(nullptr) : ordered_json(report.fsdp_unshard)},
      {"sequence_parallel", report.sequence_parallel},
      {"tp_overlap", report.tp_overlap},
      {"recompute", report.recompute},
      {"checkpoint_early_stop", report.checkpoint_early_stop},
      {"micro_batch", report.micro_batch},
      {"global_batch", report.global_batch},
      {"micro_batches", report.micro_batches},
      {"seq_len", report.seq_len},
      {"stage_layers", report.stage_layers}};
}

// "gpt3-1.3b (bf16, tp=2,cp=1,dp=4,pp=2,ep=1, 1f1b, ZeRO 0, recompute none)".
std::string job_line(const HybridReport& report) {
  return report.model + " (" + report.precision + ", " + report.parallel + ", " + report.schedule +
         ", ZeRO " + std::to_string(report.zero_stage) +
         (report.fsdp_unshard.empty() ? "" : " gathered per " + report.fsdp_unshard) +
         (report.sequence_parallel ? ", sequence parallel" : "") +
         (report.tp_overlap ? ", TP overlapped" : "") + ", recompute " + report.recompute +
         (report.checkpoint_early_stop ? " (early stop)" : "") + ")";
}

}  // namespace

ordered_json report_json(const HybridReport& report) {
  ordered_json r = report_json(report.replay);
  add_job(report, r);
  ordered_json exposed = ordered_json::object();
  for (const auto& [kind, sec] : report.exposed_sec) {
    exposed[kind] = sec;
  }
  ordered_json stages = ordered_json::array();
  for (const StageResult& s : report.stages) {
    stages.push_back(stage_json(s));
  }
  ordered_json& result = r["result"];
  result["rank0"] = {{"compute_sec", report.rank0_compute_sec},
                     {"forward_sec", report.rank0_forward_sec},
                     {"backward_sec", report.rank0_backward_sec},
                     {"optimizer_sec", report.rank0_optimizer_sec}};
  result["tokens_per_sec_per_gpu"] = report.tokens_per_sec_per_gpu;
  result["flops_per_token_6n"] = report.flops_per_token_6n;
  result["flops_per_token_megatron"] = report.flops_per_token_megatron;
  result["tflops_per_gpu"] = report.tflops_per_gpu;
  result["tflops_per_gpu_megatron"] = report.tflops_per_gpu_megatron;
  result["peak_flops_per_sec"] = report.peak_flops_per_sec;
  result["mfu"] = report.mfu;
  result["mfu_megatron"] = report.mfu_megatron;
  result["bubble_fraction"] = report.bubble_fraction;
  result["exposed_sec"] = std::move(exposed);
  result["stages"] = std::move(stages);
  if (!report.memory.stages.empty()) {
    r["memory"] = memory_json(report.memory);
  }
  return r;
}

ordered_json memory_report_json(const HybridReport& report) {
  ordered_json r;
  add_job(report, r);
  r["memory"] = memory_json(report.memory);
  r["error_bars"] = error_bars_json({memory_error_bar(!report.cnn)});
  return r;
}

std::string memory_summary(const HybridReport& report) {
  return "dtsim memory: " + job_line(report) + ", " + std::to_string(report.micro_batches) +
         " micro-batches of " + std::to_string(report.micro_batch) +
         (report.seq_len > 0 ? " x " + std::to_string(report.seq_len) + " tokens" : " samples") +
         " per replica\n" + memory_table(report.memory) +
         error_bars_summary({memory_error_bar(!report.cnn)});
}

std::string report_summary(const HybridReport& report) {
  const GraphReport& g = report.replay;
  std::string s = "dtsim simulate: " + job_line(report) + " on " + std::to_string(g.run.ranks) +
                  " ranks, " + g.run.topology + ", " + g.run.algorithm + " (" + g.run.replay +
                  " replay" + fold_note(g) + what_if_note(g.run) + ")\n";
  s += "  compute                 " + report.compute_source + "\n";
  const std::string unit =
      report.seq_len > 0 ? " sequences of " + std::to_string(report.seq_len) + " tokens per step, "
                         : " samples per step, ";
  s += "  batch                   " + std::to_string(report.global_batch) + unit +
       std::to_string(report.micro_batches) + " micro-batches of " +
       std::to_string(report.micro_batch) + " per replica\n";
  s += "  iteration time          " + format_number("%.6f s", g.iteration_time_sec) + "\n";
  if (report.tokens_per_sec_per_gpu > 0) {
    s += "  tokens/s per GPU        " + format_number("%.1f", report.tokens_per_sec_per_gpu) + "\n";
    s += "  model TFLOP/s per GPU   " + format_number("%.1f", report.tflops_per_gpu) + " (MFU " +
         format_number("%.1f %%", 100 * report.mfu) + "); Megatron-LM's formula " +
         format_number("%.1f", report.tflops_per_gpu_megatron) + " (" +
         format_number("%.1f %%", 100 * report.mfu_megatron) + ")\n";
  }
  s += "  pipeline bubble         " + format_number("%.1f %%", 100 * report.bubble_fraction) +
       " of the iteration\n";
  std::string exposed;
  for (const auto& [kind, sec] : report.exposed_sec) {
    exposed += (exposed.empty() ? "" : ", ") + kind + " " + format_number("%.6f s", sec);
  }
  s += "  exposed communication   " + (exposed.empty() ? std::string("none") : exposed) +
       " (mean over stages)\n";
  if (!report.memory.stages.empty()) {
    s += "  peak memory             " + memory_verdict(report.memory) + "\n";
  }
  for (const StageResult& st : report.stages) {
    s += "  stage " + std::to_string(st.stage) + " compute" +
         std::string(st.stage < 10 ? "         " : "        ") +
         format_number("%.6f s", st.compute_sec) + " (" + st.first_layer + " .. " + st.last_layer +
         ")\n";
  }
  return s + busiest_links(g.links) + error_bars_summary(g.error_bars);
}

}  // namespace dtsim::sim
