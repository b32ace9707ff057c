// Reads execution graphs from their JSON files (format in sim/graph/GRAPH.md) and checks them
// completely: what the file says, then validate_execution_graph() (sim/graph/graph_validate.h).
//
//   const ExecutionGraph graph = read_execution_graph("pipeline.json");  // or throws GraphError
#ifndef DTSIM_SIM_GRAPH_GRAPH_READER_H_
#define DTSIM_SIM_GRAPH_GRAPH_READER_H_

#include <string>

#include <nlohmann/json.hpp>

#include "sim/graph/execution_graph.h"

namespace dtsim::sim {

// Reads and validates the graph at `path`. Nodes may be listed in any order with their deps by
// id: each program comes back in a topological order, stable in file order. Throws GraphError
// whose what() lists every problem found, one per line, each "<path>: <JSON pointer>: <message>"
// (the pointers name the file's values, whatever order the nodes come back in); a missing file,
// a directory or malformed JSON give one line. The result is valid.
[[nodiscard]] ExecutionGraph read_execution_graph(const std::string& path);

// As read_execution_graph, from an already parsed document; `file` only labels the messages.
[[nodiscard]] ExecutionGraph parse_execution_graph(const nlohmann::json& doc,
                                                   const std::string& file);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_GRAPH_GRAPH_READER_H_
