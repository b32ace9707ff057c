#include "sim/chakra/chakra_nodes.h"

#include <cmath>
#include <limits>
#include <optional>
#include <set>

#include "workloads/trace.h"

#include <google/protobuf/unknown_field_set.h>

namespace dtsim::sim {
namespace {

using chakra_et::AttributeProto;

constexpr std::size_t kWarningPlaces = 3;  // places listed per kind of warning

// The integer value of `a`, whatever integer type it was written with; nothing for another
// type or a uint64 beyond int64.
std::optional<std::int64_t> int_value(const AttributeProto& a) {
  switch (a.value_case()) {
    case AttributeProto::kInt32Val:
      return a.int32_val();
    case AttributeProto::kInt64Val:
      return a.int64_val();
    case AttributeProto::kUint32Val:
      return a.uint32_val();
    case AttributeProto::kSint32Val:
      return a.sint32_val();
    case AttributeProto::kSint64Val:
      return a.sint64_val();
    case AttributeProto::kUint64Val:
      if (a.uint64_val() <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
        return static_cast<std::int64_t>(a.uint64_val());
      }
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

std::optional<double> double_value(const AttributeProto& a) {
  if (a.value_case() == AttributeProto::kDoubleVal) {
    return a.double_val();
  }
  if (a.value_case() == AttributeProto::kFloatVal) {
    return a.float_val();
  }
  if (const auto i = int_value(a)) {
    return static_cast<double>(*i);
  }
  return std::nullopt;
}

// What each comm_type becomes; nothing for those dtsim cannot replay.
std::optional<CollectiveOp> op_of(std::int64_t comm_type) {
  switch (comm_type) {
    case chakra_et::ALL_REDUCE:
    case chakra_et::BARRIER:  // an all-reduce of comm_size (default 0) bytes, as NCCL's barrier
      return CollectiveOp::kAllReduce;
    case chakra_et::REDUCE:
      return CollectiveOp::kReduce;
    case chakra_et::ALL_GATHER:
      return CollectiveOp::kAllGather;
    case chakra_et::BROADCAST:
      return CollectiveOp::kBroadcast;
    case chakra_et::ALL_TO_ALL:
      return CollectiveOp::kAllToAll;
    case chakra_et::REDUCE_SCATTER:
      return CollectiveOp::kReduceScatter;
    default:
      return std::nullopt;
  }
}

std::string comm_type_name(std::int64_t comm_type) {
  if (comm_type >= 0 && comm_type <= std::numeric_limits<int>::max() &&
      chakra_et::CollectiveCommType_IsValid(static_cast<int>(comm_type))) {
    return chakra_et::CollectiveCommType_Name(
        static_cast<chakra_et::CollectiveCommType>(comm_type));
  }
  return "unknown";
}

// Reads one node's attributes into `d`; `seen` collects the names of those it read.
class AttributeReader {
 public:
  AttributeReader(const chakra_et::Node& node, std::string where, ChakraLog& log)
      : where_(std::move(where)), log_(log) {
    for (const AttributeProto& a : node.attr()) {
      if (by_name_.count(a.name()) != 0) {
        log_.error(where_ + ": attribute \"" + a.name() + "\" given twice");
      }
      by_name_.emplace(a.name(), &a);
    }
  }

  // Counts `name` as read, without its value (is_cpu_op: dtsim runs every node on its stream).
  void mark_used(const std::string& name) { used_.insert(name); }

  [[nodiscard]] const AttributeProto* find(const std::string& name) {
    const auto it = by_name_.find(name);
    if (it == by_name_.end()) {
      return nullptr;
    }
    used_.insert(name);
    return it->second;
  }

  // The integer attribute `name`: `fallback` if absent; `fallback` and an error if not an
  // integer or outside [lo, hi].
  std::int64_t integer(const std::string& name, std::int64_t fallback, std::int64_t lo,
                       std::int64_t hi, bool required = false) {
    const AttributeProto* a = find(name);
    if (a == nullptr) {
      if (required) {
        log_.error(where_ + ": no " + name + " attribute");
      }
      return fallback;
    }
    const auto v = int_value(*a);
    if (!v || *v < lo || *v > hi) {
      log_.error(where_ + ": attribute " + name + ": expected an integer from " +
                 std::to_string(lo) + " to " + std::to_string(hi));
      return fallback;
    }
    return *v;
  }

  std::string text(const std::string& name) {
    const AttributeProto* a = find(name);
    if (a == nullptr) {
      return {};
    }
    if (a->value_case() != AttributeProto::kStringVal) {
      log_.error(where_ + ": attribute " + name + ": expected a string_val");
      return {};
    }
    return a->string_val();
  }

  // Reports every attribute nobody read as not used by a node of `kind`.
  void report_unused(const std::string& kind, ChakraStats& stats) {
    for (const auto& [name, a] : by_name_) {
      if (used_.count(name) == 0) {
        ++stats.unknown_attributes;
        log_.warn("attribute \"" + name + "\" not used on a " + kind + " node", where_);
      }
    }
  }

 private:
  std::string where_;
  ChakraLog& log_;
  std::map<std::string, const AttributeProto*> by_name_;
  std::set<std::string> used_;
};

void read_tags(AttributeReader& attrs, DecodedNode& d, const std::string& where, ChakraLog& log) {
  constexpr std::int64_t kMaxInt = std::numeric_limits<std::int32_t>::max();
  const std::string phase = attrs.text(kAttrPhase);
  if (!phase.empty() && !parse_phase(phase, d.node.phase)) {
    log.error(where + ": attribute " + kAttrPhase + ": unknown phase \"" + phase + "\"");
  }
  d.node.iteration = static_cast<std::int32_t>(attrs.integer(kAttrIteration, 0, 0, kMaxInt));
  d.node.micro_batch = static_cast<std::int32_t>(attrs.integer(kAttrMicroBatch, 0, 0, kMaxInt));
  d.node.priority = static_cast<std::int32_t>(
      attrs.integer(kAttrPriority, 0, std::numeric_limits<std::int32_t>::min(), kMaxInt));
  d.layer = attrs.text(kAttrLayer);
  d.last_layer = attrs.text(kAttrLastLayer);
  d.op_class = attrs.text(kAttrOpClass);
  d.label = attrs.text(kAttrLabel);
  if (d.node.kind != NodeKind::kCompute) {
    d.role = attrs.text(kAttrRole);
  }
  if (d.node.kind == NodeKind::kCollective) {
    d.algorithm = attrs.text(kAttrAlgorithm);
  }
}

void read_compute(const chakra_et::Node& n, AttributeReader& attrs, DecodedNode& d,
                  ChakraStats& stats, const std::string& where, ChakraLog& log) {
  ++stats.compute_nodes;
  d.node.kind = NodeKind::kCompute;
  d.node.duration_sec = static_cast<double>(n.duration_micros()) * 1e-6;
  if (const AttributeProto* exact = attrs.find(kAttrDurationSec)) {
    const auto v = double_value(*exact);
    if (!v || !std::isfinite(*v) || *v < 0) {
      log.error(where + ": attribute " + kAttrDurationSec + ": expected a number >= 0");
    } else {
      d.node.duration_sec = *v;
    }
  } else if (n.duration_micros() == 0) {
    ++stats.compute_without_duration;
    log.warn("compute node without duration_micros: takes 0 s", where);
  }
  // Every compute node runs on its rank's one compute stream; a CPU operator there runs in series
  // with the GPU's kernels, where a real run overlaps them: reported.
  if (const AttributeProto* cpu = attrs.find("is_cpu_op");
      cpu != nullptr && cpu->value_case() == AttributeProto::kBoolVal && cpu->bool_val()) {
    ++stats.cpu_compute_nodes;
    log.warn(
        "compute node with is_cpu_op true: runs on the rank's compute stream, in series "
        "with its other compute nodes",
        where);
  }
}

void read_collective(AttributeReader& attrs, DecodedNode& d, ChakraStats& stats,
                     const std::string& where, ChakraLog& log) {
  ++stats.collective_nodes;
  d.node.kind = NodeKind::kCollective;
  const std::int64_t type =
      attrs.integer("comm_type", 0, 0, std::numeric_limits<std::int32_t>::max(), true);
  const auto op = op_of(type);
  if (!op) {
    log.error(where + ": comm_type " + std::to_string(type) + " (" + comm_type_name(type) +
              "): dtsim has no such collective (it replays ALL_REDUCE, REDUCE, ALL_GATHER, "
              "BROADCAST, ALL_TO_ALL, REDUCE_SCATTER and BARRIER)");
  } else {
    d.node.op = *op;
  }
  const bool barrier = type == chakra_et::BARRIER;
  d.node.bytes = static_cast<std::uint64_t>(
      attrs.integer("comm_size", 0, 0, static_cast<std::int64_t>(workloads::kMaxBytes), !barrier));
  if (d.node.op == CollectiveOp::kBroadcast || d.node.op == CollectiveOp::kReduce) {
    d.node.root = static_cast<std::int32_t>(
        attrs.integer(kAttrRoot, 0, 0, std::numeric_limits<std::int32_t>::max()));
  }
  d.pg = attrs.text("pg_name");
  attrs.mark_used("is_cpu_op");
  if (const AttributeProto* dims = attrs.find("involved_dim")) {
    bool all = dims->value_case() == AttributeProto::kBoolList;
    for (const bool in : dims->bool_list().values()) {
      all = all && in;
    }
    if (!all) {
      ++stats.unknown_attributes;
      log.warn("involved_dim not used: the collective runs on its whole process group", where);
    }
  }
}

void read_point_to_point(AttributeReader& attrs, DecodedNode& d, int ranks, bool send,
                         ChakraStats& stats) {
  ++(send ? stats.send_nodes : stats.recv_nodes);
  d.node.kind = send ? NodeKind::kSend : NodeKind::kRecv;
  d.peer = static_cast<int>(attrs.integer(send ? "comm_dst" : "comm_src", -1, 0, ranks - 1, true));
  d.node.bytes = static_cast<std::uint64_t>(
      attrs.integer("comm_size", 0, 0, static_cast<std::int64_t>(workloads::kMaxBytes), true));
  d.tag = attrs.integer("comm_tag", 0, std::numeric_limits<std::int64_t>::min(),
                        std::numeric_limits<std::int64_t>::max());
  d.pg = attrs.text("pg_name");
  attrs.mark_used("is_cpu_op");
}

}  // namespace

int chakra_comm_type(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::kAllReduce:
      return chakra_et::ALL_REDUCE;
    case CollectiveOp::kReduceScatter:
      return chakra_et::REDUCE_SCATTER;
    case CollectiveOp::kAllGather:
      return chakra_et::ALL_GATHER;
    case CollectiveOp::kBroadcast:
      return chakra_et::BROADCAST;
    case CollectiveOp::kReduce:
      return chakra_et::REDUCE;
    case CollectiveOp::kAllToAll:
      return chakra_et::ALL_TO_ALL;
    case CollectiveOp::kSendRecv:
      return -1;
  }
  return -1;
}

void ChakraLog::warn(const std::string& what, const std::string& where) {
  Seen& seen = warnings_[what];
  ++seen.count;
  if (seen.first.size() < kWarningPlaces) {
    seen.first.push_back(where);
  }
}

std::vector<std::string> ChakraLog::warnings() const {
  std::vector<std::string> lines;
  for (const auto& [what, seen] : warnings_) {
    std::string line = seen.first.front() + ": " + what;
    if (seen.count > 1) {
      line += " (" + std::to_string(seen.count) + " times: ";
      for (std::size_t i = 0; i < seen.first.size(); ++i) {
        line += (i == 0 ? "" : ", ") + seen.first[i];
      }
      line += seen.count > static_cast<std::int64_t>(seen.first.size()) ? ", ...)" : ")";
    }
    lines.push_back(line);
  }
  return lines;
}

std::string node_place(const ChakraFile& file, std::uint64_t id) {
  return file.path + ": node " + std::to_string(id);
}

void report_unknown_fields(const google::protobuf::Message& message, const std::string& what,
                           const std::string& where, ChakraStats& stats, ChakraLog& log) {
  const auto& unknown = message.GetReflection()->GetUnknownFields(message);
  for (int i = 0; i < unknown.field_count(); ++i) {
    ++stats.unknown_fields;
    log.warn(what + ": field " + std::to_string(unknown.field(i).number()) +
                 " is not in dtsim's Chakra schema, not used",
             where);
  }
}

DecodedNode decode_node(const ChakraFile& file, std::size_t index, int ranks, bool dtsim_written,
                        ChakraStats& stats, ChakraLog& log) {
  const chakra_et::Node& n = file.nodes[index];
  DecodedNode d{.id = n.id()};
  const std::string where = node_place(file, n.id());
  ++stats.nodes;
  d.data_deps.assign(n.data_deps().begin(), n.data_deps().end());
  d.ctrl_deps.assign(n.ctrl_deps().begin(), n.ctrl_deps().end());
  report_unknown_fields(n, "node", where, stats, log);
  for (const AttributeProto& a : n.attr()) {
    report_unknown_fields(a, "attribute \"" + a.name() + "\"", where, stats, log);
  }
  AttributeReader attrs(n, where, log);
  std::string kind;
  switch (n.type()) {
    case chakra_et::COMP_NODE:
      read_compute(n, attrs, d, stats, where, log);
      kind = "compute";
      break;
    case chakra_et::COMM_COLL_NODE:
      read_collective(attrs, d, stats, where, log);
      kind = "collective";
      break;
    case chakra_et::COMM_SEND_NODE:
    case chakra_et::COMM_RECV_NODE:
      read_point_to_point(attrs, d, ranks, n.type() == chakra_et::COMM_SEND_NODE, stats);
      kind = n.type() == chakra_et::COMM_SEND_NODE ? "send" : "recv";
      break;
    case chakra_et::MEM_LOAD_NODE:
    case chakra_et::MEM_STORE_NODE:
      ++stats.memory_nodes;  // local memory traffic: no time in dtsim's model, deps kept
      return d;
    case chakra_et::METADATA_NODE:
      ++stats.metadata_nodes;
      return d;
    default:
      ++stats.unknown_type_nodes;
      log.warn("node type " + std::to_string(static_cast<int>(n.type())) + " (" +
                   (chakra_et::NodeType_IsValid(n.type()) ? chakra_et::NodeType_Name(n.type())
                                                          : std::string("unknown")) +
                   ") not replayed: a no-op, its dependencies passed through",
               where);
      return d;
  }
  d.noop = false;
  if (dtsim_written) {
    read_tags(attrs, d, where, log);
  } else if (!n.name().empty()) {
    d.label = n.name();
  }
  attrs.report_unused(kind, stats);
  return d;
}

}  // namespace dtsim::sim
