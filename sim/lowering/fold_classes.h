// Which ranks may fold together (fold.h): the candidate classes plan_fold then checks. Internal
// to the fold pass.
#ifndef DTSIM_SIM_LOWERING_FOLD_CLASSES_H_
#define DTSIM_SIM_LOWERING_FOLD_CLASSES_H_

#include <cstdint>
#include <set>
#include <vector>

#include "sim/graph/execution_graph.h"
#include "sim/lowering/fold.h"

namespace dtsim::sim::fold_internal {

// Per program and role: one node of each distinct collective (op, bytes, root), and the peers
// it sends to and receives from (local ranks of the role's communicator).
struct RoleTraffic {
  std::vector<std::int32_t> collectives;
  std::set<std::int32_t> peers;
  std::set<std::int32_t> sources;
};

// Per program, per role.
[[nodiscard]] std::vector<std::vector<RoleTraffic>> role_traffic(const ExecutionGraph& graph);

// Candidate classes (each ascending, of two ranks or more): ranks with the same program and
// compute speed, and under kExact the same communicators. Under kVerified and kNode:
// communicators of the same sizes (each role its own; kNode: the same node); with
// `platform.route_shape`, routes of the same shapes for their sends, receives and collective
// transfers; and then, until no class splits, sources of their receives of the same classes and
// communicators whose members are of the same classes (a receive ends after its sender sent, a
// collective after its last member entered).
[[nodiscard]] std::vector<std::vector<int>> candidate_classes(
    const ExecutionGraph& graph, const std::vector<std::vector<RoleTraffic>>& traffic,
    const FoldPlatform& platform, FoldMode mode, const ScheduleOf& schedule_of);

}  // namespace dtsim::sim::fold_internal

#endif  // DTSIM_SIM_LOWERING_FOLD_CLASSES_H_
