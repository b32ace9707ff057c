#include "sim/lowering/fold.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace dtsim::sim {

bool FoldPlan::folded() const {
  for (std::size_t r = 0; r < stands_for.size(); ++r) {
    if (stands_for[r] != static_cast<int>(r)) {
      return true;
    }
  }
  return false;
}

bool ranks_exit_together(const Schedule& schedule) {
  for (const auto& exits : schedule.exit_ops) {
    if (exits != schedule.exit_ops.front()) {
      return false;
    }
  }
  return true;
}

namespace {

// Whether the class `members` (ascending) running `program` with communicators `comms` folds.
bool class_folds(const ExecutionGraph& g, const std::vector<int>& members,
                 const std::function<const Schedule&(int, std::int32_t)>& schedule_of) {
  const int rep = members.front();
  const Program& program = g.program_of(rep);
  for (std::size_t i = 0; i < program.nodes.size(); ++i) {
    const Node& node = program.nodes[i];
    if (node.kind == NodeKind::kSend || node.kind == NodeKind::kRecv) {
      return false;  // a peer in another class: members would not leave together
    }
    if (node.kind != NodeKind::kCollective) {
      continue;
    }
    std::vector<int> group = g.communicator_of(rep, node).ranks;
    std::sort(group.begin(), group.end());
    if (group != members || !ranks_exit_together(schedule_of(rep, static_cast<std::int32_t>(i)))) {
      return false;
    }
  }
  return true;
}

// Whether `program` runs every collective on one communicator role.
bool one_stream(const Program& program) {
  std::set<std::int32_t> roles;
  for (const Node& node : program.nodes) {
    if (node.kind == NodeKind::kCollective) {
      roles.insert(node.comm);
    }
  }
  return roles.size() <= 1;
}

}  // namespace

FoldPlan plan_fold(const ExecutionGraph& g, std::span<const double> compute_factor, bool fold,
                   bool allow_memoize,
                   const std::function<const Schedule&(int, std::int32_t)>& schedule_of) {
  FoldPlan plan;
  const int n = g.rank_count();
  for (int r = 0; r < n; ++r) {
    plan.stands_for.push_back(r);
  }
  if (!fold) {
    return plan;
  }
  // Candidate classes: same program, same communicators, same compute speed.
  std::map<std::tuple<std::int32_t, std::vector<std::int32_t>, double>, std::vector<int>> classes;
  for (int r = 0; r < n; ++r) {
    const RankProgram& rp = g.ranks[static_cast<std::size_t>(r)];
    const double k = compute_factor.empty() ? 1.0 : compute_factor[static_cast<std::size_t>(r)];
    classes[{rp.program, rp.comms, k}].push_back(r);
  }
  int folded_classes = 0;
  bool covers_all = false;
  for (const auto& [key, members] : classes) {
    if (members.size() < 2 || !class_folds(g, members, schedule_of)) {
      continue;
    }
    for (int m : members) {
      plan.stands_for[static_cast<std::size_t>(m)] = members.front();
    }
    ++folded_classes;
    covers_all = static_cast<int>(members.size()) == n;
  }
  plan.memoize = allow_memoize && folded_classes == 1 && covers_all && one_stream(g.program_of(0));
  return plan;
}

FoldedTasks add_folded_collective(TaskGraph& graph, const Schedule& schedule, int rank, int comm,
                                  std::span<const int> members, const std::vector<TaskId>& entry,
                                  const FoldedTasks* repeat) {
  const TaskId in = graph.add_stream_wait(rank, 0, entry, comm);
  if (repeat != nullptr) {
    const std::vector<TaskId> deps{in};
    const TaskId wait = graph.add_memo_wait(rank, repeat->first, repeat->exit, deps, comm);
    return {.first = in, .end = wait + 1, .exit = wait};
  }
  const auto n = static_cast<std::size_t>(schedule.ranks);
  const CollectiveTasks c = graph.add_schedule(schedule, {n, {in}}, members, comm);
  const TaskId out = graph.add_stream_wait(
      rank, 0, c.exits.front().empty() ? std::vector<TaskId>{in} : c.exits.front(), comm);
  return {.first = in, .end = out + 1, .exit = out};
}

}  // namespace dtsim::sim
