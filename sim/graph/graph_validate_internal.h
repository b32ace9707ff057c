// Pieces shared by the validator's files (graph_validate*.cpp) and the graph reader: message
// helpers, a membership index and per-(program, role) communication sequences. Not an interface.
#ifndef DTSIM_SIM_GRAPH_GRAPH_VALIDATE_INTERNAL_H_
#define DTSIM_SIM_GRAPH_GRAPH_VALIDATE_INTERNAL_H_

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "sim/graph/execution_graph.h"
#include "sim/graph/graph_validate.h"

namespace dtsim::sim::graph_internal {

// "rank 5", or "ranks 0-3, 7" for several (runs of consecutive ranks in the given order; after 8
// runs, "and N more").
[[nodiscard]] std::string ranks_text(std::span<const int> ranks);
// "1 collective", "2 collectives".
[[nodiscard]] std::string count_text(std::size_t n, const std::string& noun);
// Broadcast, reduce and send-recv have a root; the other collectives do not.
[[nodiscard]] bool has_root(CollectiveOp op);

// Collects located problems; `locator`'s unset functions are given their defaults.
class Problems {
 public:
  Problems(const ExecutionGraph& graph, const GraphLocator& locator, std::vector<std::string>& out);

  [[nodiscard]] std::string node(std::int32_t program, std::int32_t node) const {
    return locator_.node(program, node);
  }
  [[nodiscard]] std::string rank(int rank) const { return locator_.rank(rank); }
  void add(const std::string& pointer, const std::string& message) {
    out_.push_back(pointer + ": " + message);
  }
  [[nodiscard]] std::size_t count() const { return out_.size(); }
  [[nodiscard]] const ExecutionGraph& graph() const { return graph_; }

 private:
  const ExecutionGraph& graph_;
  GraphLocator locator_;
  std::vector<std::string>& out_;
};

// The communication nodes of one role of one program, in program order.
struct RoleSequence {
  std::vector<std::int32_t> nodes;        // collectives, sends and receives
  std::vector<std::int32_t> ordinal;      // per nodes[k]: its index among collectives, sends to
                                          // its peer or receives from its peer
  std::vector<std::int32_t> collectives;  // node indices
  // (peer, node) by peer, then program order.
  std::vector<std::pair<std::int32_t, std::int32_t>> sends;
  std::vector<std::pair<std::int32_t, std::int32_t>> recvs;
};
using Sequences = std::vector<std::vector<RoleSequence>>;  // [program][role]

// REQUIRES: every communication node's comm is a role index of its program.
[[nodiscard]] Sequences role_sequences(const ExecutionGraph& graph);

// The nodes of `list` (a RoleSequence's sends or recvs) with peer `peer`, in program order.
[[nodiscard]] std::span<const std::pair<std::int32_t, std::int32_t>> with_peer(
    const std::vector<std::pair<std::int32_t, std::int32_t>>& list, std::int32_t peer);

// The role of `rp` bound to communicators[comm], or -1.
[[nodiscard]] int role_of(const RankProgram& rp, int comm);

// The checks across ranks. REQUIRES: the structure is sound (indices in range, every rank a
// member of the communicators it binds, one role per communicator, deps pointing backwards).
void check_roots_and_peers(Problems& problems, const Sequences& sequences);
void check_collectives(Problems& problems, const Sequences& sequences);
void check_point_to_point(Problems& problems, const Sequences& sequences);
// REQUIRES also: the three checks above found nothing.
void check_deadlock(Problems& problems, const LocalRanks& membership, const Sequences& sequences);

}  // namespace dtsim::sim::graph_internal

#endif  // DTSIM_SIM_GRAPH_GRAPH_VALIDATE_INTERNAL_H_
