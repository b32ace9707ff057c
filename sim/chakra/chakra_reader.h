// Reads a Chakra execution trace (MLCommons Chakra ET, what ASTRA-sim reads: one protobuf file per
// rank, PREFIX.<rank>.et) into an execution graph (sim/graph/execution_graph.h) that dtsim
// replays. workloads/CHAKRA.md says what is read, what each node becomes and what is reported.
//
//   const ChakraImport trace = read_chakra_trace("traces/all_reduce", 8);  // or ChakraError
//   for (const auto& w : trace.warnings) std::cerr << w << "\n";
#ifndef DTSIM_SIM_CHAKRA_CHAKRA_READER_H_
#define DTSIM_SIM_CHAKRA_CHAKRA_READER_H_

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/graph/execution_graph.h"

namespace dtsim::sim {

// What the reader found, for the report: nodes by what they became, and what it did not use.
struct ChakraStats {
  std::string prefix;
  int ranks = 0;
  std::int64_t nodes = 0;               // Node messages read, over all ranks
  std::int64_t compute_nodes = 0;       // COMP_NODE: compute nodes
  std::int64_t collective_nodes = 0;    // COMM_COLL_NODE: collectives
  std::int64_t send_nodes = 0;          // COMM_SEND_NODE
  std::int64_t recv_nodes = 0;          // COMM_RECV_NODE
  std::int64_t memory_nodes = 0;        // MEM_LOAD_NODE, MEM_STORE_NODE: no-ops (deps pass through)
  std::int64_t metadata_nodes = 0;      // METADATA_NODE: no-ops
  std::int64_t unknown_type_nodes = 0;  // any other type: no-ops, each reported
  std::int64_t unknown_attributes = 0;  // attributes the reader does not use, each reported
  std::int64_t unknown_fields = 0;      // protobuf fields outside the schema, each reported
  // Compute nodes whose duration_micros is 0 (traces with only num_ops or tensor sizes).
  std::int64_t compute_without_duration = 0;
  // Compute nodes with is_cpu_op true: on the one compute stream, in series with the rest.
  std::int64_t cpu_compute_nodes = 0;
  std::int64_t programs = 0;  // distinct programs after ranks with equal ones share one

  bool operator==(const ChakraStats&) const = default;
};

struct ChakraImport {
  ExecutionGraph graph;  // valid (validate_execution_graph is empty)
  ChakraStats stats;
  // What was not used, one line per kind of problem with its count and the first nodes it was
  // found at, e.g. "t.0.et: node 7: attribute \"num_ops\" not used (3 nodes: t.0.et nodes 7, 9,
  // t.1.et node 7)". Sorted, deterministic.
  std::vector<std::string> warnings;
};

// Reads PREFIX.0.et ... PREFIX.<ranks-1>.et. With ranks == 0, reads PREFIX.0.et, PREFIX.1.et, ...
// up to the first file that does not exist. Throws ChakraError listing every problem (each
// "<file>: byte <offset>: ..." or "<file>: node <id>: ..."): a missing or malformed file,
// PREFIX.<ranks>.et existing (more ranks than asked for), a node id used twice, a dependency on
// an id the file lacks, a cycle, a collective without comm_type or comm_size, a comm_type or peer
// dtsim cannot replay, and what validate_execution_graph() finds across ranks (members of a
// process group that disagree about a collective, a send without its receive, a deadlock).
[[nodiscard]] ChakraImport read_chakra_trace(const std::string& prefix, int ranks);

// The report's "chakra" object: the prefix, the counts of ChakraStats and the warnings.
[[nodiscard]] nlohmann::ordered_json chakra_import_json(const ChakraImport& trace);

// "PREFIX.<rank>.et".
[[nodiscard]] std::string chakra_rank_path(const std::string& prefix, int rank);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_CHAKRA_CHAKRA_READER_H_
