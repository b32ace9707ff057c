// Shared between hybrid.cpp (communicators, ranks) and one stage's program (stage_writer.h).
#ifndef DTSIM_SIM_STRATEGIES_HYBRID_INTERNAL_H_
#define DTSIM_SIM_STRATEGIES_HYBRID_INTERNAL_H_

#include <array>
#include <compare>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/graph/execution_graph.h"
#include "sim/strategies/hybrid.h"

namespace dtsim::sim::hybrid {

// The communicator roles a stage's program may use, in the order they are listed.
enum Role : int {
  kDp,         // dense gradients: the data x context group
  kDpGather,   // ZeRO-3 parameter gathers: the same ranks, its own communicator (stream)
  kTp,         // tensor-parallel group
  kCpNext,     // CP ring: this rank -> the next (this rank sends)
  kCpPrev,     // CP ring: the previous -> this rank (this rank receives)
  kEp,         // expert-parallel group
  kEdp,        // expert gradients: the expert-data x context group
  kActIn,      // PP: activations from the previous device
  kActOut,     // PP: activations to the next device
  kGradIn,     // PP: gradients from the next device
  kGradOut,    // PP: gradients to the previous device
  kEmb,        // tied embeddings: the first and the last stage's copies (Megatron-LM)
  kDpReplica,  // ZeRO-3 hybrid sharding: the ranks holding the same shard in every group
  kSpatial,    // CNN spatial split: the ranks sharing one sample (the context group)
  kEdpGather,  // ZeRO-3 expert parameter gathers: the expert-data group's own communicator
  // CNN halos, per grid dimension d: kHalo + 4 * d + HaloRole (pairs, sender local rank 0).
  kHalo,
  kRoleCount = kHalo + 12,
};
enum HaloRole : int { kUpSend, kUpRecv, kDownSend, kDownRecv };  // up: to the higher coordinate
[[nodiscard]] inline Role halo_role(int dim, HaloRole r) {
  return static_cast<Role>(kHalo + 4 * dim + r);
}
[[nodiscard]] std::string role_name(Role role);

// Where a rank sits in the CNN spatial grid: whether it has a neighbour below and above in each
// dimension (none without a spatial split).
struct GridEdges {
  std::array<bool, 3> below{};
  std::array<bool, 3> above{};

  auto operator<=>(const GridEdges&) const = default;
};
// The edges of the rank with context coordinate `cp_coordinate` under `job`.
[[nodiscard]] GridEdges grid_edges(const HybridJob& job, int cp_coordinate);

// Which roles stage `stage` has under `job` at `edges` (a role absent has no communicator).
[[nodiscard]] std::vector<bool> stage_roles(const HybridModel& model, const HybridJob& job,
                                            int stage, const GridEdges& edges = {});

// Pieces [begin, end) of each virtual stage (index chunk * pp + stage), by the job's split.
struct PieceRange {
  int begin = 0;
  int end = 0;
};
[[nodiscard]] std::vector<PieceRange> virtual_stage_pieces(const HybridModel& model,
                                                           const HybridJob& job);

// Whether a boundary activation of `bytes` crosses a stage boundary scattered over `tp` ranks
// (HybridModel::scatter_gather_boundary): each rank sends bytes / tp and the receiving stage
// all-gathers them. As Megatron-LM, a tensor that does not split evenly goes whole.
[[nodiscard]] bool scatters_boundary(const HybridModel& model, int tp, std::uint64_t bytes);

// The program of every rank of pipeline stage `stage`. `graph` receives its labels.
[[nodiscard]] Program build_stage_program(const HybridModel& model, const HybridJob& job, int stage,
                                          const GridEdges& edges, ExecutionGraph& graph);

}  // namespace dtsim::sim::hybrid

#endif  // DTSIM_SIM_STRATEGIES_HYBRID_INTERNAL_H_
