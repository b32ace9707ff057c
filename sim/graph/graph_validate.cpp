// What can be checked one part at a time: tables, communicators, programs and their nodes, and the
// ranks' bindings. The checks across ranks are in graph_validate_matching.cpp and
// graph_validate_deadlock.cpp.
#include "sim/graph/graph_validate.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string_view>
#include <unordered_map>

#include "sim/graph/graph_validate_internal.h"
#include "workloads/parsing/json_fields.h"
#include "workloads/parsing/units.h"
#include "workloads/trace.h"

namespace dtsim::sim {

namespace graph_internal {

std::string ranks_text(std::span<const int> ranks) {
  constexpr int kMaxRuns = 8;
  std::string text = ranks.size() == 1 ? "rank " : "ranks ";
  std::size_t i = 0;
  for (int runs = 0; i < ranks.size() && runs < kMaxRuns; ++runs) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) {
      ++j;
    }
    text += (runs == 0 ? "" : ", ") + std::to_string(ranks[i]);
    if (j > i) {
      text += "-" + std::to_string(ranks[j]);
    }
    i = j + 1;
  }
  if (i < ranks.size()) {
    text += " and " + std::to_string(ranks.size() - i) + " more";
  }
  return text;
}

std::string count_text(std::size_t n, const std::string& noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

bool has_root(CollectiveOp op) {
  return op == CollectiveOp::kBroadcast || op == CollectiveOp::kReduce ||
         op == CollectiveOp::kSendRecv;
}

Problems::Problems(const ExecutionGraph& graph, const GraphLocator& locator,
                   std::vector<std::string>& out)
    : graph_(graph), locator_(locator), out_(out) {
  if (!locator_.node) {
    locator_.node = [](std::int32_t program, std::int32_t node) {
      return "/programs/" + std::to_string(program) + "/nodes/" + std::to_string(node);
    };
  }
  if (!locator_.rank) {
    locator_.rank = [](int rank) {
      return "/ranks/" + std::to_string(rank);
    };
  }
}

int role_of(const RankProgram& rp, int comm) {
  for (std::size_t i = 0; i < rp.comms.size(); ++i) {
    if (rp.comms[i] == comm) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

}  // namespace graph_internal

namespace {

using graph_internal::count_text;
using graph_internal::Problems;

std::string number_text(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

std::string value_text(double v) {
  return number_text(v);
}
template <typename T>
std::string value_text(T v) {
  return std::to_string(v);
}

std::string quoted(const std::string& s) {
  return "\"" + parsing::printable(s) + "\"";  // bounded: names come from the file
}

// "<prefix><i><suffix>: "x" already names <prefix><j>" for every repeated name.
template <typename NameOf>
void check_unique(std::size_t count, NameOf name_of, const std::string& prefix,
                  const std::string& suffix, Problems& problems) {
  std::unordered_map<std::string_view, std::size_t> first;
  for (std::size_t i = 0; i < count; ++i) {
    const std::string& name = name_of(i);
    const auto [it, inserted] = first.emplace(name, i);
    if (!inserted) {
      problems.add(prefix + std::to_string(i) + suffix,
                   quoted(name) + " already names " + prefix + std::to_string(it->second));
    }
  }
}

void check_tables(const ExecutionGraph& g, Problems& problems) {
  for (const auto& [table, key] :
       {std::pair{&g.layers, "/layers/"}, std::pair{&g.op_classes, "/op_classes/"},
        std::pair{&g.labels, "/labels/"}, std::pair{&g.algorithms, "/algorithms/"}}) {
    check_unique(
        table->size(), [t = table](std::size_t i) -> const std::string& { return (*t)[i]; }, key,
        "", problems);
  }
}

// Returns false where a problem leaves indices unsound (the checks across ranks cannot run).
bool check_communicators(const ExecutionGraph& g, const LocalRanks& membership,
                         Problems& problems) {
  check_unique(
      g.communicators.size(),
      [&g](std::size_t i) -> const std::string& { return g.communicators[i].name; },
      "/communicators/", "/name", problems);
  bool sound = true;
  const int n = g.rank_count();
  for (std::size_t c = 0; c < g.communicators.size(); ++c) {
    const Communicator& comm = g.communicators[c];
    const std::string at = "/communicators/" + std::to_string(c);
    if (comm.ranks.empty()) {
      problems.add(at, "communicator " + quoted(comm.name) + " has no ranks");
    }
    std::vector<int> outside;
    for (int r : comm.ranks) {
      if (r < 0 || r >= n) {
        outside.push_back(r);
      }
    }
    if (!outside.empty()) {
      sound = false;
      problems.add(at, "lists " + graph_internal::ranks_text(outside) +
                           (n == 0 ? ", but the graph has no ranks"
                                   : ", outside the graph's ranks 0 to " + std::to_string(n - 1)));
    }
    const std::vector<int> repeated = membership.repeated(static_cast<int>(c));
    if (!repeated.empty()) {
      sound = false;
      problems.add(at, "lists " + graph_internal::ranks_text(repeated) + " more than once");
    }
  }
  return sound;
}

bool valid_kind(NodeKind kind) {
  return node_kind_name(kind) != "?";
}
bool valid_phase(Phase phase) {
  return phase_name(phase) != "?";
}
bool valid_op(CollectiveOp op) {
  return op_name(op) != "?";
}

// Checks a field that the node's kind does not use: it must hold its default.
template <typename T>
void check_unused(const std::string& at, const char* field, const std::string& kind_text, T value,
                  T expected, Problems& problems) {
  if (value != expected) {
    problems.add(at + "/" + field, "does not apply to " + kind_text + " (must be " +
                                       value_text(expected) + ", is " + value_text(value) + ")");
  }
}

void check_table_index(const std::vector<std::string>& table, const char* table_key,
                       std::int32_t index, const std::string& at, const char* field,
                       Problems& problems) {
  if (index == -1 || (index >= 0 && static_cast<std::size_t>(index) < table.size())) {
    return;
  }
  problems.add(
      at + "/" + field,
      table.empty()
          ? "expected -1 (/" + std::string(table_key) + " is empty), got " + std::to_string(index)
          : "expected -1 or an index into /" + std::string(table_key) + " (0 to " +
                std::to_string(table.size() - 1) + "), got " + std::to_string(index));
}

void check_tags(const ExecutionGraph& g, const Node& n, const std::string& at, Problems& problems) {
  if (!valid_phase(n.phase)) {
    problems.add(at + "/phase", "not a phase (" + std::to_string(static_cast<int>(n.phase)) + ")");
  }
  for (const auto& [value, field] :
       {std::pair{n.iteration, "iteration"}, std::pair{n.micro_batch, "micro_batch"}}) {
    if (value < 0) {
      problems.add(at + "/" + field, "expected an integer >= 0, got " + std::to_string(value));
    }
  }
  check_table_index(g.layers, "layers", n.layer, at, "layer", problems);
  check_table_index(g.layers, "layers", n.last_layer, at, "last_layer", problems);
  check_table_index(g.op_classes, "op_classes", n.op_class, at, "op_class", problems);
  check_table_index(g.labels, "labels", n.label, at, "label", problems);
  check_table_index(g.algorithms, "algorithms", n.algorithm, at, "algorithm", problems);
  if (n.algorithm >= 0 && n.kind != NodeKind::kCollective) {
    problems.add(at + "/algorithm", "only a collective names an algorithm");
  }
}

void check_compute(const Node& n, const std::string& at, Problems& problems) {
  if (std::isfinite(n.duration_sec) && n.duration_sec > parsing::kMaxDurationSec) {
    problems.add(at + "/duration_sec",
                 "expected at most 1e9 s, got " + number_text(n.duration_sec));
  } else if (!std::isfinite(n.duration_sec) || n.duration_sec < 0) {
    problems.add(at + "/duration_sec",
                 "expected a finite number >= 0, got " + number_text(n.duration_sec));
  }
  const std::string kind = "a compute node";
  check_unused(at, "comm", kind, n.comm, -1, problems);
  check_unused(at, "peer", kind, n.peer, -1, problems);
  check_unused(at, "root", kind, n.root, 0, problems);
  check_unused(at, "bytes", kind, n.bytes, std::uint64_t{0}, problems);
  if (n.op != CollectiveOp::kAllReduce) {
    problems.add(at + "/op", "does not apply to " + kind + " (must be all-reduce, is " +
                                 std::string(op_name(n.op)) + ")");
  }
}

// Returns false where the communicator role or the peer is unusable.
bool check_communication(const Program& prog, const Node& n, const std::string& at,
                         Problems& problems) {
  const std::string kind = "a " + std::string(node_kind_name(n.kind)) + " node";
  bool sound = true;
  if (n.comm < 0 || static_cast<std::size_t>(n.comm) >= prog.comms.size()) {
    sound = false;
    problems.add(at + "/comm",
                 prog.comms.empty()
                     ? "program " + quoted(prog.name) + " has no communicator roles for " + kind
                     : "expected a role index of program " + quoted(prog.name) + " (0 to " +
                           std::to_string(prog.comms.size() - 1) + "), got " +
                           std::to_string(n.comm));
  }
  if (n.bytes > workloads::kMaxBytes) {
    problems.add(at + "/bytes", "expected at most 2^50 (1 PiB), got " + std::to_string(n.bytes));
  }
  check_unused(at, "duration_sec", kind, n.duration_sec, 0.0, problems);
  if (n.kind == NodeKind::kCollective) {
    check_unused(at, "peer", kind, n.peer, -1, problems);
    if (!valid_op(n.op)) {
      problems.add(at + "/op",
                   "not a collective op (" + std::to_string(static_cast<int>(n.op)) + ")");
    } else if (graph_internal::has_root(n.op) && n.root < 0) {
      problems.add(at + "/root", "expected a local rank >= 0, got " + std::to_string(n.root));
    } else if (!graph_internal::has_root(n.op) && n.root != 0) {
      problems.add(at + "/root", std::string(op_name(n.op)) + " has no root (must be 0, is " +
                                     std::to_string(n.root) + ")");
    }
    return sound;
  }
  if (n.peer < 0) {
    sound = false;
    problems.add(at + "/peer", "expected a local rank >= 0, got " + std::to_string(n.peer));
  }
  check_unused(at, "root", kind, n.root, 0, problems);
  if (n.op != CollectiveOp::kAllReduce) {
    problems.add(at + "/op", "does not apply to " + kind + " (must be all-reduce, is " +
                                 std::string(op_name(n.op)) + ")");
  }
  return sound;
}

// Node i's deps: its range continues the previous node's, and every dep is an earlier node.
// Returns false if the range is broken (later nodes' ranges are then not checked).
bool check_deps(const Program& prog, std::int32_t i, std::int32_t expected_begin,
                const std::string& at, Problems& problems, bool& sound) {
  const Node& n = prog.nodes[static_cast<std::size_t>(i)];
  const auto size = static_cast<std::int64_t>(prog.deps.size());
  if (n.dep_begin != expected_begin || n.dep_end < n.dep_begin || n.dep_end > size) {
    sound = false;
    problems.add(at, "deps [" + std::to_string(n.dep_begin) + ", " + std::to_string(n.dep_end) +
                         ") of Program::deps (" + std::to_string(size) +
                         " entries) do not continue the previous node's, which end at " +
                         std::to_string(expected_begin));
    return false;
  }
  for (std::int32_t k = n.dep_begin; k < n.dep_end; ++k) {
    const std::int32_t d = prog.deps[static_cast<std::size_t>(k)];
    std::string message;
    if (d == i) {
      message = "a node cannot depend on itself";
    } else if (d > i && static_cast<std::size_t>(d) < prog.nodes.size()) {
      message = "node " + std::to_string(d) + " comes later: a node depends only on earlier nodes";
    } else if (d < 0 || d > i) {
      message = "no node " + std::to_string(d) + " in program " + quoted(prog.name) + " (it has " +
                count_text(prog.nodes.size(), "node") + ")";
    }
    if (!message.empty()) {
      sound = false;
      problems.add(at + "/deps/" + std::to_string(k - n.dep_begin), message);
    }
  }
  return true;
}

bool check_program(const ExecutionGraph& g, std::int32_t p, Problems& problems) {
  const Program& prog = g.programs[static_cast<std::size_t>(p)];
  const std::string prefix = "/programs/" + std::to_string(p) + "/comms/";
  check_unique(
      prog.comms.size(), [&prog](std::size_t i) -> const std::string& { return prog.comms[i]; },
      prefix, "", problems);
  bool sound = true;
  bool ranges = true;
  std::int32_t dep_end = 0;
  for (std::int32_t i = 0; static_cast<std::size_t>(i) < prog.nodes.size(); ++i) {
    const Node& n = prog.nodes[static_cast<std::size_t>(i)];
    const std::string at = problems.node(p, i);
    if (ranges) {
      ranges = check_deps(prog, i, dep_end, at, problems, sound);
      dep_end = n.dep_end;
    }
    if (!valid_kind(n.kind)) {
      sound = false;
      problems.add(at + "/kind",
                   "not a node kind (" + std::to_string(static_cast<int>(n.kind)) + ")");
      continue;
    }
    check_tags(g, n, at, problems);
    if (n.kind == NodeKind::kCompute) {
      check_compute(n, at, problems);
    } else {
      sound = check_communication(prog, n, at, problems) && sound;
    }
  }
  if (ranges && static_cast<std::size_t>(dep_end) != prog.deps.size()) {
    sound = false;
    problems.add("/programs/" + std::to_string(p),
                 "Program::deps holds " + count_text(prog.deps.size(), "dep") +
                     ", but its nodes use " + std::to_string(dep_end));
  }
  return sound;
}

// One thing wrong with a rank's binding; equal descriptors of consecutive ranks merge into one
// message.
struct RankProblem {
  enum Kind { kProgram, kRoleCount, kCommIndex, kNotMember, kSharedComm } kind;
  int a = 0;
  int b = 0;
  int c = 0;
  bool operator==(const RankProblem&) const = default;
};

void rank_problems(const ExecutionGraph& g, const LocalRanks& membership, int r,
                   std::vector<RankProblem>& out) {
  out.clear();
  const RankProgram& rp = g.ranks[static_cast<std::size_t>(r)];
  if (rp.program < 0 || static_cast<std::size_t>(rp.program) >= g.programs.size()) {
    out.push_back({RankProblem::kProgram, rp.program});
    return;
  }
  const Program& prog = g.programs[static_cast<std::size_t>(rp.program)];
  if (rp.comms.size() != prog.comms.size()) {
    out.push_back({RankProblem::kRoleCount, rp.program, static_cast<int>(rp.comms.size())});
  }
  const std::size_t roles = std::min(rp.comms.size(), prog.comms.size());
  for (std::size_t i = 0; i < roles; ++i) {
    const int c = rp.comms[i];
    if (c < 0 || static_cast<std::size_t>(c) >= g.communicators.size()) {
      out.push_back({RankProblem::kCommIndex, rp.program, static_cast<int>(i), c});
      continue;
    }
    if (membership.of(c, r) < 0) {
      out.push_back({RankProblem::kNotMember, rp.program, static_cast<int>(i), c});
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (rp.comms[j] == c) {
        out.push_back({RankProblem::kSharedComm, static_cast<int>(j), static_cast<int>(i), c});
      }
    }
  }
}

std::string rank_problem_text(const ExecutionGraph& g, const RankProgram& rp,
                              const RankProblem& rpb) {
  const auto comm_text = [&g](int c) {
    return "communicator " + quoted(g.communicators[static_cast<std::size_t>(c)].name) +
           " (/communicators/" + std::to_string(c) + ")";
  };
  if (rpb.kind == RankProblem::kProgram) {
    return "runs program " + std::to_string(rpb.a) + ", but the graph has " +
           count_text(g.programs.size(), "program");
  }
  const Program& prog = g.programs[static_cast<std::size_t>(rp.program)];
  const auto role = [&prog](int i) {
    return quoted(prog.comms[static_cast<std::size_t>(i)]);
  };
  switch (rpb.kind) {
    case RankProblem::kRoleCount: {
      std::string roles;
      for (const std::string& name : prog.comms) {
        roles += (roles.empty() ? "" : ", ") + name;
      }
      return "binds " + count_text(static_cast<std::size_t>(rpb.b), "communicator") +
             ", but program " + quoted(prog.name) + " has " +
             (prog.comms.empty() ? "no roles"
                                 : count_text(prog.comms.size(), "role") + " (" + roles + ")");
    }
    case RankProblem::kCommIndex:
      return "role " + role(rpb.b) + " is bound to communicator " + std::to_string(rpb.c) +
             ", but the graph has " + count_text(g.communicators.size(), "communicator");
    case RankProblem::kNotMember:
      return "not a member of " + comm_text(rpb.c) + ", bound to role " + role(rpb.b);
    default:
      return "roles " + role(rpb.a) + " and " + role(rpb.b) + " are both bound to " +
             comm_text(rpb.c);
  }
}

bool check_ranks(const ExecutionGraph& g, const LocalRanks& membership, Problems& problems) {
  const int n = g.rank_count();
  if (n == 0) {
    problems.add("/ranks", "a graph needs at least one rank");
    return false;
  }
  if (n > kMaxGraphRanks) {
    problems.add("/ranks", "a graph has at most " + std::to_string(kMaxGraphRanks) +
                               " ranks, this one has " + std::to_string(n));
    return false;
  }
  bool sound = true;
  std::vector<RankProblem> run_problems;
  std::vector<RankProblem> current;
  std::vector<int> run;
  const auto flush = [&] {
    const RankProgram& rp = g.ranks[static_cast<std::size_t>(run.front())];
    for (const RankProblem& rpb : run_problems) {
      problems.add(problems.rank(run.front()),
                   graph_internal::ranks_text(run) + ": " + rank_problem_text(g, rp, rpb));
    }
  };
  for (int r = 0; r < n; ++r) {
    rank_problems(g, membership, r, current);
    sound = sound && current.empty();
    const bool same = !run.empty() && current == run_problems &&
                      g.ranks[static_cast<std::size_t>(r)].program ==
                          g.ranks[static_cast<std::size_t>(run.front())].program;
    if (!same) {
      if (!run.empty() && !run_problems.empty()) {
        flush();
      }
      run.clear();
      run_problems = current;
    }
    run.push_back(r);
  }
  if (!run_problems.empty()) {
    flush();
  }
  return sound;
}

}  // namespace

std::vector<std::string> validate_execution_graph(const ExecutionGraph& graph) {
  return validate_execution_graph(graph, ValidateOptions{});
}

std::vector<std::string> validate_execution_graph(const ExecutionGraph& graph,
                                                  const ValidateOptions& options) {
  std::vector<std::string> out;
  Problems problems(graph, options.locator, out);
  const LocalRanks membership(graph);
  check_tables(graph, problems);
  bool sound = check_communicators(graph, membership, problems);
  check_unique(
      graph.programs.size(),
      [&graph](std::size_t i) -> const std::string& { return graph.programs[i].name; },
      "/programs/", "/name", problems);
  for (std::int32_t p = 0; static_cast<std::size_t>(p) < graph.programs.size(); ++p) {
    sound = check_program(graph, p, problems) && sound;
  }
  sound = check_ranks(graph, membership, problems) && sound;
  if (!sound || !options.across_ranks) {
    return out;
  }
  const graph_internal::Sequences sequences = graph_internal::role_sequences(graph);
  const std::size_t before = problems.count();
  graph_internal::check_roots_and_peers(problems, sequences);
  graph_internal::check_collectives(problems, sequences);
  graph_internal::check_point_to_point(problems, sequences);
  if (problems.count() == before) {
    graph_internal::check_deadlock(problems, membership, sequences);
  }
  return out;
}

}  // namespace dtsim::sim
