// Hybrid parallelism as an execution graph: tensor (TP), context (CP), expert (EP), pipeline (PP)
// and data parallelism (DP, with ZeRO-1/2 or ZeRO-3/FSDP sharding) at once, the way Megatron-LM
// and PyTorch FSDP run them. Every rule is in sim/strategies/HYBRID.md with its source.
//
// Ranks are arranged by RankLayout (layout.h). Every rank of pipeline stage s runs program
// "stage s" ("replica" without pipelining): for each step of its schedule (pipeline_schedule.h),
// a forward or backward pass of one micro-batch over the pieces of one model chunk, with
//  - TP collectives around every piece on its tensor-parallel group ("tp"), blocking the compute
//    that needs them;
//  - activations received from the previous stage and sent to the next (and their gradients the
//    other way), on one two-rank communicator per stage boundary and direction, so that a
//    pipeline never waits on a transfer going the other way;
//  - CP ring attention: key/value blocks passed to the next rank of the CP ring while the
//    attention of the block already there computes;
//  - EP all-to-all dispatch and combine around every expert piece ("ep");
//  - DP: the gradients of each chunk reduced in buckets during its last micro-batch's backward
//    ("dp": all-reduce, or reduce-scatter under ZeRO-1/2 with the parameters all-gathered after
//    the optimizer step); under ZeRO-3 every unit's parameters all-gathered before its forward
//    and backward (one unit prefetched, on "dp_gather") and its gradients reduce-scattered after.
// With tp = cp = pp = ep = 1, ZeRO 0 and the 1F1B schedule the graph is build_data_parallel's.
#ifndef DTSIM_SIM_STRATEGIES_HYBRID_H_
#define DTSIM_SIM_STRATEGIES_HYBRID_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/graph/execution_graph.h"
#include "sim/strategies/buckets.h"
#include "sim/strategies/layout.h"
#include "sim/strategies/pipeline_schedule.h"

namespace dtsim::sim {

// CNN model parallelism (sim/strategies/CNN.md): a collective a piece needs besides the
// transformer's TP ones, where in its forward or backward pass, on which group.
enum class PieceStep : std::uint8_t {
  kBeforeForward,
  kAfterForward,
  kBeforeBackward,
  kAfterBackward
};
enum class PieceGroup : std::uint8_t {
  kTp,       // the tensor-parallel group (a CNN's filter or channel split)
  kSpatial,  // the spatial group: the ranks that share one sample (the context dimension)
};
struct PieceCollective {
  PieceStep step = PieceStep::kBeforeForward;
  CollectiveOp op = CollectiveOp::kAllReduce;
  PieceGroup group = PieceGroup::kTp;
  std::uint64_t bytes = 0;  // nccl-tests' size

  bool operator==(const PieceCollective&) const = default;
};

// One piece of the model as one rank runs it for one micro-batch: a stretch of compute between
// two points where tensor parallelism communicates.
struct ModelPiece {
  std::string name;
  // Pipeline stages and ZeRO-3 units are whole units (a transformer block: its attention and MLP
  // pieces); units are numbered 0, 1, ... in forward order.
  int unit = 0;
  double forward_sec = 0;
  double backward_sec = 0;
  double recompute_sec = 0;  // forward work redone before the backward pass (0: none)
  // The recomputation stops within the piece (PyTorch's checkpoint early stop): the TP
  // collective after its forward is not redone (EP's combine all-to-all is).
  bool recompute_skips_output = false;
  // This rank's share of the piece's parameters: gradient bytes (reduced by DP) and weight bytes
  // (gathered by ZeRO-3 and, after the optimizer step, by ZeRO-1/2).
  std::uint64_t grad_bytes = 0;
  std::uint64_t weight_bytes = 0;
  bool expert = false;  // expert weights: reduced over the expert-data group, not "dp"
  // The activation this piece outputs per micro-batch: what a pipeline stage that ends with it
  // sends the next (and receives back as a gradient). 0: unknown (it cannot end a stage).
  std::uint64_t output_bytes = 0;
  // TP, as Megatron-LM's conjugate operators (nccl-tests sizes; 0: none). At the piece's input:
  // identity forward, all-reduce backward (with sequence parallelism: all-gather forward,
  // reduce-scatter backward). At its output: all-reduce forward, identity backward (with sequence
  // parallelism: reduce-scatter forward, all-gather backward).
  std::uint64_t tp_in_bytes = 0;
  std::uint64_t tp_out_bytes = 0;
  // With sequence parallelism, the all-gathers move fp8 copies of the 16-bit activations and
  // output gradients these bytes count: half of them (Transformer Engine and torchao's tensorwise
  // float8 TP plan cast before they gather; workloads/TRANSFORMER.md, "Float8"). Reduce-scatters
  // stay 16-bit.
  bool tp_gathers_fp8 = false;
  [[nodiscard]] std::uint64_t tp_gather_bytes(std::uint64_t bytes) const {
    return tp_gathers_fp8 ? bytes / 2 : bytes;
  }
  // All-reduces after the forward of tp_loss_bytes each (the vocabulary-parallel loss's: max
  // logit, target logit, sum of exponentials), none backward.
  std::uint64_t tp_loss_bytes = 0;
  int tp_loss_collectives = 1;
  // Overlapped TP (HybridJob::tp_overlap): the forward seconds of the GEMM that takes the
  // gathered input and of the one whose output is reduce-scattered; the backward pass runs
  // each one's input- and weight-gradient GEMMs, timed at as long each (fp8's casts are not
  // among them). 0: that collective is not overlapped.
  double tp_in_gemm_sec = 0;
  double tp_out_gemm_sec = 0;
  // CP: one key/value block, passed cp - 1 times forward; backward passes the block and its
  // gradient cp - 1 times, then the gradient once more, home.
  std::uint64_t cp_kv_bytes = 0;
  std::uint64_t ep_bytes = 0;  // EP: each all-to-all (dispatch, combine)
  // CNN splits: collectives in program order at each step (kBefore*: the compute waits for
  // them; kAfter*: the next piece does).
  std::vector<PieceCollective> collectives;
  // CNN spatial split: the halo bytes this rank sends, before the piece's forward, to its
  // neighbour below and above in each dimension of the spatial grid (height, width, depth);
  // after the piece's backward it sends their gradients back the other way (below: what the
  // one below sent up, above: what the one above sent down). The compute waits for the halos.
  std::array<std::uint64_t, 3> halo_down_bytes{};
  std::array<std::uint64_t, 3> halo_up_bytes{};
  bool backward_halo = true;  // false: the piece's input needs no gradient (the first layer)

  bool operator==(const ModelPiece&) const = default;
};

struct HybridModel {
  std::vector<ModelPiece> pieces;  // forward order
  // Units that always go with the first and with the last virtual stage (a transformer's
  // embedding and head), beside those the split balances (its blocks).
  int first_units = 0;
  int last_units = 0;
  // Tied embeddings: with a pipeline, the last stage keeps a copy of the embedding's weights
  // for the head, and the two copies' gradients are all-reduced between the first and the last
  // stage before the optimizer step (Megatron-LM's embedding group). The copy's gradient and
  // weight bytes; 0: untied.
  std::uint64_t tied_grad_bytes = 0;
  std::uint64_t tied_weight_bytes = 0;
  double optimizer_sec = 0;  // one rank's optimizer step over all its pieces, unsharded
  // Pipeline transfers scatter and gather (Megatron-LM's scatter_gather_tensors_in_pipeline,
  // Narayanan et al., SC21, section 4.1): where every TP rank of a stage holds the whole boundary
  // activation (tensor parallelism without sequence parallelism), each sends only its 1/tp of
  // output_bytes to its peer, and the receiving stage all-gathers the pieces over its TP group
  // (NVLink) before it uses them. Without it, each TP rank sends all of output_bytes.
  bool scatter_gather_boundary = false;
};

// ZeRO-3: how long a unit's gathered weights are kept (FSDP2's reshard_after_forward and
// reshard_after_backward; HYBRID.md, "Data parallelism and ZeRO"; MEMORY.md).
enum class FsdpUnshard {
  kAuto,  // kStep with pipeline stages (torchtitan's apply_fsdp), else kUnit
  // Re-sharded after its forward (FSDP's FULL_SHARD): gathered before every forward and again
  // before every backward; gradients reduce-scattered every micro-batch.
  kUnit,
  // Kept from a micro-batch's forward to its backward (reshard_after_forward=False, FSDP1's
  // SHARD_GRAD_OP): gathered before every forward; gradients reduce-scattered every micro-batch.
  kMicroBatch,
  // Kept all step (torchtitan under pipeline parallelism: no reshard after forward nor after the
  // backwards before the last, no gradient sync until then): gathered before the step's first
  // forward; gradients accumulated unsharded in fp32, reduce-scattered in the last backward.
  kStep,
};

struct HybridJob {
  ParallelDegrees degrees;
  std::array<Dim, kDims> order{Dim::kTp, Dim::kCp, Dim::kDp, Dim::kPp};
  int micro_batches = 1;  // per optimizer step, per replica
  PipelineSchedule schedule;
  // Balanced units per virtual stage (first_units and last_units not counted); empty: balanced
  // by split_units.
  std::vector<int> stage_units;
  int zero_stage = 0;  // 0, 1, 2 or 3
  // ZeRO-3 hybrid sharding (FSDP's HYBRID_SHARD, torchtitan's dp_shard): parameters sharded
  // over groups of `dp_shard` consecutive ranks of the data x context group (inside a node under
  // Megatron-LM's order and linear placement) and replicated across the groups, whose gradient
  // shards are all-reduced after every reduce-scatter. 0: one group, the whole data x context
  // group (plain ZeRO-3).
  int dp_shard = 0;
  FsdpUnshard fsdp_unshard = FsdpUnshard::kAuto;  // ZeRO-3 only
  bool sequence_parallel = false;
  // Overlapped TP communication (Transformer Engine's userbuffers, NeMo's tp_comm_overlap;
  // torchtitan's async TP): with sequence parallelism, each gather and reduce-scatter next to a
  // GEMM runs as tp - 1 steps around the TP ring, chunk by chunk beside the GEMM's own chunks
  // (HYBRID.md, "Overlapped TP").
  bool tp_overlap = false;
  // CNN spatial split of the context dimension: the grid's height, width and depth (product
  // cp; spatial coordinate h + H * (w + W * d) of the context coordinate). {1, 1, 1}: none.
  std::array<int, 3> spatial_grid{1, 1, 1};
  bool full_recompute = false;  // recomputation re-runs the forward's TP collectives too
  std::uint64_t bucket_cap_bytes = kDefaultBucketCapBytes;
  std::uint64_t first_bucket_cap_bytes = kFirstBucketCapBytes;
  int iterations = 3;
};

// job.fsdp_unshard with kAuto resolved by job.degrees.pp.
[[nodiscard]] FsdpUnshard fsdp_unshard(const HybridJob& job);
// "auto", "unit", "micro-batch" or "step" (--fsdp-unshard), and back; nullopt for other text.
[[nodiscard]] std::string fsdp_unshard_name(FsdpUnshard unshard);
[[nodiscard]] std::optional<FsdpUnshard> parse_fsdp_unshard(std::string_view text);

// `units` split into `parts` contiguous runs as evenly as possible, the first ones one longer
// when they do not divide.
[[nodiscard]] std::vector<int> split_units(int units, int parts);

// Empty if `job` can run `model`, else why not, naming the job field ("stage_units",
// "micro_batches", ...) first.
[[nodiscard]] std::string check_hybrid(const HybridModel& model, const HybridJob& job);

// The graph of `job` on `model`. REQUIRES: check_hybrid(model, job) is empty.
[[nodiscard]] ExecutionGraph build_hybrid(const HybridModel& model, const HybridJob& job);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_STRATEGIES_HYBRID_H_
