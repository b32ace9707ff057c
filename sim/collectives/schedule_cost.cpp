#include "sim/collectives/schedule_cost.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>
#include <vector>

namespace dtsim::sim {

namespace {

// Walks the ops in order (a topological order), giving each the maximum over its deps and
// channel predecessor of `value`, then `step(op, start)`.
template <typename T, typename Step>
std::vector<T> forward_pass(const Schedule& s, Step step) {
  std::vector<T> end(s.ops.size());
  std::map<std::tuple<int, int, int>, std::size_t> last_on_channel;
  for (std::size_t i = 0; i < s.ops.size(); ++i) {
    const ScheduleOp& op = s.ops[i];
    T start{};
    for (int d : op.deps) {
      start = std::max(start, end[static_cast<std::size_t>(d)]);
    }
    if (op.kind == ScheduleOp::Kind::kTransfer) {
      auto [it, inserted] = last_on_channel.emplace(std::make_tuple(op.src, op.dst, op.channel), i);
      if (!inserted) {
        start = std::max(start, end[it->second]);
        it->second = i;
      }
    }
    end[i] = step(op, start);
  }
  return end;
}

}  // namespace

double critical_path_sec(const Schedule& schedule, const TopologyHints& hints,
                         double bytes_per_sec) {
  const auto end = forward_pass<double>(schedule, [&](const ScheduleOp& op, double start) {
    if (op.kind == ScheduleOp::Kind::kWait) {
      return start + op.wait_sec;
    }
    return start + hints.latency_sec(op.src, op.dst) +
           static_cast<double>(op.bytes) / bytes_per_sec;
  });
  return end.empty() ? 0.0 : *std::max_element(end.begin(), end.end());
}

ScheduleShape schedule_shape(const Schedule& schedule, const TopologyHints& hints) {
  ScheduleShape shape;
  const auto steps = forward_pass<int>(schedule, [](const ScheduleOp& op, int start) {
    return start + (op.kind == ScheduleOp::Kind::kTransfer ? 1 : 0);
  });
  shape.steps = steps.empty() ? 0 : *std::max_element(steps.begin(), steps.end());
  std::vector<std::uint64_t> sent(static_cast<std::size_t>(schedule.ranks));
  std::vector<std::uint64_t> received(static_cast<std::size_t>(schedule.ranks));
  std::map<std::pair<int, int>, double> latency;
  for (const ScheduleOp& op : schedule.ops) {
    if (op.kind != ScheduleOp::Kind::kTransfer) {
      continue;
    }
    sent[static_cast<std::size_t>(op.src)] += op.bytes;
    received[static_cast<std::size_t>(op.dst)] += op.bytes;
    auto [it, inserted] = latency.emplace(std::make_pair(op.src, op.dst), 0.0);
    if (inserted) {
      it->second = hints.latency_sec(op.src, op.dst);
      shape.max_latency_sec = std::max(shape.max_latency_sec, it->second);
    }
  }
  for (std::size_t r = 0; r < sent.size(); ++r) {
    shape.max_rank_bytes = std::max({shape.max_rank_bytes, sent[r], received[r]});
  }
  return shape;
}

double estimate_sec(const Schedule& schedule, const TopologyHints& hints, double bytes_per_sec) {
  const ScheduleShape shape = schedule_shape(schedule, hints);
  double waits_sec = 0;
  for (const ScheduleOp& op : schedule.ops) {
    waits_sec += op.kind == ScheduleOp::Kind::kWait ? op.wait_sec : 0.0;
  }
  return std::max(critical_path_sec(schedule, hints, bytes_per_sec),
                  shape.steps * shape.max_latency_sec + waits_sec +
                      static_cast<double>(shape.max_rank_bytes) / bytes_per_sec);
}

}  // namespace dtsim::sim
