// The memory of a CNN job (cnn_model.h, CNN.md "Memory").
#include <algorithm>

#include "sim/strategies/cnn_model.h"
#include "sim/strategies/hybrid_internal.h"

namespace dtsim::sim {

namespace {

// Bytes one micro-batch leaves on a rank for the backward pass of `p`: its output share, and
// the whole input a split gathered before its forward (the weight gradient reads it).
std::uint64_t kept_bytes(const ModelPiece& p) {
  std::uint64_t bytes = p.output_bytes;
  for (const PieceCollective& c : p.collectives) {
    if (c.step == PieceStep::kBeforeForward && c.op == CollectiveOp::kAllGather) {
      bytes += c.bytes;
    }
  }
  return bytes;
}

StageMemory stage_memory(const HybridModel& model, const HybridJob& job, int stage,
                         bool mixed_precision) {
  const std::vector<hybrid::PieceRange> ranges = hybrid::virtual_stage_pieces(model, job);
  const int pp = job.degrees.pp;
  StageMemory m{.stage = stage};
  std::vector<std::uint64_t> chunk_bytes;
  for (int chunk = 0; chunk < job.schedule.virtual_stages; ++chunk) {
    const hybrid::PieceRange r = ranges[static_cast<std::size_t>(chunk * pp + stage)];
    std::uint64_t kept = 0;
    for (int i = r.begin; i < r.end; ++i) {
      const ModelPiece& p = model.pieces[static_cast<std::size_t>(i)];
      m.parameters_bytes += p.weight_bytes;
      m.gradients_bytes += p.grad_bytes;
      kept += kept_bytes(p);
    }
    chunk_bytes.push_back(kept);
  }
  // SGD with momentum: one fp32 buffer per parameter, as the gradients; mixed precision adds
  // the fp32 master weights.
  m.optimizer_bytes = m.gradients_bytes * (mixed_precision ? 2 : 1);
  const std::vector<PipelineStep> order = stage_order(job.schedule, pp, job.micro_batches, stage);
  m.micro_batches_in_flight = max_in_flight(order);
  m.activations_bytes = peak_held_bytes(order, chunk_bytes);
  hybrid::GridEdges inner;  // a rank inside the spatial grid: a neighbour on every side
  for (std::size_t d = 0; d < 3; ++d) {
    inner.below[d] = inner.above[d] = job.spatial_grid[d] > 1;
  }
  std::vector<bool> roles = hybrid::stage_roles(model, job, stage, inner);
  if (job.degrees.dp * job.degrees.cp == 1) {
    roles[hybrid::kDp] = false;  // a communicator of one rank: NCCL needs no buffer
  }
  m.communication_buffers_bytes =
      kNcclBytesPerCommunicator *
      static_cast<std::uint64_t>(std::count(roles.begin(), roles.end(), true));
  m.framework_reserve_bytes = kCudaContextBytes;
  m.peak_bytes = m.parameters_bytes + m.gradients_bytes + m.optimizer_bytes + m.activations_bytes +
                 m.communication_buffers_bytes + m.framework_reserve_bytes;
  return m;
}

}  // namespace

MemoryReport cnn_memory(const HybridModel& model, const HybridJob& job,
                        const workloads::DeviceSpec& device, bool mixed_precision) {
  MemoryReport r{.device = device.full_name,
                 .capacity_bytes = static_cast<std::uint64_t>(device.memory_capacity_bytes)};
  for (int s = 0; s < job.degrees.pp; ++s) {
    r.stages.push_back(stage_memory(model, job, s, mixed_precision));
    if (r.stages.back().peak_bytes > r.stages[static_cast<std::size_t>(r.worst_stage)].peak_bytes) {
      r.worst_stage = s;
    }
  }
  r.oom = r.stages[static_cast<std::size_t>(r.worst_stage)].peak_bytes > r.capacity_bytes;
  return r;
}

}  // namespace dtsim::sim
