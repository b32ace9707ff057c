// What a `--apply` names (WHATIF.md lists them): a pass on the execution graph (amp, bf16,
// gpu=NAME, compress=R, fused-optimizer=OPT, p3=SIZE, algorithm@ROLE=NAME, compute=Kx), a change of
// the platform (network=Kx, latency=Kx), or a strategy knob that re-runs the strategy with another
// flag value (bucket-mb=1, zero=1, ...).
//
//   const WhatIf w = parse_what_if("gpu=h100", simulate_flag_names);
//   graph = apply_graph_what_ifs(std::move(graph), {w}, context);
#ifndef DTSIM_SIM_WHATIF_WHAT_IF_H_
#define DTSIM_SIM_WHATIF_WHAT_IF_H_

#include <span>
#include <string>
#include <vector>

#include "platforms/platform_spec.h"
#include "sim/graph/execution_graph.h"

namespace dtsim::sim {

enum class WhatIfKind : std::uint8_t { kGraph, kPlatform, kFlag };

struct WhatIf {
  std::string text;  // as given, e.g. "gpu=h100"
  WhatIfKind kind = WhatIfKind::kGraph;
  std::string name;   // "amp", "bf16", "gpu", "compress", "p3", "compute", "network", "latency", or
                      // a flag
  std::string value;  // gpu: the catalogue name; a flag: its value
  double factor = 1;  // compute, network, latency: K (K times faster); compress: the ratio r;
                      // p3: the slice in bytes
  std::string role;   // algorithm@ROLE=NAME: the communicator role whose collectives change

  bool operator==(const WhatIf&) const = default;
};

// Parses one --apply. `flag_names` are the simulate flags a KEY=VALUE knob may name. Throws
// ConfigError("apply", ...) naming the text and the forms dtsim knows.
[[nodiscard]] WhatIf parse_what_if(const std::string& text,
                                   std::span<const std::string> flag_names = {});

// What the graph passes need to know of the run.
struct WhatIfContext {
  std::string device;     // find_device's name (workloads/roofline.h), or empty: unknown
  std::string precision;  // "fp32", "tf32", "fp16", "bf16", or empty: unknown
  std::vector<std::string> layer_classes;  // op_classes.h, per layer; empty: none
  std::string origin;                      // what the graph is, for messages
};

// The catalogue name of a trace's device text ("NVIDIA V100-SXM2" -> "v100"; "NVIDIA
// H100-SXM5-80GB at a 500 W power limit", as a generated trace records it -> "h100@500W"), or
// empty.
[[nodiscard]] std::string catalogue_device(const std::string& device_text);

// `g` after every graph what-if of `what_ifs` in order (platform ones and flags are skipped),
// the graph validated after each. Throws ConfigError("what_if", ...) for a pass that needs what
// `context` does not know (the device for amp, gpu=, compress=).
[[nodiscard]] ExecutionGraph apply_graph_what_ifs(ExecutionGraph g,
                                                  std::span<const WhatIf> what_ifs,
                                                  const WhatIfContext& context);

// `spec` after every platform what-if of `what_ifs` (network=, latency=).
void apply_platform_what_ifs(platforms::PlatformSpec& spec, std::span<const WhatIf> what_ifs);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_WHATIF_WHAT_IF_H_
