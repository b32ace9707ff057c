// Writes execution graphs in the format of sim/graph/GRAPH.md (strategies' output, what-if
// passes' results, tests).
//
//   write_execution_graph(graph, "pipeline.json");  // read_execution_graph() gives graph back
#ifndef DTSIM_SIM_GRAPH_GRAPH_WRITER_H_
#define DTSIM_SIM_GRAPH_GRAPH_WRITER_H_

#include <string>

#include <nlohmann/json.hpp>

#include "sim/graph/execution_graph.h"

namespace dtsim::sim {

// The JSON document of `graph`: keys in GRAPH.md's order, node ids their indices, default values
// left out, consecutive ranks with one program and the same bindings in one rank_range entry.
// REQUIRES: validate_execution_graph(graph) is empty (an index outside its table is a broken
// invariant: std::logic_error). parse_execution_graph() of the result equals `graph`.
[[nodiscard]] nlohmann::ordered_json execution_graph_json(const ExecutionGraph& graph);

// The file text of `graph`: execution_graph_json() with one communicator, node and rank entry per
// line, ending in a newline. Equal graphs give the same bytes.
[[nodiscard]] std::string execution_graph_text(const ExecutionGraph& graph);

// Writes execution_graph_text(graph) to `path`, through a temporary file in the same directory
// renamed over `path`, so that a failed write leaves no partial file. Throws GraphError
// ("<path>: cannot write execution graph (<reason>)") if it cannot. REQUIRES: as
// execution_graph_json.
void write_execution_graph(const ExecutionGraph& graph, const std::string& path);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_GRAPH_GRAPH_WRITER_H_
