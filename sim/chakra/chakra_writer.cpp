#include "sim/chakra/chakra_writer.h"

#include <cmath>
#include <map>

#include "sim/chakra/chakra_error.h"
#include "sim/chakra/chakra_file.h"
#include "sim/chakra/chakra_nodes.h"
#include "sim/chakra/chakra_reader.h"

namespace dtsim::sim {
namespace {

using chakra_et::AttributeProto;

AttributeProto* add_attr(chakra_et::Node& node, const std::string& name) {
  AttributeProto* a = node.add_attr();
  a->set_name(name);
  return a;
}

void add_int(chakra_et::Node& node, const std::string& name, std::int64_t value) {
  add_attr(node, name)->set_int64_val(value);
}

void add_text(chakra_et::Node& node, const std::string& name, const std::string& value) {
  add_attr(node, name)->set_string_val(value);
}

void add_tags(const ExecutionGraph& graph, const Node& n, chakra_et::Node& out) {
  const auto name = [](const std::vector<std::string>& table, std::int32_t i) {
    return table[static_cast<std::size_t>(i)];
  };
  if (n.phase != Phase::kOther) {
    add_text(out, kAttrPhase, std::string(phase_name(n.phase)));
  }
  if (n.iteration != 0) {
    add_int(out, kAttrIteration, n.iteration);
  }
  if (n.micro_batch != 0) {
    add_int(out, kAttrMicroBatch, n.micro_batch);
  }
  if (n.layer >= 0) {
    add_text(out, kAttrLayer, name(graph.layers, n.layer));
  }
  if (n.last_layer >= 0) {
    add_text(out, kAttrLastLayer, name(graph.layers, n.last_layer));
  }
  if (n.op_class >= 0) {
    add_text(out, kAttrOpClass, name(graph.op_classes, n.op_class));
  }
  if (n.label >= 0) {
    add_text(out, kAttrLabel, name(graph.labels, n.label));
  }
  if (n.priority != 0) {
    add_int(out, kAttrPriority, n.priority);
  }
  if (n.algorithm >= 0) {
    add_text(out, kAttrAlgorithm, name(graph.algorithms, n.algorithm));
  }
}

std::string node_name(const ExecutionGraph& graph, const Node& n) {
  if (n.label >= 0) {
    return graph.labels[static_cast<std::size_t>(n.label)];
  }
  if (n.layer >= 0) {
    return graph.layers[static_cast<std::size_t>(n.layer)] + " " + std::string(phase_name(n.phase));
  }
  return n.kind == NodeKind::kCollective ? std::string(op_name(n.op))
                                         : std::string(node_kind_name(n.kind));
}

// The trace's global metadata: dtsim's marker, the program, its roles and the communicators
// the rank is bound to.
chakra_et::GlobalMetadata rank_metadata(const ExecutionGraph& graph, int rank) {
  const Program& program = graph.program_of(rank);
  chakra_et::GlobalMetadata metadata;
  metadata.set_version("0.0.4");
  metadata.add_attr()->set_name(kDtsimMarker);
  metadata.mutable_attr(0)->set_int64_val(1);
  metadata.add_attr()->set_name(kDtsimProgram);
  metadata.mutable_attr(1)->set_string_val(program.name);
  AttributeProto* roles = metadata.add_attr();
  roles->set_name(kDtsimRoles);
  roles->mutable_string_list();  // set even when empty (a program without communication)
  for (const std::string& role : program.comms) {
    roles->mutable_string_list()->add_values(role);
  }
  for (const std::int32_t c : graph.ranks[static_cast<std::size_t>(rank)].comms) {
    const Communicator& communicator = graph.communicators[static_cast<std::size_t>(c)];
    AttributeProto* a = metadata.add_attr();
    a->set_name(kDtsimCommGroup + communicator.name);
    for (const int r : communicator.ranks) {
      a->mutable_int64_list()->add_values(r);
    }
  }
  return metadata;
}

// Messages per (role, peer): a send's and its receive's ordinals on their communicator.
using MessageCounts = std::map<std::pair<std::int32_t, std::int32_t>, std::int64_t>;

// The type and the attributes of `node` that the kind of `n`, node `i` of `rank`'s program, gives.
void set_kind(const ExecutionGraph& graph, int rank, std::size_t i, const Node& n,
              MessageCounts& sent, MessageCounts& received, chakra_et::Node& node) {
  const RankProgram& binding = graph.ranks[static_cast<std::size_t>(rank)];
  switch (n.kind) {
    case NodeKind::kCompute:
      node.set_type(chakra_et::COMP_NODE);
      node.set_duration_micros(static_cast<std::uint64_t>(std::llround(n.duration_sec * 1e6)));
      add_attr(node, kAttrDurationSec)->set_double_val(n.duration_sec);
      return;
    case NodeKind::kCollective: {
      const int type = chakra_comm_type(n.op);
      if (type < 0) {
        throw ChakraError("rank " + std::to_string(rank) + ": node " + std::to_string(i) +
                          ": a send-recv collective has no Chakra comm_type");
      }
      node.set_type(chakra_et::COMM_COLL_NODE);
      add_int(node, "comm_type", type);
      add_int(node, "comm_size", static_cast<std::int64_t>(n.bytes));
      add_text(node, "pg_name", graph.communicator_of(rank, n).name);
      if (n.op == CollectiveOp::kBroadcast || n.op == CollectiveOp::kReduce) {
        add_int(node, kAttrRoot, n.root);
      }
      return;
    }
    case NodeKind::kSend:
    case NodeKind::kRecv: {
      const bool send = n.kind == NodeKind::kSend;
      const Communicator& c = graph.communicator_of(rank, n);
      node.set_type(send ? chakra_et::COMM_SEND_NODE : chakra_et::COMM_RECV_NODE);
      add_int(node, send ? "comm_dst" : "comm_src", c.ranks[static_cast<std::size_t>(n.peer)]);
      add_int(node, "comm_size", static_cast<std::int64_t>(n.bytes));
      // Unique per (sender, receiver): the communicator and the message's ordinal on it.
      std::int64_t& ordinal = (send ? sent : received)[{n.comm, n.peer}];
      const std::int64_t c_index = binding.comms[static_cast<std::size_t>(n.comm)];
      add_int(node, "comm_tag", (c_index << 32) + ordinal++);
      add_text(node, "pg_name", c.name);
      return;
    }
  }
}

}  // namespace

std::string chakra_rank_file(const ExecutionGraph& graph, int rank) {
  const Program& program = graph.program_of(rank);
  std::string out;
  append_delimited(rank_metadata(graph, rank), out);
  std::map<std::int32_t, std::int32_t> previous;  // the previous node of each stream (-1: compute)
  MessageCounts sent, received;
  for (std::size_t i = 0; i < program.nodes.size(); ++i) {
    const Node& n = program.nodes[i];
    chakra_et::Node node;
    node.set_id(i);
    node.set_name(node_name(graph, n));
    const auto deps = program.deps_of(n);
    for (const std::int32_t d : deps) {
      node.add_data_deps(static_cast<std::uint64_t>(d));
    }
    const std::int32_t stream = n.kind == NodeKind::kCompute ? -1 : n.comm;
    if (const auto it = previous.find(stream);
        it != previous.end() && std::find(deps.begin(), deps.end(), it->second) == deps.end()) {
      node.add_ctrl_deps(static_cast<std::uint64_t>(it->second));  // the stream's order
    }
    previous[stream] = static_cast<std::int32_t>(i);
    add_attr(node, "is_cpu_op")->set_bool_val(false);
    set_kind(graph, rank, i, n, sent, received, node);
    if (n.kind != NodeKind::kCompute) {
      add_text(node, kAttrRole, program.comms[static_cast<std::size_t>(n.comm)]);
    }
    add_tags(graph, n, node);
    append_delimited(node, out);
  }
  return out;
}

void write_chakra_trace(const ExecutionGraph& graph, const std::string& prefix) {
  write_rank_files(prefix, graph.rank_count(),
                   [&](int rank) { return chakra_rank_file(graph, rank); });
}

}  // namespace dtsim::sim
