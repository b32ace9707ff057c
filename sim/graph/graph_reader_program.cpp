// Reading one program of an execution-graph file: its nodes, their deps by id, and the
// topological order (stable in file order) the in-memory Program keeps.
#include <algorithm>
#include <array>
#include <functional>
#include <limits>
#include <optional>
#include <queue>
#include <string_view>

#include "sim/graph/graph_reader_internal.h"
#include "sim/graph/graph_validate_internal.h"

namespace dtsim::sim::graph_internal {

using nlohmann::json;
using parsing::describe_json;
using parsing::JsonFields;

std::string pointer_token(const std::string& key) {
  std::string out;
  for (char ch : key) {
    out += ch == '~' ? "~0" : ch == '/' ? "~1" : std::string(1, ch);
  }
  return out;
}

void NameTable::read(JsonFields& doc) {
  const json* v = doc.value(key_, /*required=*/false);
  if (v == nullptr) {
    return;
  }
  given_ = true;
  if (!v->is_array()) {
    doc.problem(key_, "expected an array of names, got " + describe_json(*v));
    return;
  }
  for (std::size_t i = 0; i < v->size(); ++i) {
    const json& item = (*v)[i];
    if (!item.is_string()) {
      doc.problem(std::string(key_) + "/" + std::to_string(i),
                  "expected a string, got " + describe_json(item));
    }
    names_.push_back(item.is_string() ? item.get<std::string>() : "");
    if (item.is_string()) {
      index_.emplace(names_.back(), static_cast<std::int32_t>(i));
    }
  }
}

std::int32_t NameTable::index(const std::string& name, JsonFields& node, const char* field) {
  const auto it = index_.find(name);
  if (it != index_.end()) {
    return it->second;
  }
  if (given_) {
    node.problem(field, "\"" + parsing::printable(name) + "\" is not in /" + key_);
    return -1;
  }
  names_.push_back(name);
  return index_.emplace(name, static_cast<std::int32_t>(names_.size() - 1)).first->second;
}

namespace {

constexpr std::array<const char*, 11> kCommonKeys{
    "id",    "kind",       "deps",     "phase", "iteration", "micro_batch",
    "layer", "last_layer", "op_class", "label", "priority"};
constexpr std::array<const char*, 7> kKindKeys{"duration_sec", "op",    "comm",     "peer",
                                               "root",         "bytes", "algorithm"};

// The keys a node of `kind` may have, in the order GRAPH.md lists them (nullopt: any kind's).
std::vector<std::string> node_keys(std::optional<NodeKind> kind) {
  std::vector<std::string> keys(kCommonKeys.begin(), kCommonKeys.end());
  for (const char* key : kKindKeys) {
    const std::string_view k = key;
    const bool fits = !kind || (*kind == NodeKind::kCompute && k == "duration_sec") ||
                      (*kind == NodeKind::kCollective && (k == "op" || k == "comm" || k == "root" ||
                                                          k == "bytes" || k == "algorithm")) ||
                      ((*kind == NodeKind::kSend || *kind == NodeKind::kRecv) &&
                       (k == "comm" || k == "peer" || k == "bytes"));
    if (fits) {
      keys.emplace_back(key);
    }
  }
  return keys;
}

std::string joined(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) {
    out += (out.empty() ? "" : ", ") + w;
  }
  return out;
}

// A node as the file has it.
struct FileNode {
  Node node;
  std::optional<std::uint64_t> id;
  std::vector<std::uint64_t> deps;
};

// Unknown keys, and keys that do not belong to the node's kind (or op, for root).
void check_node_keys(const json& value, JsonFields& f) {
  if (!value.is_object()) {
    return;
  }
  std::optional<NodeKind> kind;
  NodeKind k{};
  if (const auto it = value.find("kind");
      it != value.end() && it->is_string() && parse_node_kind(it->get<std::string>(), k)) {
    kind = k;
  }
  std::optional<CollectiveOp> op;
  if (const auto it = value.find("op"); it != value.end() && it->is_string()) {
    op = parse_op(it->get<std::string>());
  }
  const std::vector<std::string> allowed = node_keys(kind);
  const std::vector<std::string> any = node_keys(std::nullopt);
  for (const auto& [key, unused] : value.items()) {
    if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) {
      if (key == "root" && op && !has_root(*op)) {
        f.problem(key, std::string(op_name(*op)) +
                           " has no root (only broadcast, reduce and send-recv have one)");
      }
    } else if (std::find(any.begin(), any.end(), key) != any.end()) {
      f.problem(key, "does not apply to a " + std::string(node_kind_name(*kind)) +
                         " node (expected one of " + joined(allowed) + ")");
    } else {
      f.problem(key, "unknown key (expected one of " + joined(allowed) + ")");
    }
  }
}

std::optional<std::int32_t> read_int32(JsonFields& f, const char* key, std::int64_t min,
                                       bool required = false) {
  const auto v = f.integer(key, required);
  if (v && (*v < min || *v > std::numeric_limits<std::int32_t>::max())) {
    f.problem(key, "expected an integer between " + std::to_string(min) + " and 2147483647, got " +
                       std::to_string(*v));
    return std::nullopt;
  }
  return v ? std::optional<std::int32_t>(static_cast<std::int32_t>(*v)) : std::nullopt;
}

template <typename E>
void read_enum(JsonFields& f, const char* key, bool required, const char* what,
               const std::string& names, const std::function<bool(const std::string&, E&)>& parse,
               E& out) {
  if (const auto name = f.string(key, required)) {
    if (!parse(*name, out)) {
      f.problem(key, "unknown " + std::string(what) + " \"" + parsing::printable(*name) +
                         "\" (expected one of " + names + ")");
    }
  }
}

void read_tags(JsonFields& f, NameTables& tables, Node& n) {
  read_enum<Phase>(
      f, "phase", false, "phase", "forward, backward, optimizer, recompute, other",
      [](const std::string& s, Phase& p) { return parse_phase(s, p); }, n.phase);
  n.iteration = read_int32(f, "iteration", 0).value_or(0);
  n.micro_batch = read_int32(f, "micro_batch", 0).value_or(0);
  for (const auto& [key, table, slot] : {std::tuple{"layer", &tables.layers, &n.layer},
                                         std::tuple{"last_layer", &tables.layers, &n.last_layer},
                                         std::tuple{"op_class", &tables.op_classes, &n.op_class},
                                         std::tuple{"label", &tables.labels, &n.label}}) {
    if (const auto name = f.string(key, /*required=*/false)) {
      *slot = table->index(*name, f, key);
    }
  }
  n.priority = read_int32(f, "priority", std::numeric_limits<std::int32_t>::min()).value_or(0);
}

std::string op_names() {
  std::string out;
  for (CollectiveOp op : all_ops()) {
    out += (out.empty() ? "" : ", ") + std::string(op_name(op));
  }
  return out;
}

void read_communication(JsonFields& f, const Program& prog, Node& n) {
  if (n.kind == NodeKind::kCollective) {
    read_enum<CollectiveOp>(
        f, "op", true, "op", op_names(),
        [](const std::string& s, CollectiveOp& op) {
          const auto parsed = parse_op(s);
          op = parsed.value_or(op);
          return parsed.has_value();
        },
        n.op);
  }
  if (const auto role = f.string("comm")) {
    const auto it = std::find(prog.comms.begin(), prog.comms.end(), *role);
    if (it == prog.comms.end()) {
      f.problem("comm",
                "\"" + *role + "\" is not a communicator role of program \"" + prog.name + "\" (" +
                    (prog.comms.empty() ? "it has none" : "its roles: " + joined(prog.comms)) +
                    ")");
    } else {
      n.comm = static_cast<std::int32_t>(it - prog.comms.begin());
    }
  }
  if (n.kind == NodeKind::kCollective) {
    if (has_root(n.op)) {
      n.root = read_int32(f, "root", 0).value_or(0);
    }
  } else {
    n.peer = read_int32(f, "peer", 0, /*required=*/true).value_or(-1);
  }
  n.bytes = f.unsigned_integer("bytes").value_or(0);
}

FileNode read_node(const json& value, const std::string& pointer, const Program& prog,
                   NameTables& tables, std::vector<std::string>& problems) {
  JsonFields f(value, pointer, problems);
  check_node_keys(value, f);
  FileNode out;
  Node& n = out.node;
  out.id = f.unsigned_integer("id", /*required=*/false);
  bool kind_known = false;
  if (const auto kind = f.string("kind")) {
    kind_known = parse_node_kind(*kind, n.kind);
    if (!kind_known) {
      f.problem("kind", "unknown kind \"" + parsing::printable(*kind) +
                            "\" (expected one of compute, collective, send, recv)");
    }
  }
  out.deps = f.unsigned_array("deps", /*required=*/false).value_or(std::vector<std::uint64_t>{});
  read_tags(f, tables, n);
  if (!kind_known) {
    return out;
  }
  if (n.kind == NodeKind::kCompute) {
    n.duration_sec = f.number("duration_sec").value_or(0);
  } else {
    read_communication(f, prog, n);
  }
  if (n.kind == NodeKind::kCollective) {
    if (const auto name = f.string("algorithm", /*required=*/false)) {
      n.algorithm = tables.algorithms.index(*name, f, "algorithm");
    }
  }
  return out;
}

// Places the nodes in a topological order, stable in file order; records unknown deps, repeated
// ids and cycles. Nodes on a cycle come last, in file order, without their deps on later nodes.
class Ordering {
 public:
  Ordering(const std::string& base, const std::string& program_name, std::vector<FileNode>& nodes,
           std::vector<std::string>& problems)
      : base_(base),
        name_(program_name),
        nodes_(nodes),
        problems_(problems),
        deps_(nodes.size()),
        placed_(nodes.size(), false) {}

  ProgramRead run() {
    resolve();
    sort();
    report_cycles();
    ProgramRead out;
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      if (!placed_[i]) {
        order_.push_back(static_cast<std::int32_t>(i));
      }
    }
    std::vector<std::int32_t> index_of(nodes_.size());
    for (std::size_t k = 0; k < order_.size(); ++k) {
      index_of[static_cast<std::size_t>(order_[k])] = static_cast<std::int32_t>(k);
    }
    for (std::size_t k = 0; k < order_.size(); ++k) {
      const auto file = static_cast<std::size_t>(order_[k]);
      std::vector<std::int32_t> on;
      for (std::int32_t d : deps_[file]) {
        if (index_of[static_cast<std::size_t>(d)] < static_cast<std::int32_t>(k)) {
          on.push_back(index_of[static_cast<std::size_t>(d)]);
        }
      }
      out.program.add(nodes_[file].node, on);
    }
    out.file_position = order_;
    return out;
  }

 private:
  std::string at(std::size_t i) const { return base_ + "/nodes/" + std::to_string(i); }
  std::uint64_t id(std::size_t i) const { return nodes_[i].id.value_or(i); }

  void resolve() {
    std::unordered_map<std::uint64_t, std::int32_t> by_id;
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      const auto [it, inserted] = by_id.emplace(id(i), static_cast<std::int32_t>(i));
      if (!inserted) {
        problems_.push_back((nodes_[i].id ? at(i) + "/id: id " : at(i) + ": its default id ") +
                            std::to_string(id(i)) + (nodes_[i].id ? "" : " (its position)") +
                            " already identifies " + at(static_cast<std::size_t>(it->second)));
      }
    }
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      for (std::size_t k = 0; k < nodes_[i].deps.size(); ++k) {
        const auto it = by_id.find(nodes_[i].deps[k]);
        const std::string where = at(i) + "/deps/" + std::to_string(k) + ": ";
        if (it == by_id.end()) {
          problems_.push_back(where + "no node of program \"" + name_ + "\" has id " +
                              std::to_string(nodes_[i].deps[k]));
        } else if (static_cast<std::size_t>(it->second) == i) {
          problems_.push_back(where + "a node cannot depend on itself");
        } else {
          deps_[i].push_back(it->second);
        }
      }
    }
  }

  // Kahn's algorithm, taking the ready node that comes first in the file.
  void sort() {
    std::vector<std::size_t> waiting(nodes_.size());
    std::vector<std::vector<std::int32_t>> dependents(nodes_.size());
    std::priority_queue<std::int32_t, std::vector<std::int32_t>, std::greater<>> ready;
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      waiting[i] = deps_[i].size();
      for (std::int32_t d : deps_[i]) {
        dependents[static_cast<std::size_t>(d)].push_back(static_cast<std::int32_t>(i));
      }
      if (waiting[i] == 0) {
        ready.push(static_cast<std::int32_t>(i));
      }
    }
    while (!ready.empty()) {
      const std::int32_t i = ready.top();
      ready.pop();
      placed_[static_cast<std::size_t>(i)] = true;
      order_.push_back(i);
      for (std::int32_t j : dependents[static_cast<std::size_t>(i)]) {
        if (--waiting[static_cast<std::size_t>(j)] == 0) {
          ready.push(j);
        }
      }
    }
  }

  // Every unplaced node waits for an unplaced one; following the first such dep from each
  // unplaced node in file order finds each cycle once.
  void report_cycles() {
    std::vector<char> state(nodes_.size(), 0);  // 1: on the current walk, 2: walked
    for (std::size_t start = 0; start < nodes_.size(); ++start) {
      if (placed_[start] || state[start] != 0) {
        continue;
      }
      std::vector<std::size_t> walk;
      std::size_t x = start;
      while (state[x] == 0) {
        state[x] = 1;
        walk.push_back(x);
        x = first_unplaced_dep(x);
      }
      if (state[x] == 1) {
        report_cycle({std::find(walk.begin(), walk.end(), x), walk.end()});
      }
      for (std::size_t y : walk) {
        state[y] = 2;
      }
    }
  }

  std::size_t first_unplaced_dep(std::size_t i) const {
    for (std::int32_t d : deps_[i]) {
      if (!placed_[static_cast<std::size_t>(d)]) {
        return static_cast<std::size_t>(d);
      }
    }
    return i;  // not reached: an unplaced node has an unplaced dep
  }

  void report_cycle(std::vector<std::size_t> cycle) {
    std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());
    std::string text = "a cycle of dependencies: node " + std::to_string(id(cycle[0]));
    for (std::size_t k = 1; k <= cycle.size(); ++k) {
      text += (k == 1 ? " waits for node " : ", which waits for node ") +
              std::to_string(id(cycle[k % cycle.size()]));
    }
    problems_.push_back(at(cycle[0]) + ": " + text);
  }

  const std::string& base_;
  const std::string& name_;
  std::vector<FileNode>& nodes_;
  std::vector<std::string>& problems_;
  std::vector<std::vector<std::int32_t>> deps_;  // by file position
  std::vector<bool> placed_;
  std::vector<std::int32_t> order_;
};

}  // namespace

ProgramRead read_program(const json& value, int index, NameTables& tables,
                         std::vector<std::string>& problems) {
  const std::string base = "/programs/" + std::to_string(index);
  JsonFields f(value, base, problems);
  f.reject_unknown({"name", "comms", "nodes"});
  Program prog;
  prog.name = f.string("name").value_or("");
  if (const json* comms = f.value("comms", /*required=*/false)) {
    if (!comms->is_array()) {
      f.problem("comms", "expected an array of role names, got " + describe_json(*comms));
    } else {
      for (std::size_t i = 0; i < comms->size(); ++i) {
        const json& role = (*comms)[i];
        if (!role.is_string()) {
          f.problem("comms/" + std::to_string(i), "expected a string, got " + describe_json(role));
        }
        prog.comms.push_back(role.is_string() ? role.get<std::string>() : "");
      }
    }
  }
  std::vector<FileNode> nodes;
  if (const json* list = f.value("nodes")) {
    if (!list->is_array()) {
      f.problem("nodes", "expected an array of nodes, got " + describe_json(*list));
    } else {
      for (std::size_t i = 0; i < list->size(); ++i) {
        nodes.push_back(
            read_node((*list)[i], base + "/nodes/" + std::to_string(i), prog, tables, problems));
      }
    }
  }
  ProgramRead out = Ordering(base, prog.name, nodes, problems).run();
  out.program.name = prog.name;
  out.program.comms = prog.comms;
  return out;
}

}  // namespace dtsim::sim::graph_internal
