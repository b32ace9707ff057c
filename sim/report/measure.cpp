#include "sim/report/measure.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

namespace dtsim::sim {

namespace {

double max_end(const std::vector<TaskId>& ids, const ReplayTimes& times) {
  double t = 0;
  for (TaskId id : ids) {
    t = std::max(t, times.end_sec[static_cast<std::size_t>(id)]);
  }
  return t;
}

// Per iteration k, the latest end of any node of any rank of an iteration <= k (so that the ends
// never decrease, even where a graph lets iteration k+1's work end before iteration k's).
std::vector<double> iteration_ends(const ExecutionGraph& g, const LoweredGraph& lowered,
                                   const ReplayTimes& times) {
  std::vector<double> ends;
  const LocalRanks local(g);
  for (int r = 0; r < g.rank_count(); ++r) {
    if (lowered.stands_for[static_cast<std::size_t>(r)] != r) {
      continue;  // its times are those of the rank it stands for
    }
    const Program& p = g.program_of(r);
    for (std::size_t i = 0; i < p.nodes.size(); ++i) {
      const auto it = static_cast<std::size_t>(p.nodes[i].iteration);
      if (ends.size() <= it) {
        ends.resize(it + 1, 0.0);
      }
      ends[it] = std::max(ends[it],
                          node_exit_sec(g, lowered, times, local, r, static_cast<std::int32_t>(i)));
    }
  }
  for (std::size_t k = 1; k < ends.size(); ++k) {
    ends[k] = std::max(ends[k], ends[k - 1]);
  }
  return ends;
}

// Rank 0's compute of iteration `it` on a healthy device: per micro-batch forward and backward
// summed in layer order, then the optimizer.
void measure_compute(const Program& p, std::int32_t it, TrainingTimes& t) {
  std::map<std::int32_t, std::vector<std::pair<std::int32_t, double>>> forward, backward;
  double optimizer_sec = 0;
  for (const Node& node : p.nodes) {
    if (node.kind != NodeKind::kCompute || node.iteration != it) {
      continue;
    }
    if (node.phase == Phase::kForward || node.phase == Phase::kRecompute) {
      forward[node.micro_batch].emplace_back(node.layer, node.duration_sec);
    } else if (node.phase == Phase::kBackward) {
      backward[node.micro_batch].emplace_back(node.layer, node.duration_sec);
    } else if (node.phase == Phase::kOptimizer) {
      optimizer_sec += node.duration_sec;
    }
  }
  auto in_layer_order = [](std::vector<std::pair<std::int32_t, double>> nodes) {
    std::stable_sort(nodes.begin(), nodes.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    double total = 0;
    for (const auto& [layer, sec] : nodes) {
      total += sec;
    }
    return total;
  };
  std::set<std::int32_t> micro_batches;
  for (const auto& [m, nodes] : forward) {
    micro_batches.insert(m);
  }
  for (const auto& [m, nodes] : backward) {
    micro_batches.insert(m);
  }
  t.compute_sec = 0;
  for (std::int32_t m : micro_batches) {
    t.forward_sec = in_layer_order(forward[m]);
    t.backward_sec = in_layer_order(backward[m]);
    t.compute_sec += t.forward_sec + t.backward_sec;
  }
  t.optimizer_sec = optimizer_sec;
  t.compute_sec += optimizer_sec;
  t.micro_batches = std::max<int>(1, static_cast<int>(micro_batches.size()));
}

}  // namespace

double node_exit_sec(const ExecutionGraph& g, const LoweredGraph& lowered, const ReplayTimes& times,
                     const LocalRanks& local, int rank, std::int32_t i) {
  const Node& node = g.program_of(rank).nodes[static_cast<std::size_t>(i)];
  if (node.kind != NodeKind::kCollective) {
    return node_end_sec(g, lowered, times, rank, i);
  }
  const CollectiveInstance& inst =
      lowered.instances[static_cast<std::size_t>(lowered.node(rank, i).instance)];
  return max_end(inst.exits_of(local.of(inst.communicator, rank)), times);
}

TrainingTimes measure_training(const ExecutionGraph& g, const LoweredGraph& lowered,
                               const ReplayTimes& times) {
  TrainingTimes t;
  t.iteration_end_sec = iteration_ends(g, lowered, times);
  const std::size_t last = t.iteration_end_sec.size() - 1;
  const double start_sec = last == 0 ? 0.0 : t.iteration_end_sec[last - 1];
  t.iteration_time_sec = t.iteration_end_sec[last] - start_sec;
  const auto it = static_cast<std::int32_t>(last);
  measure_compute(g.program_of(0), it, t);

  // Per rank, its backward node of each layer in the last iteration (the last micro-batch's).
  double backward_end = 0;
  std::map<std::pair<int, std::int32_t>, double> backward_layer_end;  // (rank, layer)
  for (int r = 0; r < g.rank_count(); ++r) {
    if (lowered.stands_for[static_cast<std::size_t>(r)] != r) {
      continue;
    }
    const Program& p = g.program_of(r);
    for (std::size_t i = 0; i < p.nodes.size(); ++i) {
      const Node& node = p.nodes[i];
      if (node.kind == NodeKind::kCompute && node.iteration == it &&
          node.phase == Phase::kBackward) {
        const double end = node_end_sec(g, lowered, times, r, static_cast<std::int32_t>(i));
        backward_end = std::max(backward_end, end);
        backward_layer_end[{r, node.layer}] = end;
      }
    }
  }
  t.backward_end_sec = backward_end - start_sec;
  const Program& p0 = g.program_of(0);
  for (std::size_t i = 0; i < p0.nodes.size(); ++i) {
    const Node& node = p0.nodes[i];
    if (node.kind != NodeKind::kCollective || node.iteration != it) {
      continue;
    }
    const std::int32_t index = lowered.node(0, static_cast<std::int32_t>(i)).instance;
    const CollectiveInstance& c = lowered.instances[static_cast<std::size_t>(index)];
    double ready = 0;
    for (int r : g.communicator_of(0, node).ranks) {
      const auto found =
          backward_layer_end.find({lowered.stands_for[static_cast<std::size_t>(r)], node.layer});
      if (found != backward_layer_end.end()) {
        ready = std::max(ready, found->second);
      }
    }
    TrainingTimes::CollectiveTimes ct{
        .node = static_cast<std::int32_t>(i), .instance = index, .ready_sec = ready - start_sec};
    if (c.first == c.end) {  // a single rank: nothing to reduce
      ct.start_sec = ct.end_sec = ct.ready_sec;
    } else {
      ct.start_sec =
          *std::min_element(times.start_sec.begin() + c.first, times.start_sec.begin() + c.end) -
          start_sec;
      ct.end_sec =
          *std::max_element(times.end_sec.begin() + c.first, times.end_sec.begin() + c.end) -
          start_sec;
    }
    t.collectives.push_back(ct);
  }
  return t;
}

}  // namespace dtsim::sim
