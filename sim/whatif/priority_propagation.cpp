#include "sim/whatif/priority_propagation.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "sim/config_error.h"
#include "sim/whatif/primitives.h"

namespace dtsim::sim {

namespace {

// A bucket: an all-reduce of the gradients of layers [layer, last_layer] (a tensor-parallel
// all-reduce of the backward pass names no last layer).
bool is_gradient_all_reduce(const Node& n) {
  return n.kind == NodeKind::kCollective && n.phase == Phase::kBackward &&
         n.op == CollectiveOp::kAllReduce && n.layer >= 0 && n.last_layer >= 0;
}

// More slices than this in one program are refused: about 100 bytes a node, and tasks more
// (LoweringOptions::max_tasks).
constexpr std::uint64_t kMaxSlices = 1'000'000;

bool is_optimizer(const Node& n) {
  return n.kind == NodeKind::kCompute && n.phase == Phase::kOptimizer;
}

// Per iteration, a program's gradient all-reduces (the buckets) and its optimizer node.
struct Step {
  std::vector<std::int32_t> buckets;
  std::vector<std::int32_t> optimizers;
  std::uint64_t bytes = 0;
};

std::map<std::int32_t, Step> steps_of(const Program& p) {
  std::map<std::int32_t, Step> steps;
  for (std::size_t i = 0; i < p.nodes.size(); ++i) {
    const Node& n = p.nodes[i];
    if (is_gradient_all_reduce(n)) {
      steps[n.iteration].buckets.push_back(static_cast<std::int32_t>(i));
      steps[n.iteration].bytes += n.bytes;
    } else if (is_optimizer(n)) {
      steps[n.iteration].optimizers.push_back(static_cast<std::int32_t>(i));
    }
  }
  for (const auto& [it, s] : steps) {
    const std::string where = "p3: program " + p.name + ", iteration " + std::to_string(it);
    if (s.buckets.empty()) {
      continue;
    }
    if (s.optimizers.size() != 1 || s.optimizers.front() < s.buckets.back()) {
      throw ConfigError("what_if", where +
                                       ": expected one optimizer node after the gradient "
                                       "all-reduces (a data-parallel graph), found " +
                                       std::to_string(s.optimizers.size()));
    }
    if (s.bytes == 0) {
      throw ConfigError("what_if", where + ": the gradient all-reduces carry no bytes");
    }
  }
  return steps;
}

std::uint64_t slices(std::uint64_t bytes, std::uint64_t slice_bytes) {
  return std::max<std::uint64_t>(1, bytes / slice_bytes + (bytes % slice_bytes != 0));
}

void check_slices(const Program& p, std::uint64_t slice_bytes) {
  std::uint64_t total = 0;
  for (const Node& n : p.nodes) {
    total += is_gradient_all_reduce(n) ? slices(n.bytes, slice_bytes) : 0;
  }
  if (total > kMaxSlices) {
    throw ConfigError("what_if", "p3: slices of " + std::to_string(slice_bytes) + " bytes make " +
                                     std::to_string(total) + " all-reduces in program " + p.name +
                                     "; at most " + std::to_string(kMaxSlices) +
                                     " (give a larger slice)");
  }
}

void add_unique(std::vector<std::int32_t>& deps) {
  std::sort(deps.begin(), deps.end());
  deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
}

// `layers`: the graph's layer count, so that updates take priorities below every forward node's
// (0) and in the order of their buckets (priority.h: one FIFO queue per priority, and an update
// not ready must not hold back another's).
Program rewrite(const Program& p, std::uint64_t slice_bytes, std::int32_t layers) {
  const std::map<std::int32_t, Step> steps = steps_of(p);
  std::vector<std::vector<std::int32_t>> new_of(p.nodes.size());  // old node -> its new nodes
  std::map<std::pair<std::int32_t, std::int32_t>, std::int32_t> update_of;  // (it, layer)
  Program out{.name = p.name, .comms = p.comms, .nodes = {}, .deps = {}};
  for (std::size_t i = 0; i < p.nodes.size(); ++i) {
    const Node& node = p.nodes[i];
    std::vector<std::int32_t> deps;
    for (std::int32_t d : p.deps_of(node)) {
      const auto& now = new_of[static_cast<std::size_t>(d)];
      deps.insert(deps.end(), now.begin(), now.end());
    }
    const auto step = steps.find(node.iteration);
    if (is_gradient_all_reduce(node)) {
      add_unique(deps);
      const std::uint64_t k = slices(node.bytes, slice_bytes);
      for (std::uint64_t s = 0; s < k; ++s) {
        Node slice = node;
        slice.bytes = node.bytes / k + (s < node.bytes % k ? 1 : 0);
        slice.priority = node.layer;
        new_of[i].push_back(out.add(slice, deps));
      }
    } else if (is_optimizer(node) && step != steps.end() && !step->second.buckets.empty()) {
      for (std::int32_t b : step->second.buckets) {
        const Node& bucket = p.nodes[static_cast<std::size_t>(b)];
        Node update = node;
        update.layer = bucket.layer;
        update.label = bucket.label;
        update.priority = bucket.layer - layers;
        update.duration_sec = node.duration_sec * static_cast<double>(bucket.bytes) /
                              static_cast<double>(step->second.bytes);
        std::vector<std::int32_t> on = new_of[static_cast<std::size_t>(b)];
        for (std::int32_t d : p.deps_of(node)) {  // what it waited for besides the gradients
          if (!is_gradient_all_reduce(p.nodes[static_cast<std::size_t>(d)])) {
            const auto& now = new_of[static_cast<std::size_t>(d)];
            on.insert(on.end(), now.begin(), now.end());
          }
        }
        add_unique(on);
        const std::int32_t u = out.add(update, on);
        new_of[i].push_back(u);
        const std::int32_t last = std::max(bucket.layer, bucket.last_layer);
        for (std::int32_t l = bucket.layer; l >= 0 && l <= last; ++l) {
          update_of[{node.iteration, l}] = u;
        }
      }
    } else {
      if (const auto u = update_of.find({node.iteration - 1, node.layer});
          node.kind == NodeKind::kCompute && node.phase == Phase::kForward &&
          u != update_of.end()) {
        deps.push_back(u->second);
      }
      add_unique(deps);
      new_of[i].push_back(out.add(node, deps));
    }
  }
  return out;
}

}  // namespace

ExecutionGraph priority_propagation(ExecutionGraph g, std::uint64_t slice_bytes) {
  if (slice_bytes < 1) {
    throw ConfigError("what_if", "p3: expected a slice of at least 1 byte");
  }
  for (Program& p : g.programs) {
    check_slices(p, slice_bytes);
    p = rewrite(p, slice_bytes, static_cast<std::int32_t>(g.layers.size()));
  }
  require_valid(g, "p3");
  return g;
}

}  // namespace dtsim::sim
