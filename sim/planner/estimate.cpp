#include "sim/planner/estimate.h"

#include <algorithm>
#include <array>
#include <utility>

#include "sim/strategies/hybrid_internal.h"

namespace dtsim::sim {

namespace {

// One device's work per micro-batch (all its chunks) and its bytes per step.
struct DeviceLoad {
  double compute_sec = 0;
  double tp_sec = 0;
  double cp_sec = 0;
  double halo_sec = 0;
  double spatial_sec = 0;
  double forward_sec = 0;  // compute + communication of the forward passes alone
  std::uint64_t grad_bytes = 0;
  std::uint64_t weight_bytes = 0;
  int units = 0;
  [[nodiscard]] double step_sec() const {
    return compute_sec + tp_sec + cp_sec + halo_sec + spatial_sec;
  }
};

struct Groups {
  RankGroup tp, cp, dp, pp;
};

Groups groups_of(const ParallelDegrees& d) {
  return {.tp = {.size = d.tp, .stride = 1},
          .cp = {.size = d.cp, .stride = d.tp},
          .dp = {.size = d.dp * d.cp, .stride = d.tp},
          .pp = {.size = d.pp > 1 ? 2 : 1, .stride = d.tp * d.cp * d.dp}};
}

// TP collectives of one piece (HybridModel's conjugate operators): those before its compute
// and those after, forward and backward.
struct TpSec {
  double forward_before = 0, forward_after = 0, backward_before = 0, backward_after = 0;
  // What a full recompute of the piece redoes: the forward's, but the output's reduction (and
  // the loss's all-reduces) when the recomputation stops early (recompute_skips_output).
  double recompute = 0;
};

TpSec tp_piece_sec(const PlannerNetwork& net, const ModelPiece& p, const HybridJob& job,
                   RankGroup tp) {
  const auto ring = [&](RingOp op, std::uint64_t bytes) {
    return ring_sec(net, op, tp, bytes);
  };
  // Overlapped TP (stage_passes.cpp): tp - 1 ring steps, each a collective of bytes / (tp - 1),
  // one after another beside the GEMM's tp chunks; chunk k waits for step k, so what shows is
  // (tp - 1) * max(0, step - chunk), before the GEMM's last chunk ends.
  const auto beside = [&](RingOp op, std::uint64_t bytes, double gemm_sec) {
    const auto steps = static_cast<std::uint64_t>(tp.size - 1);
    const double step = ring(op, (bytes + steps - 1) / steps);
    return static_cast<double>(steps) * std::max(0.0, step - gemm_sec / tp.size);
  };
  TpSec t{.forward_after = p.tp_loss_collectives * ring(RingOp::kAllReduce, p.tp_loss_bytes)};
  double output_sec = t.forward_after;  // the forward's collectives after the input's gather
  if (job.sequence_parallel) {
    const bool overlap = job.tp_overlap && tp.size > 1;
    const bool in = overlap && p.tp_in_gemm_sec > 0;
    const bool out = overlap && p.tp_out_gemm_sec > 0;
    const std::uint64_t gather_in = p.tp_gather_bytes(p.tp_in_bytes);
    const std::uint64_t gather_out = p.tp_gather_bytes(p.tp_out_bytes);
    t.forward_before = in ? beside(RingOp::kAllGather, gather_in, p.tp_in_gemm_sec)
                          : ring(RingOp::kAllGather, gather_in);
    t.recompute = t.forward_before;
    // Overlapped, the output's last addition is compute: it holds the compute stream even
    // where nothing follows in the step, as what is before a pass does.
    if (out) {
      const double scatter = beside(RingOp::kReduceScatter, p.tp_out_bytes, p.tp_out_gemm_sec);
      t.forward_before += scatter;
      output_sec += scatter;
    } else {
      t.forward_after += ring(RingOp::kReduceScatter, p.tp_out_bytes);
      output_sec = t.forward_after;
    }
    t.backward_before = out ? beside(RingOp::kAllGather, gather_out, p.tp_out_gemm_sec)
                            : ring(RingOp::kAllGather, gather_out);
    // Overlapped, beside the weight-gradient GEMM, which does not need it.
    const double scatter = ring(RingOp::kReduceScatter, p.tp_in_bytes);
    t.backward_after = in ? std::max(0.0, scatter - p.tp_in_gemm_sec) : scatter;
  } else {
    t.forward_after += ring(RingOp::kAllReduce, p.tp_out_bytes);
    output_sec = t.forward_after;
    t.backward_after = ring(RingOp::kAllReduce, p.tp_in_bytes);
  }
  t.recompute += p.recompute_skips_output ? 0 : output_sec;
  return t;
}

// The GEMM seconds of `p` that overlapped TP runs beside its collectives, in chunks of their
// own (stage_passes.cpp, `overlaps`); 0 without overlap.
double overlapped_gemm_sec(const ModelPiece& p, const HybridJob& job, RankGroup tp) {
  if (!job.tp_overlap || !job.sequence_parallel || tp.size <= 1) {
    return 0;
  }
  return (p.tp_in_bytes > 0 ? p.tp_in_gemm_sec : 0) + (p.tp_out_bytes > 0 ? p.tp_out_gemm_sec : 0);
}

// Ring attention's transfers beyond the attention's compute: part k of cp waits for block k
// (forward: one key/value block per step; backward: the block and its gradient, then the
// gradient home once more). The parts share the pass's compute but for `beside_tp_sec`, the
// GEMMs that overlapped TP runs on their own.
double cp_piece_sec(const PlannerNetwork& net, const ModelPiece& p, RankGroup cp,
                    double beside_tp_sec) {
  if (cp.size <= 1 || p.cp_kv_bytes == 0) {
    return 0;
  }
  const double steps = cp.size - 1;
  const double fwd_part = std::max(0.0, p.forward_sec - beside_tp_sec) / cp.size;
  const double bwd_part = std::max(0.0, p.backward_sec - beside_tp_sec) / cp.size;
  const double fwd = steps * std::max(0.0, transfer_sec(net, cp, p.cp_kv_bytes) - fwd_part);
  const double bwd = steps * std::max(0.0, transfer_sec(net, cp, 2 * p.cp_kv_bytes) - bwd_part) +
                     transfer_sec(net, cp, p.cp_kv_bytes);
  return fwd + bwd;
}

// A CNN piece's own collectives (filter and channel splits on the tensor group, a spatial
// split's on the context group): those before a pass hold its compute, those after it the next
// piece's (stage_passes.cpp), unless nothing follows in the step (`forward_blocks`,
// `backward_blocks`: as for TP's trailing collectives).
struct CnnCollectiveSec {
  double tp_forward = 0, tp_backward = 0, spatial_forward = 0, spatial_backward = 0;
};

CnnCollectiveSec cnn_collective_sec(const PlannerNetwork& net, const ModelPiece& p, const Groups& g,
                                    bool forward_blocks, bool backward_blocks) {
  CnnCollectiveSec t;
  for (const PieceCollective& c : p.collectives) {
    if ((c.step == PieceStep::kAfterForward && !forward_blocks) ||
        (c.step == PieceStep::kAfterBackward && !backward_blocks)) {
      continue;
    }
    // The CNN splits issue all-reduces, all-gathers and reduce-scatters (CNN.md); any other
    // operation is charged as an all-reduce, the dearest ring.
    const RingOp op = c.op == CollectiveOp::kAllGather       ? RingOp::kAllGather
                      : c.op == CollectiveOp::kReduceScatter ? RingOp::kReduceScatter
                                                             : RingOp::kAllReduce;
    const bool tp = c.group == PieceGroup::kTp;
    const double sec = ring_sec(net, op, tp ? g.tp : g.cp, c.bytes);
    const bool forward = c.step == PieceStep::kBeforeForward || c.step == PieceStep::kAfterForward;
    (tp ? (forward ? t.tp_forward : t.tp_backward)
        : (forward ? t.spatial_forward : t.spatial_backward)) += sec;
  }
  return t;
}

// One pass of a CNN piece's halo exchange on the spatial grid (halos in `to_below` and
// `to_above` bytes per dimension): every send starts at once (stage_passes.cpp), so the pass
// takes the slowest dimension's transfer, and at least all the bytes an inner rank of the grid
// sends through its GPU's own link.
// Neighbours along dimension d are tp * (the grid's extent below d) ranks apart; that line of
// the grid leaves the node when it spans more than a node (network_model.h's rule).
double halo_pass_sec(const PlannerNetwork& net, const HybridJob& job,
                     const std::array<std::uint64_t, 3>& to_below,
                     const std::array<std::uint64_t, 3>& to_above) {
  double slowest = 0;
  std::uint64_t total = 0;
  int stride = job.degrees.tp;
  for (std::size_t d = 0; d < 3; ++d) {
    const int extent = job.spatial_grid[d];
    if (extent > 1) {
      // A rank inside the line sends both ways; with two ranks each has one neighbour.
      const std::uint64_t bytes = std::max(to_below[d], to_above[d]);
      total += extent > 2 ? to_below[d] + to_above[d] : bytes;
      if (bytes > 0) {
        slowest = std::max(slowest, transfer_sec(net, {.size = extent, .stride = stride}, bytes));
      }
    }
    stride *= extent;
  }
  if (total == 0) {
    return 0;
  }
  const PathClass own = group_path(net, {.size = 2, .stride = 1});
  return std::max(slowest, own.latency_sec + total / own.bandwidth_bytes_per_sec);
}

std::vector<DeviceLoad> device_loads(const HybridModel& model, const HybridJob& job,
                                     const PlannerNetwork& net) {
  const ParallelDegrees& d = job.degrees;
  const Groups g = groups_of(d);
  const std::vector<hybrid::PieceRange> ranges = hybrid::virtual_stage_pieces(model, job);
  std::vector<DeviceLoad> loads(static_cast<std::size_t>(d.pp));
  for (std::size_t v = 0; v < ranges.size(); ++v) {
    DeviceLoad& load = loads[v % loads.size()];
    int last_unit = -1;
    for (int i = ranges[v].begin; i < ranges[v].end; ++i) {
      const ModelPiece& p = model.pieces[static_cast<std::size_t>(i)];
      const TpSec t = tp_piece_sec(net, p, job, g.tp);
      // A step's trailing collectives block only the pipeline send after them: the last
      // virtual stage's forward and the first's backward send nothing (the next step does
      // not wait for them, hybrid_stage.cpp).
      const bool forward_blocks = i + 1 < ranges[v].end || v + 1 < ranges.size();
      const bool backward_blocks = i > ranges[v].begin || v > 0;
      const double tp_fwd = t.forward_before + (forward_blocks ? t.forward_after : 0);
      // A full recomputation redoes the piece's forward TP communication (TpSec::recompute);
      // a piece with nothing to recompute (embedding, head, a block full:N keeps) none, as
      // stage_writer's recompute_unit skips it.
      const double recompute = job.full_recompute && p.recompute_sec > 0 ? t.recompute : 0;
      const double tp_bwd =
          t.backward_before + (backward_blocks ? t.backward_after : 0) + recompute;
      const double cp = cp_piece_sec(net, p, g.cp, overlapped_gemm_sec(p, job, g.tp));
      const CnnCollectiveSec cnn = cnn_collective_sec(net, p, g, forward_blocks, backward_blocks);
      // Forward: the halos the neighbours need; backward: their gradients, the other way.
      const double halo_fwd = halo_pass_sec(net, job, p.halo_down_bytes, p.halo_up_bytes);
      const double halo_bwd =
          p.backward_halo ? halo_pass_sec(net, job, p.halo_up_bytes, p.halo_down_bytes) : 0;
      load.compute_sec += p.forward_sec + p.backward_sec + p.recompute_sec;
      load.tp_sec += tp_fwd + tp_bwd + cnn.tp_forward + cnn.tp_backward;
      load.cp_sec += cp;
      load.halo_sec += halo_fwd + halo_bwd;
      load.spatial_sec += cnn.spatial_forward + cnn.spatial_backward;
      load.forward_sec += p.forward_sec + tp_fwd + cnn.tp_forward + cnn.spatial_forward + halo_fwd;
      load.grad_bytes += p.grad_bytes;
      load.weight_bytes += p.weight_bytes;
      load.units += p.unit != last_unit ? 1 : 0;
      last_unit = p.unit;
    }
  }
  if (d.pp > 1 && model.tied_grad_bytes > 0) {
    loads.back().grad_bytes += model.tied_grad_bytes;
    loads.back().weight_bytes += model.tied_weight_bytes;
  }
  return loads;
}

// Gradient reduction and ZeRO gathers of one device not hidden behind its compute, and its
// optimizer step (PLANNER.md, "Data parallelism").
double dp_exposed_sec(const HybridJob& job, const PlannerNetwork& net, const DeviceLoad& load,
                      RankGroup dp) {
  if (dp.size <= 1) {
    return 0;
  }
  const int chunks = job.schedule.virtual_stages;
  const std::uint64_t last_bucket = std::min(load.grad_bytes, job.bucket_cap_bytes);
  const double last_backward_sec = (load.step_sec() - load.forward_sec) / chunks;
  const auto overlapped = [&](double total_sec, double window_sec, double tail_sec) {
    return std::max(total_sec - window_sec, tail_sec);
  };
  if (job.zero_stage == 0) {
    return overlapped(ring_sec(net, RingOp::kAllReduce, dp, load.grad_bytes), last_backward_sec,
                      ring_sec(net, RingOp::kAllReduce, dp, last_bucket));
  }
  const double reduce =
      overlapped(ring_sec(net, RingOp::kReduceScatter, dp, load.grad_bytes), last_backward_sec,
                 ring_sec(net, RingOp::kReduceScatter, dp, last_bucket));
  if (job.zero_stage < 3) {
    // The weights come back in bucket order, the backward's: the first forward piece's bucket
    // is gathered last, so the next step's forward waits for all of them.
    return reduce + ring_sec(net, RingOp::kAllGather, dp, load.weight_bytes);
  }
  // ZeRO-3 (HYBRID.md): each gathering pass's first unit is gathered before anything can run,
  // the rest behind the compute.
  const double gather = ring_sec(net, RingOp::kAllGather, dp, load.weight_bytes);
  const double scatter = ring_sec(net, RingOp::kReduceScatter, dp, load.grad_bytes);
  const double first_unit =
      ring_sec(net, RingOp::kAllGather, dp, load.weight_bytes / std::max(1, load.units));
  const FsdpUnshard unshard = fsdp_unshard(job);
  if (unshard == FsdpUnshard::kStep) {  // once a step: gathered in the first forward, reduced
                                        // in the last backward
    return std::max(0.0, gather - load.forward_sec) +
           std::max(0.0, scatter - (load.step_sec() - load.forward_sec)) + first_unit;
  }
  // Per micro-batch a gather for each pass that gathers and a reduce-scatter behind its compute.
  const int passes = unshard == FsdpUnshard::kUnit ? 2 : 1;
  return job.micro_batches *
         (std::max(0.0, passes * gather + scatter - load.step_sec()) + passes * first_unit);
}

std::string limiter_of(const Estimate& e) {
  const std::array<std::pair<const char*, double>, 8> terms{{{"tp", e.tp_sec},
                                                             {"cp", e.cp_sec},
                                                             {"halo", e.halo_sec},
                                                             {"spatial", e.spatial_sec},
                                                             {"bubble", e.bubble_sec},
                                                             {"pp", e.pp_sec},
                                                             {"dp", e.dp_sec},
                                                             {"optimizer", e.optimizer_sec}}};
  double overhead = 0;
  for (const auto& [name, sec] : terms) {
    overhead += sec;
  }
  if (overhead < kComputeBoundFraction * e.iteration_sec) {
    return "compute";
  }
  const auto* largest = std::max_element(terms.begin(), terms.end(),
                                         [](auto& a, auto& b) { return a.second < b.second; });
  return largest->first;
}

}  // namespace

Estimate estimate_step(const HybridModel& model, const HybridJob& job, const PlannerNetwork& net) {
  const ParallelDegrees& d = job.degrees;
  const Groups g = groups_of(d);
  const std::vector<DeviceLoad> loads = device_loads(model, job, net);
  const auto slowest = std::max_element(
      loads.begin(), loads.end(), [](auto& a, auto& b) { return a.step_sec() < b.step_sec(); });
  double sum_sec = 0;
  std::uint64_t all_grad_bytes = 0;
  for (const DeviceLoad& l : loads) {
    sum_sec += l.step_sec();
    all_grad_bytes += l.grad_bytes;
  }
  const int m = job.micro_batches;
  const int chunks = job.schedule.virtual_stages;
  Estimate e{.compute_sec = m * slowest->compute_sec,
             .tp_sec = m * slowest->tp_sec,
             .cp_sec = m * slowest->cp_sec,
             .halo_sec = m * slowest->halo_sec,
             .spatial_sec = m * slowest->spatial_sec,
             // m * t_max + (sum_s t_s - t_max) / V: (p-1)/(mV+p-1) of the pipeline when the
             // stages are equal (Narayanan et al. 2021).
             .bubble_sec = (sum_sec - slowest->step_sec()) / chunks};
  if (d.pp > 1) {
    // The largest activation a virtual stage sends on (a transformer's are all one size).
    const std::vector<hybrid::PieceRange> ranges = hybrid::virtual_stage_pieces(model, job);
    std::uint64_t boundary_bytes = 0;
    for (std::size_t v = 0; v + 1 < ranges.size(); ++v) {
      const auto last = static_cast<std::size_t>(ranges[v].end - 1);
      boundary_bytes = std::max(boundary_bytes, model.pieces[last].output_bytes);
    }
    // Scatter/gather: each TP rank sends its 1/tp, and the receiving stage all-gathers the
    // pieces over its TP group.
    double hop_sec = transfer_sec(net, g.pp, boundary_bytes);
    if (hybrid::scatters_boundary(model, d.tp, boundary_bytes)) {
      hop_sec = transfer_sec(net, g.pp, boundary_bytes / static_cast<std::uint64_t>(d.tp)) +
                ring_sec(net, RingOp::kAllGather, g.tp, boundary_bytes);
    }
    e.pp_sec = 2.0 * (d.pp * chunks - 1) * hop_sec;
  }
  double tail_sec = 0;
  const double shards = job.zero_stage > 0 ? d.dp * d.cp : 1;
  for (const DeviceLoad& l : loads) {
    const double optimizer_sec =
        all_grad_bytes == 0
            ? 0.0
            : model.optimizer_sec * l.grad_bytes / static_cast<double>(all_grad_bytes) / shards;
    const double dp_sec = dp_exposed_sec(job, net, l, g.dp);
    if (dp_sec + optimizer_sec > tail_sec) {
      tail_sec = dp_sec + optimizer_sec;
      e.dp_sec = dp_sec;
      e.optimizer_sec = optimizer_sec;
    }
  }
  if (d.pp > 1 && model.tied_grad_bytes > 0) {
    const RankGroup ends{.size = 2, .stride = g.pp.stride * (d.pp - 1)};
    e.dp_sec += ring_sec(net, RingOp::kAllReduce, ends, model.tied_grad_bytes);
  }
  e.iteration_sec = e.compute_sec + e.tp_sec + e.cp_sec + e.halo_sec + e.spatial_sec +
                    e.bubble_sec + e.pp_sec + e.dp_sec + e.optimizer_sec;
  e.limiter = limiter_of(e);
  return e;
}

}  // namespace dtsim::sim
