// Writes execution graphs as Chakra execution traces (one protobuf file per rank,
// PREFIX.<rank>.et, what ASTRA-sim reads), and ASTRA-sim-style collective microbenchmarks.
// workloads/CHAKRA.md, "Writing", says what each node becomes.
//
//   write_chakra_trace(graph, "out/gpt");  // out/gpt.0.et ...; read_chakra_trace reads it back
//   write_chakra_microbenchmark({.op = CollectiveOp::kAllReduce, .ranks = 64, .bytes = 1 << 20},
//                               "mb/all_reduce");
#ifndef DTSIM_SIM_CHAKRA_CHAKRA_WRITER_H_
#define DTSIM_SIM_CHAKRA_CHAKRA_WRITER_H_

#include <cstdint>
#include <string>

#include "sim/graph/execution_graph.h"

namespace dtsim::sim {

// The bytes of global rank `rank`'s file of `graph`: the metadata (marked as dtsim's, with the
// ranks of every communicator the rank uses), then one node per node of its program, ids their
// positions. read_chakra_trace of all ranks' files gives back the same graph: every rank the same
// nodes in the same order with the same tags, communicators and dependencies (its programs and
// tables may be numbered otherwise). REQUIRES: validate_execution_graph(graph) is empty. Throws
// ChakraError for a send-recv collective, which Chakra has no comm_type for.
[[nodiscard]] std::string chakra_rank_file(const ExecutionGraph& graph, int rank);

// Writes chakra_rank_file(graph, r) to PREFIX.<r>.et for every rank r, each file whole or not at
// all. Throws ChakraError "<file>: cannot write Chakra execution trace (<reason>)".
void write_chakra_trace(const ExecutionGraph& graph, const std::string& prefix);

// One collective on every rank, as ASTRA-sim's microbenchmark generator writes them.
struct ChakraMicrobenchmark {
  CollectiveOp op = CollectiveOp::kAllReduce;  // any but send-recv
  int ranks = 8;
  std::uint64_t bytes = 1 << 20;  // comm_size, nccl-tests' size (collective_algorithm.h)
};

// The node name of the shipped files: "all_reduce_8npus_1MB" (the size in the largest of GB, MB,
// KB, each 1024 of the next, that divides it, else in B).
[[nodiscard]] std::string microbenchmark_name(const ChakraMicrobenchmark& benchmark);

// Rank `rank`'s file: metadata version "0.0.4", then one COMM_COLL_NODE with id `rank`, that
// name, and the attributes is_cpu_op (false), comm_type and comm_size, in that order.
[[nodiscard]] std::string microbenchmark_rank_file(const ChakraMicrobenchmark& benchmark, int rank);

// Writes every rank's file to PREFIX.<rank>.et. Throws ChakraError as write_chakra_trace, and for
// a send-recv op or ranks outside 1 .. 2^24.
void write_chakra_microbenchmark(const ChakraMicrobenchmark& benchmark, const std::string& prefix);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_CHAKRA_CHAKRA_WRITER_H_
