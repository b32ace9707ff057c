// The deadlock check: a symbolic execution over communication events only. Compute nodes never
// block, so each communication node needs only the communication nodes it transitively waits
// for, through its deps and its streams; and because a stream runs in order, what has completed
// on a rank is a prefix of each role's sequence. A node's wait is therefore a count per role,
// computed once per program. Collectives complete when every member has issued them, a send and
// its receive when both are issued (the conservative reading: a graph that could deadlock is
// refused). Ranks with the same program and bindings and no sends or receives move in lockstep
// and are executed as one unit, so a data-parallel graph of any size executes one rank.
#include <algorithm>
#include <map>

#include "sim/graph/graph_validate_internal.h"

namespace dtsim::sim::graph_internal {

namespace {

// For every node of a program, how many nodes of each role must have completed before it can
// start: need[node * roles + role].
std::vector<std::int32_t> program_needs(const Program& prog) {
  const std::size_t roles = prog.comms.size();
  std::vector<std::int32_t> need(prog.nodes.size() * roles, 0);
  std::vector<std::int32_t> position(prog.nodes.size(), -1);  // in its role's sequence
  std::vector<std::int32_t> count(roles, 0);
  std::vector<std::int32_t> last_on_role(roles, -1);
  std::int32_t last_compute = -1;
  for (std::size_t i = 0; i < prog.nodes.size(); ++i) {
    const Node& n = prog.nodes[i];
    std::int32_t* row = need.data() + i * roles;
    const auto take = [&](std::int32_t d) {
      const std::int32_t* from = need.data() + static_cast<std::size_t>(d) * roles;
      for (std::size_t j = 0; j < roles; ++j) {
        row[j] = std::max(row[j], from[j]);
      }
      const Node& dn = prog.nodes[static_cast<std::size_t>(d)];
      if (dn.kind != NodeKind::kCompute) {
        auto& slot = row[static_cast<std::size_t>(dn.comm)];
        slot = std::max(slot, position[static_cast<std::size_t>(d)] + 1);
      }
    };
    for (std::int32_t d : prog.deps_of(n)) {
      take(d);
    }
    const auto self = static_cast<std::int32_t>(i);
    if (n.kind == NodeKind::kCompute) {
      if (last_compute >= 0) {
        take(last_compute);
      }
      last_compute = self;
      continue;
    }
    const auto role = static_cast<std::size_t>(n.comm);
    if (last_on_role[role] >= 0) {
      take(last_on_role[role]);
    }
    last_on_role[role] = self;
    position[i] = count[role]++;
  }
  return need;
}

// Ranks that execute in lockstep: one program, one set of bindings.
struct Unit {
  std::int32_t program = 0;
  int rank = 0;           // the first; its bindings are the unit's
  int weight = 0;         // ranks in the unit
  std::size_t state = 0;  // offset of its roles in Deadlock::done_ and issued_
};

class Deadlock {
 public:
  Deadlock(const ExecutionGraph& g, const LocalRanks& membership, const Sequences& sequences);
  void run();
  void report(Problems& problems) const;

 private:
  [[nodiscard]] std::size_t roles(const Unit& u) const {
    return g_.programs[static_cast<std::size_t>(u.program)].comms.size();
  }
  [[nodiscard]] const std::vector<std::int32_t>& comms(const Unit& u) const {
    return g_.ranks[static_cast<std::size_t>(u.rank)].comms;
  }
  [[nodiscard]] const RoleSequence& sequence(const Unit& u, std::size_t role) const {
    return sequences_[static_cast<std::size_t>(u.program)][role];
  }
  // The node at the head of `role`'s stream on unit u. REQUIRES: the stream is not done.
  [[nodiscard]] std::int32_t head(const Unit& u, std::size_t role) const {
    return sequence(u, role).nodes[static_cast<std::size_t>(done_[u.state + role])];
  }
  [[nodiscard]] const Node& node(const Unit& u, std::int32_t index) const {
    return g_.programs[static_cast<std::size_t>(u.program)].nodes[static_cast<std::size_t>(index)];
  }
  void push(int u);
  void examine(int u);
  void complete_collective(int comm);
  void try_match(int u, std::size_t role);
  void complete(int u, std::size_t role);
  void report_unit(Problems& problems, int u) const;

  const ExecutionGraph& g_;
  const LocalRanks& membership_;
  const Sequences& sequences_;
  std::vector<std::vector<std::int32_t>> needs_;  // per program: program_needs
  std::vector<Unit> units_;
  std::vector<std::vector<int>> unit_ranks_;
  std::vector<int> unit_of_rank_;
  std::vector<std::vector<std::pair<int, std::size_t>>> comm_units_;  // (unit, role)
  std::vector<int> arrived_;        // per communicator: ranks issued at its current collective
  std::vector<std::int32_t> done_;  // per unit and role: nodes completed
  std::vector<char> issued_;        // per unit and role: the head is issued
  std::vector<int> work_;
  std::vector<char> queued_;
};

Deadlock::Deadlock(const ExecutionGraph& g, const LocalRanks& membership,
                   const Sequences& sequences)
    : g_(g),
      membership_(membership),
      sequences_(sequences),
      needs_(g.programs.size()),
      unit_of_rank_(static_cast<std::size_t>(g.rank_count())),
      comm_units_(g.communicators.size()),
      arrived_(g.communicators.size(), 0) {
  std::vector<bool> point_to_point(g.programs.size(), false);
  for (std::size_t p = 0; p < g.programs.size(); ++p) {
    needs_[p] = program_needs(g.programs[p]);
    for (const RoleSequence& s : sequences[p]) {
      point_to_point[p] = point_to_point[p] || !s.sends.empty() || !s.recvs.empty();
    }
  }
  std::map<std::pair<std::int32_t, std::vector<std::int32_t>>, int> lockstep;
  std::size_t states = 0;
  for (int r = 0; r < g.rank_count(); ++r) {
    const RankProgram& rp = g.ranks[static_cast<std::size_t>(r)];
    int u = static_cast<int>(units_.size());
    if (!point_to_point[static_cast<std::size_t>(rp.program)]) {
      u = lockstep.emplace(std::pair{rp.program, rp.comms}, u).first->second;
    }
    if (u == static_cast<int>(units_.size())) {
      units_.push_back({rp.program, r, 0, states});
      unit_ranks_.emplace_back();
      states += rp.comms.size();
      for (std::size_t i = 0; i < rp.comms.size(); ++i) {
        comm_units_[static_cast<std::size_t>(rp.comms[i])].emplace_back(u, i);
      }
    }
    ++units_[static_cast<std::size_t>(u)].weight;
    unit_ranks_[static_cast<std::size_t>(u)].push_back(r);
    unit_of_rank_[static_cast<std::size_t>(r)] = u;
  }
  done_.assign(states, 0);
  issued_.assign(states, 0);
  queued_.assign(units_.size(), 0);
}

void Deadlock::push(int u) {
  if (!queued_[static_cast<std::size_t>(u)]) {
    queued_[static_cast<std::size_t>(u)] = 1;
    work_.push_back(u);
  }
}

void Deadlock::run() {
  for (int u = static_cast<int>(units_.size()) - 1; u >= 0; --u) {
    push(u);
  }
  while (!work_.empty()) {
    const int u = work_.back();
    work_.pop_back();
    examine(u);
  }
}

// Issues every stream head of unit u whose waits are met.
void Deadlock::examine(int u) {
  queued_[static_cast<std::size_t>(u)] = 0;
  const Unit& unit = units_[static_cast<std::size_t>(u)];
  const std::size_t n_roles = roles(unit);
  const std::vector<std::int32_t>& need = needs_[static_cast<std::size_t>(unit.program)];
  for (std::size_t i = 0; i < n_roles; ++i) {
    const std::size_t s = unit.state + i;
    if (issued_[s] || static_cast<std::size_t>(done_[s]) == sequence(unit, i).nodes.size()) {
      continue;
    }
    const std::int32_t index = head(unit, i);
    const std::int32_t* wait = need.data() + static_cast<std::size_t>(index) * n_roles;
    bool ready = true;
    for (std::size_t j = 0; j < n_roles && ready; ++j) {
      ready = done_[unit.state + j] >= wait[j];
    }
    if (!ready) {
      continue;
    }
    issued_[s] = 1;
    if (node(unit, index).kind != NodeKind::kCollective) {
      try_match(u, i);
      continue;
    }
    const auto c = static_cast<std::size_t>(comms(unit)[i]);
    arrived_[c] += unit.weight;
    if (static_cast<std::size_t>(arrived_[c]) == g_.communicators[c].ranks.size()) {
      complete_collective(static_cast<int>(c));
    }
  }
}

void Deadlock::complete(int u, std::size_t role) {
  const std::size_t s = units_[static_cast<std::size_t>(u)].state + role;
  ++done_[s];
  issued_[s] = 0;
  push(u);
}

void Deadlock::complete_collective(int comm) {
  arrived_[static_cast<std::size_t>(comm)] = 0;
  for (const auto& [u, role] : comm_units_[static_cast<std::size_t>(comm)]) {
    complete(u, role);
  }
}

// Completes unit u's issued send or receive on `role` if its partner's is issued too.
void Deadlock::try_match(int u, std::size_t role) {
  const Unit& unit = units_[static_cast<std::size_t>(u)];
  const Node& n = node(unit, head(unit, role));
  const int c = comms(unit)[role];
  const int partner =
      g_.communicators[static_cast<std::size_t>(c)].ranks[static_cast<std::size_t>(n.peer)];
  const int v = unit_of_rank_[static_cast<std::size_t>(partner)];
  const Unit& other = units_[static_cast<std::size_t>(v)];
  const auto other_role =
      static_cast<std::size_t>(role_of(g_.ranks[static_cast<std::size_t>(partner)], c));
  if (!issued_[other.state + other_role]) {
    return;
  }
  const Node& m = node(other, head(other, other_role));
  const NodeKind wanted = n.kind == NodeKind::kSend ? NodeKind::kRecv : NodeKind::kSend;
  if (m.kind != wanted || m.peer != membership_.of(c, unit.rank)) {
    return;
  }
  complete(u, role);
  complete(v, other_role);
}

void Deadlock::report(Problems& problems) const {
  constexpr int kMaxListed = 8;
  int listed = 0;
  std::size_t more = 0;
  for (std::size_t u = 0; u < units_.size(); ++u) {
    const Unit& unit = units_[u];
    bool stuck = false;
    for (std::size_t i = 0; i < roles(unit); ++i) {
      stuck =
          stuck || static_cast<std::size_t>(done_[unit.state + i]) < sequence(unit, i).nodes.size();
    }
    if (!stuck) {
      continue;
    }
    if (listed < kMaxListed) {
      report_unit(problems, static_cast<int>(u));
      ++listed;
    } else {
      more += static_cast<std::size_t>(unit.weight);
    }
  }
  if (more > 0) {
    problems.add("/ranks", "deadlock: " + count_text(more, "more rank") + " stuck");
  }
}

// "deadlock: rank 0 stuck at <node> (<what>), <who never issues its counterpart>".
void Deadlock::report_unit(Problems& problems, int u) const {
  const Unit& unit = units_[static_cast<std::size_t>(u)];
  std::size_t role = 0;
  std::int32_t first = -1;
  for (std::size_t i = 0; i < roles(unit); ++i) {
    const RoleSequence& s = sequence(unit, i);
    if (static_cast<std::size_t>(done_[unit.state + i]) < s.nodes.size() &&
        (first < 0 || head(unit, i) < first)) {
      first = head(unit, i);
      role = i;
    }
  }
  const Node& n = node(unit, first);
  const std::int32_t ordinal =
      sequence(unit, role).ordinal[static_cast<std::size_t>(done_[unit.state + role])];
  const Communicator& comm = g_.communicators[static_cast<std::size_t>(comms(unit)[role])];
  const std::string on = " on communicator \"" + comm.name + "\"";
  std::string what;
  std::string tail;
  if (n.kind == NodeKind::kCollective) {
    std::vector<int> missing;
    for (const auto& [v, r] : comm_units_[static_cast<std::size_t>(comms(unit)[role])]) {
      const Unit& other = units_[static_cast<std::size_t>(v)];
      if (!issued_[other.state + r] || node(other, head(other, r)).kind != NodeKind::kCollective) {
        const auto& ranks = unit_ranks_[static_cast<std::size_t>(v)];
        missing.insert(missing.end(), ranks.begin(), ranks.end());
      }
    }
    std::sort(missing.begin(), missing.end());
    what = std::string(op_name(n.op)) + ", collective " + std::to_string(ordinal) + on;
    tail = ", never issued by " + ranks_text(missing);
  } else {
    const bool send = n.kind == NodeKind::kSend;
    const std::string peer = "rank " + std::to_string(comm.ranks[static_cast<std::size_t>(n.peer)]);
    what = (send ? "send " : "receive ") + std::to_string(ordinal) + (send ? " to " : " from ") +
           peer + on;
    tail = std::string(send ? ", its receive" : ", its send") + " never issued by " + peer;
  }
  problems.add(problems.rank(unit.rank),
               "deadlock: " + ranks_text(unit_ranks_[static_cast<std::size_t>(u)]) + " stuck at " +
                   problems.node(unit.program, first) + " (" + what + ")" + tail);
}

}  // namespace

void check_deadlock(Problems& problems, const LocalRanks& membership, const Sequences& sequences) {
  Deadlock deadlock(problems.graph(), membership, sequences);
  deadlock.run();
  deadlock.report(problems);
}

}  // namespace dtsim::sim::graph_internal
