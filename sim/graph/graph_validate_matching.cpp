// The checks that compare ranks: roots and peers inside the communicators they are bound to,
// members of a communicator running the same collectives, every send with its receive. Members
// that share a program and role have identical sequences, so each comparison is made once per
// pair of (program, role) and remembered.
#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <tuple>

#include "sim/graph/graph_validate_internal.h"
#include "workloads/parsing/json_fields.h"

namespace dtsim::sim::graph_internal {

Sequences role_sequences(const ExecutionGraph& graph) {
  Sequences out(graph.programs.size());
  for (std::size_t p = 0; p < graph.programs.size(); ++p) {
    const Program& prog = graph.programs[p];
    std::vector<RoleSequence>& roles = out[p];
    roles.resize(prog.comms.size());
    // Per role: sends so far to each peer, receives so far from each peer.
    std::vector<std::map<std::int32_t, std::int32_t>> sent(roles.size());
    std::vector<std::map<std::int32_t, std::int32_t>> received(roles.size());
    for (std::int32_t i = 0; static_cast<std::size_t>(i) < prog.nodes.size(); ++i) {
      const Node& n = prog.nodes[static_cast<std::size_t>(i)];
      if (n.kind == NodeKind::kCompute) {
        continue;
      }
      const auto role = static_cast<std::size_t>(n.comm);
      RoleSequence& s = roles[role];
      s.nodes.push_back(i);
      if (n.kind == NodeKind::kCollective) {
        s.ordinal.push_back(static_cast<std::int32_t>(s.collectives.size()));
        s.collectives.push_back(i);
      } else {
        const bool send = n.kind == NodeKind::kSend;
        s.ordinal.push_back((send ? sent : received)[role][n.peer]++);
        (send ? s.sends : s.recvs).emplace_back(n.peer, i);
      }
    }
    for (RoleSequence& s : roles) {
      for (auto* list : {&s.sends, &s.recvs}) {
        std::stable_sort(list->begin(), list->end(),
                         [](const auto& x, const auto& y) { return x.first < y.first; });
      }
    }
  }
  return out;
}

std::span<const std::pair<std::int32_t, std::int32_t>> with_peer(
    const std::vector<std::pair<std::int32_t, std::int32_t>>& list, std::int32_t peer) {
  const auto [first, last] =
      std::equal_range(list.begin(), list.end(), std::pair<std::int32_t, std::int32_t>{peer, 0},
                       [](const auto& x, const auto& y) { return x.first < y.first; });
  return {list.data() + (first - list.begin()), static_cast<std::size_t>(last - first)};
}

namespace {

std::string quoted(const std::string& s) {
  return "\"" + parsing::printable(s) + "\"";  // bounded: names come from the file
}

// What a member runs on a communicator: its program and the role bound there (-1: none).
struct Key {
  int program = 0;
  int role = -1;
  auto operator<=>(const Key&) const = default;
};

Key key_of(const ExecutionGraph& g, int rank, int comm) {
  const RankProgram& rp = g.ranks[static_cast<std::size_t>(rank)];
  return {rp.program, role_of(rp, comm)};
}

const RoleSequence& sequence_of(const Sequences& sequences, Key key) {
  static const RoleSequence kNone;
  return key.role < 0
             ? kNone
             : sequences[static_cast<std::size_t>(key.program)][static_cast<std::size_t>(key.role)];
}

const Node& node_at(const ExecutionGraph& g, int program, std::int32_t node) {
  return g.programs[static_cast<std::size_t>(program)].nodes[static_cast<std::size_t>(node)];
}

}  // namespace

void check_roots_and_peers(Problems& problems, const Sequences& sequences) {
  const ExecutionGraph& g = problems.graph();
  // (program, role, communicator size) -> the first (rank, communicator) with it.
  std::map<std::tuple<int, int, std::size_t>, std::pair<int, int>> bindings;
  for (int r = 0; r < g.rank_count(); ++r) {
    const RankProgram& rp = g.ranks[static_cast<std::size_t>(r)];
    for (std::size_t i = 0; i < rp.comms.size(); ++i) {
      const std::size_t size = g.communicators[static_cast<std::size_t>(rp.comms[i])].ranks.size();
      bindings.emplace(std::tuple{rp.program, static_cast<int>(i), size},
                       std::pair{r, rp.comms[i]});
    }
  }
  std::set<std::pair<int, std::int32_t>> reported;
  for (const auto& [key, first] : bindings) {
    const auto [p, role, size] = key;
    const Program& prog = g.programs[static_cast<std::size_t>(p)];
    for (std::int32_t node : sequence_of(sequences, {p, role}).nodes) {
      const Node& n = node_at(g, p, node);
      const bool rooted = n.kind == NodeKind::kCollective && has_root(n.op);
      const std::int32_t value = rooted ? n.root : n.peer;
      // A negative root is reported with the node's values.
      if ((!rooted && n.kind == NodeKind::kCollective) || value < 0 ||
          static_cast<std::size_t>(value) < size || !reported.emplace(p, node).second) {
        continue;
      }
      const std::string field = rooted ? "root" : "peer";
      const Communicator& comm = g.communicators[static_cast<std::size_t>(first.second)];
      problems.add(problems.node(p, node) + "/" + field,
                   field + " " + std::to_string(value) + " is outside communicator " +
                       quoted(comm.name) + " (" + count_text(size, "rank") + "), which rank " +
                       std::to_string(first.first) + " binds role " +
                       quoted(prog.comms[static_cast<std::size_t>(role)]) + " to");
    }
  }
}

namespace {

struct Comparison {
  enum Result { kSame, kDiffer, kLength } result = kSame;
  std::size_t index = 0;  // the first collective that differs, or the shorter count
};

Comparison compare_collectives(const ExecutionGraph& g, Key a, const RoleSequence& sa, Key b,
                               const RoleSequence& sb) {
  const std::size_t common = std::min(sa.collectives.size(), sb.collectives.size());
  for (std::size_t k = 0; k < common; ++k) {
    const Node& na = node_at(g, a.program, sa.collectives[k]);
    const Node& nb = node_at(g, b.program, sb.collectives[k]);
    if (na.op != nb.op || na.bytes != nb.bytes || na.root != nb.root ||
        na.algorithm != nb.algorithm) {
      return {Comparison::kDiffer, k};
    }
  }
  if (sa.collectives.size() != sb.collectives.size()) {
    return {Comparison::kLength, common};
  }
  return {};
}

std::string collective_text(const ExecutionGraph& g, const Node& n) {
  const bool named =
      n.algorithm >= 0 && static_cast<std::size_t>(n.algorithm) < g.algorithms.size();
  return std::string(op_name(n.op)) + " of " + std::to_string(n.bytes) + " bytes" +
         (has_root(n.op) ? " from root " + std::to_string(n.root) : "") +
         (named ? " by " + g.algorithms[static_cast<std::size_t>(n.algorithm)] : "");
}

void report_collectives(Problems& problems, int comm, int rank_a, Key a, const RoleSequence& sa,
                        int rank_b, Key b, const RoleSequence& sb, const Comparison& result) {
  const ExecutionGraph& g = problems.graph();
  const std::string at = "/communicators/" + std::to_string(comm);
  const std::string name = quoted(g.communicators[static_cast<std::size_t>(comm)].name);
  const std::size_t k = result.index;
  if (result.result == Comparison::kDiffer) {
    const Node& na = node_at(g, a.program, sa.collectives[k]);
    const Node& nb = node_at(g, b.program, sb.collectives[k]);
    std::vector<std::string> fields;
    for (const auto& [differs, field] :
         {std::pair{na.op != nb.op, "op"}, std::pair{na.bytes != nb.bytes, "bytes"},
          std::pair{na.root != nb.root, "root"},
          std::pair{na.algorithm != nb.algorithm, "algorithm"}}) {
      if (differs) {
        fields.emplace_back(field);
      }
    }
    std::string what = fields[0];
    for (std::size_t i = 1; i < fields.size(); ++i) {
      what += (i + 1 == fields.size() ? " and " : ", ") + fields[i];
    }
    problems.add(at, "collective " + std::to_string(k) + " on communicator " + name +
                         " differs in " + what + " between rank " + std::to_string(rank_a) + " (" +
                         collective_text(g, na) + ", " +
                         problems.node(a.program, sa.collectives[k]) + ") and rank " +
                         std::to_string(rank_b) + " (" + collective_text(g, nb) + ", " +
                         problems.node(b.program, sb.collectives[k]) + ")");
    return;
  }
  const bool a_longer = sa.collectives.size() > sb.collectives.size();
  const Key longer = a_longer ? a : b;
  const std::int32_t waits = (a_longer ? sa : sb).collectives[k];
  problems.add(at, "rank " + std::to_string(rank_a) + " runs " +
                       count_text(sa.collectives.size(), "collective") + " on communicator " +
                       name + ", rank " + std::to_string(rank_b) + " runs " +
                       std::to_string(sb.collectives.size()) + ": rank " +
                       std::to_string(a_longer ? rank_a : rank_b) + " would wait forever in " +
                       "collective " + std::to_string(k) + " (" +
                       problems.node(longer.program, waits) + ")");
}

}  // namespace

void check_collectives(Problems& problems, const Sequences& sequences) {
  const ExecutionGraph& g = problems.graph();
  std::map<std::pair<Key, Key>, Comparison> memo;
  for (std::size_t c = 0; c < g.communicators.size(); ++c) {
    const std::vector<int>& ranks = g.communicators[c].ranks;
    if (ranks.empty()) {
      continue;
    }
    const int comm = static_cast<int>(c);
    const Key first = key_of(g, ranks[0], comm);
    const RoleSequence& s_first = sequence_of(sequences, first);
    std::set<Key> seen{first};
    for (std::size_t l = 1; l < ranks.size(); ++l) {
      const Key key = key_of(g, ranks[l], comm);
      if (key == first || !seen.insert(key).second) {
        continue;
      }
      const RoleSequence& s = sequence_of(sequences, key);
      auto it = memo.find({first, key});
      if (it == memo.end()) {
        it = memo.emplace(std::pair{first, key}, compare_collectives(g, first, s_first, key, s))
                 .first;
      }
      if (it->second.result != Comparison::kSame) {
        report_collectives(problems, comm, ranks[0], first, s_first, ranks[l], key, s, it->second);
      }
    }
  }
}

namespace {

using Entries = std::span<const std::pair<std::int32_t, std::int32_t>>;

// One direction of one pair of members: rank `a` (local la, program pa) sends `sends` to rank
// `b` (local lb, program pb), which posts `recvs` from la.
struct Pair {
  int comm;
  int a, la, pa;
  int b, lb, pb;
};

void match(Problems& problems, const Pair& x, Entries sends, Entries recvs) {
  const ExecutionGraph& g = problems.graph();
  const std::string name = quoted(g.communicators[static_cast<std::size_t>(x.comm)].name);
  const std::string a = "rank " + std::to_string(x.a);
  const std::string b = "rank " + std::to_string(x.b);
  const std::size_t common = std::min(sends.size(), recvs.size());
  for (std::size_t k = 0; k < common; ++k) {
    const Node& s = node_at(g, x.pa, sends[k].second);
    const Node& r = node_at(g, x.pb, recvs[k].second);
    if (s.bytes != r.bytes) {
      problems.add(problems.node(x.pa, sends[k].second) + "/bytes",
                   "send " + std::to_string(k) + " from " + a + " to " + b + " on communicator " +
                       name + " carries " + std::to_string(s.bytes) + " bytes, but its receive (" +
                       problems.node(x.pb, recvs[k].second) + ") " + std::to_string(r.bytes));
      return;
    }
  }
  if (sends.size() > common) {
    problems.add(problems.node(x.pa, sends[common].second),
                 "send " + std::to_string(common) + " from " + a + " to " + b +
                     " on communicator " + name + " has no receive: " + b + " posts " +
                     count_text(recvs.size(), "receive") + " from " + a + " there");
  } else if (recvs.size() > common) {
    problems.add(problems.node(x.pb, recvs[common].second),
                 "receive " + std::to_string(common) + " at " + b + " from " + a +
                     " on communicator " + name + " has no send: " + a + " posts " +
                     count_text(sends.size(), "send") + " to " + b + " there");
  }
}

void check_self(Problems& problems, int rank, int local, Key key, const RoleSequence& s,
                const std::string& comm_name, std::set<std::pair<int, std::int32_t>>& reported) {
  for (const auto& [list, verb] :
       {std::pair{&s.sends, "send to"}, std::pair{&s.recvs, "receive from"}}) {
    for (const auto& [peer, node] : with_peer(*list, local)) {
      if (reported.emplace(key.program, node).second) {
        problems.add(problems.node(key.program, node) + "/peer",
                     "rank " + std::to_string(rank) + " would " + verb + " itself: peer " +
                         std::to_string(peer) + " is its own local rank in communicator " +
                         quoted(comm_name));
      }
    }
  }
}

}  // namespace

void check_point_to_point(Problems& problems, const Sequences& sequences) {
  const ExecutionGraph& g = problems.graph();
  std::set<std::array<int, 6>> compared;  // (pa, role a, la, pb, role b, lb)
  std::set<std::pair<int, std::int32_t>> reported;
  for (std::size_t c = 0; c < g.communicators.size(); ++c) {
    const Communicator& comm = g.communicators[c];
    const int comm_index = static_cast<int>(c);
    const auto n = static_cast<std::int32_t>(comm.ranks.size());
    for (std::int32_t la = 0; la < n; ++la) {
      const int a = comm.ranks[static_cast<std::size_t>(la)];
      const Key ka = key_of(g, a, comm_index);
      const RoleSequence& sa = sequence_of(sequences, ka);
      if (sa.sends.empty() && sa.recvs.empty()) {
        continue;
      }
      check_self(problems, a, la, ka, sa, comm.name, reported);
      for (bool sending : {true, false}) {
        const auto& list = sending ? sa.sends : sa.recvs;
        for (std::size_t i = 0; i < list.size(); i += with_peer(list, list[i].first).size()) {
          const std::int32_t lb = list[i].first;
          if (lb >= n || lb == la) {
            continue;  // reported by check_roots_and_peers or check_self
          }
          const int b = comm.ranks[static_cast<std::size_t>(lb)];
          const Key kb = key_of(g, b, comm_index);
          const RoleSequence& sb = sequence_of(sequences, kb);
          if (sending) {
            if (compared.insert({ka.program, ka.role, la, kb.program, kb.role, lb}).second) {
              match(problems, {comm_index, a, la, ka.program, b, lb, kb.program},
                    with_peer(sa.sends, lb), with_peer(sb.recvs, la));
            }
          } else if (with_peer(sb.sends, la).empty() &&
                     compared.insert({kb.program, kb.role, lb, ka.program, ka.role, la}).second) {
            match(problems, {comm_index, b, lb, kb.program, a, la, ka.program}, {},
                  with_peer(sa.recvs, lb));
          }
        }
      }
    }
  }
}

}  // namespace dtsim::sim::graph_internal
