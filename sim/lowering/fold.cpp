#include "sim/lowering/fold.h"

#include <algorithm>
#include <map>
#include <set>

#include "sim/lowering/fold_classes.h"

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

using fold_internal::role_traffic;
using fold_internal::RoleTraffic;

// Whether the class `members` folds exactly: every collective on a communicator whose members
// are exactly the class, releasing them together, and no send or receive.
bool exact_class(const ExecutionGraph& g, const std::vector<int>& members,
                 const ScheduleOf& schedule_of) {
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

// Whether every collective of the class `members`, on each member's communicator, releases its
// ranks together (a verified class's precondition).
bool exits_together(const ExecutionGraph& g, const std::vector<RoleTraffic>& traffic,
                    const std::vector<int>& members, const ScheduleOf& schedule_of) {
  for (std::size_t role = 0; role < traffic.size(); ++role) {
    std::map<std::int32_t, int> comms;  // communicator -> a member in it
    for (int m : members) {
      comms.try_emplace(g.ranks[static_cast<std::size_t>(m)].comms[role], m);
    }
    for (std::int32_t node : traffic[role].collectives) {
      for (const auto& [comm, member] : comms) {
        if (!ranks_exit_together(schedule_of(member, node))) {
          return false;
        }
      }
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

// Marks the communicators of `plan` whose transfers cross links no other communicator's do.
void mark_private_links(const ExecutionGraph& g,
                        const std::vector<std::vector<RoleTraffic>>& traffic, FoldPlan& plan,
                        const ScheduleOf& schedule_of, const RouteLinks& route_links) {
  // Every (src, dst) pair each communicator's transfers use.
  std::vector<std::set<std::pair<int, int>>> pairs(g.communicators.size());
  for (int r = 0; r < g.rank_count(); ++r) {
    const RankProgram& rp = g.ranks[static_cast<std::size_t>(r)];
    for (std::size_t role = 0; role < rp.comms.size(); ++role) {
      const auto c = static_cast<std::size_t>(rp.comms[role]);
      const std::vector<int>& ranks = g.communicators[c].ranks;
      const RoleTraffic& t = traffic[static_cast<std::size_t>(rp.program)][role];
      for (std::int32_t peer : t.peers) {
        pairs[c].emplace(r, ranks[static_cast<std::size_t>(peer)]);
      }
      if (ranks.front() != r) {
        continue;  // a collective's schedule is the same from every member
      }
      for (std::int32_t node : t.collectives) {
        for (const ScheduleOp& op : schedule_of(r, node).ops) {
          if (op.kind == ScheduleOp::Kind::kTransfer) {
            pairs[c].emplace(ranks[static_cast<std::size_t>(op.src)],
                             ranks[static_cast<std::size_t>(op.dst)]);
          }
        }
      }
    }
  }
  constexpr std::int32_t kShared = -2;
  std::map<int, std::int32_t> owner;  // link -> its only communicator, or kShared
  for (std::size_t c = 0; c < pairs.size(); ++c) {
    for (const auto& [src, dst] : pairs[c]) {
      for (int link : route_links(src, dst)) {
        auto [it, inserted] = owner.try_emplace(link, static_cast<std::int32_t>(c));
        if (!inserted && it->second != static_cast<std::int32_t>(c)) {
          it->second = kShared;
        }
      }
    }
  }
  plan.private_links.assign(g.communicators.size(), 0);
  for (std::size_t c = 0; c < pairs.size(); ++c) {
    bool alone = !pairs[c].empty();
    for (auto it = pairs[c].begin(); alone && it != pairs[c].end(); ++it) {
      for (int link : route_links(it->first, it->second)) {
        alone = alone && owner.at(link) == static_cast<std::int32_t>(c);
      }
    }
    plan.private_links[c] = alone ? 1 : 0;
  }
}

}  // namespace

FoldPlan plan_fold(const ExecutionGraph& g, const FoldPlatform& platform, FoldMode mode,
                   bool allow_memoize, const ScheduleOf& schedule_of) {
  FoldPlan plan;
  const int n = g.rank_count();
  for (int r = 0; r < n; ++r) {
    plan.stands_for.push_back(r);
  }
  const std::vector<std::vector<RoleTraffic>> traffic = role_traffic(g);
  if (mode != FoldMode::kOff) {
    bool memoize = false;
    for (const std::vector<int>& members :
         fold_internal::candidate_classes(g, traffic, platform, mode, schedule_of)) {
      const bool exact = exact_class(g, members, schedule_of);
      if (!exact &&
          (mode == FoldMode::kExact ||
           !exits_together(g,
                           traffic[static_cast<std::size_t>(
                               g.ranks[static_cast<std::size_t>(members.front())].program)],
                           members, schedule_of))) {
        continue;
      }
      for (int m : members) {
        plan.stands_for[static_cast<std::size_t>(m)] = members.front();
      }
      // One exact class of every rank, collectives on one stream: the network is idle for each.
      memoize = exact && static_cast<int>(members.size()) == n && one_stream(g.program_of(0));
    }
    plan.memoize = allow_memoize && memoize;
  }
  plan.members.resize(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) {
    plan.members[static_cast<std::size_t>(plan.stands_for[static_cast<std::size_t>(r)])].push_back(
        r);
  }
  if (allow_memoize && platform.route_links) {
    mark_private_links(g, traffic, plan, schedule_of, platform.route_links);
  }
  return plan;
}

std::vector<std::vector<ClassComm>> class_comms(const ExecutionGraph& g, const FoldPlan& plan,
                                                int rep) {
  const RankProgram& own = g.ranks[static_cast<std::size_t>(rep)];
  std::vector<std::vector<ClassComm>> out(own.comms.size());
  for (std::size_t role = 0; role < own.comms.size(); ++role) {
    std::map<std::int32_t, std::size_t> index;  // communicator -> its place in out[role]
    for (int m : plan.members[static_cast<std::size_t>(rep)]) {
      const std::int32_t c = g.ranks[static_cast<std::size_t>(m)].comms[role];
      auto [it, inserted] = index.try_emplace(c, out[role].size());
      if (inserted) {
        bool single = g.communicators[static_cast<std::size_t>(c)].ranks.size() > 1;
        for (int r : g.communicators[static_cast<std::size_t>(c)].ranks) {
          single = single && plan.stands_for[static_cast<std::size_t>(r)] == rep;
        }
        out[role].push_back({.comm = c, .single = single});
      }
      out[role][it->second].members.push_back(m);
    }
  }
  return out;
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
