#include "sim/report/timeline.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

namespace dtsim::sim {

using nlohmann::ordered_json;

namespace {

constexpr int kComputeTid = 0;
constexpr double kMicrosecondsPerSecond = 1e6;

ordered_json metadata(const char* name, int pid, int tid, const std::string& value) {
  return {{"name", name}, {"ph", "M"}, {"pid", pid}, {"tid", tid}, {"args", {{"name", value}}}};
}

// `sec` in microseconds, rounded to a multiple of 2^-10 us (about 1 ns). On that grid a start plus
// a duration is exact in a double, so a slice ending where the next begins does not overlap it
// in a viewer (start * 1e6 + (end - start) * 1e6 overshot by ~1e-10 us, and viewers drew a
// rank's compute track as a staircase of nested slices).
double grid_microseconds(double sec) {
  constexpr double kStepsPerMicrosecond = 1024;
  return std::round(sec * kMicrosecondsPerSecond * kStepsPerMicrosecond) / kStepsPerMicrosecond;
}

ordered_json slice(const std::string& name, const char* category, int pid, int tid,
                   double start_sec, double end_sec, ordered_json args) {
  const double start_us = grid_microseconds(start_sec);
  return {{"name", name},
          {"cat", category},
          {"ph", "X"},
          {"ts", start_us},
          {"dur", grid_microseconds(end_sec) - start_us},
          {"pid", pid},
          {"tid", tid},
          {"args", std::move(args)}};
}

// Writes the events of one rank into `events`.
class RankTimeline {
 public:
  RankTimeline(const ExecutionGraph& g, const LoweredGraph& lowered, const ReplayTimes& t,
               const LocalRanks& local, int rank)
      : g_(g),
        lowered_(lowered),
        times_(t),
        local_(local),
        rank_(rank),
        program_(g.program_of(rank)) {
    for (std::int32_t comm : g.ranks[static_cast<std::size_t>(rank)].comms) {
      if (std::find(comms_.begin(), comms_.end(), comm) == comms_.end()) {
        comms_.push_back(comm);
      }
    }
    std::sort(comms_.begin(), comms_.end());
  }

  void metadata_events(ordered_json& events) const {
    // Named after its program too when ranks run different ones ("rank 8 (stage 1)").
    const std::string program = g_.programs.size() > 1 ? " (" + program_.name + ")" : "";
    events.push_back(metadata("process_name", rank_, 0, "rank " + std::to_string(rank_) + program));
    events.push_back(metadata("thread_name", rank_, kComputeTid, "compute"));
    for (std::size_t i = 0; i < comms_.size(); ++i) {
      const std::string& name = g_.communicators[static_cast<std::size_t>(comms_[i])].name;
      events.push_back(metadata("thread_name", rank_, kComputeTid + 1 + static_cast<int>(i),
                                comms_.size() == 1 ? "communication" : "comm " + name));
    }
  }

  void compute(ordered_json& events) const {
    for (std::size_t i = 0; i < program_.nodes.size(); ++i) {
      const Node& node = program_.nodes[i];
      if (node.kind != NodeKind::kCompute) {
        continue;
      }
      const auto id = static_cast<std::int32_t>(i);
      const double start = node_start_sec(g_, lowered_, times_, rank_, id);
      const std::string phase(phase_name(node.phase));
      ordered_json args{{"iteration", node.iteration}, {"micro_batch", node.micro_batch}};
      std::string name = phase;
      if (node.layer >= 0) {
        const std::string& layer = g_.layers[static_cast<std::size_t>(node.layer)];
        name += " " + layer;
        args["layer"] = layer;
      }
      events.push_back(slice(name, phase.c_str(), rank_, kComputeTid, start,
                             node_end_sec(g_, lowered_, times_, rank_, id), std::move(args)));
    }
  }

  void communication(ordered_json& events) const {
    for (std::size_t i = 0; i < program_.nodes.size(); ++i) {
      const Node& node = program_.nodes[i];
      if (node.kind == NodeKind::kCompute) {
        continue;
      }
      const Communicator& comm = g_.communicator_of(rank_, node);
      const auto comm_index = static_cast<std::int32_t>(&comm - g_.communicators.data());
      const int tid =
          kComputeTid + 1 +
          static_cast<int>(std::find(comms_.begin(), comms_.end(), comm_index) - comms_.begin());
      ordered_json args{{"iteration", node.iteration}, {"bytes", node.bytes}};
      const auto id = static_cast<std::int32_t>(i);
      if (node.kind != NodeKind::kCollective) {
        const int peer = comm.ranks[static_cast<std::size_t>(node.peer)];
        args["communicator"] = comm.name;
        const double start = node_start_sec(g_, lowered_, times_, rank_, id);
        events.push_back(
            slice((node.kind == NodeKind::kSend ? "send to " : "recv from ") + std::to_string(peer),
                  "p2p", rank_, tid, start, node_end_sec(g_, lowered_, times_, rank_, id),
                  std::move(args)));
        continue;
      }
      const CollectiveInstance& c =
          lowered_.instances[static_cast<std::size_t>(lowered_.node(rank_, id).instance)];
      const auto [first, last] = span(c, local_.of(comm_index, rank_));
      if (first == std::numeric_limits<double>::infinity()) {
        continue;  // a single rank, or one that takes no part
      }
      args["algorithm"] = lowered_.choices[static_cast<std::size_t>(c.choice)].algorithm;
      args["communicator"] = comm.name;
      const std::string op(op_name(node.op));
      const std::string name = node.label >= 0
                                   ? op + " " + g_.labels[static_cast<std::size_t>(node.label)]
                                   : op + " on " + comm.name;
      events.push_back(slice(name, op.c_str(), rank_, tid, first, last, std::move(args)));
    }
  }

 private:
  // From the rank's first operation of `c` to its exit from it.
  [[nodiscard]] std::pair<double, double> span(const CollectiveInstance& c, int local) const {
    const auto& tasks = lowered_.tasks.tasks();
    // Folded ranks share their collectives' joins and memoized waits (on the representative).
    const int rank = lowered_.stands_for[static_cast<std::size_t>(rank_)];
    const bool shared = rank != rank_ || c.exits.size() == 1;
    double first = std::numeric_limits<double>::infinity();
    for (TaskId id = c.first; id < c.end; ++id) {
      const Task& t = tasks[static_cast<std::size_t>(id)];
      // The rank's own operations: what it sends or waits, and what it receives.
      if (shared || t.rank == rank_ || (t.kind == TaskKind::kTransfer && t.peer == rank_)) {
        first = std::min(first, times_.start_sec[static_cast<std::size_t>(id)]);
      }
    }
    double last = first;
    for (TaskId id : c.exits_of(local)) {
      last = std::max(last, times_.end_sec[static_cast<std::size_t>(id)]);
    }
    return {first, last};
  }

  const ExecutionGraph& g_;
  const LoweredGraph& lowered_;
  const ReplayTimes& times_;
  const LocalRanks& local_;
  int rank_;
  const Program& program_;
  std::vector<std::int32_t> comms_;  // communicators the rank uses, ascending
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

ordered_json timeline_json(const ExecutionGraph& graph, const LoweredGraph& lowered,
                           const ReplayTimes& times) {
  ordered_json events = ordered_json::array();
  const LocalRanks local(graph);
  for (int r : timeline_ranks(graph.rank_count())) {
    const RankTimeline rank(graph, lowered, times, local, r);
    rank.metadata_events(events);
    rank.compute(events);
    rank.communication(events);
  }
  return {{"traceEvents", std::move(events)}, {"displayTimeUnit", "ms"}};
}

}  // namespace dtsim::sim
