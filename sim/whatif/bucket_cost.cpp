#include "sim/whatif/bucket_cost.h"

#include <algorithm>
#include <set>
#include <utility>
#include <vector>

#include "sim/config_error.h"
#include "sim/whatif/primitives.h"

namespace dtsim::sim {

namespace {

// "h100" for "h100@500W": a power limit changes neither the SMs nor (here) a kernel's fixed cost.
std::string without_power_limit(const std::string& device) {
  return device.substr(0, device.find('@'));
}

}  // namespace

int streaming_multiprocessors(const std::string& name) {
  const std::string device = without_power_limit(name);
  if (device == "v100") {
    return 80;
  }
  if (device == "a100") {
    return 108;
  }
  if (device == "h100" || device == "h200") {
    return 132;
  }
  return 0;
}

double kernel_launch_sec(const std::string& name) {
  const std::string device = without_power_limit(name);
  if (device == "v100") {
    return 1.83e-6;
  }
  if (device == "a100") {
    return 2.7e-6;
  }
  if (device == "h100" || device == "h200") {
    return 3e-6;
  }
  return 0;
}

namespace {

bool is_gradient_all_reduce(const Program& p, const Node& n) {
  return n.kind == NodeKind::kCollective && n.phase == Phase::kBackward &&
         n.op == CollectiveOp::kAllReduce && !p.deps_of(n).empty();
}

bool is_backward_compute(const Node& n, const Node& of) {
  return n.kind == NodeKind::kCompute && n.phase == Phase::kBackward &&
         n.iteration == of.iteration && n.micro_batch == of.micro_batch;
}

}  // namespace

ExecutionGraph add_bucket_contention(ExecutionGraph g, const CollectiveSeconds& sec,
                                     double sm_share) {
  if (!(sm_share >= 0 && sm_share <= 1)) {
    throw ConfigError("nccl_channels", ": expected at most as many channels as the GPU has SMs");
  }
  if (sm_share == 0) {
    return g;
  }
  std::vector<Insertion> insertions;
  const std::int32_t label = ExecutionGraph::intern(g.labels, "nccl sm share");
  for (std::size_t pi = 0; pi < g.programs.size(); ++pi) {
    const Program& p = g.programs[pi];
    for (const Node& n : p.nodes) {
      if (!is_gradient_all_reduce(p, n)) {
        continue;
      }
      const auto deps = p.deps_of(n);
      const std::int32_t ready = *std::max_element(deps.begin(), deps.end());
      const Node& producer = p.nodes[static_cast<std::size_t>(ready)];
      std::int32_t next = -1;
      double left_sec = 0;
      for (std::size_t i = static_cast<std::size_t>(ready) + 1; i < p.nodes.size(); ++i) {
        if (is_backward_compute(p.nodes[i], producer)) {
          next = next < 0 ? static_cast<std::int32_t>(i) : next;
          left_sec += p.nodes[i].duration_sec;
        }
      }
      if (producer.kind != NodeKind::kCompute || next < 0) {
        continue;  // nothing computes while this all-reduce runs
      }
      insertions.push_back({.anchor = {static_cast<std::int32_t>(pi), next},
                            .where = Where::kBefore,
                            .node = {.phase = Phase::kBackward,
                                     .iteration = producer.iteration,
                                     .micro_batch = producer.micro_batch,
                                     .label = label,
                                     .duration_sec = std::min(sec(g, n), left_sec) * sm_share}});
    }
  }
  return insert_nodes(std::move(g), insertions);
}

ExecutionGraph add_bucket_kernels(ExecutionGraph g, double seconds) {
  if (!(seconds >= 0)) {
    throw ConfigError("bucket_kernels", ": expected a cost of at least 0 s per bucket");
  }
  if (seconds == 0) {
    return g;
  }
  // One insertion per node whose gradients a bucket waits for: a bucket cut into P3 slices is
  // still one bucket to DDP, and the slices all wait for the same node.
  std::set<std::pair<std::size_t, std::int32_t>> producers;
  std::vector<Insertion> insertions;
  const std::int32_t label = ExecutionGraph::intern(g.labels, "ddp bucket kernels");
  for (std::size_t pi = 0; pi < g.programs.size(); ++pi) {
    const Program& p = g.programs[pi];
    for (const Node& n : p.nodes) {
      if (!is_gradient_all_reduce(p, n)) {
        continue;
      }
      const auto deps = p.deps_of(n);
      const std::int32_t ready = *std::max_element(deps.begin(), deps.end());
      const Node& producer = p.nodes[static_cast<std::size_t>(ready)];
      if (producer.kind != NodeKind::kCompute || !producers.insert({pi, ready}).second) {
        continue;
      }
      insertions.push_back({.anchor = {static_cast<std::int32_t>(pi), ready},
                            .where = Where::kAfter,
                            .node = {.phase = Phase::kBackward,
                                     .iteration = producer.iteration,
                                     .micro_batch = producer.micro_batch,
                                     .label = label,
                                     .duration_sec = seconds}});
    }
  }
  return insert_nodes(std::move(g), insertions);
}

}  // namespace dtsim::sim
