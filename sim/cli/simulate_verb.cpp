#include "sim/cli/simulate_verb.h"

#include <cmath>
#include <cstdint>
#include <iostream>
#include <utility>

#include <boost/program_options.hpp>

#include "sim/chakra/chakra_reader.h"
#include "sim/cli/chakra_cli.h"
#include "sim/cli/flag_scope.h"
#include "sim/cli/hybrid_flags.h"
#include "sim/cli/output_flags.h"
#include "sim/cli/provenance.h"
#include "sim/cli/run_flags.h"
#include "sim/cli/verb.h"
#include "sim/config_error.h"
#include "sim/report/hybrid_report.h"
#include "sim/report/report.h"
#include "sim/run/hybrid_run.h"
#include "sim/run/simulation.h"
#include "workloads/parsing/units.h"
#include "workloads/transformer_file.h"

namespace dtsim::sim {

namespace po = boost::program_options;

namespace {

const char* const kSimulateWhat =
    "Predicts one steady-state iteration of data-parallel training (PyTorch DDP over\n"
    "NCCL) on --ranks GPUs: forward, backward with per-bucket gradient all-reduces\n"
    "overlapping it, then the optimizer step. Prints a summary; --report writes the\n"
    "JSON report (iteration_time_sec, compute_sec, exposed_comm_sec,\n"
    "scaling_efficiency, per-bucket all-reduce times in seconds and sizes in bytes).\n";
const char* const kMemoryWhat =
    "Prints the memory one rank of each pipeline stage holds at its peak\n"
    "(sim/strategies/MEMORY.md) for a --model job given as to dtsim simulate, and the\n"
    "worst rank against the GPU's capacity; simulates nothing (the platform and replay\n"
    "flags are accepted and unused). --report writes it as JSON (sizes in bytes).\n";

// The values of simulate's flags.
struct SimulateFlags {
  RunFlags run;
  HybridFlags hybrid;
  OutputFlags outputs;
  std::string job_path, workload, graph, chakra;
  double bucket_mb = 25;
  int iterations = 3;
  int accumulation_steps = 1;
  std::string overlap = "backward";
  int nccl_channels = 0;
  int bucket_kernels = 0;
};

// The "Workload and job" flags, bound to `f`.
po::options_description job_flags(SimulateFlags& f) {
  po::options_description job("Workload and job", kHelpColumns, kHelpColumns / 2);
  auto add_job = job.add_options();
  add_job("job", po::value(&f.job_path)->value_name("J.json"),
          "the flags in a file (sim/cli/JOB.md): a JSON object of flag: value, e.g. {\"model\": "
          "\"gpt3-1.3b\", \"parallel\": {\"tp\": 2, \"dp\": 4}, \"sequence-parallel\": true}; "
          "paths in it are relative to its folder; a flag given here overrides its key");
  add_job("workload", po::value(&f.workload)->value_name("W.json"),
          "one device's per-layer costs: a workload trace (see workloads/FORMAT.md), replayed as "
          "data-parallel training on --ranks GPUs");
  add_job("graph", po::value(&f.graph)->value_name("G.json"),
          "instead of --workload: an execution graph (sim/graph/GRAPH.md), what every rank "
          "computes and communicates, replayed as it is (--ranks, if given, must be its rank "
          "count; the data-parallel flags below are refused)");
  add_job("chakra", po::value(&f.chakra)->value_name("PREFIX"),
          "instead of --workload: a Chakra execution trace (workloads/CHAKRA.md), PREFIX.<rank>.et "
          "per rank as ASTRA-sim reads it, replayed as it is (--ranks: its rank count; absent: as "
          "many as there are files)");
  add_job("bucket-mb", po::value(&f.bucket_mb)->default_value(25)->value_name("MiB"),
          "gradient bucket cap in MiB (2^20 bytes), as PyTorch DDP's bucket_cap_mb; the first "
          "bucket is capped at 1 MiB as in DDP");
  add_job("iterations", po::value(&f.iterations)->default_value(3)->value_name("K"),
          "iterations simulated back to back; the last one (steady state) is reported");
  add_job("accumulation-steps", po::value(&f.accumulation_steps)->default_value(1)->value_name("S"),
          "micro-batches per optimizer step (gradient accumulation): S-1 forward+backward passes "
          "without communication (DDP no_sync), then one with the gradient all-reduces");
  add_job("overlap", po::value(&f.overlap)->default_value("backward")->value_name("backward|none"),
          "backward: a bucket's all-reduce starts once its gradients are computed, while the "
          "backward pass goes on (NCCL on GPUs); none: communication cannot run while the rank "
          "computes, so every all-reduce starts after the rank's whole backward pass (gloo on "
          "CPUs whose cores all compute)");
  add_job("nccl-channels", po::value(&f.nccl_channels)->default_value(0)->value_name("C"),
          "the SMs an NCCL all-reduce holds while the backward pass runs (one per channel; "
          "DGX-1 V100: 4), slowing it by C / SMs for as long as each bucket's all-reduce lasts; "
          "0: no compute-side bucket cost (sim/whatif/WHATIF.md)");
  add_job("bucket-kernels", po::value(&f.bucket_kernels)->default_value(0)->value_name("K"),
          "kernels DDP launches on the compute stream per gradient bucket (0 to 16), each at "
          "the GPU's fixed cost of a kernel (PyTorch <= 1.7: 1, the div_ that prescales the "
          "bucket; later versions: 0, the default; sim/whatif/WHATIF.md)");
  add_job(
      "apply", po::value(&f.run.apply)->composing()->value_name("WHAT-IF"),
      "a what-if pass, repeatable (sim/whatif/WHATIF.md): amp, bf16, gpu=NAME[@WATTS], compress=R, "
      "fused-optimizer=OPT, p3=SIZE, algorithm@ROLE=NAME, compute=Kx, network=Kx, latency=Kx; "
      "dtsim whatif compares with the run without them");
  return job;
}

// Every flag of simulate, bound to `f`; `hybrid` is the hybrid group (hybrid_flags(f.hybrid)).
po::options_description simulate_flags(SimulateFlags& f, const po::options_description& hybrid,
                                       bool memory) {
  po::options_description flags(kHelpColumns, kHelpColumns / 2);
  flags.add(job_flags(f))
      .add(hybrid)
      .add(run_flags(f.run, false, !memory))
      .add(output_flags(f.outputs));
  return flags;
}

// --bucket-mb as bytes. 2^30 MiB = 2^50 bytes, the most dtsim models in one message.
std::uint64_t bucket_cap_bytes(double bucket_mb) {
  if (!(bucket_mb * 1024 * 1024 >= 1) || !(bucket_mb <= 1024.0 * 1024 * 1024)) {
    throw ConfigError("--bucket-mb " + parsing::format_number("%g", bucket_mb) +
                      ": expected a size from 2^-20 MiB (1 byte) to 2^30 MiB (1 PiB)");
  }
  return static_cast<std::uint64_t>(std::llround(bucket_mb * 1024 * 1024));
}

// --model's architecture file, an input like the platform; "" for a name.
std::string model_file(const std::string& model) {
  return workloads::is_transformer_file(model) ? model : "";
}

// dtsim memory: the memory model of a --model job, printed and written; nothing simulated.
int run_memory(const SimulateFlags& f) {
  if (!f.graph.empty()) {
    throw ConfigError("--graph " + f.graph +
                      ": dtsim memory needs --model NAME (a graph has no layer shapes)");
  }
  check_output_path("report", f.run.report);
  const auto inputs = input_files({{"job", f.job_path}, {"model", model_file(f.hybrid.model)}});
  check_distinct_outputs(with_inputs({{"report", f.run.report}}, inputs));
  const auto report = hybrid_memory(hybrid_config(f.hybrid, {.ranks = f.run.ranks}, f.workload,
                                                  bucket_cap_bytes(f.bucket_mb), f.iterations));
  write_report(f.run.report, memory_report_json(report), inputs);
  std::cout << memory_summary(report);
  return 0;
}

// Which run the flags ask for; throws ConfigError unless they name exactly one input (a workload
// trace, a --model, a graph or a Chakra trace).
RunKind run_kind(const SimulateFlags& f) {
  const bool hybrid = wants_hybrid(f.hybrid);
  if (!f.chakra.empty() && (hybrid || !f.workload.empty() || !f.graph.empty())) {
    throw ConfigError(
        "--chakra PREFIX replays a trace as it is: give no --workload, --graph, "
        "--model or --parallel");
  }
  if (hybrid && !f.graph.empty()) {
    throw ConfigError(
        "--graph G.json replays a graph as it is: --model and --parallel do not "
        "apply");
  }
  if (!hybrid && f.chakra.empty() && f.workload.empty() == f.graph.empty()) {
    throw ConfigError(std::string(f.workload.empty() ? "expected" : "give only one of") +
                      " --workload W.json, --model NAME or --graph G.json (see dtsim simulate "
                      "--help)");
  }
  return hybrid ? RunKind::kHybrid : f.workload.empty() ? RunKind::kReplay : RunKind::kDataParallel;
}

// Throws ConfigError, before anything runs, if an output's folder does not exist or an output
// names another output or an input.
void check_outputs(const SimulateFlags& f, const std::vector<InputFile>& inputs) {
  check_output_path("report", f.run.report);
  auto files = with_inputs({{"report", f.run.report},
                            {"timeline", f.outputs.timeline},
                            {"link-report", f.outputs.link_report},
                            {"dump-graph", f.outputs.dump_graph}},
                           inputs);
  files.emplace_back("dump-chakra", f.outputs.dump_chakra);  // prefixes: compared as paths
  files.emplace_back("chakra", f.chakra);
  check_distinct_outputs(files);
}

// Writes the report and the other requested outputs, then prints `summary`; returns 0.
int finish(const SimulateFlags& f, const nlohmann::ordered_json& report,
           const std::vector<InputFile>& inputs, const SimulateOutputs& outputs,
           const std::string& summary) {
  write_report(f.run.report, report, inputs);
  write_outputs(f.outputs, outputs);
  std::cout << summary;
  return 0;
}

// --chakra PREFIX: the trace replayed as it is; its every file is an input of the report.
int replay_chakra(const SimulateFlags& f, std::vector<InputFile> inputs, SimulateOutputs& outputs) {
  auto trace = read_chakra_for_simulate(f.chakra, f.run.ranks);
  const auto report =
      simulate_execution_graph(std::move(trace.graph), run_options(f.run), f.chakra, &outputs);
  auto json = report_json(report);
  json["chakra"] = chakra_import_json(trace);
  for (int r = 0; r < trace.stats.ranks; ++r) {
    inputs.push_back({.flag = "chakra", .path = chakra_rank_path(f.chakra, r)});
  }
  return finish(f, json, inputs, outputs, report_summary(report) + chakra_summary(trace));
}

// --workload W.json: data-parallel training, as PyTorch DDP runs it, in buckets of
// `bucket_bytes`.
SimulateConfig data_parallel_config(const SimulateFlags& f, std::uint64_t bucket_bytes) {
  const auto overlap = parse_overlap(f.overlap);
  if (!overlap) {
    throw ConfigError("--overlap " + f.overlap + ": expected backward or none");
  }
  return {.run = run_options(f.run),
          .workload_path = f.workload,
          .bucket_cap_bytes = bucket_bytes,
          .iterations = f.iterations,
          .accumulation_steps = f.accumulation_steps,
          .overlap = *overlap,
          .nccl_channels = f.nccl_channels,
          .bucket_kernels = f.bucket_kernels};
}

}  // namespace

int run_simulate(const std::vector<std::string>& args, JobFile& job_file, bool memory) {
  SimulateFlags f;
  const po::options_description hybrid = hybrid_flags(f.hybrid);
  const po::options_description flags = simulate_flags(f, hybrid, memory);
  po::variables_map vm;
  if (!parse_verb_flags(with_job_file(args, flags, job_file), flags, memory ? "memory" : "simulate",
                        memory ? kMemoryWhat : kSimulateWhat, &vm)) {
    return 0;
  }
  if (memory) {
    return run_memory(f);
  }
  reject_unused_flags(vm, hybrid, run_kind(f));
  const auto inputs = input_files({{"job", f.job_path},
                                   {"workload", f.workload},
                                   {"model", model_file(f.hybrid.model)},
                                   {"graph", f.graph},
                                   {"platform", f.run.platform}});
  check_outputs(f, inputs);
  auto outputs = requested_outputs(f.outputs);
  if (!f.chakra.empty()) {
    return replay_chakra(f, inputs, outputs);
  }
  if (!f.graph.empty()) {
    const auto report =
        simulate_graph({.run = run_options(f.run), .graph_path = f.graph}, &outputs);
    return finish(f, report_json(report), inputs, outputs, report_summary(report));
  }
  if (f.run.ranks == 0) {
    throw ConfigError("the option '--ranks' is required but missing (see dtsim simulate --help)");
  }
  const std::uint64_t bucket_bytes = bucket_cap_bytes(f.bucket_mb);
  if (wants_hybrid(f.hybrid)) {
    const RunOptions run = run_options(f.run);
    const auto report = simulate_hybrid(
        hybrid_config(f.hybrid, run, f.workload, bucket_bytes, f.iterations), &outputs);
    return finish(f, report_json(report), inputs, outputs, report_summary(report));
  }
  const auto report = simulate_data_parallel(data_parallel_config(f, bucket_bytes), &outputs);
  return finish(f, report_json(report), inputs, outputs, report_summary(report));
}

std::vector<std::string> simulate_flag_names() {
  SimulateFlags f;
  const po::options_description flags = simulate_flags(f, hybrid_flags(f.hybrid), false);
  std::vector<std::string> names;
  for (const auto& option : flags.options()) {
    names.push_back(option->long_name());
  }
  return names;
}

}  // namespace dtsim::sim
