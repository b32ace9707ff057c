// Reading a lowered graph's replayed times: a node's start and end, an iteration's
// communication, and whether a verified fold held.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <span>

#include "sim/lowering/lowering.h"

namespace dtsim::sim {

IterationCommunication iteration_communication(const ExecutionGraph& /*g*/,
                                               const LoweredGraph& lowered,
                                               std::int32_t iteration) {
  IterationCommunication out;
  for (std::size_t i = 0; i < lowered.instances.size(); ++i) {
    if (lowered.instances[i].iteration == iteration) {
      out.instances.insert(static_cast<std::int32_t>(i));
    }
  }
  for (const P2pTransfer& t : lowered.transfers) {
    if (t.iteration == iteration) {
      out.transfers.insert(t.task);
    }
  }
  for (const LeftOutRepeats& l : lowered.left_out) {
    if (l.iteration == iteration) {
      out.left_out[l.instance] += l.count;
    }
  }
  return out;
}

double node_start_sec(const ExecutionGraph& graph, const LoweredGraph& lowered,
                      const ReplayTimes& times, int rank, std::int32_t node) {
  const NodeTasks& t = lowered.node(rank, node);
  const Node& n = graph.program_of(rank).nodes[static_cast<std::size_t>(node)];
  const double start = times.start_sec[static_cast<std::size_t>(t.task)];
  if (n.kind != NodeKind::kCompute) {
    return start;
  }
  const auto program =
      static_cast<std::size_t>(graph.ranks[static_cast<std::size_t>(rank)].program);
  return start + lowered.factor(rank) *
                     lowered.programs[program].offset_sec[static_cast<std::size_t>(node)];
}

double node_end_sec(const ExecutionGraph& graph, const LoweredGraph& lowered,
                    const ReplayTimes& times, int rank, std::int32_t node) {
  const NodeTasks& t = lowered.node(rank, node);
  const Node& n = graph.program_of(rank).nodes[static_cast<std::size_t>(node)];
  const auto program =
      static_cast<std::size_t>(graph.ranks[static_cast<std::size_t>(rank)].program);
  if (n.kind != NodeKind::kCompute ||
      lowered.programs[program].ends_task[static_cast<std::size_t>(node)] != 0) {
    return times.end_sec[static_cast<std::size_t>(t.task)];
  }
  return node_start_sec(graph, lowered, times, rank, node) +
         node_duration_sec(graph, lowered, rank, node);
}

double node_duration_sec(const ExecutionGraph& graph, const LoweredGraph& lowered, int rank,
                         std::int32_t node) {
  return lowered.factor(rank) *
         graph.program_of(rank).nodes[static_cast<std::size_t>(node)].duration_sec;
}

namespace {

double latest_end(std::span<const TaskId> tasks, const ReplayTimes& times) {
  double end = 0;
  for (TaskId t : tasks) {
    end = std::max(end, times.end_sec[static_cast<std::size_t>(t)]);
  }
  return end;
}

bool all_ended(std::span<const TaskId> tasks, const ReplayTimes& times) {
  return std::ranges::all_of(
      tasks, [&](TaskId t) { return times.ended[static_cast<std::size_t>(t)] != 0; });
}

// Compares FoldChecks with their representatives' exits; `compared` as check_fold_so_far's, or
// null: every check, all ended.
FoldVerdict compare_fold(const ExecutionGraph& graph, const LoweredGraph& lowered,
                         const ReplayTimes& times, double tolerance_sec,
                         std::vector<std::uint8_t>* compared) {
  const LocalRanks local(graph);
  FoldVerdict verdict;
  for (std::size_t i = 0; i < lowered.fold_checks.size(); ++i) {
    if (compared != nullptr && (*compared)[i] != 0) {
      continue;
    }
    const FoldCheck& check = lowered.fold_checks[i];
    const int rep = lowered.stands_for[static_cast<std::size_t>(check.rank)];
    const Node& node = graph.program_of(rep).nodes[static_cast<std::size_t>(check.node)];
    const NodeTasks& t = lowered.node(rep, check.node);
    std::span<const TaskId> expected_tasks(&t.task, 1);
    if (node.kind == NodeKind::kCollective) {
      const CollectiveInstance& inst = lowered.instances[static_cast<std::size_t>(t.instance)];
      expected_tasks = inst.exits_of(local.of(inst.communicator, rep));
    }
    if (compared != nullptr) {
      if (!all_ended(expected_tasks, times) || !all_ended(check.exits, times)) {
        continue;
      }
      (*compared)[i] = 1;
    }
    const double expected = latest_end(expected_tasks, times);
    const double actual = latest_end(check.exits, times);
    const double difference = std::abs(actual - expected);
    ++verdict.checked;
    verdict.max_difference_sec = std::max(verdict.max_difference_sec, difference);
    if (difference > tolerance_sec && verdict.mismatch.empty()) {
      char text[256];
      std::snprintf(text, sizeof text,
                    "rank %d's node %d (%s on \"%s\") ended at %.9f s, its representative "
                    "rank %d's at %.9f s",
                    check.rank, check.node,
                    node.kind == NodeKind::kCollective ? "a collective" : "a transfer",
                    graph.communicator_of(check.rank, node).name.c_str(), actual, rep, expected);
      verdict.mismatch = text;
    }
  }
  return verdict;
}

}  // namespace

FoldVerdict check_fold(const ExecutionGraph& graph, const LoweredGraph& lowered,
                       const ReplayTimes& times, double tolerance_sec) {
  return compare_fold(graph, lowered, times, tolerance_sec, nullptr);
}

FoldVerdict check_fold_so_far(const ExecutionGraph& graph, const LoweredGraph& lowered,
                              const ReplayTimes& times, double tolerance_sec,
                              std::vector<std::uint8_t>& compared) {
  compared.resize(lowered.fold_checks.size(), 0);
  return compare_fold(graph, lowered, times, tolerance_sec, &compared);
}

}  // namespace dtsim::sim
