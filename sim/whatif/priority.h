// Priorities and the policy by which a stream picks its next ready node (WHATIF.md,
// "Priorities"), the what-if primitives behind P3-style priority scheduling.
//
// The policy. A stream (a rank's compute stream, or its stream of one communicator) keeps one
// queue per priority, each in issue order. When the stream is idle it starts the head of the
// lowest-numbered queue whose dependencies have ended; a head that is not ready holds back its
// own queue only. With every priority 0 (one queue) this is issue order, what the replay does.
//
//   g = set_priority(std::move(g), select_nodes(g, {.label = "update"}), -1);
//   g = order_by_priority(std::move(g), seconds);   // then lower and replay as usual
//
// The replay runs a stream in issue order, so order_by_priority applies the policy before
// lowering: it list-schedules each program on its own, compute nodes for their duration and
// collectives for `seconds` (the chooser's uncontended estimate), and rewrites the program in
// the order the policy started its nodes. Where the replayed times differ from the estimates
// (contention, a slow GPU), the order is the estimate's, not re-decided at run time.
#ifndef DTSIM_SIM_WHATIF_PRIORITY_H_
#define DTSIM_SIM_WHATIF_PRIORITY_H_

#include <cstdint>
#include <functional>
#include <span>

#include "sim/graph/execution_graph.h"
#include "sim/whatif/primitives.h"
#include "sim/whatif/select.h"

namespace dtsim::sim {

// Estimated seconds of collective `node` of the program `rank` runs (on rank's communicator).
using RankCollectiveSeconds = std::function<double(const ExecutionGraph&, int rank, const Node&)>;

// `g` with Node::priority = `priority` on every node of `nodes` (lower runs first where a stream
// has a choice). Throws ConfigError("what_if", ...) for a node outside the graph.
[[nodiscard]] ExecutionGraph set_priority(ExecutionGraph g, std::span<const NodeRef> nodes,
                                          std::int32_t priority);

// Whether some node of `g` has a priority other than 0.
[[nodiscard]] bool has_priorities(const ExecutionGraph& g);

// `g` with the nodes of every program that has priorities in the order the policy above starts
// them (programs whose priorities are all 0 are returned as they are). Collectives last
// sec(g, rank, node) from their start, `rank` the first rank running the program: every member of a
// communicator must run the same program, so all start it together. Throws ConfigError("what_if",
// ...) for a program with priorities and sends or receives, or whose communicator has members
// running another program (their times are not this program's).
[[nodiscard]] ExecutionGraph order_by_priority(ExecutionGraph g, const RankCollectiveSeconds& sec);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_WHATIF_PRIORITY_H_
