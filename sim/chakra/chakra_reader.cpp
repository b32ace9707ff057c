#include "sim/chakra/chakra_reader.h"

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <queue>
#include <set>
#include <unordered_map>

#include "sim/chakra/chakra_error.h"
#include "sim/chakra/chakra_nodes.h"
#include "sim/graph/graph_validate.h"

namespace dtsim::sim {
namespace {

constexpr std::size_t kMaxErrorLines = 100;

struct RankTrace {
  ChakraFile file;
  bool dtsim_written = false;
  std::string program;              // dtsim.program; empty: none
  std::vector<std::string> roles;   // dtsim.roles
  std::vector<std::string> groups;  // the process groups the metadata lists, in order
  std::vector<DecodedNode> nodes;   // file order
  std::vector<std::string> comm;    // per node: its communicator's name (empty for no-ops)
  std::vector<std::size_t> order;   // the kept nodes, in issue order (indices into nodes)
  std::vector<std::vector<std::int32_t>> deps;  // per kept node: positions in `order`
};

std::string comm_name(const DecodedNode& d, int rank) {
  if (d.noop || d.node.kind == NodeKind::kCompute) {
    return {};  // the compute stream
  }
  if (!d.pg.empty()) {
    return d.pg;
  }
  if (d.node.kind == NodeKind::kCollective) {
    return "world";
  }
  const int lo = std::min(rank, d.peer);
  const int hi = std::max(rank, d.peer);
  std::string name = "p2p." + std::to_string(lo) + "-" + std::to_string(hi);
  return d.tag == 0 ? name : name + ".tag" + std::to_string(d.tag);
}

void read_metadata(RankTrace& t, std::map<std::string, std::pair<std::vector<int>, int>>& groups,
                   int rank, ChakraStats& stats, ChakraLog& log) {
  const std::string where = t.file.path + ": metadata";
  report_unknown_fields(t.file.metadata, "GlobalMetadata", where, stats, log);
  const std::string prefix = kDtsimCommGroup;
  for (const auto& a : t.file.metadata.attr()) {
    if (a.name() == kDtsimMarker) {
      t.dtsim_written = true;
    } else if (a.name() == kDtsimProgram && a.has_string_val()) {
      t.program = a.string_val();
    } else if (a.name() == kDtsimRoles && a.has_string_list()) {
      t.roles.assign(a.string_list().values().begin(), a.string_list().values().end());
    } else if (a.name().rfind(prefix, 0) == 0 && a.has_int64_list()) {
      const std::vector<int> ranks(a.int64_list().values().begin(), a.int64_list().values().end());
      t.groups.push_back(a.name().substr(prefix.size()));
      const auto [it, added] = groups.emplace(t.groups.back(), std::pair{ranks, rank});
      if (!added && it->second.first != ranks) {
        log.error(where + ": process group \"" + it->first + "\" lists other ranks than in " +
                  chakra_rank_path(stats.prefix, it->second.second));
      }
    } else {
      ++stats.unknown_attributes;
      log.warn("metadata attribute \"" + a.name() + "\" not used", where);
    }
  }
}

// Each node's index by its id; logs an id used twice.
std::unordered_map<std::uint64_t, std::size_t> index_ids(const RankTrace& t, ChakraLog& log) {
  std::unordered_map<std::uint64_t, std::size_t> index;
  for (std::size_t i = 0; i < t.nodes.size(); ++i) {
    const auto [it, added] = index.emplace(t.nodes[i].id, i);
    if (!added) {
      log.error(node_place(t.file, t.nodes[i].id) + ": id used twice (the nodes at byte " +
                std::to_string(t.file.offsets[it->second]) + " and byte " +
                std::to_string(t.file.offsets[i]) + ")");
    }
  }
  return index;
}

// The dependencies of a trace's nodes, by index.
struct DependencyEdges {
  std::vector<std::vector<std::pair<std::size_t, bool>>> on;  // each with "is a control one"
  std::vector<std::vector<std::size_t>> waiting;              // the nodes that wait for it
  std::vector<int> missing;                                   // its dependencies not yet placed
  bool sound = true;  // false: an unknown id or a self-dependency, logged
};

DependencyEdges dependency_edges(const RankTrace& t, ChakraLog& log) {
  const std::size_t n = t.nodes.size();
  const auto index = index_ids(t, log);
  DependencyEdges e{.on = std::vector<std::vector<std::pair<std::size_t, bool>>>(n),
                    .waiting = std::vector<std::vector<std::size_t>>(n),
                    .missing = std::vector<int>(n, 0)};
  for (std::size_t i = 0; i < n; ++i) {
    std::set<std::size_t> seen;
    const auto add = [&](std::uint64_t id, bool ctrl, const char* field) {
      const auto it = index.find(id);
      if (it == index.end()) {
        log.error(node_place(t.file, t.nodes[i].id) + ": " + field + " names node " +
                  std::to_string(id) + ", which " + t.file.path + " does not have");
        e.sound = false;
      } else if (it->second == i) {
        log.error(node_place(t.file, t.nodes[i].id) + ": depends on itself");
        e.sound = false;
      } else if (seen.insert(it->second).second) {
        e.on[i].emplace_back(it->second, ctrl);
        e.waiting[it->second].push_back(i);
        ++e.missing[i];
      }
    };
    for (const std::uint64_t id : t.nodes[i].data_deps) {
      add(id, false, "data_deps");
    }
    for (const std::uint64_t id : t.nodes[i].ctrl_deps) {
      add(id, true, "ctrl_deps");
    }
  }
  return e;
}

// Logs the cycle that left nodes of `t` unplaced (the first eight of them).
void log_cycle(const RankTrace& t, const std::vector<int>& missing, std::size_t placed,
               ChakraLog& log) {
  const std::size_t n = t.nodes.size();
  std::string ids;
  int listed = 0;
  std::uint64_t first = 0;
  for (std::size_t i = 0; i < n && listed < 8; ++i) {
    if (missing[i] > 0) {
      first = listed == 0 ? t.nodes[i].id : first;
      ids += (listed++ == 0 ? "" : ", ") + std::to_string(t.nodes[i].id);
    }
  }
  log.error(node_place(t.file, first) + ": a cycle of dependencies: " + std::to_string(n - placed) +
            " nodes never become ready (nodes " + ids + (n - placed > 8 ? ", ..." : "") + ")");
}

// Orders the kept nodes of `t` topologically (stable in file order) with their dependencies,
// passing the dependencies of no-op nodes through. Logs unknown ids, self-dependencies, cycles.
void order_nodes(RankTrace& t, ChakraLog& log) {
  const std::size_t n = t.nodes.size();
  DependencyEdges e = dependency_edges(t, log);
  if (!e.sound) {
    return;
  }
  std::priority_queue<std::size_t, std::vector<std::size_t>, std::greater<>> ready;
  for (std::size_t i = 0; i < n; ++i) {
    if (e.missing[i] == 0) {
      ready.push(i);
    }
  }
  std::vector<std::int32_t> position(n, -1);          // kept nodes: position in order
  std::vector<std::vector<std::int32_t>> through(n);  // no-op nodes: the kept nodes they pass
  std::size_t placed = 0;
  while (!ready.empty()) {
    const std::size_t i = ready.top();
    ready.pop();
    ++placed;
    std::set<std::int32_t> deps;
    for (const auto& [j, ctrl] : e.on[i]) {
      if (!t.nodes[j].noop) {
        const bool same_stream = t.comm[i] == t.comm[j];  // compute nodes: both empty
        // A control dependency along one stream is that stream's order: not kept.
        if (!(ctrl && same_stream && !t.nodes[i].noop)) {
          deps.insert(position[j]);
        }
      } else {
        deps.insert(through[j].begin(), through[j].end());
      }
    }
    if (t.nodes[i].noop) {
      through[i].assign(deps.begin(), deps.end());
    } else {
      position[i] = static_cast<std::int32_t>(t.order.size());
      t.order.push_back(i);
      t.deps.emplace_back(deps.begin(), deps.end());
    }
    for (const std::size_t k : e.waiting[i]) {
      if (--e.missing[k] == 0) {
        ready.push(k);
      }
    }
  }
  if (placed < n) {
    log_cycle(t, e.missing, placed, log);
  }
}

// The members of every communicator the trace uses: its metadata's groups, else "world" is every
// rank, a pair every rank of the pair, a process group every rank that uses it and their peers.
std::map<std::string, std::vector<int>> communicators(
    const std::vector<RankTrace>& traces,
    const std::map<std::string, std::pair<std::vector<int>, int>>& groups) {
  std::map<std::string, std::set<int>> used;
  for (int r = 0; r < static_cast<int>(traces.size()); ++r) {
    const RankTrace& t = traces[static_cast<std::size_t>(r)];
    for (const std::size_t i : t.order) {
      if (t.comm[i].empty()) {
        continue;  // a compute node
      }
      auto& members = used[t.comm[i]];
      members.insert(r);
      if (t.nodes[i].peer >= 0) {
        members.insert(t.nodes[i].peer);
      }
    }
  }
  std::map<std::string, std::vector<int>> result;
  for (const auto& [name, group] : groups) {
    used[name];  // every group a metadata lists, used or not
  }
  for (auto& [name, members] : used) {
    if (const auto it = groups.find(name); it != groups.end()) {
      result[name] = it->second.first;
    } else if (name == "world") {
      for (int r = 0; r < static_cast<int>(traces.size()); ++r) {
        result[name].push_back(r);
      }
    } else {
      result[name].assign(members.begin(), members.end());
    }
  }
  return result;
}

std::int32_t tag_index(std::vector<std::string>& table, const std::string& name) {
  return name.empty() ? -1 : ExecutionGraph::intern(table, name);
}

// Rank r's program: its kept nodes in order, roles named after their communicators.
Program build_program(const RankTrace& t, int r, ExecutionGraph& graph,
                      const std::map<std::string, std::int32_t>& comm_index, ChakraLog& log) {
  Program program{.name = "rank" + std::to_string(r)};
  RankProgram& binding = graph.ranks[static_cast<std::size_t>(r)];
  binding.program = static_cast<std::int32_t>(r);
  std::map<std::string, std::int32_t> roles;
  if (!t.roles.empty() && t.roles.size() == t.groups.size()) {  // dtsim's roles, all of them
    for (std::size_t i = 0; i < t.roles.size(); ++i) {
      roles.emplace(t.roles[i], static_cast<std::int32_t>(i));
      program.comms.push_back(t.roles[i]);
      binding.comms.push_back(comm_index.at(t.groups[i]));
    }
  }
  for (std::size_t k = 0; k < t.order.size(); ++k) {
    const DecodedNode& d = t.nodes[t.order[k]];
    Node node = d.node;
    node.layer = tag_index(graph.layers, d.layer);
    node.last_layer = tag_index(graph.layers, d.last_layer);
    node.op_class = tag_index(graph.op_classes, d.op_class);
    node.label = tag_index(graph.labels, d.label);
    node.algorithm = tag_index(graph.algorithms, d.algorithm);
    if (node.kind != NodeKind::kCompute) {
      const std::string& name = t.comm[t.order[k]];
      // The role: dtsim's own name for it where the file gives one, else the communicator's.
      const std::string& role = d.role.empty() ? name : d.role;
      const auto [it, added] = roles.emplace(role, static_cast<std::int32_t>(program.comms.size()));
      if (added) {
        program.comms.push_back(role);
        binding.comms.push_back(comm_index.at(name));
      } else if (binding.comms[static_cast<std::size_t>(it->second)] != comm_index.at(name)) {
        const auto& before = graph.communicators[static_cast<std::size_t>(
            binding.comms[static_cast<std::size_t>(it->second)])];
        log.error(node_place(t.file, d.id) + ": role \"" + role + "\" is on process group \"" +
                  name + "\" here, on \"" + before.name + "\" before");
      }
      node.comm = it->second;
      if (d.peer >= 0) {
        const auto& members =
            graph.communicators[static_cast<std::size_t>(comm_index.at(name))].ranks;
        const auto at = std::find(members.begin(), members.end(), d.peer);
        if (at == members.end()) {
          log.error(node_place(t.file, d.id) + ": peer rank " + std::to_string(d.peer) +
                    " is not in process group \"" + name + "\"");
        }
        node.peer = static_cast<std::int32_t>(at - members.begin());
      }
    }
    program.add(node, t.deps[k]);
  }
  return program;
}

// Lets ranks whose programs are equal share one (a data-parallel trace: one program), named
// after the program the first of its ranks' files names, else "rank<R>" (R: that first rank).
void share_programs(ExecutionGraph& graph, const std::vector<RankTrace>& traces) {
  std::vector<Program> distinct;
  std::map<std::size_t, std::vector<std::int32_t>> by_size;  // node count -> distinct programs
  std::set<std::string> names;
  for (std::size_t r = 0; r < graph.programs.size(); ++r) {
    Program& p = graph.programs[r];
    std::int32_t index = -1;
    for (const std::int32_t candidate : by_size[p.nodes.size()]) {
      const Program& q = distinct[static_cast<std::size_t>(candidate)];
      if (q.comms == p.comms && q.nodes == p.nodes && q.deps == p.deps) {
        index = candidate;
        break;
      }
    }
    if (index < 0) {
      index = static_cast<std::int32_t>(distinct.size());
      by_size[p.nodes.size()].push_back(index);
      distinct.push_back(std::move(p));
      const std::string& named = traces[r].program;
      if (!named.empty() && names.insert(named).second) {
        distinct.back().name = named;
      }
    }
    graph.ranks[r].program = index;
  }
  graph.programs = std::move(distinct);
}

[[noreturn]] void throw_errors(const std::vector<std::string>& errors) {
  std::string text;
  for (std::size_t i = 0; i < errors.size() && i < kMaxErrorLines; ++i) {
    text += (i == 0 ? "" : "\n") + errors[i];
  }
  if (errors.size() > kMaxErrorLines) {
    text += "\n... and " + std::to_string(errors.size() - kMaxErrorLines) + " more problems";
  }
  throw ChakraError(text);
}

// The trace's rank count: `ranks`, checked against the files, or (0) the files counted.
int trace_ranks(const std::string& prefix, int ranks) {
  std::error_code ec;
  if (ranks == 0) {
    while (ranks < kMaxGraphRanks && std::filesystem::exists(chakra_rank_path(prefix, ranks), ec)) {
      ++ranks;
    }
    if (ranks == 0) {
      throw ChakraError(chakra_rank_path(prefix, 0) + ": cannot open Chakra execution trace");
    }
  } else if (ranks < 0 || ranks > kMaxGraphRanks) {
    throw ChakraError(prefix + ": expected 1 to " + std::to_string(kMaxGraphRanks) + " ranks");
  } else if (std::filesystem::exists(chakra_rank_path(prefix, ranks), ec)) {
    throw ChakraError(chakra_rank_path(prefix, ranks) + ": exists, but the trace was read for " +
                      std::to_string(ranks) + " ranks (give the rank count of the trace)");
  }
  return ranks;
}

// The graph built from `traces` through the graph's validator, its problems located in the
// trace's files (a node by its file and id, a pointer into the graph by the prefix).
void validate_import(const ExecutionGraph& graph, const std::vector<RankTrace>& traces,
                     const std::string& prefix) {
  ValidateOptions options;
  options.locator.node = [&](std::int32_t program, std::int32_t node) {
    const RankTrace& t = traces[static_cast<std::size_t>(program)];
    return node_place(t.file, t.nodes[t.order[static_cast<std::size_t>(node)]].id);
  };
  options.locator.rank = [&](int rank) {
    return traces[static_cast<std::size_t>(rank)].file.path;
  };
  std::vector<std::string> problems = validate_execution_graph(graph, options);
  for (std::string& line : problems) {
    if (line.rfind("/", 0) == 0) {  // a pointer into the graph (/communicators/2): the trace's
      line = prefix + line.substr(line.find(": "));
    }
  }
  if (!problems.empty()) {
    throw_errors(problems);
  }
}

}  // namespace

std::string chakra_rank_path(const std::string& prefix, int rank) {
  return prefix + "." + std::to_string(rank) + ".et";
}

ChakraImport read_chakra_trace(const std::string& prefix, int ranks) {
  ranks = trace_ranks(prefix, ranks);
  ChakraImport result;
  ChakraStats& stats = result.stats;
  stats.prefix = prefix;
  stats.ranks = ranks;
  ChakraLog log;
  std::vector<RankTrace> traces(static_cast<std::size_t>(ranks));
  std::map<std::string, std::pair<std::vector<int>, int>> groups;
  for (int r = 0; r < ranks; ++r) {
    RankTrace& t = traces[static_cast<std::size_t>(r)];
    t.file = read_chakra_file(chakra_rank_path(prefix, r));
    read_metadata(t, groups, r, stats, log);
    for (std::size_t i = 0; i < t.file.nodes.size(); ++i) {
      t.nodes.push_back(decode_node(t.file, i, ranks, t.dtsim_written, stats, log));
      t.comm.push_back(comm_name(t.nodes.back(), r));
    }
    order_nodes(t, log);
    // What the rest needs is decoded: free the messages (a 1024-rank trace holds millions).
    std::vector<chakra_et::Node>().swap(t.file.nodes);
    std::vector<std::uint64_t>().swap(t.file.offsets);
  }
  if (!log.errors().empty()) {
    throw_errors(log.errors());
  }
  ExecutionGraph& graph = result.graph;
  std::map<std::string, std::int32_t> comm_index;
  for (auto& [name, members] : communicators(traces, groups)) {
    comm_index[name] = static_cast<std::int32_t>(graph.communicators.size());
    graph.communicators.push_back({.name = name, .ranks = members});
  }
  graph.ranks.resize(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    graph.programs.push_back(
        build_program(traces[static_cast<std::size_t>(r)], r, graph, comm_index, log));
  }
  if (!log.errors().empty()) {
    throw_errors(log.errors());
  }
  validate_import(graph, traces, prefix);
  share_programs(graph, traces);
  stats.programs = static_cast<std::int64_t>(graph.programs.size());
  result.warnings = log.warnings();
  return result;
}

nlohmann::ordered_json chakra_import_json(const ChakraImport& trace) {
  const ChakraStats& s = trace.stats;
  return {{"prefix", s.prefix},
          {"ranks", s.ranks},
          {"nodes", s.nodes},
          {"compute_nodes", s.compute_nodes},
          {"collective_nodes", s.collective_nodes},
          {"send_nodes", s.send_nodes},
          {"recv_nodes", s.recv_nodes},
          {"memory_nodes", s.memory_nodes},
          {"metadata_nodes", s.metadata_nodes},
          {"unknown_type_nodes", s.unknown_type_nodes},
          {"unknown_attributes", s.unknown_attributes},
          {"unknown_fields", s.unknown_fields},
          {"compute_without_duration", s.compute_without_duration},
          {"cpu_compute_nodes", s.cpu_compute_nodes},
          {"programs", s.programs},
          {"warnings", trace.warnings}};
}

}  // namespace dtsim::sim
