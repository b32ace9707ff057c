#include "sim/planner/cnn_space.h"

#include "workloads/model_zoo.h"

namespace dtsim::sim {

namespace {

// Every grid of `dims` extents (2 or 3) whose product is k, by height, then width, ascending.
std::vector<std::array<int, 3>> grids_of(int k, int dims) {
  std::vector<std::array<int, 3>> out;
  for (int h : divisors(k)) {
    for (int w : divisors(k / h)) {
      const int d = k / (h * w);
      if (dims == 3 || d == 1) {
        out.push_back({h, w, d});
      }
    }
  }
  return out;
}

// The splits of `s` that check_cnn_split accepts on `layers`: none first.
std::vector<CnnSplit> splits_of(const CnnSearchSpace& s,
                                const std::vector<workloads::LayerCost>& layers) {
  std::vector<CnnSplit> candidates{{}};
  const int dims = layers.empty() ? 2 : layers.front().cnn.dims;
  const std::vector<int> degrees = divisors(s.gpus);
  for (int k : degrees) {
    if (k > 1 && s.strategies.spatial) {
      for (const std::array<int, 3>& grid : grids_of(k, dims)) {
        candidates.push_back({.spatial = grid});
      }
    }
  }
  const auto fits = [&](int f) {
    return f > 1 && (s.tp_across_nodes || f <= s.gpus_per_node);
  };
  for (int f : degrees) {
    if (fits(f) && s.strategies.filter) {
      candidates.push_back({.filter = f});
    }
  }
  for (int f : degrees) {
    if (fits(f) && s.strategies.channel) {
      candidates.push_back({.channel = f});
    }
  }
  std::vector<CnnSplit> out;
  for (const CnnSplit& split : candidates) {
    if (check_cnn_split(layers, split).empty()) {
      out.push_back(split);
    }
  }
  return out;
}

}  // namespace

std::vector<PlanCandidate> enumerate_cnn_candidates(const CnnSearchSpace& s) {
  const std::vector<workloads::LayerCost> layers =
      workloads::model_layers({.model = s.model, .batch = 1, .image_size = s.image_size});
  std::vector<PlanCandidate> out;
  for (const CnnSplit& split : splits_of(s, layers)) {
    const int k = split.spatial_ranks() * std::max(split.filter, split.channel);
    for (int pp : divisors(s.gpus / k)) {
      const int dp = s.gpus / (k * pp);
      if ((pp > 1 && !s.strategies.pp) || s.global_batch % dp != 0) {
        continue;
      }
      const ParallelDegrees degrees{.tp = std::max(split.filter, split.channel),
                                    .cp = split.spatial_ranks(),
                                    .dp = dp,
                                    .pp = pp};
      std::vector<PipelineSchedule> schedules{{}};
      if (pp > 1) {
        schedules.insert(schedules.begin(), {.kind = PipelineScheduleKind::kGpipe});
      }
      for (int micro_batch : divisors(s.global_batch / dp)) {
        for (const PipelineSchedule& schedule : schedules) {
          out.push_back({.degrees = degrees,
                         .micro_batch = micro_batch,
                         .micro_batches = s.global_batch / (micro_batch * dp),
                         .schedule = schedule,
                         .cnn = true,
                         .split = split});
        }
      }
    }
  }
  return out;
}

}  // namespace dtsim::sim
