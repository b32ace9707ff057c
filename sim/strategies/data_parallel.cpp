#include "sim/strategies/data_parallel.h"

#include <vector>

namespace dtsim::sim {

std::optional<Overlap> parse_overlap(const std::string& name) {
  if (name == "backward") {
    return Overlap::kBackward;
  }
  if (name == "none") {
    return Overlap::kNone;
  }
  return std::nullopt;
}

std::string overlap_name(Overlap overlap) {
  return overlap == Overlap::kBackward ? "backward" : "none";
}

namespace {

// Adds one micro-batch's forward and backward nodes; returns the backward node of each layer.
std::vector<std::int32_t> add_micro_batch(Program& replica, const workloads::Workload& w,
                                          int iteration, int micro_batch) {
  const auto layers = static_cast<std::int32_t>(w.layers.size());
  Node node{.iteration = iteration, .micro_batch = micro_batch};
  node.phase = Phase::kForward;
  for (std::int32_t i = 0; i < layers; ++i) {
    node.layer = i;
    node.duration_sec = w.layers[static_cast<std::size_t>(i)].forward_sec;
    replica.add(node);
  }
  std::vector<std::int32_t> backward(static_cast<std::size_t>(layers));
  node.phase = Phase::kBackward;
  for (std::int32_t i = layers - 1; i >= 0; --i) {
    node.layer = i;
    node.duration_sec = w.layers[static_cast<std::size_t>(i)].backward_sec;
    backward[static_cast<std::size_t>(i)] = replica.add(node);
  }
  return backward;
}

}  // namespace

ExecutionGraph build_data_parallel(const workloads::Workload& workload,
                                   const DataParallelJob& job) {
  ExecutionGraph g;
  for (const workloads::Layer& layer : workload.layers) {
    g.layers.push_back(layer.name);
  }
  Communicator dp{.name = "dp"};
  for (int r = 0; r < job.ranks; ++r) {
    dp.ranks.push_back(r);
  }
  g.communicators.push_back(std::move(dp));
  const std::vector<Bucket> buckets =
      assign_buckets(workload, job.bucket_cap_bytes, job.first_bucket_cap_bytes);
  for (std::size_t b = 0; b < buckets.size(); ++b) {
    g.labels.push_back("bucket " + std::to_string(b));
  }

  Program replica{.name = "replica", .comms = {"dp"}};
  const int last_micro_batch = job.accumulation_steps - 1;
  for (int it = 0; it < job.iterations; ++it) {
    std::vector<std::int32_t> backward;
    for (int m = 0; m <= last_micro_batch; ++m) {
      backward = add_micro_batch(replica, workload, it, m);
    }
    std::int32_t last_all_reduce = -1;
    for (std::size_t b = 0; b < buckets.size(); ++b) {
      // Its gradients are ready once the backward node of its first layer ran; with
      // Overlap::kNone it also waits for the whole backward pass (layer 0's node, the last).
      std::vector<std::int32_t> deps{backward[static_cast<std::size_t>(buckets[b].first_layer)]};
      if (job.overlap == Overlap::kNone && buckets[b].first_layer != 0) {
        deps.push_back(backward[0]);
      }
      last_all_reduce = replica.add({.kind = NodeKind::kCollective,
                                     .phase = Phase::kBackward,
                                     .op = CollectiveOp::kAllReduce,
                                     .iteration = it,
                                     .micro_batch = last_micro_batch,
                                     .layer = buckets[b].first_layer,
                                     .last_layer = buckets[b].last_layer,
                                     .label = static_cast<std::int32_t>(b),
                                     .comm = 0,
                                     .bytes = buckets[b].bytes},
                                    deps);
    }
    Node optimizer{.phase = Phase::kOptimizer,
                   .iteration = it,
                   .micro_batch = last_micro_batch,
                   .duration_sec = workload.optimizer_sec};
    if (last_all_reduce >= 0) {
      replica.add(optimizer, {last_all_reduce});
    } else {
      replica.add(optimizer);
    }
  }
  g.programs.push_back(std::move(replica));
  g.ranks.assign(static_cast<std::size_t>(job.ranks), RankProgram{.program = 0, .comms = {0}});
  return g;
}

}  // namespace dtsim::sim
