// The exception type of Chakra execution traces (workloads/CHAKRA.md): a file that cannot be
// read, does not parse, or describes a graph dtsim cannot replay; or a trace that cannot be
// written.
#ifndef DTSIM_SIM_CHAKRA_CHAKRA_ERROR_H_
#define DTSIM_SIM_CHAKRA_CHAKRA_ERROR_H_

#include "sim/graph/graph_error.h"

namespace dtsim::sim {

// what() lists every problem found, one per line, each starting with the file and where in it:
// "t.3.et: byte 81: truncated message (length 72, 2 bytes left)", "t.0.et: node 5: ...".
// A GraphError, since a Chakra trace is one form of an execution graph: the command line reports
// both alike (exit code 2).
class ChakraError : public GraphError {
 public:
  using GraphError::GraphError;
};

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_CHAKRA_CHAKRA_ERROR_H_
