// The execution graph: what every rank of a training job does, independent of how it is
// simulated. Strategies (data parallelism first) build it, the graph reader reads it from a file
// (sim/graph/GRAPH.md), what-if passes rewrite it, and lowering (sim/lowering/lowering.h) turns
// it into the task graph that SimGrid replays. A plain value: no SimGrid, no strategy.
//
// Shape. Ranks run *programs*: a program is a list of nodes in issue order with dependencies
// between them. Ranks that do the same thing share one program (every data-parallel replica, or
// every replica of a pipeline stage), so a graph of 16,384 ranks holds one program, not 16,384
// copies. A program names the communicator *roles* its communication nodes use ("dp", "tp",
// "pp"); each rank binds every role to a concrete communicator, a list of global ranks. A rank
// is local rank i of a communicator when it is ranks[i] there.
//
// Semantics (what lowering guarantees and the validator checks):
//  - A rank's compute nodes run one after another, in program order, on its compute stream.
//  - Its collectives, sends and receives on one communicator run in program order on that
//    communicator's stream; different communicators' streams run concurrently (NCCL: one stream
//    per communicator), and so do the compute stream and the communication streams.
//  - `deps` add orderings between a rank's own nodes, across streams (a gradient all-reduce
//    waits for the backward node that produced its bucket). Ranks interact only through
//    communication nodes.
//  - The k-th collective of every member on a communicator is the same collective: same op,
//    bytes and root. It starts on a member once that member's dependencies and its stream allow;
//    the algorithm decides which transfers wait for which members.
//  - The k-th send from local rank a to local rank b on a communicator matches the k-th receive
//    at b from a, with the same bytes: one transfer that starts once both are issued.
#ifndef DTSIM_SIM_GRAPH_EXECUTION_GRAPH_H_
#define DTSIM_SIM_GRAPH_EXECUTION_GRAPH_H_

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/collectives/collective_algorithm.h"

namespace dtsim::sim {

enum class NodeKind : std::uint8_t { kCompute, kCollective, kSend, kRecv };

// What part of a training step a node belongs to.
enum class Phase : std::uint8_t { kForward, kBackward, kOptimizer, kRecompute, kOther };

// "compute", "collective", "send", "recv"; "forward", "backward", "optimizer", "recompute",
// "other". The parse functions return false for other names.
[[nodiscard]] std::string_view node_kind_name(NodeKind kind);
[[nodiscard]] std::string_view phase_name(Phase phase);
[[nodiscard]] bool parse_node_kind(std::string_view name, NodeKind& kind);
[[nodiscard]] bool parse_phase(std::string_view name, Phase& phase);

// One node of a program. Tags (iteration, micro_batch, phase, layer, op_class, label) say what
// the node is; reports, the timeline and what-if passes select nodes by them.
struct Node {
  NodeKind kind = NodeKind::kCompute;
  Phase phase = Phase::kOther;
  CollectiveOp op = CollectiveOp::kAllReduce;  // collective
  std::int32_t iteration = 0;                  // training step, from 0
  std::int32_t micro_batch = 0;                // within the step, from 0
  // Index into ExecutionGraph::layers, or -1. A collective over a range of layers' gradients
  // (a bucket) has its first layer here and its last in last_layer (forward order).
  std::int32_t layer = -1;
  std::int32_t last_layer = -1;
  std::int32_t op_class = -1;  // index into ExecutionGraph::op_classes (e.g. "gemm"), or -1
  std::int32_t label = -1;     // index into ExecutionGraph::labels (e.g. "bucket 3"), or -1
  // Collective: index into ExecutionGraph::algorithms (e.g. "tree"), or -1: the run's --algorithm.
  std::int32_t algorithm = -1;
  std::int32_t comm = -1;  // collective, send, recv: index into the program's comm roles
  std::int32_t peer = -1;  // send: the receiver, recv: the sender, as local ranks of comm
  std::int32_t root = 0;   // broadcast, reduce: the root's local rank
  // Lower runs first where a stream can pick among ready nodes (sim/whatif/priority.h: a
  // queue per priority, each in issue order; all 0 is issue order).
  std::int32_t priority = 0;
  double duration_sec = 0;  // compute: on a healthy device (a slow GPU scales it when lowered)
  // Collective: nccl-tests' size (collective_algorithm.h); send, recv: the message.
  std::uint64_t bytes = 0;
  std::int32_t dep_begin = 0;  // Program::deps[dep_begin, dep_end): earlier nodes it waits for
  std::int32_t dep_end = 0;

  bool operator==(const Node&) const = default;
};

struct Program {
  std::string name;
  std::vector<std::string> comms;  // communicator roles, indexed by Node::comm
  std::vector<Node> nodes;         // issue order; deps point to earlier nodes
  std::vector<std::int32_t> deps;

  [[nodiscard]] std::span<const std::int32_t> deps_of(const Node& node) const {
    return {deps.data() + node.dep_begin, deps.data() + node.dep_end};
  }
  // Appends `node` with dependencies `on` and returns its index. REQUIRES: every index in `on`
  // is below nodes.size(). (dep_begin and dep_end of `node` are overwritten.)
  std::int32_t add(Node node, std::span<const std::int32_t> on);
  std::int32_t add(Node node, std::initializer_list<std::int32_t> on = {}) {
    return add(node, std::span<const std::int32_t>(on.begin(), on.size()));
  }

  bool operator==(const Program&) const = default;
};

struct Communicator {
  std::string name;        // unique in the graph, e.g. "dp" or "tp.3"
  std::vector<int> ranks;  // global ranks; ranks[i] is local rank i

  bool operator==(const Communicator&) const = default;
};

// What global rank r runs: programs[program], with role i bound to communicators[comms[i]].
struct RankProgram {
  std::int32_t program = 0;
  std::vector<std::int32_t> comms;

  bool operator==(const RankProgram&) const = default;
};

struct ExecutionGraph {
  std::vector<std::string> layers;      // layer names, indexed by Node::layer
  std::vector<std::string> op_classes;  // indexed by Node::op_class
  std::vector<std::string> labels;      // indexed by Node::label
  std::vector<std::string> algorithms;  // indexed by Node::algorithm (a --algorithm value)
  std::vector<Communicator> communicators;
  std::vector<Program> programs;
  std::vector<RankProgram> ranks;  // indexed by global rank

  [[nodiscard]] int rank_count() const { return static_cast<int>(ranks.size()); }
  [[nodiscard]] const Program& program_of(int rank) const {
    return programs[static_cast<std::size_t>(ranks[static_cast<std::size_t>(rank)].program)];
  }
  // The communicator a node of `rank`'s program runs on. REQUIRES: node.comm >= 0.
  [[nodiscard]] const Communicator& communicator_of(int rank, const Node& node) const;
  // Index of `name` in `table`, appended if absent (for layers, op_classes, labels and
  // algorithms).
  static std::int32_t intern(std::vector<std::string>& table, const std::string& name);

  bool operator==(const ExecutionGraph&) const = default;
};

// Global rank -> local rank in every communicator of a graph, in O(log members) a lookup.
class LocalRanks {
 public:
  explicit LocalRanks(const ExecutionGraph& graph);
  // The local rank of `rank` in communicators[comm] (its first, if listed twice), or -1.
  [[nodiscard]] int of(std::int32_t comm, int rank) const;
  // The ranks communicators[comm] lists more than once, ascending.
  [[nodiscard]] std::vector<int> repeated(std::int32_t comm) const;

 private:
  std::vector<std::vector<std::pair<int, int>>> sorted_;  // per communicator: (rank, local)
};

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_GRAPH_EXECUTION_GRAPH_H_
