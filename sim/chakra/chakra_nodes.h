// Decoding one Chakra node into what dtsim makes of it (internal to sim/chakra): its kind, the
// values of the attributes dtsim reads, and reports of everything else (workloads/CHAKRA.md,
// "Nodes" and "What is reported").
#ifndef DTSIM_SIM_CHAKRA_CHAKRA_NODES_H_
#define DTSIM_SIM_CHAKRA_CHAKRA_NODES_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sim/chakra/chakra_file.h"
#include "sim/chakra/chakra_reader.h"
#include "sim/graph/execution_graph.h"

namespace dtsim::sim {

// Attribute names dtsim writes and reads back (besides Chakra's own): the execution graph's tags
// and what Chakra's fields cannot hold exactly.
inline constexpr const char* kDtsimMarker = "dtsim.execution_graph";  // metadata: written by dtsim
inline constexpr const char* kDtsimCommGroup = "dtsim.comm_group:";   // metadata: + pg name
inline constexpr const char* kDtsimProgram = "dtsim.program";  // metadata: the rank's program
// Metadata: the program's roles, bound in order to the process groups the metadata lists.
inline constexpr const char* kDtsimRoles = "dtsim.roles";
inline constexpr const char* kAttrRole = "dtsim.role";  // a communication node's role
inline constexpr const char* kAttrDurationSec = "dtsim.duration_sec";
inline constexpr const char* kAttrRoot = "dtsim.root";
inline constexpr const char* kAttrPhase = "dtsim.phase";
inline constexpr const char* kAttrIteration = "dtsim.iteration";
inline constexpr const char* kAttrMicroBatch = "dtsim.micro_batch";
inline constexpr const char* kAttrLayer = "dtsim.layer";
inline constexpr const char* kAttrLastLayer = "dtsim.last_layer";
inline constexpr const char* kAttrOpClass = "dtsim.op_class";
inline constexpr const char* kAttrLabel = "dtsim.label";
inline constexpr const char* kAttrPriority = "dtsim.priority";
inline constexpr const char* kAttrAlgorithm = "dtsim.algorithm";  // a collective's own algorithm

// Chakra's comm_type of `op`, or -1 for send-recv (which Chakra has no collective for).
[[nodiscard]] int chakra_comm_type(CollectiveOp op);

// Problems (errors) and reports (warnings) of a whole trace. Warnings of one kind are merged:
// one line with their count and the first few places.
class ChakraLog {
 public:
  void error(const std::string& line) { errors_.push_back(line); }
  // `what` says the kind ("attribute \"num_ops\" not used"); `where` the place ("t.0.et node 7").
  void warn(const std::string& what, const std::string& where);
  [[nodiscard]] const std::vector<std::string>& errors() const { return errors_; }
  [[nodiscard]] std::vector<std::string> warnings() const;

 private:
  struct Seen {
    std::int64_t count = 0;
    std::vector<std::string> first;
  };
  std::vector<std::string> errors_;
  std::map<std::string, Seen> warnings_;
};

// One node of one rank's file, decoded.
struct DecodedNode {
  std::uint64_t id = 0;
  bool noop = true;      // memory, metadata and unknown types: removed, their deps passed through
  Node node;             // kind, op, phase, iteration, micro_batch, priority, root, duration, bytes
  std::string pg;        // pg_name; empty: none given
  int peer = -1;         // send: comm_dst, recv: comm_src (global ranks)
  std::int64_t tag = 0;  // comm_tag
  std::string layer, last_layer, op_class, label;  // tag names; empty: none
  std::string algorithm;                           // dtsim.algorithm; empty: the run's
  std::string role;  // dtsim.role: the program's name for its communicator; empty: none
  std::vector<std::uint64_t> data_deps, ctrl_deps;
};

// Decodes node `index` of `file` (of a trace of `ranks` ranks). `dtsim_written`: the file's
// metadata carries kDtsimMarker, so tags come from dtsim's attributes and not from the node's
// name. Counts into `stats`, logs problems and warnings into `log`.
[[nodiscard]] DecodedNode decode_node(const ChakraFile& file, std::size_t index, int ranks,
                                      bool dtsim_written, ChakraStats& stats, ChakraLog& log);

// "<file> node <id>": where a node is, for messages.
[[nodiscard]] std::string node_place(const ChakraFile& file, std::uint64_t id);

// Reports the protobuf fields of `message` outside dtsim's schema ("field 11"), as `what`.
void report_unknown_fields(const google::protobuf::Message& message, const std::string& what,
                           const std::string& where, ChakraStats& stats, ChakraLog& log);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_CHAKRA_CHAKRA_NODES_H_
