#include "sim/timeline.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>

namespace dtsim::sim {

using nlohmann::ordered_json;

namespace {

constexpr int kComputeTid = 0;
constexpr int kCommTid = 1;
constexpr double kMicrosecondsPerSecond = 1e6;

ordered_json metadata(const char* name, int pid, int tid, const std::string& value) {
  return {{"name", name}, {"ph", "M"}, {"pid", pid}, {"tid", tid}, {"args", {{"name", value}}}};
}

ordered_json slice(const std::string& name, const char* category, int pid, int tid,
                   double start_sec, double duration_sec, ordered_json args) {
  return {{"name", name},
          {"cat", category},
          {"ph", "X"},
          {"ts", start_sec * kMicrosecondsPerSecond},
          {"dur", duration_sec * kMicrosecondsPerSecond},
          {"pid", pid},
          {"tid", tid},
          {"args", std::move(args)}};
}

// Writes the events of one rank and iteration into `events`.
class RankIteration {
 public:
  RankIteration(const workloads::Workload& w, const DataParallelGraph& dp, const ReplayTimes& t,
                int rank, int iteration)
      : w_(w), dp_(dp), times_(t), rank_(rank), iteration_(iteration) {}

  // Forward layers in order, backward layers in reverse order (each task of the graph covers
  // consecutive layers: their slices follow one another from the task's start), the optimizer.
  void compute(ordered_json& events) const {
    const auto& iter = dp_.iterations[static_cast<std::size_t>(iteration_)];
    const auto r = static_cast<std::size_t>(rank_);
    if (!iter.accumulate.empty()) {  // gradient accumulation: the micro-batches before the last
      const TaskId acc = iter.accumulate[r];
      events.push_back(
          slice("accumulation micro-batches", "forward+backward", rank_, kComputeTid, start(acc),
                times_.end_sec[static_cast<std::size_t>(iter.accumulate_end[r])] - start(acc),
                {{"iteration", iteration_}, {"micro_batches", dp_.accumulation_steps - 1}}));
    }
    double t = start(iter.forward[r]);
    for (const workloads::Layer& layer : w_.layers) {
      events.push_back(layer_slice("forward ", layer, t, layer.forward_sec));
      t += layer.forward_sec;
    }
    int down_to = static_cast<int>(w_.layers.size());  // layers [down_to, end) are done
    auto backward = [&](TaskId task, int first_layer) {
      double tb = start(task);
      for (int i = down_to - 1; i >= first_layer; --i) {
        const workloads::Layer& layer = w_.layers[static_cast<std::size_t>(i)];
        events.push_back(layer_slice("backward ", layer, tb, layer.backward_sec));
        tb += layer.backward_sec;
      }
      down_to = first_layer;
    };
    for (std::size_t b = 0; b < dp_.buckets.size(); ++b) {
      backward(iter.ready[b][r], dp_.buckets[b].first_layer);
    }
    backward(iter.backward_end[r], 0);
    const TaskId opt = iter.optimizer[r];
    events.push_back(slice("optimizer", "optimizer", rank_, kComputeTid, start(opt),
                           times_.end_sec[static_cast<std::size_t>(opt)] - start(opt),
                           {{"iteration", iteration_}}));
  }

  // One slice per bucket's all-reduce in which this rank takes part.
  void communication(ordered_json& events) const {
    const auto& iter = dp_.iterations[static_cast<std::size_t>(iteration_)];
    const auto& tasks = dp_.graph.tasks();
    for (std::size_t b = 0; b < dp_.buckets.size(); ++b) {
      const CollectiveTasks& c = iter.all_reduce[b];
      double first = std::numeric_limits<double>::infinity();
      for (TaskId id = c.first; id < c.end; ++id) {
        // Folded ranks share their collectives' joins and memoized waits (on rank 0).
        if (tasks[static_cast<std::size_t>(id)].rank == rank_ || dp_.ranks_folded) {
          first = std::min(first, start(id));
        }
      }
      if (first == std::numeric_limits<double>::infinity()) {
        continue;  // a single rank, or one that takes no part
      }
      double last = first;
      for (TaskId id : c.exits[static_cast<std::size_t>(rank_)]) {
        last = std::max(last, times_.end_sec[static_cast<std::size_t>(id)]);
      }
      events.push_back(slice("all-reduce bucket " + std::to_string(b), "all-reduce", rank_,
                             kCommTid, first, last - first,
                             {{"iteration", iteration_},
                              {"bucket", b},
                              {"bytes", dp_.buckets[b].bytes},
                              {"algorithm", dp_.choices[b].algorithm}}));
    }
  }

 private:
  [[nodiscard]] double start(TaskId id) const {
    return times_.start_sec[static_cast<std::size_t>(id)];
  }
  [[nodiscard]] ordered_json layer_slice(const char* pass, const workloads::Layer& layer,
                                         double start_sec, double duration_sec) const {
    return slice(
        pass + layer.name, pass[0] == 'f' ? "forward" : "backward", rank_, kComputeTid, start_sec,
        duration_sec,
        {{"iteration", iteration_}, {"layer", layer.name}, {"param_bytes", layer.param_bytes}});
  }

  const workloads::Workload& w_;
  const DataParallelGraph& dp_;
  const ReplayTimes& times_;
  int rank_;
  int iteration_;
};

}  // namespace

std::vector<int> timeline_ranks(int ranks) {
  std::vector<int> shown;
  if (ranks <= kTimelineMaxRanks) {
    for (int r = 0; r < ranks; ++r) {
      shown.push_back(r);
    }
    return shown;
  }
  for (std::int64_t i = 0; i < kTimelineMaxRanks; ++i) {
    shown.push_back(static_cast<int>(i * (ranks - 1) / (kTimelineMaxRanks - 1)));
  }
  return shown;
}

ordered_json timeline_json(const workloads::Workload& workload, const DataParallelGraph& dp,
                           const ReplayTimes& times, int ranks) {
  ordered_json events = ordered_json::array();
  for (int r : timeline_ranks(ranks)) {
    events.push_back(metadata("process_name", r, 0, "rank " + std::to_string(r)));
    events.push_back(metadata("thread_name", r, kComputeTid, "compute"));
    events.push_back(metadata("thread_name", r, kCommTid, "communication"));
    const int iterations = static_cast<int>(dp.iterations.size());
    for (int k = 0; k < iterations; ++k) {
      RankIteration(workload, dp, times, r, k).compute(events);
    }
    for (int k = 0; k < iterations; ++k) {
      RankIteration(workload, dp, times, r, k).communication(events);
    }
  }
  return {{"traceEvents", std::move(events)}, {"displayTimeUnit", "ms"}};
}

}  // namespace dtsim::sim
