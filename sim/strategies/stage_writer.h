// One pipeline stage's program, written node by node: hybrid_stage.cpp runs the schedule's
// steps, data parallelism, ZeRO and the optimizer; stage_passes.cpp one piece's forward and
// backward pass with the communication around it (HYBRID.md, "Per piece"). Internal to
// build_hybrid (hybrid_internal.h).
#ifndef DTSIM_SIM_STRATEGIES_STAGE_WRITER_H_
#define DTSIM_SIM_STRATEGIES_STAGE_WRITER_H_

#include <cstdint>
#include <vector>

#include "sim/strategies/hybrid_internal.h"

namespace dtsim::sim::hybrid {

using Deps = std::vector<std::int32_t>;

// Writes one stage's program node by node. `wait` holds what the next compute node must wait
// for besides its stream (the communication that produced its input), `last` the node that
// ends the pass so far.
class StageWriter final {
 public:
  StageWriter(const HybridModel& model, const HybridJob& job, int stage, const GridEdges& edges,
              ExecutionGraph& graph);

  [[nodiscard]] Program build();

 private:
  [[nodiscard]] bool has(Role role) const { return roles_[static_cast<std::size_t>(role)]; }
  [[nodiscard]] int virtual_stages() const {
    return job_.degrees.pp * job_.schedule.virtual_stages;
  }
  [[nodiscard]] std::uint64_t output_bytes(int piece) const {
    return model_.pieces[static_cast<std::size_t>(piece)].output_bytes;
  }
  // What one rank sends or receives of piece's output across a stage boundary: its 1/tp under
  // scatter/gather (scatters_boundary), else all of it.
  [[nodiscard]] bool scatters(int piece) const {
    return has(kTp) && scatters_boundary(model_, job_.degrees.tp, output_bytes(piece));
  }
  [[nodiscard]] std::uint64_t boundary_bytes(int piece) const;
  // Receives piece's output across a stage boundary on `role`; under scatter/gather, then
  // all-gathers it over the TP group. Returns what the stage's first compute waits for.
  Deps receive_boundary(Role role, int piece, int at);
  [[nodiscard]] bool last_micro_batch() const { return micro_batch_ == job_.micro_batches - 1; }

  Node tagged(NodeKind kind, int piece) const;

  std::int32_t compute(int piece, double duration_sec, const Deps& deps);

  std::int32_t collective(CollectiveOp op, Role role, int piece, std::uint64_t bytes,
                          const Deps& deps);

  // Sends go to local rank 1 of a pair communicator, receives come from local rank 0.
  std::int32_t p2p(NodeKind kind, Role role, int piece, std::uint64_t bytes, const Deps& deps);

  // `deps` and the compute whose output the communication before a pass carries (the previous
  // piece's, input_ >= 0): a halo, a statistic, a gather or a dispatch is made of that output, so
  // it waits for that compute, not only for what its own stream ran before.
  [[nodiscard]] Deps with_input(Deps deps) const;

  // The CNN collectives of `piece` at `step`, one after another after `deps`; returns what
  // follows them must wait for (`deps` when there are none).
  Deps piece_collectives(int piece, PieceStep step, Deps deps);

  // CNN halos of `piece` after `deps`: forward, the piece's halo rows to the neighbours below
  // and above in each grid dimension; backward, their gradients back. Returns `deps` and the
  // receives, which the next compute waits for.
  Deps halos(int piece, bool forward, Deps deps);

  // The compute of one pass of `piece`, as a CP ring where it passes key/value blocks: the
  // block already here computes while the next one travels (HYBRID.md, "CP").
  std::int32_t piece_compute(int piece, double duration_sec, std::uint64_t ring_bytes,
                             const Deps& deps);

  // Overlapped TP (HybridJob::tp_overlap, HYBRID.md): whether the collective of `bytes` beside
  // a GEMM of `gemm_sec` runs chunk by chunk with it.
  [[nodiscard]] bool overlaps(std::uint64_t bytes, double gemm_sec) const;
  // One of the tp - 1 steps around the TP ring of a collective of `bytes`, each rank passing
  // bytes / tp to the next, as a collective of the TP group: a ring all-gather or reduce-scatter
  // of bytes / (tp - 1) moves those bytes per rank over the same links (in tp - 1 sub-steps),
  // and repeats as TP's collectives do, so the fold memoizes it (sim/lowering/fold.h).
  [[nodiscard]] std::uint64_t ring_step_bytes(std::uint64_t bytes) const;

  // An all-gather of `bytes` beside the GEMM that consumes it: the GEMM runs in tp chunks, the
  // first on this rank's own shard while the ring's first step passes it on, each next one on
  // the shard the step before brought. Returns the last chunk.
  std::int32_t gather_beside_gemm(int piece, std::uint64_t bytes, double gemm_sec,
                                  const Deps& deps);

  // A reduce-scatter of `bytes` beside the GEMM that makes them: the GEMM runs in tp chunks,
  // each the partial sums of one rank's shard; each ring step passes the running sum on (after
  // the chunk it adds) while the next chunk computes. Returns the last addition, the reduced
  // shard (a node of no duration: the additions' time is in the piece's elementwise work).
  std::int32_t reduce_scatter_beside_gemm(int piece, std::uint64_t bytes, double gemm_sec,
                                          const Deps& deps);

  // One forward pass of `piece` (phase_ forward or recompute) after `wait`.
  void forward_piece(int piece, double duration_sec, bool gather);

  // One backward pass of `piece` after `wait`; returns the node after which its gradients
  // are ready.
  std::int32_t backward_piece(int piece);
  // The rest of `piece`'s backward pass after its compute `gradients` (ring attention's last
  // step included): the input gradient's communication (EP's all-to-all, TP's reduce-scatter or
  // all-reduce; with `overlap_in`, the weight-gradient GEMM beside it), a CNN's halos and
  // collectives. Returns the node after which its weight gradients are ready.
  std::int32_t finish_backward(int piece, std::int32_t gradients, bool overlap_in);

  // A piece's gradient or weight bytes on this stage: the model's last piece also holds the
  // tied embedding's copy when the pipeline puts it on another stage than the embedding.
  [[nodiscard]] std::uint64_t piece_bytes(int i, bool weights) const;

  // Of pieces [begin, end), the expert pieces' bytes (`expert`) or the others'.
  [[nodiscard]] std::uint64_t unit_bytes(int begin, int end, bool weights, bool expert) const;

  // The first of `unit`'s expert pieces (`expert`) or of the others: what its collectives of
  // that kind are tagged with.
  [[nodiscard]] int first_piece(PieceRange unit, bool expert) const;

  // Pieces [begin, end) of a virtual stage, cut into units.
  [[nodiscard]] std::vector<PieceRange> units_of(PieceRange range) const;

  // ZeRO-3: gathers unit u's parameters once the compute before unit u-1 ended (FSDP's one
  // unit of prefetch), and after the last optimizer step, which updated them: the dense ones
  // over the data group, then the experts' over the expert-data group, every gather after the
  // one before (FSDP's one all-gather stream). Returns the last gather, or -1 when the unit
  // holds no weights.
  std::int32_t gather_unit(PieceRange unit, const Deps& after);

  void forward_step(int v);

  // Recomputes a unit's forward before its backward: the whole forward with its TP
  // communication (full), or the compute of the pieces that keep no activations (selective).
  void recompute_unit(PieceRange unit);

  void backward_step(int v);

  // ZeRO-3: a unit's gradients reduce-scattered over its shard group, and under hybrid
  // sharding the shard then all-reduced across the groups; then the experts' over the
  // expert-data group (FSDP's one reduce-scatter stream).
  void reduce_scatter_unit(PieceRange unit, std::int32_t ready);

  // The gradient buckets of one virtual stage's pieces (dense or expert ones), by DDP's rule.
  void reduce_buckets(PieceRange range, const std::vector<std::int32_t>& ready, bool expert);

  // The optimizer step over this stage's parameters (its shard under ZeRO), then, under
  // ZeRO-1/2, every bucket's updated parameters all-gathered before the next forward needs them.
  void optimizer_step();

  // The whole model's optimizer time, scaled to this stage's gradient bytes and, under ZeRO,
  // divided among the ranks that share the parameters.
  [[nodiscard]] double optimizer_sec() const;

  struct Sharded {
    int begin;
    int end;
    bool expert;
  };

  const HybridModel& model_;
  const HybridJob& job_;
  int stage_;
  ExecutionGraph& graph_;
  std::vector<PieceRange> ranges_;
  std::vector<bool> roles_;
  std::int32_t role_index_[kRoleCount];
  Program program_;
  int iteration_ = 0;
  int micro_batch_ = 0;
  FsdpUnshard unshard_ = fsdp_unshard(job_);
  Phase phase_ = Phase::kForward;
  Deps wait_;
  std::int32_t last_ = -1;
  // The compute the next piece's communication waits for (with_input); -1 at a pass's start,
  // whose input is a received activation or gradient, or the step's data.
  std::int32_t input_ = -1;
  std::int32_t zero3_gather_ = -1;
  std::int32_t dp_last_ = -1;
  std::int32_t edp_last_ = -1;
  std::int32_t optimizer_ = -1;      // the last optimizer step: ZeRO-3 gathers updated weights
  std::int32_t expert_gather_ = -1;  // ZeRO-3: the last expert gather, which the next waits for
  int buckets_ = 0;
  std::vector<Sharded> sharded_;           // ZeRO-1/2 buckets to gather after the optimizer
  std::vector<std::int32_t> param_ready_;  // per piece: the gather its next forward waits for
};

}  // namespace dtsim::sim::hybrid

#endif  // DTSIM_SIM_STRATEGIES_STAGE_WRITER_H_
