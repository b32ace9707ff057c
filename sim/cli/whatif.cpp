#include "sim/cli/whatif.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "sim/cli/child_runs.h"
#include "sim/cli/output_flags.h"
#include "sim/cli/sweep_results.h"
#include "sim/config_error.h"
#include "sim/report/error_bars.h"
#include "sim/run/engine_run.h"
#include "sim/whatif/what_if.h"
#include "workloads/parsing/units.h"

#include <sys/wait.h>
#include <unistd.h>

namespace dtsim::sim {

namespace {

const char* const kHelp =
    "Usage: dtsim whatif <the flags of dtsim simulate> --apply WHAT-IF [--apply ...] [--each]\n"
    "       dtsim whatif <the flags of dtsim simulate> --whatif W.json\n"
    "Simulates the job as given (the baseline) and with the what-ifs applied, each in its own\n"
    "process, and prints both side by side: iteration time, speedup, compute, exposed\n"
    "communication, pipeline bubble and peak memory where the run has them.\n"
    "  --apply WHAT-IF   amp (fp16), bf16, gpu=NAME (a GPU of the generator; NAME@WATTS under\n"
    "                    a power limit), compress=R (gradient bytes x R, encode/decode\n"
    "                    inserted), fused-optimizer=sgd|adamw|lamb (the\n"
    "                    step at what its bytes cost), p3=SIZE (P3: gradient slices of SIZE\n"
    "                    sent in the order the next forward needs them), algorithm@ROLE=NAME\n"
    "                    (one communicator role's collectives by NAME), compute=Kx, network=Kx\n"
    "                    (every link's bandwidth x K), latency=Kx (latencies / K), or\n"
    "                    FLAG=VALUE: a flag of dtsim simulate set to VALUE (bucket-mb=1,\n"
    "                    zero=1, recompute=full, schedule=gpipe, micro-batch=2, precision=bf16\n"
    "                    ...; on/off for switches)\n"
    "  --each            one transformed run per --apply (default: one run with all of them)\n"
    "  --whatif W.json   the what-ifs from a file: {\"apply\": [\"amp\", ...], \"each\": false}\n"
    "  --report R.json   both runs' reports and the speedups (sim/whatif/WHATIF.md)\n"
    "What each what-if does, and its source: sim/whatif/WHATIF.md.\n";

// Flags whose files both runs would write.
const char* const kRefused[] = {"timeline", "link-report", "dump-graph"};

struct Plan {
  std::vector<std::string> rest;     // for dtsim simulate
  std::vector<std::string> applies;  // --apply texts, in order
  bool each = false;
  std::string report;
};

// The value of flag `name` at args[i] ("--name V" or "--name=V"); advances i past it.
std::string flag_value(const std::vector<std::string>& args, std::size_t& i,
                       const std::string& name) {
  const std::string& a = args[i];
  if (a.size() > name.size() + 2 && a[name.size() + 2] == '=') {
    return a.substr(name.size() + 3);
  }
  if (i + 1 >= args.size()) {
    throw ConfigError("--" + name + ": expected a value");
  }
  return args[++i];
}

bool is_flag(const std::string& arg, const std::string& name) {
  return arg == "--" + name || arg.starts_with("--" + name + "=");
}

void read_whatif_file(const std::string& path, Plan& plan) {
  std::ifstream in(path);
  if (!in) {
    throw ConfigError(path + ": cannot open what-if file");
  }
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw ConfigError(path + ": " + e.what());
  }
  if (!j.is_object()) {
    throw ConfigError(path + ": /: expected an object {\"apply\": [...], \"each\": false}");
  }
  for (const auto& [key, value] : j.items()) {
    if (key != "apply" && key != "each") {
      throw ConfigError(path + ": /" + key + ": unknown key (expected one of apply, each)");
    }
  }
  if (!j.contains("apply") || !j["apply"].is_array()) {
    throw ConfigError(path + ": /apply: expected an array of what-ifs, e.g. [\"amp\"]");
  }
  for (std::size_t k = 0; k < j["apply"].size(); ++k) {
    if (!j["apply"][k].is_string()) {
      throw ConfigError(path + ": /apply/" + std::to_string(k) + ": expected a string, got " +
                        j["apply"][k].dump());
    }
    plan.applies.push_back(j["apply"][k].get<std::string>());
  }
  if (j.contains("each")) {
    if (!j["each"].is_boolean()) {
      throw ConfigError(path + ": /each: expected true or false, got " + j["each"].dump());
    }
    plan.each = plan.each || j["each"].get<bool>();
  }
}

Plan parse_plan(const std::vector<std::string>& args) {
  Plan plan;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (is_flag(args[i], "apply")) {
      plan.applies.push_back(flag_value(args, i, "apply"));
    } else if (args[i] == "--each") {
      plan.each = true;
    } else if (is_flag(args[i], "whatif")) {
      read_whatif_file(flag_value(args, i, "whatif"), plan);
    } else if (is_flag(args[i], "report")) {
      plan.report = flag_value(args, i, "report");
    } else {
      for (const char* refused : kRefused) {
        if (is_flag(args[i], refused)) {
          throw ConfigError(std::string("--") + refused +
                            ": not with dtsim whatif (both runs would write it; run dtsim "
                            "simulate with --apply for one)");
        }
      }
      plan.rest.push_back(args[i]);
    }
  }
  if (plan.applies.empty()) {
    throw ConfigError(
        "expected at least one --apply WHAT-IF (or --whatif W.json; see dtsim "
        "whatif --help)");
  }
  return plan;
}

// `rest` with the what-ifs of `group` applied: knobs set as flags, the others as --apply.
std::vector<std::string> variant_args(std::vector<std::string> rest,
                                      const std::vector<WhatIf>& group) {
  for (const WhatIf& w : group) {
    if (w.kind != WhatIfKind::kFlag) {
      rest.push_back("--apply");
      rest.push_back(w.text);
      continue;
    }
    std::vector<std::string> kept;  // rest without the flag (a value after it goes too)
    for (std::size_t i = 0; i < rest.size(); ++i) {
      if (rest[i] == "--" + w.name) {
        if (i + 1 < rest.size() && !rest[i + 1].starts_with("--")) {
          ++i;
        }
      } else if (!rest[i].starts_with("--" + w.name + "=")) {
        kept.push_back(rest[i]);
      }
    }
    rest = std::move(kept);
    if (w.value == "on" || w.value == "true") {
      rest.push_back("--" + w.name);
    } else if (w.value != "off" && w.value != "false") {
      rest.push_back("--" + w.name);
      rest.push_back(w.value);
    }
  }
  return rest;
}

// Runs `dtsim simulate args --report report`; returns its exit code, its stderr in `errors`.
int run_child(std::vector<std::string> args, const std::filesystem::path& report,
              std::string& errors) {
  args.insert(args.begin(), "simulate");
  args.push_back("--report");
  args.push_back(report.string());
  const std::string err = report.string() + ".stderr";
  const pid_t pid = spawn_child({.args = args, .stderr_path = err});
  int wstatus = 0;
  while (::waitpid(pid, &wstatus, 0) < 0) {
  }
  errors = read_whole_file(err);
  return WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 1;
}

// The value at JSON pointer `pointer` of `report`, or null.
nlohmann::ordered_json at(const nlohmann::ordered_json& report, const std::string& pointer) {
  const nlohmann::ordered_json::json_pointer p(pointer);
  return report.contains(p) ? report.at(p) : nlohmann::ordered_json();
}

std::string cell(const nlohmann::ordered_json& v, const char* fmt, double scale = 1) {
  return v.is_number() ? parsing::format_number(fmt, v.get<double>() * scale) : "-";
}

// The side-by-side table of `runs` (each {"name", "report", "speedup"}), then the validated
// error of each transformed run's speedup.
std::string summary(const nlohmann::ordered_json& runs,
                    const std::vector<std::vector<WhatIf>>& groups) {
  std::ostringstream out;
  char buf[64];
  const auto row = [&](const std::string& what, const auto& value_of) {
    std::snprintf(buf, sizeof buf, "  %-24s", what.c_str());
    out << buf;
    for (const auto& r : runs) {
      std::snprintf(buf, sizeof buf, " %16s", value_of(r).c_str());
      out << buf;
    }
    out << "\n";
  };
  out << "dtsim whatif: " << runs.size() - 1 << " transformed run" << (runs.size() == 2 ? "" : "s")
      << " against the baseline\n";
  row("", [](const auto& r) { return r["name"].template get<std::string>().substr(0, 16); });
  row("iteration time (s)",
      [](const auto& r) { return cell(at(r["report"], "/result/iteration_time_sec"), "%.6f"); });
  row("speedup", [](const auto& r) { return cell(r["speedup"], "%.3fx"); });
  row("compute (s)",
      [](const auto& r) { return cell(at(r["report"], "/result/compute_sec"), "%.6f"); });
  row("exposed comm (s)",
      [](const auto& r) { return cell(at(r["report"], "/result/exposed_comm_sec"), "%.6f"); });
  if (!at(runs[0]["report"], "/result/exposed_sec").is_null()) {
    for (const auto& item : runs[0]["report"]["result"]["exposed_sec"].items()) {
      const std::string kind = item.key();  // a named copy: clang 14 cannot capture a binding
      row("  exposed " + kind + " (s)", [&](const auto& r) {
        return cell(at(r["report"], "/result/exposed_sec/" + kind), "%.6f");
      });
    }
  }
  if (!at(runs[0]["report"], "/result/bubble_fraction").is_null()) {
    row("bubble (%)", [](const auto& r) {
      return cell(at(r["report"], "/result/bubble_fraction"), "%.1f", 100);
    });
  }
  if (!at(runs[0]["report"], "/memory/peak_bytes").is_null()) {
    row("peak memory (GiB)", [](const auto& r) {
      return cell(at(r["report"], "/memory/peak_bytes"), "%.2f", 1.0 / (1u << 30));
    });
  }
  for (std::size_t k = 1; k < runs.size(); ++k) {
    out << "speedup of " << runs[k]["name"].get<std::string>() << ":\n"
        << error_bars_summary(what_if_error_bars(groups[k]));
  }
  return out.str();
}

}  // namespace

int run_whatif(const std::vector<std::string>& args,
               const std::vector<std::string>& simulate_flags) {
  for (const std::string& a : args) {
    if (a == "--help" || a == "-h") {
      std::cout << kHelp;
      return 0;
    }
  }
  const Plan plan = parse_plan(args);
  std::vector<WhatIf> what_ifs;
  for (const std::string& text : plan.applies) {
    what_ifs.push_back(parse_what_if(text, simulate_flags));
  }
  if (!plan.report.empty()) {
    check_output_path("report", plan.report);
  }
  std::vector<std::vector<WhatIf>> groups{{}};  // the baseline first
  if (plan.each) {
    for (const WhatIf& w : what_ifs) {
      groups.push_back({w});
    }
  } else {
    groups.push_back(what_ifs);
  }
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("dtsim-whatif-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  nlohmann::ordered_json runs = nlohmann::ordered_json::array();
  for (std::size_t k = 0; k < groups.size(); ++k) {
    const std::vector<std::string> child = variant_args(plan.rest, groups[k]);
    const std::filesystem::path report = dir / ("run-" + std::to_string(k) + ".json");
    std::string errors;
    if (const int rc = run_child(child, report, errors); rc != 0) {
      std::cerr << "dtsim whatif: the " << (k == 0 ? std::string("baseline") : "transformed")
                << " run failed (dtsim simulate, exit code " << rc << "):\n"
                << errors;
      std::filesystem::remove_all(dir);
      return rc;
    }
    std::ifstream in(report);
    nlohmann::ordered_json r{{"name", "baseline"}, {"apply", nlohmann::ordered_json::array()}};
    std::string name;
    for (const WhatIf& w : groups[k]) {
      r["apply"].push_back(w.text);
      name += (name.empty() ? "" : " ") + w.text;
    }
    if (k > 0) {
      r["name"] = name;
    }
    r["simulate_args"] = child;
    r["report"] = nlohmann::ordered_json::parse(in);
    const auto base =
        at(runs.empty() ? r["report"] : runs[0]["report"], "/result/iteration_time_sec");
    const auto mine = at(r["report"], "/result/iteration_time_sec");
    r["speedup"] = mine.get<double>() > 0 ? base.get<double>() / mine.get<double>() : 0.0;
    if (k > 0) {
      r["speedup_error_bars"] = error_bars_json(what_if_error_bars(groups[k]));
    }
    runs.push_back(std::move(r));
  }
  std::filesystem::remove_all(dir);
  if (!plan.report.empty()) {
    nlohmann::ordered_json out{{"verb", "whatif"}, {"each", plan.each}, {"runs", runs}};
    write_text("report", plan.report, out.dump(2) + "\n");
  }
  std::cout << summary(runs, groups);
  return 0;
}

}  // namespace dtsim::sim
