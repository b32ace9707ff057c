#include "sim/whatif/what_if.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

#include "sim/collectives/registry.h"
#include "sim/config_error.h"
#include "sim/whatif/op_classes.h"
#include "sim/whatif/optimizations.h"
#include "sim/whatif/primitives.h"
#include "sim/whatif/priority_propagation.h"
#include "sim/whatif/select.h"
#include "workloads/generator.h"
#include "workloads/generator_error.h"
#include "workloads/parsing/units.h"
#include "workloads/roofline.h"

namespace dtsim::sim {

namespace {

const char* const kForms =
    "amp, fp16, bf16, gpu=NAME, compress=R, fused-optimizer=sgd|adamw|lamb, p3=SIZE, "
    "algorithm@ROLE=NAME, compute=Kx, network=Kx, latency=Kx, or FLAG=VALUE for a flag of dtsim "
    "simulate";

// "2x", "2", "0.5x" as a factor > 0; false for anything else.
bool parse_factor(std::string text, double& factor) {
  if (!text.empty() && (text.back() == 'x' || text.back() == 'X')) {
    text.pop_back();
  }
  if (text.empty()) {
    return false;
  }
  char* end = nullptr;
  factor = std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size() && std::isfinite(factor) && factor > 0;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

const workloads::DeviceSpec& device_named(const std::string& name, const std::string& text) {
  try {
    return workloads::find_device(name);
  } catch (const workloads::GeneratorError& e) {
    throw ConfigError("apply", text + ": " + e.detail());
  }
}

// algorithm@ROLE=NAME: a communicator role and a collective algorithm dtsim knows.
void check_algorithm(const std::string& role, const std::string& value, const std::string& text) {
  const auto& names = algorithm_names();
  const bool known = value.starts_with("file:") || value == "auto" || value.starts_with("auto:") ||
                     std::find(names.begin(), names.end(), value) != names.end();
  if (!role.empty() && known) {
    return;
  }
  std::string list;
  for (const std::string& n : names) {
    list += n + ", ";
  }
  throw ConfigError("apply", text +
                                 ": expected algorithm@ROLE=NAME, ROLE a communicator role "
                                 "(dp, tp, ...) and NAME one of " +
                                 list + "auto, auto:A,B or file:PATH");
}

}  // namespace

WhatIf parse_what_if(const std::string& text, std::span<const std::string> flag_names) {
  const auto eq = text.find('=');
  const std::string key = text.substr(0, eq);
  const std::string value = eq == std::string::npos ? "" : text.substr(eq + 1);
  WhatIf w{.text = text, .name = key, .value = value};
  if (eq == std::string::npos) {
    if (key == "amp" || key == "fp16" || key == "bf16") {
      w.name = key == "bf16" ? "bf16" : "amp";
      return w;
    }
  } else if (key == "gpu") {
    (void)device_named(value, text);
    return w;
  } else if (key == "compress") {
    if (!parse_factor(value, w.factor) || w.factor > 1) {
      throw ConfigError("apply", text + ": expected a compression ratio in (0, 1], e.g. 0.01");
    }
    return w;
  } else if (key.starts_with("algorithm@")) {
    w.name = "algorithm@";
    w.role = key.substr(std::string("algorithm@").size());
    check_algorithm(w.role, value, text);
    return w;
  } else if (key == "fused-optimizer") {
    if (value != "sgd" && value != "adamw" && value != "lamb") {
      throw ConfigError("apply", text +
                                     ": expected fused-optimizer=sgd, adamw or lamb (the step "
                                     "being fused: 20, 28 or 40 bytes a parameter)");
    }
    return w;
  } else if (key == "p3") {
    const auto bytes = parsing::parse_size(value);
    if (!bytes || *bytes < 1) {
      throw ConfigError("apply", text + ": expected a slice size of at least 1 byte, e.g. p3=4MB");
    }
    w.factor = static_cast<double>(*bytes);
    return w;
  } else if (key == "compute" || key == "network" || key == "latency") {
    if (!parse_factor(value, w.factor)) {
      throw ConfigError("apply", text + ": expected a factor > 0, e.g. " + key +
                                     "=2x (2 times "
                                     "faster)");
    }
    w.kind = key == "compute" ? WhatIfKind::kGraph : WhatIfKind::kPlatform;
    return w;
  } else if (std::find(flag_names.begin(), flag_names.end(), key) != flag_names.end()) {
    if (value.empty()) {
      throw ConfigError("apply", text + ": expected a value after the =");
    }
    w.kind = WhatIfKind::kFlag;
    return w;
  }
  throw ConfigError("apply", text + ": unknown what-if (expected " + kForms + ")");
}

std::string catalogue_device(const std::string& device_text) {
  const auto [base_text, limit] = workloads::split_power_limit(device_text);
  if (!limit.empty()) {
    const std::string base = catalogue_device(base_text);
    return base.empty() ? base : base + limit;
  }
  const std::string text = lower(device_text);
  std::string best;  // the longest name the text holds: "v100-pcie" over "v100"
  for (const workloads::DeviceSpec& d : workloads::device_catalog()) {
    if (text == d.name || text == lower(d.full_name)) {
      return d.name;
    }
    if (text.find(d.name) != std::string::npos && d.name.size() > best.size()) {
      best = d.name;
    }
  }
  return best;
}

namespace {

const workloads::DeviceSpec& context_device(const WhatIfContext& c, const WhatIf& w) {
  if (c.device.empty()) {
    throw ConfigError("what_if", w.text + ": needs the GPU and precision of " + c.origin +
                                     ", which dtsim does not know here: amp, bf16, gpu=, "
                                     "compress= and fused-optimizer= rewrite data-parallel "
                                     "--workload runs on a "
                                     "catalogue GPU; for --model, re-run the generator with "
                                     "precision=bf16 or device=h100 (WHATIF.md)");
  }
  return workloads::find_device(c.device);
}

ExecutionGraph apply_one(ExecutionGraph g, const WhatIf& w, const WhatIfContext& c) {
  if (w.name == "compute") {
    const auto nodes = select_nodes(g, {.kind = NodeKind::kCompute});
    return scale_durations(std::move(g), nodes, 1 / w.factor);
  }
  if (w.name == "algorithm@") {
    const auto nodes = select_nodes(g, {.kind = NodeKind::kCollective, .role = w.role});
    if (nodes.empty()) {
      throw ConfigError("what_if", w.text + ": " + c.origin +
                                       " has no collective on a communicator role \"" + w.role +
                                       "\"");
    }
    return set_algorithm(std::move(g), nodes, w.value);
  }
  if (w.name == "p3") {
    return priority_propagation(std::move(g), static_cast<std::uint64_t>(w.factor));
  }
  const workloads::DeviceSpec& device = context_device(c, w);
  if (w.name == "fused-optimizer") {
    const double bytes_per_param = w.value == "sgd"     ? workloads::kSgdMomentumBytesPerParam
                                   : w.value == "adamw" ? workloads::kAdamWBytesPerParam
                                                        : workloads::kLambBytesPerParam;
    return fuse_optimizer(std::move(g), bytes_per_param,
                          device.memory_bytes_per_sec * workloads::kMemoryEfficiency);
  }
  if (w.name == "compress") {
    return compress_gradients(std::move(g), w.factor,
                              device.memory_bytes_per_sec * workloads::kMemoryEfficiency);
  }
  g = tag_op_classes(std::move(g), c.layer_classes);
  if (w.name == "gpu") {
    return change_gpu(std::move(g), device, workloads::find_device(w.value), c.precision);
  }
  return mixed_precision(std::move(g), device, c.precision, w.name == "bf16" ? "bf16" : "fp16");
}

}  // namespace

ExecutionGraph apply_graph_what_ifs(ExecutionGraph g, std::span<const WhatIf> what_ifs,
                                    const WhatIfContext& context) {
  WhatIfContext c = context;
  for (const WhatIf& w : what_ifs) {
    if (w.kind != WhatIfKind::kGraph) {
      continue;
    }
    g = apply_one(std::move(g), w, c);
    if (w.name == "gpu") {
      c.device = w.value;  // a later pass sees the new GPU
    } else if (w.name == "amp" || w.name == "bf16") {
      c.precision = w.name == "bf16" ? "bf16" : "fp16";
    }
  }
  return g;
}

void apply_platform_what_ifs(platforms::PlatformSpec& spec, std::span<const WhatIf> what_ifs) {
  for (const WhatIf& w : what_ifs) {
    if (w.kind == WhatIfKind::kPlatform) {
      scale_network(spec, w.name == "network" ? w.factor : 1,
                    w.name == "latency" ? 1 / w.factor : 1);
    }
  }
}

}  // namespace dtsim::sim
