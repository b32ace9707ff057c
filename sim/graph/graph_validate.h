// Checks an ExecutionGraph (sim/graph/execution_graph.h) completely, before anything lowers it:
// tables, communicators and every rank's bindings, the values of every node, that the members of
// each communicator agree on their collectives and on their sends and receives, and that no rank
// can deadlock waiting for another through communication. sim/graph/GRAPH.md lists the rules.
//
//   for (const std::string& p : validate_execution_graph(graph)) std::cerr << p << "\n";
#ifndef DTSIM_SIM_GRAPH_GRAPH_VALIDATE_H_
#define DTSIM_SIM_GRAPH_GRAPH_VALIDATE_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sim/graph/execution_graph.h"

namespace dtsim::sim {

// The most ranks a graph may have: 2^24. It bounds what a file's rank ranges can make dtsim
// allocate.
inline constexpr int kMaxGraphRanks = 1 << 24;

// Where the parts of a graph are, for messages: JSON pointers into its file form (GRAPH.md).
struct GraphLocator {
  // Node `node` of programs[program]. Unset: "/programs/<program>/nodes/<node>".
  std::function<std::string(std::int32_t program, std::int32_t node)> node;
  // What places global rank `rank`. Unset: "/ranks/<rank>".
  std::function<std::string(int rank)> rank;
};

struct ValidateOptions {
  GraphLocator locator;
  // Also the checks that span ranks: members of a communicator agree on their collectives, every
  // send has its receive, roots and peers lie inside the communicators, and no deadlock. They run
  // only on a graph whose indices are all sound.
  bool across_ranks = true;
};

// Every problem of `graph`, each "<JSON pointer>: <message>" (the pointer of the value at fault in
// the file form, e.g. "/programs/0/nodes/5/bytes", "/communicators/2", "/ranks/7"), in a
// deterministic order: tables, communicators, programs and their nodes, ranks, then what spans
// ranks. Empty: the graph is valid, and lowering may rely on every rule of execution_graph.h.
// Never reads out of bounds, whatever `graph` holds. The deadlock check runs only once the
// members of every communicator agree.
[[nodiscard]] std::vector<std::string> validate_execution_graph(const ExecutionGraph& graph);
[[nodiscard]] std::vector<std::string> validate_execution_graph(const ExecutionGraph& graph,
                                                                const ValidateOptions& options);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_GRAPH_GRAPH_VALIDATE_H_
