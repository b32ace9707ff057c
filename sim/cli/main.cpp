// dtsim's command line: the verbs, each parsing its flags into a config, running, printing a
// summary and writing its report (simulate and memory in simulate_verb.cpp); the only catch of
// input errors (exit code 2).
#include <algorithm>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include <boost/program_options.hpp>

#include "platforms/describe.h"
#include "platforms/platform_spec.h"
#include "sim/cli/chakra_cli.h"
#include "sim/cli/collective_sweep.h"
#include "sim/cli/error_messages.h"
#include "sim/cli/job_file.h"
#include "sim/cli/output_flags.h"
#include "sim/cli/plan.h"
#include "sim/cli/provenance.h"
#include "sim/cli/rerun.h"
#include "sim/cli/run_flags.h"
#include "sim/cli/simulate_verb.h"
#include "sim/cli/sweep.h"
#include "sim/cli/verb.h"
#include "sim/cli/whatif.h"
#include "sim/config_error.h"
#include "sim/graph/graph_error.h"
#include "sim/report/report.h"
#include "sim/run/simulation.h"
#include "workloads/generator.h"
#include "workloads/parsing/json_fields.h"
#include "workloads/trace.h"
#include "workloads/trace_error.h"
#include "workloads/trace_writer.h"

namespace po = boost::program_options;
using dtsim::sim::ConfigError;

namespace {

using dtsim::sim::kHelpColumns;
using dtsim::sim::parse_size_flag;
using dtsim::sim::run_flags;
using dtsim::sim::run_options;
using dtsim::sim::RunFlags;

constexpr int kExitBadInput = 2;
constexpr int kExitInternalError = 1;

const char* const kUsage =
    "dtsim: predicts distributed deep-learning training time on a simulated cluster (SimGrid).\n"
    "\n"
    "Usage: dtsim <verb> [flags]      dtsim <verb> --help explains a verb's flags\n"
    "\n"
    "Verbs:\n"
    "  simulate     one data-parallel training iteration (DDP buckets, overlap with backward),\n"
    "               or any execution graph (--graph G.json); flags may come from a job file\n"
    "               (--job J.json, sim/cli/JOB.md)\n"
    "  memory       what one rank of each pipeline stage of a --model job holds at its peak\n"
    "               (simulate's flags), against the GPU's capacity; simulates nothing\n"
    "  collective   one collective operation alone on an idle network\n"
    "  plan         every parallel configuration of a --model on --gpus GPUs: memory filter,\n"
    "               analytical estimate (parallel), the best few simulated and ranked\n"
    "  whatif       simulate's flags plus --apply amp|gpu=h100|network=2x|bucket-mb=1 ...: the\n"
    "               run as given and transformed, side by side (sim/whatif/WHATIF.md)\n"
    "  sweep SWEEP.json --out R.csv   simulate every combination of flag values, one process\n"
    "               per point, --jobs at a time or as a Slurm job array (--slurm), one CSV\n"
    "               line per point (--resume, --emit-slurm, --merge)\n"
    "  chakra microbenchmark --op OP --ranks N --bytes SIZE -o PREFIX   one collective per rank\n"
    "               as a Chakra execution trace, as ASTRA-sim's (workloads/CHAKRA.md)\n"
    "  workload generate   write a workload trace from a model's architecture and a GPU's\n"
    "               datasheet (roofline), optionally calibrated to a measured iteration time\n"
    "  platform describe P.json    hosts, links, levels, bisection bandwidth, oversubscription\n"
    "               (topologies, nodes, perturbations: platforms/FORMAT.md)\n"
    "  platform export P.json --xml [-o F.xml]   the equivalent SimGrid XML platform\n"
    "\n"
    "Units: sizes in bytes, or with a suffix B kB MB GB TB PB (powers of 1000) or KiB MiB GiB\n"
    "TiB PiB (powers of 1024), at most 1 PiB; bandwidths in platform files as \"25GBps\"\n"
    "(bytes/s) or \"200Gbps\" (bits/s); latencies as \"1us\", \"500ns\", \"2ms\". Reports give\n"
    "seconds and bytes.\n"
    "Exit codes: 0 success, 2 bad input (message on stderr), 1 internal error (sweep: also a\n"
    "point that failed, sim/cli/SWEEP.md).\n";

// Throws ConfigError naming the first argument that is not valid UTF-8: reports are JSON, which
// must be, and a path or a value in them could not be written after the whole run.
void reject_invalid_utf8(const std::vector<std::string>& args) {
  for (const std::string& arg : args) {
    if (!dtsim::parsing::is_valid_utf8(arg)) {
      throw ConfigError("argument \"" + dtsim::parsing::printable(arg) +
                        "\": not valid UTF-8 (reports are JSON, which must be)");
    }
  }
}

// dtsim collective's own flags.
struct CollectiveFlags {
  std::string op, bytes, dump_algorithm;
  int root = 0;
  std::string sweep_only;  // the sweep's flags, read by run_collective_sweep, listed for --help
};

// Adds them to `flags`, in the groups --help shows.
void add_collective_flags(po::options_description& flags, CollectiveFlags& c) {
  po::options_description what("Collective", kHelpColumns, kHelpColumns / 2);
  auto add_what = what.add_options();
  add_what("op", po::value(&c.op)->default_value("all-reduce")->value_name("OP"),
           "all-reduce, reduce-scatter, all-gather, broadcast, reduce, all-to-all or send-recv");
  add_what("bytes", po::value(&c.bytes)->required()->value_name("SIZE|MIN..MAX"),
           "message size in bytes, or with a suffix (100MB = 10^8 bytes, 1GiB = 2^30), as "
           "nccl-tests counts it: each rank's buffer (all-reduce, broadcast, reduce, send-recv), "
           "the gathered total (all-gather), each rank's input (reduce-scatter, all-to-all); "
           "MIN..MAX sweeps the sizes (as nccl-tests -b -e -f), printing a table");
  add_what("root", po::value(&c.root)->default_value(0)->value_name("RANK"),
           "root of broadcast and reduce; sender of send-recv (to rank root+1)");
  add_what("dump-algorithm", po::value(&c.dump_algorithm)->value_name("F.json"),
           "also write the algorithm that runs as an algorithm file (sim/collectives/"
           "ALGORITHMS.md): its step-level schedule, what --replay step runs");
  po::options_description sweep("Size sweeps (also: --algorithm given several times)", kHelpColumns,
                                kHelpColumns / 2);
  sweep.add_options()("step-factor", po::value(&c.sweep_only)->value_name("F"),
                      "a sweep's sizes grow by this factor (default 2)")(
      "csv", po::value(&c.sweep_only)->value_name("F.csv"), "write the sweep's points as CSV")(
      "jobs", po::value(&c.sweep_only)->value_name("N"),
      "points simulated at once, each a child process (default: every core)");
  flags.add(what).add(sweep);
}

int run_collective(const std::vector<std::string>& args) {
  const bool help = std::find(args.begin(), args.end(), "--help") != args.end();
  if (!help && dtsim::sim::is_collective_sweep(args)) {
    return dtsim::sim::run_collective_sweep(args);
  }
  RunFlags f;
  CollectiveFlags c;
  dtsim::sim::OutputFlags outputs_flags;
  po::options_description flags(kHelpColumns, kHelpColumns / 2);
  add_collective_flags(flags, c);
  flags.add(run_flags(f)).add(dtsim::sim::output_flags(outputs_flags));
  if (!dtsim::sim::parse_verb_flags(
          args, flags, "collective",
          "Simulates one collective alone on an idle network. Prints the time; --report\n"
          "writes the JSON report (time_sec, algorithm and bus bandwidth in bytes/s).\n")) {
    return 0;
  }
  dtsim::sim::CollectiveConfig config{.run = run_options(f),
                                      .op = c.op,
                                      .bytes = parse_size_flag("bytes", c.bytes),
                                      .root = c.root,
                                      .dump_algorithm = !c.dump_algorithm.empty()};
  dtsim::sim::check_output_path("report", f.report);
  dtsim::sim::check_output_path("dump-algorithm", c.dump_algorithm);
  const auto inputs = dtsim::sim::input_files({{"platform", f.platform}});
  dtsim::sim::check_distinct_outputs(
      dtsim::sim::with_inputs({{"report", f.report},
                               {"dump-algorithm", c.dump_algorithm},
                               {"timeline", outputs_flags.timeline},
                               {"link-report", outputs_flags.link_report},
                               {"dump-graph", outputs_flags.dump_graph},
                               {"dump-chakra", outputs_flags.dump_chakra}},
                              inputs));
  auto outputs = dtsim::sim::requested_outputs(outputs_flags);
  const auto report = dtsim::sim::simulate_collective(config, &outputs);
  dtsim::sim::write_report(f.report, dtsim::sim::report_json(report), inputs);
  if (report.algorithm_file) {
    dtsim::sim::write_text("dump-algorithm", c.dump_algorithm,
                           report.algorithm_file->dump(1) + "\n");
  }
  dtsim::sim::write_outputs(outputs_flags, outputs);
  std::cout << dtsim::sim::report_summary(report);
  return 0;
}

int run_platform(const std::string& action, const std::vector<std::string>& args) {
  std::string path, output;
  bool xml = false;
  po::options_description flags("Platform", kHelpColumns, kHelpColumns / 2);
  auto add = flags.add_options();
  add("platform", po::value(&path)->required()->value_name("P.json|P.xml"), "the platform file");
  add("xml", po::bool_switch(&xml), "export: write SimGrid XML (the only format for now)");
  add("output,o", po::value(&output)->value_name("F.xml"), "export: write there, not stdout");
  add("help", "explain the flags");
  po::positional_options_description positional;
  positional.add("platform", 1);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(flags).positional(positional).run(), vm);
  if (vm.count("help")) {
    std::cout << "Usage: dtsim platform describe P.json\n"
                 "       dtsim platform export P.json --xml [-o F.xml]\n\n"
              << flags;
    return 0;
  }
  po::notify(vm);
  if (action == "describe") {
    std::cout << dtsim::sim::platform_summary(dtsim::sim::describe_platform(path));
    return 0;
  }
  if (!xml) {
    throw ConfigError("--xml: export needs a format, and SimGrid XML is the only one");
  }
  const std::string text =
      dtsim::platforms::to_simgrid_xml(dtsim::platforms::read_platform_spec(path));
  if (output.empty()) {
    std::cout << text;
    return 0;
  }
  dtsim::sim::check_output_path("output", output);
  dtsim::sim::check_distinct_outputs({{"output", output}, {"platform", path}});
  dtsim::sim::write_text("output", output, text);
  return 0;
}

// What `dtsim workload generate`'s flags fill in.
struct GenerateFlags {
  dtsim::workloads::GeneratorConfig config;
  std::string output;
  double calibrate_sec = 0;
  std::string compute_model;
  std::string conv_layout = "nhwc";
};

po::options_description generate_flags(GenerateFlags& f) {
  po::options_description flags("Model and device", kHelpColumns, kHelpColumns / 2);
  std::string models;
  for (const std::string& m : dtsim::workloads::model_names()) {
    models += (models.empty() ? "" : "|") + m;
  }
  const std::string devices = dtsim::workloads::device_names("|");
  dtsim::workloads::GeneratorConfig& config = f.config;
  auto add_flags = flags.add_options();
  add_flags("model", po::value(&config.shape.model)->required()->value_name(models.c_str()),
            "the architecture (workloads/GENERATOR.md lists what each one is)");
  add_flags("batch", po::value(&config.shape.batch)->required()->value_name("N"),
            "samples per device per iteration");
  add_flags("device", po::value(&config.device)->default_value("v100")->value_name(devices.c_str()),
            "the GPU whose datasheet peaks (FLOP/s, memory bytes/s) time the layers; GPU@WATTS "
            "(h100@500W) under that power limit (workloads/COMPUTE.md)");
  add_flags("precision",
            po::value(&config.precision)->default_value("fp32")->value_name("fp32|tf32|fp16|bf16"),
            "compute precision; fp16/bf16 = mixed precision (2-byte activations, fp32 gradients)");
  add_flags("optimizer", po::value(&config.optimizer)->value_name("sgd|adamw|lamb"),
            "optimizer step to model (default: sgd for CNNs, adamw for transformers)");
  add_flags("image-size",
            po::value(&config.shape.image_size)->default_value(0)->value_name("PIXELS"),
            "CNN input height = width (0: the model's: 224, inception_v3 299, cosmoflow 128)");
  add_flags("seq-len", po::value(&config.shape.seq_len)->default_value(128)->value_name("TOKENS"),
            "transformer tokens per sample");
  add_flags("compute-model",
            po::value(&f.compute_model)->default_value("roofline")->value_name("roofline|op-class"),
            "how layers are timed: one efficiency for every kernel (roofline), or per kernel "
            "class from its shape, math unit and bytes (op-class; workloads/COMPUTE.md)");
  add_flags("tensor-core-efficiency",
            po::value(&config.efficiency.tensor_core)
                ->default_value(config.efficiency.tensor_core)
                ->value_name("FRACTION"),
            "op-class: the fraction of tensor-core peak a full-tile GEMM reaches on an H200; "
            "other GPUs scale it by their measured matmul share (workloads/COMPUTE.md)");
  add_flags("cuda-core-efficiency",
            po::value(&config.efficiency.cuda_core)
                ->default_value(config.efficiency.cuda_core)
                ->value_name("FRACTION"),
            "op-class: the fraction of fp32 CUDA-core peak a full-tile GEMM reaches");
  add_flags("fuse-norm-relu", po::bool_switch(&config.fuse_norm_relu),
            "op-class: ReLU and residual add + ReLU run inside the batch norm before them (as "
            "NVIDIA's MXNet ResNet does in float16)");
  add_flags("conv-layout",
            po::value(&f.conv_layout)->default_value("nhwc")->value_name("nhwc|nchw"),
            "op-class: the activations' layout; nchw (PyTorch's and MXNet's default) transposes "
            "them around every tensor-core convolution, nhwc (channels-last) does not");
  add_flags("calibrate-iter-sec", po::value(&f.calibrate_sec)->value_name("SECONDS"),
            "scale forward and backward so that one single-device iteration (forward + backward + "
            "optimizer) takes this many seconds, e.g. a published single-GPU measurement");
  add_flags("note", po::value(&config.note)->value_name("TEXT"),
            "appended to the trace's source field: say where a calibration time comes from");
  add_flags("output,o", po::value(&f.output)->required()->value_name("W.json"),
            "where to write the trace (format: workloads/FORMAT.md)");
  add_flags("help", "explain the flags");
  return flags;
}

// The generator's configuration from parsed flags: the flags whose text names a choice, checked.
dtsim::workloads::GeneratorConfig generator_config(const GenerateFlags& f,
                                                   const po::variables_map& vm) {
  dtsim::workloads::GeneratorConfig config = f.config;
  if (vm.count("calibrate-iter-sec")) {
    config.calibrate_iteration_sec = f.calibrate_sec;
  }
  const auto model = dtsim::workloads::parse_compute_model(f.compute_model);
  if (!model) {
    throw dtsim::workloads::GeneratorError("compute_model",
                                           f.compute_model + ": expected roofline or op-class");
  }
  config.compute_model = *model;
  const auto layout = dtsim::workloads::parse_conv_layout(f.conv_layout);
  if (!layout) {
    throw dtsim::workloads::GeneratorError("conv_layout",
                                           f.conv_layout + ": expected nhwc or nchw");
  }
  config.conv_layout = *layout;
  return config;
}

int run_workload_generate(const std::vector<std::string>& args) {
  GenerateFlags f;
  const po::options_description flags = generate_flags(f);
  po::variables_map vm;
  po::store(dtsim::sim::parse_flags_only(args, flags), vm);
  if (vm.count("help")) {
    std::cout << "Usage: dtsim workload generate [flags]\n"
                 "Writes a workload trace of one device's iteration from the architecture's\n"
                 "per-layer FLOPs and memory traffic, timed with a roofline on the device's\n"
                 "datasheet (workloads/GENERATOR.md). No PyTorch needed.\n\n"
              << flags;
    return 0;
  }
  po::notify(vm);
  const dtsim::workloads::GeneratorConfig config = generator_config(f, vm);
  dtsim::sim::check_output_path("output", f.output);
  const auto workload = dtsim::workloads::generate_workload(config);
  dtsim::workloads::write_workload(workload, f.output);
  std::cout << "dtsim workload generate: " << workload.model << " batch "
            << workload.batch_per_device << " on " << workload.device << " (" << workload.precision
            << "): " << workload.layers.size() << " layers, iteration " << workload.compute_sec()
            << " s, " << workload.param_bytes() << " gradient bytes -> " << f.output << "\n";
  return 0;
}

// Runs `dtsim VERB ARGS`; returns its exit code. Sets `verb` to the verb's full name for error
// messages ("platform describe") and `job` to the job file a simulate or memory run read.
int run_verb(std::string& verb, std::vector<std::string> args, dtsim::sim::JobFile& job) {
  reject_invalid_utf8(args);
  if (verb == "simulate") {
    return dtsim::sim::run_simulate(args, job);
  }
  if (verb == "memory") {
    return dtsim::sim::run_simulate(args, job, true);
  }
  if (verb == "collective") {
    return run_collective(args);
  }
  if (verb == "plan") {
    return dtsim::sim::run_plan(args);
  }
  if (verb == "sweep") {
    return dtsim::sim::run_sweep(args, dtsim::sim::simulate_flag_names());
  }
  if (verb == "whatif") {
    return dtsim::sim::run_whatif(args, dtsim::sim::simulate_flag_names());
  }
  if (verb == "platform") {
    if (args.empty() || (args[0] != "describe" && args[0] != "export")) {
      std::cerr << "dtsim platform: expected \"dtsim platform describe\" or \"dtsim platform "
                   "export\" (see dtsim --help)\n";
      return kExitBadInput;
    }
    const std::string action = args[0];
    args.erase(args.begin());
    verb = "platform " + action;
    return run_platform(action, args);
  }
  if (verb == "chakra") {
    verb = "chakra microbenchmark";
    return dtsim::sim::run_chakra(args);
  }
  if (verb == "workload") {
    if (args.empty() || args[0] != "generate") {
      std::cerr << "dtsim workload: expected \"dtsim workload generate\" (see dtsim --help)\n";
      return kExitBadInput;
    }
    args.erase(args.begin());
    verb = "workload generate";
    return run_workload_generate(args);
  }
  std::cerr << "dtsim: unknown verb \"" << verb
            << "\" (expected simulate, memory, collective, plan, sweep, whatif, platform, "
               "chakra or workload; see dtsim --help)\n";
  return kExitBadInput;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::cout << kUsage;
    return args.empty() ? kExitBadInput : 0;
  }
  if (args[0] == "--version") {
    std::cout << "dtsim " << DTSIM_VERSION << "\n";
    return 0;
  }
  std::string verb = args[0];
  args.erase(args.begin());
  dtsim::sim::JobFile job;
  try {
    return run_verb(verb, std::move(args), job);
  } catch (const po::error& e) {
    dtsim::sim::print_error(verb, std::string(e.what()) + " (see dtsim " + verb + " --help)", job);
  } catch (const ConfigError& e) {
    dtsim::sim::print_error(verb, dtsim::sim::cli_message(e, e), job);
  } catch (const dtsim::workloads::TraceError& e) {
    dtsim::sim::print_error(verb, e.what(), job);
  } catch (const dtsim::platforms::PlatformError& e) {
    dtsim::sim::print_error(verb, e.what(), job);
  } catch (const dtsim::sim::GraphError& e) {
    dtsim::sim::print_error(verb, e.what(), job);
  } catch (const dtsim::workloads::GeneratorError& e) {
    dtsim::sim::print_error(verb, dtsim::sim::cli_message(e, e), job);
  } catch (const dtsim::sim::FoldNotExact& e) {
    dtsim::sim::rerun_with_next_fold(verb, e.what(), argc, argv);
    return kExitInternalError;
  } catch (const std::exception& e) {  // a bug, not bad input
    dtsim::sim::print_error(verb, std::string("internal error: ") + e.what(), job);
    return kExitInternalError;
  }
  return kExitBadInput;
}
