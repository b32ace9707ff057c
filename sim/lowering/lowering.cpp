#include "sim/lowering/lowering.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <tuple>

#include "sim/invariant.h"
#include "sim/lowering/lowering_internal.h"
#include "workloads/parsing/units.h"

namespace dtsim::sim {

TaskLimitError::TaskLimitError(double task_count, double limit)
    : ConfigError("about " + parsing::format_number("%.3g", task_count) +
                  " tasks to replay, more than --max-tasks " +
                  parsing::format_number("%.3g", limit) + " (each about 2.6 us and 150 bytes)"),
      tasks(task_count) {}

namespace {

using lowering::Choices;
using lowering::ProgramCuts;

// Lowers one graph; see lower().
class Lowerer {
 public:
  Lowerer(const ExecutionGraph& g, const LoweringOptions& options, const ChooseCollective& choose)
      : g_(g), options_(options), choices_(g, choose), local_(g) {}

  LoweredGraph run() {
    plan_ = lowering::make_plan(g_, options_, choices_);
    if (const double n = lowering::count_tasks(g_, plan_, choices_); n > options_.max_tasks) {
      throw TaskLimitError(n, options_.max_tasks);
    }
    out_.stands_for = plan_.stands_for;
    out_.compute_factor = options_.compute_factor;
    for (const Program& p : g_.programs) {
      out_.programs.push_back({.offset_sec = std::vector<double>(p.nodes.size(), 0.0),
                               .ends_task = std::vector<std::uint8_t>(p.nodes.size(), 0)});
    }
    out_.ranks_folded = plan_.folded();
    out_.nodes.resize(static_cast<std::size_t>(g_.rank_count()));
    for (int r = 0; r < g_.rank_count(); ++r) {
      if (plan_.stands_for[static_cast<std::size_t>(r)] == r) {
        cursors_.push_back(make_cursor(r));
      }
    }
    rounds();
    for (const auto& [key, count] : left_out_) {
      out_.left_out.push_back({.iteration = key.first, .instance = key.second, .count = count});
    }
    out_.choices = choices_.summaries();
    return std::move(out_);
  }

 private:
  struct Cursor {
    int rank = 0;
    const Program* program = nullptr;
    const ProgramCuts* cuts = nullptr;
    std::vector<std::vector<ClassComm>> roles;  // per role: its class's communicators
    std::vector<std::size_t> heads;     // per stream: its next node (an index into cuts->streams)
    std::vector<std::uint8_t> waiting;  // per stream: its head arrived at a communication
    double run_sec = 0;                 // the open compute run, unscaled
    std::size_t run_first = 0;          // its first node
    std::map<std::int32_t, std::vector<TaskId>> stream_exits;  // per role
    std::vector<std::int32_t> collectives;                     // per role: seen so far
    std::map<std::tuple<std::int32_t, std::int32_t, bool>, std::int32_t> p2p;  // (role, peer, send)
  };

  // Cursor `cursor` at node `node`, on behalf of `member` of its class, which enters once
  // `entry` are done (the representative's entry, for every member: fold.h).
  struct Arrival {
    std::size_t cursor = 0;
    std::int32_t node = 0;
    int member = 0;
    std::shared_ptr<const std::vector<TaskId>> entry;
  };

  // A communication all of whose members arrived, or that waits for some.
  struct Pending {
    bool p2p = false;
    bool single = false;  // a folded collective: one arrival stands for every member
    std::int32_t comm = 0;
    std::vector<Arrival> arrived;
    std::size_t needed = 0;
  };

  Cursor make_cursor(int rank) {
    const Program& p = g_.program_of(rank);
    auto [it, inserted] = cuts_.try_emplace(&p);
    if (inserted) {
      it->second = lowering::program_cuts(p);
    }
    out_.nodes[static_cast<std::size_t>(rank)].resize(p.nodes.size());
    const std::size_t streams = it->second.streams.size();
    return Cursor{.rank = rank,
                  .program = &p,
                  .cuts = &it->second,
                  .roles = class_comms(g_, plan_, rank),
                  .heads = std::vector<std::size_t>(streams, 0),
                  .waiting = std::vector<std::uint8_t>(streams, 0),
                  .collectives = std::vector<std::int32_t>(p.comms.size(), 0)};
  }

  double factor(int rank) const {
    return options_.compute_factor.empty()
               ? 1.0
               : options_.compute_factor[static_cast<std::size_t>(rank)];
  }

  void rounds();
  bool advance(std::size_t c, std::int32_t barrier);
  bool advance_stream(std::size_t c, std::size_t stream, std::int32_t barrier);
  [[nodiscard]] bool deps_done(const Cursor& cur, const Node& node) const;
  void compute(Cursor& cur, std::size_t i);
  void arrive(std::size_t c, std::size_t i);
  void join(const std::tuple<bool, std::int32_t, std::int32_t, std::int32_t, std::int32_t>& key,
            std::int32_t comm, Arrival arrival, std::size_t needed);
  void emit(const Pending& pending);
  void emit_folded(const Pending& pending);
  void emit_collective(const Pending& pending);
  void emit_transfer(const Pending& pending);
  void done(const Arrival& a, const NodeTasks& tasks, std::vector<TaskId> exits);
  std::vector<TaskId> entry(const Cursor& cur, const Node& node, std::int32_t role) const;
  std::vector<TaskId> done_tasks(const Cursor& cur, std::int32_t node) const;
  std::size_t distinct_ranks(std::int32_t comm);

  const ExecutionGraph& g_;
  const LoweringOptions& options_;
  Choices choices_;
  LocalRanks local_;
  FoldPlan plan_;
  LoweredGraph out_;
  std::map<const Program*, ProgramCuts> cuts_;
  std::vector<Cursor> cursors_;
  std::map<std::tuple<bool, std::int32_t, std::int32_t, std::int32_t, std::int32_t>, Pending>
      pending_;  // (p2p, comm, a, b, sequence)
  std::vector<Pending> ready_;
  // Per choice replayed in full: the tasks of its first replay and that instance's index.
  std::map<std::int32_t, std::pair<FoldedTasks, std::int32_t>> replayed_;
  std::map<std::pair<std::int32_t, std::int32_t>, int> left_out_;  // (iteration, instance)
  std::map<std::int32_t, std::size_t> distinct_;  // per communicator: its distinct ranks
};

void Lowerer::rounds() {
  std::int32_t barrier = 0;
  for (;;) {
    bool progress = false;
    for (std::size_t c = 0; c < cursors_.size(); ++c) {
      progress = advance(c, barrier) || progress;
    }
    std::vector<Pending> ready = std::move(ready_);
    ready_.clear();
    for (const Pending& p : ready) {
      emit(p);
      progress = true;
    }
    if (progress) {
      continue;
    }
    // Nothing moves: heads are waiting for members, or held back by the iteration barrier.
    std::int32_t next = -1;  // the earliest iteration a head is held back from
    bool left = false;
    for (const Cursor& cur : cursors_) {
      for (std::size_t st = 0; st < cur.heads.size(); ++st) {
        const auto& stream = cur.cuts->streams[st];
        if (cur.heads[st] == stream.size()) {
          continue;
        }
        left = true;
        const std::int32_t it =
            cur.program->nodes[static_cast<std::size_t>(stream[cur.heads[st]])].iteration;
        if (cur.waiting[st] == 0 && it > barrier) {
          next = next < 0 ? it : std::min(next, it);
        }
      }
    }
    if (next < 0) {
      DTSIM_CHECK(!left, "every node finds what it waits for (the validator found no deadlock)");
      return;
    }
    barrier = next;
  }
}

// Advances every stream of cursor `c` as far as it can go.
bool Lowerer::advance(std::size_t c, std::int32_t barrier) {
  bool moved = false;
  for (bool again = true; again;) {
    again = false;
    for (std::size_t st = 0; st < cursors_[c].heads.size(); ++st) {
      again = advance_stream(c, st, barrier) || again;
    }
    moved = moved || again;
  }
  return moved;
}

// Runs stream `stream` of cursor `c` until its head waits: for an arrival at a communication,
// for a dependency not lowered yet, or for the next iteration.
bool Lowerer::advance_stream(std::size_t c, std::size_t stream, std::int32_t barrier) {
  Cursor& cur = cursors_[c];
  const auto& nodes = cur.cuts->streams[stream];
  bool moved = false;
  while (cur.waiting[stream] == 0 && cur.heads[stream] < nodes.size()) {
    const auto i = static_cast<std::size_t>(nodes[cur.heads[stream]]);
    const Node& node = cur.program->nodes[i];
    if (node.iteration > barrier || !deps_done(cur, node)) {
      break;
    }
    moved = true;
    if (node.kind == NodeKind::kCompute) {
      compute(cur, i);
      ++cur.heads[stream];
    } else {
      cur.waiting[stream] = 1;
      arrive(c, i);
    }
  }
  return moved;
}

// Whether every dependency of `node` (of cur's rank) has its tasks in the graph.
bool Lowerer::deps_done(const Cursor& cur, const Node& node) const {
  const auto& mine = out_.nodes[static_cast<std::size_t>(cur.rank)];
  for (std::int32_t d : cur.program->deps_of(node)) {
    const NodeTasks& t = mine[static_cast<std::size_t>(d)];
    const bool collective =
        cur.program->nodes[static_cast<std::size_t>(d)].kind == NodeKind::kCollective;
    if (collective ? t.instance < 0 : t.task < 0) {
      return false;
    }
  }
  return true;
}

void Lowerer::compute(Cursor& cur, std::size_t i) {
  const Node& node = cur.program->nodes[i];
  if (cur.cuts->starts[i] != 0) {
    cur.run_sec = 0;
    cur.run_first = i;
  }
  const double k = factor(cur.rank);
  auto& mine = out_.nodes[static_cast<std::size_t>(cur.rank)];
  ProgramTasks& shared =
      out_.programs[static_cast<std::size_t>(g_.ranks[static_cast<std::size_t>(cur.rank)].program)];
  shared.offset_sec[i] = cur.run_sec;
  cur.run_sec += node.duration_sec;
  if (cur.cuts->ends[i] == 0) {
    return;
  }
  const TaskId task = out_.tasks.add_compute(cur.rank, k * cur.run_sec,
                                             entry(cur, cur.program->nodes[cur.run_first], -1));
  for (std::size_t j = cur.run_first; j <= i; ++j) {
    if (cur.program->nodes[j].kind == NodeKind::kCompute) {
      mine[j].task = task;
    }
  }
  shared.ends_task[i] = 1;
}

// The tasks after which node `node` of cur's rank is done, for a dependent of the same rank.
std::vector<TaskId> Lowerer::done_tasks(const Cursor& cur, std::int32_t node) const {
  const Node& n = cur.program->nodes[static_cast<std::size_t>(node)];
  const NodeTasks& t =
      out_.nodes[static_cast<std::size_t>(cur.rank)][static_cast<std::size_t>(node)];
  if (n.kind != NodeKind::kCollective) {
    return {t.task};
  }
  const CollectiveInstance& inst = out_.instances[static_cast<std::size_t>(t.instance)];
  return inst.exits_of(local_.of(inst.communicator, cur.rank));
}

// What a node of cur's rank waits for: its stream's previous communication (role >= 0) and its
// dependencies. A shadow enters as its representative does.
std::vector<TaskId> Lowerer::entry(const Cursor& cur, const Node& node, std::int32_t role) const {
  std::vector<TaskId> deps;
  if (const auto it = cur.stream_exits.find(role); role >= 0 && it != cur.stream_exits.end()) {
    deps = it->second;
  }
  for (std::int32_t d : cur.program->deps_of(node)) {
    const std::vector<TaskId> done = done_tasks(cur, d);
    deps.insert(deps.end(), done.begin(), done.end());
  }
  return deps;
}

std::size_t Lowerer::distinct_ranks(std::int32_t comm) {
  auto [it, inserted] = distinct_.try_emplace(comm, 0);
  if (inserted) {
    const std::vector<int>& ranks = g_.communicators[static_cast<std::size_t>(comm)].ranks;
    it->second = std::set<int>(ranks.begin(), ranks.end()).size();
  }
  return it->second;
}

// Cursor `c` arrived at communication node `i`: so did every member of its class, each at its
// own communicator.
void Lowerer::arrive(std::size_t c, std::size_t i) {
  Cursor& cur = cursors_[c];
  const Node& node = cur.program->nodes[i];
  const std::int32_t role = node.comm;
  const auto at = static_cast<std::int32_t>(i);
  const std::vector<ClassComm>& comms = cur.roles[static_cast<std::size_t>(role)];
  const auto e = std::make_shared<const std::vector<TaskId>>(entry(cur, node, role));
  if (node.kind == NodeKind::kCollective) {
    const std::int32_t seq = cur.collectives[static_cast<std::size_t>(role)]++;
    for (const ClassComm& cc : comms) {
      if (cc.single) {
        const int member = &cc == &comms.front()
                               ? cur.rank
                               : g_.communicators[static_cast<std::size_t>(cc.comm)].ranks.front();
        ready_.push_back(
            {.single = true, .comm = cc.comm, .arrived = {{c, at, member, e}}, .needed = 1});
        continue;
      }
      for (int m : cc.members) {
        join({false, cc.comm, 0, 0, seq}, cc.comm, {c, at, m, e}, distinct_ranks(cc.comm));
      }
    }
    return;
  }
  const bool send = node.kind == NodeKind::kSend;
  const std::int32_t seq = cur.p2p[{role, node.peer, send}]++;
  for (const ClassComm& cc : comms) {
    for (int m : cc.members) {
      const std::int32_t me = local_.of(cc.comm, m);
      join({true, cc.comm, send ? me : node.peer, send ? node.peer : me, seq}, cc.comm,
           {c, at, m, e}, 2);
    }
  }
}

void Lowerer::join(
    const std::tuple<bool, std::int32_t, std::int32_t, std::int32_t, std::int32_t>& key,
    std::int32_t comm, Arrival arrival, std::size_t needed) {
  Pending& pending = pending_[key];
  pending.p2p = std::get<0>(key);
  pending.comm = comm;
  pending.needed = needed;
  pending.arrived.push_back(arrival);
  if (pending.arrived.size() == needed) {
    ready_.push_back(std::move(pending));
    pending_.erase(key);
  }
}

void Lowerer::emit(const Pending& pending) {
  if (pending.p2p) {
    emit_transfer(pending);
  } else if (pending.single) {
    emit_folded(pending);
  } else {
    emit_collective(pending);
  }
  for (const Arrival& a : pending.arrived) {
    Cursor& cur = cursors_[a.cursor];
    if (a.member != cur.rank) {
      continue;  // a shadow: it releases nothing
    }
    const auto stream =
        static_cast<std::size_t>(cur.cuts->stream_of[static_cast<std::size_t>(a.node)]);
    cur.waiting[stream] = 0;
    ++cur.heads[stream];
  }
}

// Arrival `a` is done once `exits` are: its representative's node runs `tasks`, and its stream
// goes on after `exits`; a shadow's exits are kept for check_fold.
void Lowerer::done(const Arrival& a, const NodeTasks& tasks, std::vector<TaskId> exits) {
  Cursor& cur = cursors_[a.cursor];
  if (a.member != cur.rank) {
    ++out_.shadows;
    out_.fold_checks.push_back({.rank = a.member, .node = a.node, .exits = std::move(exits)});
    return;
  }
  const Node& node = cur.program->nodes[static_cast<std::size_t>(a.node)];
  out_.nodes[static_cast<std::size_t>(cur.rank)][static_cast<std::size_t>(a.node)] = tasks;
  cur.stream_exits[node.comm] = std::move(exits);
}

void Lowerer::emit_transfer(const Pending& pending) {
  std::vector<TaskId> deps;
  int src = -1;
  const Node* send = nullptr;
  for (const Arrival& a : pending.arrived) {
    const Cursor& cur = cursors_[a.cursor];
    const Node& node = cur.program->nodes[static_cast<std::size_t>(a.node)];
    deps.insert(deps.end(), a.entry->begin(), a.entry->end());
    if (node.kind == NodeKind::kSend) {
      src = a.member;
      send = &node;
    }
  }
  DTSIM_CHECK(send != nullptr, "a matched pair holds a send");
  const int dst = g_.communicators[static_cast<std::size_t>(pending.comm)]
                      .ranks[static_cast<std::size_t>(send->peer)];
  const TaskId t = out_.tasks.add_transfer(src, dst, send->bytes, deps, pending.comm);
  out_.transfers.push_back({.iteration = send->iteration, .task = t});
  for (const Arrival& a : pending.arrived) {
    done(a, {.task = t}, {t});
  }
}

// A collective all of whose members one representative stands for: one join, the schedule (or
// a memoized wait, or nothing: fold.h), one exit.
void Lowerer::emit_folded(const Pending& pending) {
  const Arrival& a = pending.arrived.front();
  const Cursor& cur = cursors_[a.cursor];
  const Node& node = cur.program->nodes[static_cast<std::size_t>(a.node)];
  const Communicator& comm = g_.communicators[static_cast<std::size_t>(pending.comm)];
  CollectiveInstance inst{.communicator = pending.comm,
                          .iteration = node.iteration,
                          .choice = choices_.index(a.member, node),
                          .op = node.op,
                          .bytes = node.bytes};
  const Schedule& schedule = choices_.schedule(inst.choice);
  DTSIM_CHECK(ranks_exit_together(schedule), "a folded class's collectives exit together");
  const std::int32_t own_comm = cur.roles[static_cast<std::size_t>(node.comm)].front().comm;
  const auto seen = replayed_.find(inst.choice);
  const lowering::FoldedKind kind = lowering::folded_kind(plan_, a.member == cur.rank, pending.comm,
                                                          own_comm, seen != replayed_.end());
  if (kind == lowering::FoldedKind::kLeftOut) {
    ++left_out_[{node.iteration, seen->second.second}];
    return;
  }
  const bool repeat = kind == lowering::FoldedKind::kMemoized;
  const FoldedTasks t =
      add_folded_collective(out_.tasks, schedule, a.member, pending.comm, comm.ranks, *a.entry,
                            repeat ? &seen->second.first : nullptr);
  inst.first = t.first;
  inst.end = t.end;
  inst.exits = {{t.exit}};
  const auto index = static_cast<std::int32_t>(out_.instances.size());
  if (repeat) {
    inst.repeats = seen->second.second;
    ++out_.memoized;
  } else {
    replayed_.emplace(inst.choice, std::make_pair(t, index));
  }
  out_.instances.push_back(std::move(inst));
  done(a, {.instance = index}, {t.exit});
}

void Lowerer::emit_collective(const Pending& pending) {
  const Arrival& a0 = pending.arrived.front();
  const Node& node = cursors_[a0.cursor].program->nodes[static_cast<std::size_t>(a0.node)];
  const Communicator& comm = g_.communicators[static_cast<std::size_t>(pending.comm)];
  CollectiveInstance inst{.communicator = pending.comm,
                          .iteration = node.iteration,
                          .choice = choices_.index(a0.member, node),
                          .op = node.op,
                          .bytes = node.bytes};
  std::vector<std::vector<TaskId>> entries(comm.ranks.size());
  for (const Arrival& a : pending.arrived) {
    entries[static_cast<std::size_t>(local_.of(pending.comm, a.member))] = *a.entry;
  }
  CollectiveTasks t =
      out_.tasks.add_schedule(choices_.schedule(inst.choice), entries, comm.ranks, pending.comm);
  inst.first = t.first;
  inst.end = t.end;
  inst.exits = std::move(t.exits);
  const auto index = static_cast<std::int32_t>(out_.instances.size());
  out_.instances.push_back(std::move(inst));
  for (const Arrival& a : pending.arrived) {
    const CollectiveInstance& added = out_.instances[static_cast<std::size_t>(index)];
    done(a, {.instance = index}, added.exits_of(local_.of(pending.comm, a.member)));
  }
}

}  // namespace

LoweredGraph lower(const ExecutionGraph& graph, const LoweringOptions& options,
                   const ChooseCollective& choose) {
  return Lowerer(graph, options, choose).run();
}

}  // namespace dtsim::sim
