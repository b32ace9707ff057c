// What lowering.cpp and lowering_count.cpp share: how a program's compute nodes merge into tasks,
// the collective choices, and the fold plan (internal to sim/lowering).
#ifndef DTSIM_SIM_LOWERING_LOWERING_INTERNAL_H_
#define DTSIM_SIM_LOWERING_LOWERING_INTERNAL_H_

#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include "sim/lowering/fold.h"
#include "sim/lowering/lowering.h"

namespace dtsim::sim::lowering {

// Per compute node of a program: whether it starts and whether it ends a merged task; and the
// program's nodes per stream (0: compute, 1 + r: communicator role r), in program order.
struct ProgramCuts {
  std::vector<std::uint8_t> starts;
  std::vector<std::uint8_t> ends;
  int runs = 0;
  std::vector<std::vector<std::int32_t>> streams;
  std::vector<std::int32_t> stream_of;  // per node
};

[[nodiscard]] ProgramCuts program_cuts(const Program& p);

// One schedule per distinct (communicator, op, bytes, root, algorithm), chosen on first use.
class Choices {
 public:
  Choices(const ExecutionGraph& g, const ChooseCollective& choose) : g_(g), choose_(choose) {}

  // The choice for collective `node` of `rank`'s program, on rank's communicator.
  std::int32_t index(int rank, const Node& node);
  [[nodiscard]] const Schedule& schedule(std::int32_t index) const {
    return choices_[static_cast<std::size_t>(index)]->schedule;
  }
  // Every choice's algorithm and candidates, without the schedules.
  [[nodiscard]] std::vector<CollectiveChoice> summaries() const;

 private:
  const ExecutionGraph& g_;
  const ChooseCollective& choose_;
  std::map<std::tuple<std::int32_t, CollectiveOp, std::uint64_t, std::int32_t, std::int32_t>,
           std::int32_t>
      index_;
  std::vector<const CollectiveChoice*> choices_;
};

[[nodiscard]] FoldPlan make_plan(const ExecutionGraph& g, const LoweringOptions& options,
                                 Choices& choices);

// What a folded collective of a class (ClassComm::single) becomes.
enum class FoldedKind { kReplay, kMemoized, kLeftOut };

// `own`: the communicator is the representative's; `own_comm`: the representative's one in the
// same role; `seen`: the same collective on the same communicator was replayed before.
[[nodiscard]] inline FoldedKind folded_kind(const FoldPlan& plan, bool own, std::int32_t comm,
                                            std::int32_t own_comm, bool seen) {
  if (!seen) {
    return FoldedKind::kReplay;
  }
  if (!own && plan.is_private(comm) && plan.is_private(own_comm)) {
    return FoldedKind::kLeftOut;
  }
  return plan.memoize || plan.is_private(comm) ? FoldedKind::kMemoized : FoldedKind::kReplay;
}

// The tasks lowering adds under `plan` (compute runs, transfers, collectives' operations).
[[nodiscard]] double count_tasks(const ExecutionGraph& g, const FoldPlan& plan, Choices& choices);

}  // namespace dtsim::sim::lowering

#endif  // DTSIM_SIM_LOWERING_LOWERING_INTERNAL_H_
