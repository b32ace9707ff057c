#include "sim/cli/plan.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <boost/program_options.hpp>

#include "sim/cli/child_runs.h"
#include "sim/cli/hybrid_flags.h"
#include "sim/cli/output_flags.h"
#include "sim/cli/verb.h"
#include "sim/config_error.h"
#include "sim/planner/plan_report.h"
#include "sim/planner/planner.h"
#include "sim/report/error_bars.h"
#include "workloads/generator_error.h"
#include "workloads/model_zoo.h"
#include "workloads/roofline.h"
#include "workloads/transformer.h"
#include "workloads/transformer_file.h"

namespace dtsim::sim {

namespace fs = std::filesystem;
namespace po = boost::program_options;

namespace {

struct PlanFlags {
  std::string model, device, precision, attention, fp8_recipe, platform, strategies, report;
  int gpus = 0, global_batch = 0, seq_len = 0, image_size = 0, top = 10, simulate = 4, jobs = 2,
      threads = 0;
  double simulate_timeout_sec = 600;
  bool tp_across_nodes = false;
  bool checkpoint_early_stop = false;
};

po::options_description plan_flags(PlanFlags& f) {
  po::options_description d("Plan (sim/planner/PLANNER.md)", kHelpColumns, kHelpColumns / 2);
  auto add = d.add_options();
  add("model", po::value(&f.model)->required()->value_name("NAME|FILE.json"),
      "a transformer of the catalogue (workloads/TRANSFORMER.md), a transformer architecture "
      "file (dtsim's keys or a Hugging Face config.json: TRANSFORMER.md, \"Your own model\") "
      "or a CNN of the model zoo (workloads/GENERATOR.md: resnet50, vgg16, alexnet, cosmoflow, "
      "...)");
  add("device", po::value(&f.device)->default_value("h100")->value_name("GPU"),
      ("the GPU: " + workloads::device_names(", ") +
       " (its datasheet times the compute, its memory bounds it); GPU@WATTS, e.g. h100@500W, "
       "under that power limit")
          .c_str());
  add("precision", po::value(&f.precision)->default_value("bf16")->value_name("P"),
      "fp32, tf32, fp16 or bf16 (mixed precision), or fp8 (float8 linear layers)");
  add("attention",
      po::value(&f.attention)->default_value("flash2")->value_name("flash1|flash2|cudnn"),
      "a transformer's attention kernel, as `dtsim simulate --attention` takes it");
  add("fp8-recipe",
      po::value(&f.fp8_recipe)
          ->default_value("torchao")
          ->value_name("torchao|torchao-rowwise|te|megatron-te"),
      "with --precision fp8, how the framework casts, as `dtsim simulate --fp8-recipe` takes it");
  add("platform", po::value(&f.platform)->required()->value_name("P.json"),
      "the cluster: a star or fat-tree platform spec or preset (platforms/FORMAT.md)");
  add("gpus", po::value(&f.gpus)->required()->value_name("N"), "GPUs to plan for");
  add("global-batch", po::value(&f.global_batch)->required()->value_name("G"),
      "sequences (a CNN's samples) per optimizer step");
  add("seq-len", po::value(&f.seq_len)->default_value(0)->value_name("S"),
      "tokens per sequence (0: the model's context length)");
  add("image-size", po::value(&f.image_size)->default_value(0)->value_name("PX"),
      "a CNN's input height = width (= depth for cosmoflow); 0: the model's (224; "
      "inception_v3 299, cosmoflow 128)");
  add("strategies",
      po::value(&f.strategies)->value_name("tp,pp,dp,cp,zero,recompute,sp[,tp-overlap]"),
      "the knobs the plan may turn (default: all but tp-overlap, overlapped TP, which dtsim "
      "models as free); those left out stay at 1, ZeRO 0, no recomputation, no sequence "
      "parallelism, no overlap. A CNN's: dp,pp,spatial,filter,channel");
  add("checkpoint-early-stop", po::bool_switch(&f.checkpoint_early_stop),
      "a transformer's full recompute as PyTorch's non-reentrant checkpoint runs it, stopping "
      "early (dtsim simulate --checkpoint-early-stop)");
  add("tp-across-nodes", po::bool_switch(&f.tp_across_nodes),
      "also consider tensor parallelism wider than a node");
  add("top", po::value(&f.top)->default_value(10)->value_name("K"), "rows of the table printed");
  add("simulate", po::value(&f.simulate)->default_value(4)->value_name("N"),
      "the best N by estimate simulated on SimGrid (dtsim simulate) and ranked by simulated "
      "time; 0: estimate only");
  add("jobs", po::value(&f.jobs)->default_value(2)->value_name("J"),
      "simulations run at once (one process each)");
  add("simulate-timeout",
      po::value(&f.simulate_timeout_sec)->default_value(600)->value_name("SECONDS"),
      "a simulation still running after this wall time is stopped and reported as timed out, "
      "its configuration ranked by estimate (0: no limit)");
  add("threads", po::value(&f.threads)->default_value(0)->value_name("T"),
      "threads of the estimate (TBB; 0: every core); the result is the same for any count");
  add("report", po::value(&f.report)->value_name("R.json"),
      "write the whole plan there as JSON, and as CSV beside it (R.csv)");
  add("help", "explain the flags");
  return d;
}

void check_at_least(const char* flag, int value, int least) {
  if (value < least) {
    throw ConfigError(std::string("--") + flag + " " + std::to_string(value) +
                      ": expected an integer >= " + std::to_string(least));
  }
}

// --gpus and --global-batch against `net`.
void check_sizes(const PlanFlags& f, const PlannerNetwork& net) {
  check_at_least("gpus", f.gpus, 1);
  check_at_least("global-batch", f.global_batch, 1);
  if (f.gpus > net.hosts) {
    throw ConfigError("--gpus " + std::to_string(f.gpus) + ": the platform " + f.platform +
                      " has " + std::to_string(net.hosts) + " GPUs");
  }
}

// --strategies, refusing the names of the other kind of model (`cnn`: a CNN's plan).
StrategySet strategies_of(const PlanFlags& f, bool cnn) {
  if (f.strategies.empty()) {
    return {};
  }
  std::string why;
  const auto set = parse_strategies(f.strategies, &why);
  if (!set) {
    throw ConfigError("--strategies " + f.strategies + ": " + why);
  }
  const bool transformer_knobs =
      set->tp || set->cp || set->zero || set->recompute || set->sp || set->tp_overlap;
  const bool cnn_knobs = set->spatial || set->filter || set->channel;
  if (set->tp_overlap && !(set->tp && set->sp)) {
    throw ConfigError("--strategies " + f.strategies +
                      ": tp-overlap needs tp and sp (TP is overlapped with sequence parallelism)");
  }
  if (cnn ? transformer_knobs : cnn_knobs) {
    throw ConfigError("--strategies " + f.strategies + ": " + f.model + " is a " +
                      (cnn ? "CNN: its plan takes dp, pp, spatial, filter, channel"
                           : "transformer: its plan takes tp, pp, dp, cp, zero, recompute, sp, "
                             "tp-overlap"));
  }
  return *set;
}

CnnSearchSpace cnn_search_space(const PlanFlags& f, const PlannerNetwork& net) {
  check_sizes(f, net);
  if (f.seq_len != 0) {
    throw ConfigError("--seq-len " + std::to_string(f.seq_len) + ": " + f.model +
                      " is a CNN, with no sequence (--image-size sets its input)");
  }
  if (f.checkpoint_early_stop) {
    throw ConfigError("--checkpoint-early-stop: " + f.model +
                      " is a CNN, whose plan recomputes nothing");
  }
  check_at_least("image-size", f.image_size, 0);
  const int image_size = f.image_size > 0 ? f.image_size : workloads::default_image_size(f.model);
  try {
    (void)workloads::model_layers({.model = f.model, .image_size = image_size});
  } catch (const workloads::GeneratorError& e) {
    throw ConfigError("--image-size " + e.detail());  // the detail starts with the value
  }
  return {.model = f.model,
          .image_size = image_size,
          .gpus = f.gpus,
          .global_batch = f.global_batch,
          .gpus_per_node = net.gpus_per_node,
          .tp_across_nodes = f.tp_across_nodes,
          .strategies = strategies_of(f, true)};
}

SearchSpace search_space(const PlanFlags& f, const PlannerNetwork& net) {
  const std::optional<workloads::TransformerArch> model =
      workloads::find_or_read_transformer(f.model);
  if (!model) {
    throw ConfigError("--model " + f.model +
                      ": not in the catalogue (workloads/TRANSFORMER.md), an architecture file "
                      "(a path ending in .json) nor a CNN of the model zoo "
                      "(workloads/GENERATOR.md)");
  }
  check_sizes(f, net);
  check_at_least("seq-len", f.seq_len, 0);
  if (f.image_size != 0) {
    throw ConfigError("--image-size " + std::to_string(f.image_size) + ": " + f.model +
                      " is a transformer (--seq-len sets its input)");
  }
  const int seq_len = f.seq_len == 0 ? model->max_seq_len : f.seq_len;
  const workloads::TransformerArch arch = workloads::for_sequence(*model, seq_len);
  // As dtsim simulate (workloads/transformer.h): a learned position table bounds the sequence;
  // rotary positions (RoPE) do not (long-context training).
  if (arch.learned_positions && seq_len > arch.max_seq_len) {
    throw ConfigError("--seq-len " + std::to_string(seq_len) + ": " + arch.name +
                      " has a learned position table of " + std::to_string(arch.max_seq_len) +
                      " tokens");
  }
  const StrategySet strategies = strategies_of(f, false);
  if (f.checkpoint_early_stop && !strategies.recompute) {
    throw ConfigError("--checkpoint-early-stop: --strategies " + f.strategies +
                      " leaves out recompute, so no configuration recomputes");
  }
  SearchSpace s{.arch = arch,
                .gpus = f.gpus,
                .global_batch = f.global_batch,
                .seq_len = seq_len,
                .gpus_per_node = net.gpus_per_node,
                .tp_across_nodes = f.tp_across_nodes,
                .strategies = strategies,
                .checkpoint_early_stop = f.checkpoint_early_stop};
  return s;
}

std::string first_line(const fs::path& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// The `dtsim simulate` arguments of candidate `c` of the plan; `model_args` name the model and
// its input (--model, --global-batch, --seq-len or --image-size).
std::vector<std::string> simulate_args(const PlanFlags& f,
                                       const std::vector<std::string>& model_args,
                                       const PlanCandidate& c, const std::string& report) {
  std::vector<std::string> args{"simulate"};
  args.insert(args.end(), model_args.begin(), model_args.end());
  const std::vector<std::string> run{
      "--device",     f.device,   "--precision", f.precision,
      "--platform",   f.platform, "--ranks",     std::to_string(f.gpus),
      "--iterations", "2",        "--report",    report};
  args.insert(args.end(), run.begin(), run.end());
  const std::vector<std::string> knobs = candidate_flags(c);
  args.insert(args.end(), knobs.begin(), knobs.end());
  return args;
}

// The best `count` of `result` simulated, `jobs` at a time, in a temporary directory.
std::vector<SimulatedRun> simulate_best(const PlanFlags& f,
                                        const std::vector<std::string>& model_args,
                                        const PlanResult& result, bool cnn) {
  const int count = std::min(f.simulate, static_cast<int>(result.ranked.size()));
  if (count == 0) {
    return {};
  }
  std::string pattern = (fs::temp_directory_path() / "dtsim-plan-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) {
    throw std::runtime_error("cannot create a temporary directory for the simulations");
  }
  const fs::path dir = pattern;
  std::vector<ChildRun> children;
  for (int i = 0; i < count; ++i) {
    const std::string stem = (dir / std::to_string(i)).string();
    children.push_back(
        {.args = simulate_args(f, model_args, result.ranked[static_cast<std::size_t>(i)].candidate,
                               stem + ".json"),
         .stderr_path = stem + ".err"});
  }
  const std::vector<ChildStatus> status = run_children(children, f.jobs, f.simulate_timeout_sec);
  std::vector<SimulatedRun> runs;
  for (int i = 0; i < count; ++i) {
    const std::string stem = (dir / std::to_string(i)).string();
    const ChildStatus st = status[static_cast<std::size_t>(i)];
    SimulatedRun run{.rank = i, .ok = st == ChildStatus::kOk};
    if (run.ok) {
      std::ifstream in(stem + ".json", std::ios::binary);
      std::stringstream text;
      text << in.rdbuf();
      const auto report = nlohmann::ordered_json::parse(text.str());
      const auto& r = report.at("result");
      run.iteration_sec = r.at("iteration_time_sec").get<double>();
      if (cnn) {  // the report has no tokens: samples, and the plan's FLOPs per sample
        run.tokens_per_sec_per_gpu = f.global_batch / run.iteration_sec / f.gpus;
        run.mfu = result.flops_per_token * run.tokens_per_sec_per_gpu / result.peak_flops_per_sec;
      } else {
        run.tokens_per_sec_per_gpu = r.at("tokens_per_sec_per_gpu").get<double>();
        run.mfu = r.at("mfu").get<double>();
      }
    } else if (st == ChildStatus::kTimedOut) {
      run.error = "timed out after " + std::to_string(static_cast<int>(f.simulate_timeout_sec)) +
                  " s (--simulate-timeout)";
    } else {
      run.error = first_line(stem + ".err");
    }
    runs.push_back(run);
  }
  std::error_code ignored;
  fs::remove_all(dir, ignored);
  return runs;
}

}  // namespace

namespace {

// What run_plan's flags say beyond their values, checked before anything is read: the
// attention kernel, the float8 recipe, and the CSV that goes beside the report.
struct CheckedPlanFlags {
  workloads::AttentionKernel attention;
  workloads::Fp8Recipe fp8_recipe;
  std::string csv;
};

CheckedPlanFlags check_plan_flags(const PlanFlags& f) {
  check_at_least("top", f.top, 1);
  check_at_least("simulate", f.simulate, 0);
  check_at_least("jobs", f.jobs, 1);
  check_at_least("threads", f.threads, 0);
  const workloads::AttentionKernel attention = attention_flag(f.attention);
  const workloads::Fp8Recipe fp8_recipe = fp8_recipe_flag(f.fp8_recipe);
  if (!(f.simulate_timeout_sec >= 0)) {
    throw ConfigError("--simulate-timeout: expected a number of seconds >= 0");
  }
  check_output_path("report", f.report);
  const std::string csv = fs::path(f.report).replace_extension(".csv").string();
  if (!f.report.empty() && csv == f.report) {
    throw ConfigError("--report " + f.report + ": expected a .json file (the CSV goes beside it)");
  }
  // The report and its CSV never overwrite the platform they were planned on.
  check_distinct_outputs({{"platform", f.platform}, {"report", f.report}});
  check_distinct_outputs({{"platform", f.platform}, {"report", csv}});
  return {.attention = attention, .fp8_recipe = fp8_recipe, .csv = csv};
}

// The analytical search over the model's space (a CNN's with `cnn`, else a transformer's);
// `model_args` gets the flags that every simulation of one of its configurations repeats.
PlanOutcome search_outcome(const PlanFlags& f, bool cnn, const CheckedPlanFlags& checked,
                           const PlannerNetwork& net, std::vector<std::string>& model_args) {
  PlanOutcome outcome{.model = f.model,
                      .device = f.device,
                      .platform = f.platform,
                      .gpus = f.gpus,
                      .global_batch = f.global_batch};
  model_args = {"--model", f.model, "--global-batch", std::to_string(f.global_batch)};
  if (cnn) {
    const CnnSearchSpace space = cnn_search_space(f, net);
    outcome.result = plan_cnn({.space = space,
                               .device = f.device,
                               .precision = f.precision,
                               .network = net,
                               .threads = f.threads});
    model_args.insert(model_args.end(), {"--image-size", std::to_string(space.image_size)});
    return outcome;
  }
  const SearchSpace space = search_space(f, net);
  outcome.model = space.arch.name;
  outcome.seq_len = space.seq_len;
  outcome.checkpoint_early_stop = space.checkpoint_early_stop;
  outcome.result = plan({.space = space,
                         .device = f.device,
                         .precision = f.precision,
                         .attention = checked.attention,
                         .fp8_recipe = checked.fp8_recipe,
                         .network = net,
                         .threads = f.threads});
  model_args.insert(model_args.end(), {"--seq-len", std::to_string(space.seq_len), "--attention",
                                       f.attention, "--fp8-recipe", f.fp8_recipe});
  return outcome;
}

}  // namespace

int run_plan(const std::vector<std::string>& args) {
  PlanFlags f;
  const po::options_description flags = plan_flags(f);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(flags).run(), vm);
  if (vm.count("help")) {
    std::cout << "Usage: dtsim plan --model M --platform P.json --gpus N --global-batch G "
                 "[flags]\n"
                 "Enumerates every parallel configuration, drops those that do not fit in "
                 "memory,\nestimates the rest analytically (in parallel), simulates the best "
                 "few and ranks\nthem by simulated time (sim/planner/PLANNER.md).\n\n"
              << flags;
    return 0;
  }
  po::notify(vm);
  const CheckedPlanFlags checked = check_plan_flags(f);
  const PlannerNetwork net = planner_network(platforms::read_platform_spec(f.platform));
  const bool cnn = workloads::is_cnn(f.model);
  std::vector<std::string> model_args;
  PlanOutcome outcome = search_outcome(f, cnn, checked, net, model_args);
  outcome.simulated = simulate_best(f, model_args, outcome.result, cnn);
  // The simulated times are hybrid runs': their class's validated error. Without one, the table
  // holds estimates alone, which no published row checked (the simulation checks them).
  const bool simulated = std::any_of(outcome.simulated.begin(), outcome.simulated.end(),
                                     [](const SimulatedRun& s) { return s.ok; });
  const std::vector<ErrorBar> bars =
      simulated ? hybrid_error_bars(!cnn)
                : std::vector<ErrorBar>{
                      error_bar("plan-estimate", "the planner's analytical estimate alone")};
  if (!f.report.empty()) {
    nlohmann::ordered_json report = plan_json(outcome);
    report["error_bars"] = error_bars_json(bars);
    write_text("report", f.report, report.dump(2) + "\n");
    write_text("report", checked.csv, plan_csv(outcome));
  }
  std::cout << plan_summary(outcome, f.top) << error_bars_summary(bars);
  return 0;
}

}  // namespace dtsim::sim
