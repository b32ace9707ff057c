#include "sim/graph/graph_writer.h"

#include "sim/graph/graph_error.h"
#include "sim/graph/graph_validate_internal.h"
#include "sim/invariant.h"
#include "workloads/parsing/output_file.h"

namespace dtsim::sim {

using ojson = nlohmann::ordered_json;

namespace {

template <typename T>
const T& at(const std::vector<T>& table, std::int64_t index, const char* what) {
  DTSIM_CHECK(index >= 0 && static_cast<std::size_t>(index) < table.size(),
              std::string(what) + " inside its table (validate the graph before writing it)");
  return table[static_cast<std::size_t>(index)];
}

void write_tags(const ExecutionGraph& g, const Node& n, ojson& j) {
  if (n.phase != Phase::kOther) {
    j["phase"] = std::string(phase_name(n.phase));
  }
  if (n.iteration != 0) {
    j["iteration"] = n.iteration;
  }
  if (n.micro_batch != 0) {
    j["micro_batch"] = n.micro_batch;
  }
  for (const auto& [key, table, index] :
       {std::tuple{"layer", &g.layers, n.layer}, std::tuple{"last_layer", &g.layers, n.last_layer},
        std::tuple{"op_class", &g.op_classes, n.op_class},
        std::tuple{"label", &g.labels, n.label}}) {
    if (index >= 0) {
      j[key] = at(*table, index, key);
    }
  }
  if (n.priority != 0) {
    j["priority"] = n.priority;
  }
}

ojson node_json(const ExecutionGraph& g, const Program& prog, std::size_t i) {
  const Node& n = prog.nodes[i];
  ojson j;
  j["id"] = i;
  j["kind"] = std::string(node_kind_name(n.kind));
  if (n.dep_end > n.dep_begin) {
    j["deps"] = ojson::array();
    for (std::int32_t d : prog.deps_of(n)) {
      j["deps"].push_back(d);
    }
  }
  write_tags(g, n, j);
  if (n.kind == NodeKind::kCompute) {
    j["duration_sec"] = n.duration_sec;
    return j;
  }
  if (n.kind == NodeKind::kCollective) {
    j["op"] = std::string(op_name(n.op));
  }
  j["comm"] = at(prog.comms, n.comm, "comm");
  if (n.kind == NodeKind::kCollective) {
    if (graph_internal::has_root(n.op)) {
      j["root"] = n.root;
    }
  } else {
    j["peer"] = n.peer;
  }
  j["bytes"] = n.bytes;
  if (n.kind == NodeKind::kCollective && n.algorithm >= 0) {
    j["algorithm"] = at(g.algorithms, n.algorithm, "algorithm");
  }
  return j;
}

ojson communicator_json(const Communicator& comm) {
  ojson j;
  j["name"] = comm.name;
  const std::vector<int>& r = comm.ranks;
  bool progression = r.size() >= 3 && r[1] > r[0];
  for (std::size_t i = 2; progression && i < r.size(); ++i) {
    progression = r[i] - r[i - 1] == r[1] - r[0];
  }
  if (!progression) {
    j["ranks"] = r;
  } else if (r[1] - r[0] == 1) {
    j["rank_range"] = {r.front(), r.back() + 1};
  } else {
    j["rank_range"] = {r.front(), r.back() + 1, r[1] - r[0]};
  }
  return j;
}

ojson rank_entry_json(const ExecutionGraph& g, int first, int last) {
  const RankProgram& rp = g.ranks[static_cast<std::size_t>(first)];
  const Program& prog = at(g.programs, rp.program, "program");
  ojson j;
  if (first == last) {
    j["rank"] = first;
  } else {
    j["rank_range"] = {first, last + 1};
  }
  j["program"] = prog.name;
  j["comms"] = ojson::object();
  for (std::size_t i = 0; i < rp.comms.size(); ++i) {
    j["comms"][at(prog.comms, static_cast<std::int64_t>(i), "role")] =
        at(g.communicators, rp.comms[i], "communicator").name;
  }
  return j;
}

// One line: `{"a": 1, "b": [2, 3]}`.
std::string compact(const ojson& j) {
  std::string out;
  if (j.is_object()) {
    for (const auto& [key, value] : j.items()) {
      out += (out.empty() ? "" : ", ") +
             ojson(key).dump(-1, ' ', false, ojson::error_handler_t::replace) + ": " +
             compact(value);
    }
    return "{" + out + "}";
  }
  if (j.is_array()) {
    for (const ojson& item : j) {
      out += (out.empty() ? "" : ", ") + compact(item);
    }
    return "[" + out + "]";
  }
  return j.dump(-1, ' ', false, ojson::error_handler_t::replace);
}

// An array with one compact item per line, its items indented by indent + 2.
std::string lines(const ojson& array, const std::string& indent) {
  if (array.empty()) {
    return "[]";
  }
  std::string out = "[\n";
  for (std::size_t i = 0; i < array.size(); ++i) {
    out += indent + "  " + compact(array[i]) + (i + 1 < array.size() ? ",\n" : "\n");
  }
  return out + indent + "]";
}

std::string program_text(const ojson& program) {
  std::string out = "{\n";
  std::size_t i = 0;
  for (const auto& [key, value] : program.items()) {
    out += "      " + ojson(key).dump() + ": " +
           (key == "nodes" ? lines(value, "      ") : compact(value));
    out += ++i < program.size() ? ",\n" : "\n";
  }
  return out + "    }";
}

}  // namespace

ojson execution_graph_json(const ExecutionGraph& graph) {
  ojson doc;
  doc["format"] = "dtsim-execution-graph";
  doc["version"] = 1;
  for (const auto& [key, table] :
       {std::pair{"layers", &graph.layers}, std::pair{"op_classes", &graph.op_classes},
        std::pair{"labels", &graph.labels}, std::pair{"algorithms", &graph.algorithms}}) {
    if (!table->empty()) {
      doc[key] = *table;
    }
  }
  doc["communicators"] = ojson::array();
  for (const Communicator& comm : graph.communicators) {
    doc["communicators"].push_back(communicator_json(comm));
  }
  doc["programs"] = ojson::array();
  for (const Program& prog : graph.programs) {
    ojson p;
    p["name"] = prog.name;
    p["comms"] = prog.comms;
    p["nodes"] = ojson::array();
    for (std::size_t i = 0; i < prog.nodes.size(); ++i) {
      p["nodes"].push_back(node_json(graph, prog, i));
    }
    doc["programs"].push_back(std::move(p));
  }
  doc["ranks"] = ojson::array();
  for (int first = 0; first < graph.rank_count();) {
    int last = first;
    while (last + 1 < graph.rank_count() && graph.ranks[static_cast<std::size_t>(last + 1)] ==
                                                graph.ranks[static_cast<std::size_t>(first)]) {
      ++last;
    }
    doc["ranks"].push_back(rank_entry_json(graph, first, last));
    first = last + 1;
  }
  return doc;
}

std::string execution_graph_text(const ExecutionGraph& graph) {
  const ojson doc = execution_graph_json(graph);
  std::string out = "{\n";
  std::size_t i = 0;
  for (const auto& [key, value] : doc.items()) {
    out += "  " + ojson(key).dump() + ": ";
    if (key == "communicators" || key == "ranks") {
      out += lines(value, "  ");
    } else if (key == "programs" && !value.empty()) {
      out += "[\n";
      for (std::size_t p = 0; p < value.size(); ++p) {
        out += "    " + program_text(value[p]) + (p + 1 < value.size() ? ",\n" : "\n");
      }
      out += "  ]";
    } else {
      out += compact(value);
    }
    out += ++i < doc.size() ? ",\n" : "\n";
  }
  return out + "}\n";
}

void write_execution_graph(const ExecutionGraph& graph, const std::string& path) {
  try {
    parsing::write_output_file(path, execution_graph_text(graph));
  } catch (const parsing::OutputError& e) {
    throw GraphError(path + ": cannot write execution graph (" + e.what() + ")");
  }
}

}  // namespace dtsim::sim
