#include "sim/cli/flag_scope.h"

#include <string>
#include <vector>

#include "sim/config_error.h"
#include "workloads/parsing/units.h"

namespace dtsim::sim {

namespace po = boost::program_options;

namespace {

// The value of `v` as the command line would say it ("" for a switch).
std::string value_text(const po::variable_value& v) {
  if (const auto* text = boost::any_cast<std::string>(&v.value())) {
    return *text;
  }
  if (const auto* n = boost::any_cast<int>(&v.value())) {
    return std::to_string(*n);
  }
  if (const auto* x = boost::any_cast<double>(&v.value())) {
    return parsing::format_number("%g", *x);
  }
  return "";
}

bool given(const po::variables_map& vm, const std::string& name) {
  const auto it = vm.find(name);
  return it != vm.end() && !it->second.defaulted();
}

[[noreturn]] void refuse(const po::variables_map& vm, const std::string& name,
                         const std::string& why) {
  const std::string value = value_text(vm[name]);
  throw ConfigError("--" + name + (value.empty() ? "" : " " + value) + ": " + why);
}

}  // namespace

void reject_unused_flags(const po::variables_map& vm, const po::options_description& hybrid,
                         RunKind kind) {
  if (kind != RunKind::kHybrid) {
    for (const auto& option : hybrid.options()) {
      const std::string& name = option->long_name();
      if (name != "model" && name != "parallel" && given(vm, name)) {
        refuse(vm, name,
               "applies to a hybrid-parallel run (--model or --parallel), and this one " +
                   std::string(kind == RunKind::kReplay ? "replays a graph as it is"
                                                        : "replays --workload as data-parallel "
                                                          "training (give --parallel dp=N)"));
      }
    }
  }
  if (kind != RunKind::kDataParallel) {
    for (const char* name : {"accumulation-steps", "overlap", "nccl-channels", "bucket-kernels"}) {
      if (given(vm, name)) {
        refuse(vm, name,
               std::string("applies to a data-parallel --workload run only") +
                   (kind == RunKind::kHybrid && std::string(name) == "accumulation-steps"
                        ? " (a hybrid run accumulates by --global-batch)"
                        : ""));
      }
    }
  }
  if (kind == RunKind::kReplay) {
    for (const char* name : {"bucket-mb", "iterations"}) {
      if (given(vm, name)) {
        refuse(vm, name, "does not apply to --graph or --chakra, replayed as it is");
      }
    }
  }
}

}  // namespace dtsim::sim
