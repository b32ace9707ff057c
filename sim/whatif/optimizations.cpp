#include "sim/whatif/optimizations.h"

#include <cmath>
#include <map>
#include <set>
#include <tuple>
#include <variant>
#include <vector>

#include "sim/config_error.h"
#include "sim/whatif/op_classes.h"
#include "sim/whatif/primitives.h"
#include "sim/whatif/select.h"
#include "workloads/generator_error.h"
#include "workloads/parsing/units.h"

namespace dtsim::sim {

namespace {

// The rate `device`'s GEMMs reach at `precision`: its dense peak times the GEMM efficiency on its
// math unit (roofline.h: tensor_core_scale), for a what-if (ConfigError if it lacks it).
double gemm_flops_per_sec(const workloads::DeviceSpec& device, const std::string& precision) {
  if (precision == "fp8") {  // its matmul nodes mix fp8 GEMMs with bf16 attention: no one peak
    throw ConfigError("what_if",
                      "fp8: a precision what-if scales every matmul node by one peak, and an fp8 "
                      "run's mix fp8 GEMMs with bf16 attention; compare runs with --precision");
  }
  try {
    return workloads::make_roofline(device, precision).flops_per_sec;
  } catch (const workloads::GeneratorError& e) {
    throw ConfigError("what_if", std::string(e.what()));
  }
}

// Throws unless every compute node of `g` has an op class.
void require_op_classes(const ExecutionGraph& g, const std::string& pass) {
  for (const Program& p : g.programs) {
    for (std::size_t i = 0; i < p.nodes.size(); ++i) {
      if (p.nodes[i].kind == NodeKind::kCompute && p.nodes[i].op_class < 0) {
        throw ConfigError("what_if", pass + ": compute node " + std::to_string(i) +
                                         " of program \"" + p.name +
                                         "\" has no op class (matmul or memory): the pass needs "
                                         "to know which work is compute-bound (WHATIF.md, \"Op "
                                         "classes\")");
      }
    }
  }
}

// Scales "matmul" nodes by `matmul` and "memory" nodes by `memory`.
ExecutionGraph scale_by_class(ExecutionGraph g, double matmul, double memory) {
  const auto compute = select_nodes(g, {.kind = NodeKind::kCompute, .op_class = kMatmulOpClass});
  g = scale_durations(std::move(g), compute, matmul);
  const auto moving = select_nodes(g, {.kind = NodeKind::kCompute, .op_class = kMemoryOpClass});
  return scale_durations(std::move(g), moving, memory);
}

// The parameter bytes of program `p`: the bytes of its distinct backward gradient collectives
// (by layer range) of iteration 0.
double parameter_bytes(const Program& p) {
  std::set<std::tuple<std::int32_t, std::int32_t, std::int32_t>> seen;
  double bytes = 0;
  for (const Node& n : p.nodes) {
    if (n.kind == NodeKind::kCollective && n.phase == Phase::kBackward && n.iteration == 0 &&
        n.layer >= 0 && seen.insert({n.layer, n.last_layer, n.comm}).second) {
      bytes += static_cast<double>(n.bytes);
    }
  }
  return bytes;
}

}  // namespace

ExecutionGraph mixed_precision(ExecutionGraph g, const workloads::DeviceSpec& device,
                               const std::string& from, const std::string& to) {
  if ((from != "fp32" && from != "tf32") || (to != "fp16" && to != "bf16")) {
    throw ConfigError("what_if", to +
                                     ": mixed precision goes from fp32 or tf32 to fp16 or bf16, "
                                     "and the run is " +
                                     from);
  }
  require_op_classes(g, to);
  const double matmul = gemm_flops_per_sec(device, from) / gemm_flops_per_sec(device, to);
  g = scale_by_class(std::move(g), matmul, 2.0 / 4.0);
  // One weight cast per micro-batch, before its first forward node.
  const double cast_bytes_per_param_byte = (4.0 + 2.0) / 4.0;
  std::vector<Insertion> casts;
  const std::int32_t label = ExecutionGraph::intern(g.labels, "amp weight cast");
  const std::int32_t op_class = ExecutionGraph::intern(g.op_classes, kMemoryOpClass);
  for (std::size_t pi = 0; pi < g.programs.size(); ++pi) {
    const Program& p = g.programs[pi];
    const double sec = parameter_bytes(p) * cast_bytes_per_param_byte /
                       (device.memory_bytes_per_sec * workloads::kMemoryEfficiency);
    std::set<std::pair<std::int32_t, std::int32_t>> started;
    for (std::size_t i = 0; i < p.nodes.size() && sec > 0; ++i) {
      const Node& n = p.nodes[i];
      if (n.kind == NodeKind::kCompute && n.phase == Phase::kForward &&
          started.insert({n.iteration, n.micro_batch}).second) {
        casts.push_back({.anchor = {static_cast<std::int32_t>(pi), static_cast<std::int32_t>(i)},
                         .where = Where::kBefore,
                         .node = {.phase = Phase::kForward,
                                  .iteration = n.iteration,
                                  .micro_batch = n.micro_batch,
                                  .op_class = op_class,
                                  .label = label,
                                  .duration_sec = sec}});
      }
    }
  }
  return insert_nodes(std::move(g), casts);
}

ExecutionGraph change_gpu(ExecutionGraph g, const workloads::DeviceSpec& from,
                          const workloads::DeviceSpec& to, const std::string& precision) {
  require_op_classes(g, "gpu=" + to.name);
  const double matmul = gemm_flops_per_sec(from, precision) / gemm_flops_per_sec(to, precision);
  return scale_by_class(std::move(g), matmul, from.memory_bytes_per_sec / to.memory_bytes_per_sec);
}

ExecutionGraph compress_gradients(ExecutionGraph g, double ratio, double memory_bytes_per_sec) {
  if (!(ratio > 0 && ratio <= 1)) {
    throw ConfigError("what_if", "compress=" + parsing::format_number("%g", ratio) +
                                     ": expected a ratio in (0, 1]");
  }
  const auto grads = select_nodes(
      g,
      {.kind = NodeKind::kCollective, .phase = Phase::kBackward, .op = CollectiveOp::kAllReduce});
  std::vector<Insertion> codecs;
  const std::int32_t encode = ExecutionGraph::intern(g.labels, "compress encode");
  const std::int32_t decode = ExecutionGraph::intern(g.labels, "compress decode");
  const std::int32_t op_class = ExecutionGraph::intern(g.op_classes, kMemoryOpClass);
  for (NodeRef ref : grads) {
    const Node& n =
        g.programs[static_cast<std::size_t>(ref.program)].nodes[static_cast<std::size_t>(ref.node)];
    Node codec{.phase = Phase::kBackward,
               .iteration = n.iteration,
               .micro_batch = n.micro_batch,
               .layer = n.layer,
               .op_class = op_class,
               .duration_sec = (1 + ratio) * static_cast<double>(n.bytes) / memory_bytes_per_sec};
    codec.label = encode;
    codecs.push_back({.anchor = ref, .where = Where::kBefore, .node = codec});
    codec.label = decode;
    codecs.push_back({.anchor = ref, .where = Where::kAfter, .node = codec});
  }
  g = scale_bytes(std::move(g), grads, ratio);
  return insert_nodes(std::move(g), codecs);
}

ExecutionGraph fuse_optimizer(ExecutionGraph g, double bytes_per_param,
                              double memory_bytes_per_sec) {
  // Per program and iteration: the parameters (fp32 gradient bytes / 4) and the optimizer nodes.
  std::map<std::pair<std::int32_t, std::int32_t>, std::pair<double, std::vector<NodeRef>>> steps;
  for (const NodeRef ref : select_nodes(g, {.kind = NodeKind::kCollective,
                                           .phase = Phase::kBackward,
                                           .op = CollectiveOp::kAllReduce})) {
    const Node& n =
        g.programs[static_cast<std::size_t>(ref.program)].nodes[static_cast<std::size_t>(ref.node)];
    steps[{ref.program, n.iteration}].first += static_cast<double>(n.bytes) / 4;
  }
  for (const NodeRef ref :
       select_nodes(g, {.kind = NodeKind::kCompute, .phase = Phase::kOptimizer})) {
    const Node& n =
        g.programs[static_cast<std::size_t>(ref.program)].nodes[static_cast<std::size_t>(ref.node)];
    steps[{ref.program, n.iteration}].second.push_back(ref);
  }
  for (auto& [key, step] : steps) {
    auto& [params, nodes] = step;
    if (nodes.empty()) {
      continue;
    }
    if (params == 0) {
      throw ConfigError("what_if", "fused-optimizer: program " +
                                       g.programs[static_cast<std::size_t>(key.first)].name +
                                       ", iteration " + std::to_string(key.second) +
                                       ": no gradient all-reduce counts its parameters");
    }
    double unfused_sec = 0;
    for (const NodeRef ref : nodes) {
      unfused_sec += g.programs[static_cast<std::size_t>(ref.program)]
                         .nodes[static_cast<std::size_t>(ref.node)]
                         .duration_sec;
    }
    const double fused_sec = bytes_per_param * params / memory_bytes_per_sec;
    if (fused_sec < unfused_sec) {
      g = scale_durations(std::move(g), nodes, fused_sec / unfused_sec);
    }
  }
  return g;
}

namespace {

void scale_link(platforms::LinkSpec& l, double bw, double lat) {
  l.bandwidth_bytes_per_sec *= bw;
  l.latency_sec *= lat;
}

void scale_node(std::optional<platforms::NodeSpec>& node, double bw, double lat) {
  if (node) {
    node->gpu_link_bandwidth_bytes_per_sec *= bw;
    node->gpu_link_latency_sec *= lat;
    node->nic_bandwidth_bytes_per_sec *= bw;
    node->nic_latency_sec *= lat;
  }
}

}  // namespace

void scale_network(platforms::PlatformSpec& spec, double bandwidth_factor, double latency_factor) {
  for (double f : {bandwidth_factor, latency_factor}) {
    if (!std::isfinite(f) || f <= 0) {
      throw ConfigError("what_if", "network: expected a finite factor > 0, got " +
                                       parsing::format_number("%g", f));
    }
  }
  if (std::holds_alternative<platforms::XmlSpec>(spec.topology)) {
    throw ConfigError("what_if", spec.file +
                                     ": a SimGrid XML platform: its links are not in a spec "
                                     "dtsim can scale (give a JSON platform spec)");
  }
  std::visit(
      [&](auto& t) {
        using T = std::decay_t<decltype(t)>;
        if constexpr (!std::is_same_v<T, platforms::XmlSpec>) {
          scale_link(t.link, bandwidth_factor, latency_factor);
          if constexpr (requires { t.level_links; }) {
            for (platforms::LinkSpec& l : t.level_links) {
              scale_link(l, bandwidth_factor, latency_factor);
            }
          }
          scale_node(t.node, bandwidth_factor, latency_factor);
        }
      },
      spec.topology);
}

}  // namespace dtsim::sim
