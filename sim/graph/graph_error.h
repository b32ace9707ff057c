// The exception type of execution-graph files (sim/graph/GRAPH.md): a graph that cannot be read,
// is not valid, or cannot be written.
#ifndef DTSIM_SIM_GRAPH_GRAPH_ERROR_H_
#define DTSIM_SIM_GRAPH_GRAPH_ERROR_H_

#include <stdexcept>

namespace dtsim::sim {

// what() lists every problem found, one per line, each starting with the file and the JSON
// pointer of the offending value, e.g.
// "g.json: /programs/0/nodes/5/duration_sec: expected a finite number >= 0, got -1".
class GraphError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_GRAPH_GRAPH_ERROR_H_
