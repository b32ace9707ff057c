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

// Route facts per (src, dst), computed once.
class Routes {
 public:
  explicit Routes(const TopologyHints& hints) : hints_(hints) {}
  struct Route {
    double latency_sec = 0;
    double bytes_per_sec = 0;  // narrowest link
    std::vector<std::pair<int, double>> links;
  };
  const Route& get(int src, int dst) {
    auto [it, inserted] = cache_.emplace(std::make_pair(src, dst), Route{});
    if (inserted) {
      it->second.latency_sec = hints_.latency_sec(src, dst);
      it->second.links = hints_.links(src, dst);
      for (const auto& [id, bw] : it->second.links) {
        it->second.bytes_per_sec =
            it->second.bytes_per_sec == 0 ? bw : std::min(it->second.bytes_per_sec, bw);
      }
    }
    return it->second;
  }

 private:
  const TopologyHints& hints_;
  std::map<std::pair<int, int>, Route> cache_;
};

double critical_path(const Schedule& schedule, Routes& routes) {
  const auto end = forward_pass<double>(schedule, [&](const ScheduleOp& op, double start) {
    if (op.kind == ScheduleOp::Kind::kWait) {
      return start + op.wait_sec;
    }
    const auto& r = routes.get(op.src, op.dst);
    return start + r.latency_sec + static_cast<double>(op.bytes) / r.bytes_per_sec;
  });
  return end.empty() ? 0.0 : *std::max_element(end.begin(), end.end());
}

ScheduleShape shape(const Schedule& schedule, Routes& routes) {
  ScheduleShape shape;
  const auto steps = forward_pass<int>(schedule, [](const ScheduleOp& op, int start) {
    return start + (op.kind == ScheduleOp::Kind::kTransfer ? 1 : 0);
  });
  shape.steps = steps.empty() ? 0 : *std::max_element(steps.begin(), steps.end());
  std::map<int, std::pair<double, double>> link_load;  // id -> (bytes, bytes/s)
  for (const ScheduleOp& op : schedule.ops) {
    if (op.kind == ScheduleOp::Kind::kWait) {
      shape.waits_sec += op.wait_sec;
      continue;
    }
    const auto& r = routes.get(op.src, op.dst);
    shape.max_latency_sec = std::max(shape.max_latency_sec, r.latency_sec);
    for (const auto& [id, bw] : r.links) {
      auto& load = link_load[id];
      load.first += static_cast<double>(op.bytes);
      load.second = bw;
    }
  }
  for (const auto& [id, load] : link_load) {
    shape.busiest_link_sec = std::max(shape.busiest_link_sec, load.first / load.second);
  }
  return shape;
}

}  // namespace

double critical_path_sec(const Schedule& schedule, const TopologyHints& hints) {
  Routes routes(hints);
  return critical_path(schedule, routes);
}

ScheduleShape schedule_shape(const Schedule& schedule, const TopologyHints& hints) {
  Routes routes(hints);
  return shape(schedule, routes);
}

double estimate_sec(const Schedule& schedule, const TopologyHints& hints) {
  Routes routes(hints);
  const ScheduleShape s = shape(schedule, routes);
  return std::max(critical_path(schedule, routes),
                  s.steps * s.max_latency_sec + s.waits_sec + s.busiest_link_sec);
}

}  // namespace dtsim::sim
