#include "sim/lowering/lowering.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "sim/invariant.h"
#include "sim/lowering/fold.h"
#include "workloads/parsing/units.h"

namespace dtsim::sim {

TaskLimitError::TaskLimitError(double task_count, double limit)
    : ConfigError("about " + parsing::format_number("%.3g", task_count) +
                  " tasks to replay (at most " + parsing::format_number("%.3g", limit) +
                  ", ~10 GB)"),
      tasks(task_count) {}

namespace {

// Per compute node of a program: whether it starts and whether it ends a merged task; and the
// program's nodes per stream (0: compute, 1 + r: communicator role r), in program order.
struct ProgramCuts {
  std::vector<std::uint8_t> starts;
  std::vector<std::uint8_t> ends;
  int runs = 0;
  std::vector<std::vector<std::int32_t>> streams;
  std::vector<std::int32_t> stream_of;  // per node
};

bool same_tags(const Node& a, const Node& b) {
  return a.iteration == b.iteration && a.micro_batch == b.micro_batch && a.phase == b.phase;
}

ProgramCuts program_cuts(const Program& p) {
  const std::size_t n = p.nodes.size();
  std::vector<std::uint8_t> has_dependent(n, 0);
  for (std::int32_t d : p.deps) {
    has_dependent[static_cast<std::size_t>(d)] = 1;
  }
  ProgramCuts cuts{.starts = std::vector<std::uint8_t>(n, 0),
                   .ends = std::vector<std::uint8_t>(n, 0)};
  std::int64_t previous = -1;  // the previous compute node
  for (std::size_t i = 0; i < n; ++i) {
    const Node& node = p.nodes[i];
    if (node.kind != NodeKind::kCompute) {
      continue;
    }
    const auto prev = static_cast<std::size_t>(previous);
    const bool starts = previous < 0 || node.dep_begin != node.dep_end ||
                        !same_tags(p.nodes[prev], node) || has_dependent[prev] != 0;
    cuts.starts[i] = starts ? 1 : 0;
    if (starts && previous >= 0) {
      cuts.ends[prev] = 1;
    }
    cuts.runs += starts ? 1 : 0;
    previous = static_cast<std::int64_t>(i);
  }
  if (previous >= 0) {
    cuts.ends[static_cast<std::size_t>(previous)] = 1;
  }
  cuts.streams.resize(p.comms.size() + 1);
  for (std::size_t i = 0; i < n; ++i) {
    const Node& node = p.nodes[i];
    const std::int32_t stream = node.kind == NodeKind::kCompute ? 0 : node.comm + 1;
    cuts.stream_of.push_back(stream);
    cuts.streams[static_cast<std::size_t>(stream)].push_back(static_cast<std::int32_t>(i));
  }
  return cuts;
}

// One schedule per distinct (communicator, op, bytes, root), chosen on first use.
class Choices {
 public:
  Choices(const ExecutionGraph& g, const ChooseCollective& choose) : g_(g), choose_(choose) {}

  std::int32_t index(int rank, const Node& node) {
    const Communicator& comm = g_.communicator_of(rank, node);
    const auto comm_index = static_cast<std::int32_t>(&comm - g_.communicators.data());
    const auto key = std::make_tuple(comm_index, node.op, node.bytes, node.root);
    auto [it, inserted] = index_.try_emplace(key, static_cast<std::int32_t>(choices_.size()));
    if (inserted) {
      choices_.push_back(&choose_({.op = node.op,
                                   .ranks = static_cast<int>(comm.ranks.size()),
                                   .bytes = node.bytes,
                                   .root = node.root},
                                  comm));
    }
    return it->second;
  }
  const Schedule& schedule(std::int32_t index) const {
    return choices_[static_cast<std::size_t>(index)]->schedule;
  }
  // Every choice's algorithm and candidates, without the schedules.
  std::vector<CollectiveChoice> summaries() const {
    std::vector<CollectiveChoice> out;
    for (const CollectiveChoice* c : choices_) {
      out.push_back({.algorithm = c->algorithm, .candidates = c->candidates});
    }
    return out;
  }

 private:
  const ExecutionGraph& g_;
  const ChooseCollective& choose_;
  std::map<std::tuple<std::int32_t, CollectiveOp, std::uint64_t, std::int32_t>, std::int32_t>
      index_;
  std::vector<const CollectiveChoice*> choices_;
};

FoldPlan make_plan(const ExecutionGraph& g, const LoweringOptions& options, Choices& choices) {
  return plan_fold(g, options.compute_factor, options.fold, options.memoize,
                   [&](int rank, std::int32_t node) -> const Schedule& {
                     const Node& n = g.program_of(rank).nodes[static_cast<std::size_t>(node)];
                     return choices.schedule(choices.index(rank, n));
                   });
}

// The tasks lowering adds under `plan` (compute runs, transfers, collectives' operations).
double count_tasks(const ExecutionGraph& g, const FoldPlan& plan, Choices& choices) {
  std::map<const Program*, ProgramCuts> cuts;
  double tasks = 0;
  std::set<std::int32_t> replayed;  // memoized: choices replayed once
  for (int r = 0; r < g.rank_count(); ++r) {
    if (plan.stands_for[static_cast<std::size_t>(r)] != r) {
      continue;
    }
    const Program& p = g.program_of(r);
    auto [it, inserted] = cuts.try_emplace(&p);
    if (inserted) {
      it->second = program_cuts(p);
    }
    tasks += it->second.runs;
    for (const Node& node : p.nodes) {
      if (node.kind == NodeKind::kSend) {
        tasks += 1;
      }
      if (node.kind != NodeKind::kCollective) {
        continue;
      }
      const std::vector<int>& members = g.communicator_of(r, node).ranks;
      // A folded class's collectives span exactly the class: two members tell.
      const bool folded = members.size() > 1 &&
                          plan.stands_for[static_cast<std::size_t>(members[0])] == r &&
                          plan.stands_for[static_cast<std::size_t>(members[1])] == r;
      const std::int32_t c = choices.index(r, node);
      const double ops = static_cast<double>(choices.schedule(c).ops.size());
      if (folded) {
        tasks += plan.memoize && !replayed.insert(c).second ? 2 : ops + 2;
      } else if (members.front() == r) {  // unfolded: counted once, by its first member
        tasks += ops;
      }
    }
  }
  return tasks;
}

}  // namespace

double count_lowered_tasks(const ExecutionGraph& g, const LoweringOptions& options,
                           const ChooseCollective& choose) {
  Choices choices(g, choose);
  return count_tasks(g, make_plan(g, options, choices), choices);
}

namespace {

// Lowers one graph; see lower().
class Lowerer {
 public:
  Lowerer(const ExecutionGraph& g, const LoweringOptions& options, const ChooseCollective& choose)
      : g_(g), options_(options), choices_(g, choose), local_(g) {}

  LoweredGraph run() {
    plan_ = make_plan(g_, options_, choices_);
    if (const double n = count_tasks(g_, plan_, choices_); n > options_.max_tasks) {
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
    out_.choices = choices_.summaries();
    return std::move(out_);
  }

 private:
  struct Cursor {
    int rank = 0;
    const Program* program = nullptr;
    const ProgramCuts* cuts = nullptr;
    std::vector<std::size_t> heads;     // per stream: its next node (an index into cuts->streams)
    std::vector<std::uint8_t> waiting;  // per stream: its head arrived at a communication
    double run_sec = 0;                 // the open compute run, unscaled
    std::size_t run_first = 0;          // its first node
    std::map<std::int32_t, std::vector<TaskId>> stream_exits;  // per communicator
    std::map<std::int32_t, std::int32_t> collectives;          // per communicator: seen so far
    std::map<std::tuple<std::int32_t, std::int32_t, bool>, std::int32_t> p2p;  // (comm, peer, send)
  };

  // A communication all of whose members arrived, or that waits for some.
  struct Pending {
    bool p2p = false;
    std::vector<std::pair<std::size_t, std::int32_t>> arrived;  // (cursor, node)
    std::size_t needed = 0;
  };

  Cursor make_cursor(int rank) {
    const Program& p = g_.program_of(rank);
    auto [it, inserted] = cuts_.try_emplace(&p);
    if (inserted) {
      it->second = program_cuts(p);
    }
    out_.nodes[static_cast<std::size_t>(rank)].resize(p.nodes.size());
    const std::size_t streams = it->second.streams.size();
    return Cursor{.rank = rank,
                  .program = &p,
                  .cuts = &it->second,
                  .heads = std::vector<std::size_t>(streams, 0),
                  .waiting = std::vector<std::uint8_t>(streams, 0)};
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
  void emit(const Pending& pending);
  void emit_collective(const Pending& pending);
  void emit_transfer(const Pending& pending);
  std::vector<TaskId> entry(const Cursor& cur, const Node& node, std::int32_t comm) const;
  std::vector<TaskId> done_tasks(const Cursor& cur, std::int32_t node) const;

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
  // Memoizing: per choice, the tasks of its first replay and that instance's index.
  std::map<std::int32_t, std::pair<FoldedTasks, std::int32_t>> replayed_;
  std::map<std::int32_t, std::size_t> needed_;  // per communicator: its distinct lowered ranks
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
  const Communicator& comm = g_.communicators[static_cast<std::size_t>(inst.communicator)];
  return inst.exits_of(local_.of(inst.communicator, cur.rank));
}

// What a node of cur's rank waits for: its stream's previous communication (comm >= 0) and its
// dependencies.
std::vector<TaskId> Lowerer::entry(const Cursor& cur, const Node& node, std::int32_t comm) const {
  std::vector<TaskId> deps;
  if (const auto it = cur.stream_exits.find(comm); comm >= 0 && it != cur.stream_exits.end()) {
    deps = it->second;
  }
  for (std::int32_t d : cur.program->deps_of(node)) {
    const std::vector<TaskId> done = done_tasks(cur, d);
    deps.insert(deps.end(), done.begin(), done.end());
  }
  return deps;
}

void Lowerer::arrive(std::size_t c, std::size_t i) {
  Cursor& cur = cursors_[c];
  const Node& node = cur.program->nodes[i];
  const Communicator& comm = g_.communicator_of(cur.rank, node);
  const auto comm_index = static_cast<std::int32_t>(&comm - g_.communicators.data());
  const bool p2p = node.kind != NodeKind::kCollective;
  std::tuple<bool, std::int32_t, std::int32_t, std::int32_t, std::int32_t> key;
  std::size_t needed = 2;
  if (p2p) {
    const bool send = node.kind == NodeKind::kSend;
    const std::int32_t me = local_.of(comm_index, cur.rank);
    const std::int32_t seq = cur.p2p[{comm_index, node.peer, send}]++;
    key = {true, comm_index, send ? me : node.peer, send ? node.peer : me, seq};
  } else {
    key = {false, comm_index, 0, 0, cur.collectives[comm_index]++};
    auto [it, inserted] = needed_.try_emplace(comm_index, 0);
    if (inserted) {
      std::set<int> lowered;
      for (int r : comm.ranks) {
        lowered.insert(plan_.stands_for[static_cast<std::size_t>(r)]);
      }
      it->second = lowered.size();
    }
    needed = it->second;
  }
  Pending& pending = pending_[key];
  pending.p2p = p2p;
  pending.needed = needed;
  pending.arrived.emplace_back(c, static_cast<std::int32_t>(i));
  if (pending.arrived.size() == needed) {
    ready_.push_back(std::move(pending));
    pending_.erase(key);
  }
}

void Lowerer::emit(const Pending& pending) {
  if (pending.p2p) {
    emit_transfer(pending);
  } else {
    emit_collective(pending);
  }
  for (const auto& [c, node] : pending.arrived) {
    Cursor& cur = cursors_[c];
    const auto stream =
        static_cast<std::size_t>(cur.cuts->stream_of[static_cast<std::size_t>(node)]);
    cur.waiting[stream] = 0;
    ++cur.heads[stream];
  }
}

void Lowerer::emit_transfer(const Pending& pending) {
  std::vector<TaskId> deps;
  int src = -1;
  int dst = -1;
  const Node* send = nullptr;
  std::int32_t comm_index = 0;
  for (const auto& [c, i] : pending.arrived) {
    const Cursor& cur = cursors_[c];
    const Node& node = cur.program->nodes[static_cast<std::size_t>(i)];
    const Communicator& comm = g_.communicator_of(cur.rank, node);
    comm_index = static_cast<std::int32_t>(&comm - g_.communicators.data());
    const std::vector<TaskId> e = entry(cur, node, comm_index);
    deps.insert(deps.end(), e.begin(), e.end());
    if (node.kind == NodeKind::kSend) {
      src = cur.rank;
      dst = comm.ranks[static_cast<std::size_t>(node.peer)];
      send = &node;
    }
  }
  DTSIM_CHECK(send != nullptr, "a matched pair holds a send");
  const TaskId t = out_.tasks.add_transfer(src, dst, send->bytes, deps, comm_index);
  for (const auto& [c, i] : pending.arrived) {
    Cursor& cur = cursors_[c];
    out_.nodes[static_cast<std::size_t>(cur.rank)][static_cast<std::size_t>(i)].task = t;
    cur.stream_exits[comm_index] = {t};
  }
}

void Lowerer::emit_collective(const Pending& pending) {
  const auto& [c0, i0] = pending.arrived.front();
  const Cursor& first = cursors_[c0];
  const Node& node = first.program->nodes[static_cast<std::size_t>(i0)];
  const Communicator& comm = g_.communicator_of(first.rank, node);
  const auto comm_index = static_cast<std::int32_t>(&comm - g_.communicators.data());
  CollectiveInstance inst{.communicator = comm_index,
                          .choice = choices_.index(first.rank, node),
                          .op = node.op,
                          .bytes = node.bytes};
  const Schedule& schedule = choices_.schedule(inst.choice);
  const bool folded = pending.arrived.size() == 1 && comm.ranks.size() > 1;
  if (folded) {
    const auto it = replayed_.find(inst.choice);
    const bool repeat = plan_.memoize && it != replayed_.end();
    const FoldedTasks t =
        add_folded_collective(out_.tasks, schedule, first.rank, comm_index, comm.ranks,
                              entry(first, node, comm_index), repeat ? &it->second.first : nullptr);
    inst.first = t.first;
    inst.end = t.end;
    inst.exits = {{t.exit}};
    if (repeat) {
      inst.repeats = it->second.second;
      ++out_.memoized;
    } else {
      replayed_.emplace(inst.choice,
                        std::make_pair(t, static_cast<std::int32_t>(out_.instances.size())));
    }
  } else {
    std::vector<std::vector<TaskId>> entries(comm.ranks.size());
    for (const auto& [c, i] : pending.arrived) {
      const Cursor& cur = cursors_[c];
      entries[static_cast<std::size_t>(local_.of(comm_index, cur.rank))] =
          entry(cur, cur.program->nodes[static_cast<std::size_t>(i)], comm_index);
    }
    CollectiveTasks t = out_.tasks.add_schedule(schedule, entries, comm.ranks, comm_index);
    inst.first = t.first;
    inst.end = t.end;
    inst.exits = std::move(t.exits);
  }
  const auto index = static_cast<std::int32_t>(out_.instances.size());
  for (const auto& [c, i] : pending.arrived) {
    Cursor& cur = cursors_[c];
    out_.nodes[static_cast<std::size_t>(cur.rank)][static_cast<std::size_t>(i)].instance = index;
    cur.stream_exits[comm_index] = inst.exits_of(folded ? 0 : local_.of(comm_index, cur.rank));
  }
  out_.instances.push_back(std::move(inst));
}

}  // namespace

LoweredGraph lower(const ExecutionGraph& graph, const LoweringOptions& options,
                   const ChooseCollective& choose) {
  return Lowerer(graph, options, choose).run();
}

IterationCommunication iteration_communication(const ExecutionGraph& g, const LoweredGraph& lowered,
                                               std::int32_t iteration) {
  IterationCommunication out;
  for (int r = 0; r < g.rank_count(); ++r) {
    if (lowered.stands_for[static_cast<std::size_t>(r)] != r) {
      continue;  // it communicates as the rank it stands for
    }
    const Program& p = g.program_of(r);
    for (std::size_t i = 0; i < p.nodes.size(); ++i) {
      const Node& n = p.nodes[i];
      const NodeTasks& t = lowered.node(r, static_cast<std::int32_t>(i));
      if (n.iteration == iteration && n.kind == NodeKind::kCollective) {
        out.instances.insert(t.instance);
      } else if (n.iteration == iteration && n.kind == NodeKind::kSend) {
        out.transfers.insert(t.task);
      }
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

}  // namespace dtsim::sim
