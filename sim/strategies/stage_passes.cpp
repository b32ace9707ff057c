// One piece's forward and backward pass on a stage, with the communication around it: TP
// collectives (overlapped or not), CP's ring, EP's all-to-alls, a CNN's collectives and halos
// (HYBRID.md, "Per piece").
#include <algorithm>

#include "sim/strategies/stage_writer.h"

namespace dtsim::sim::hybrid {

Deps StageWriter::receive_boundary(Role role, int piece, int at) {
  const std::int32_t in = p2p(NodeKind::kRecv, role, at, boundary_bytes(piece), {});
  if (!scatters(piece)) {
    return {in};
  }
  return {collective(CollectiveOp::kAllGather, kTp, at, output_bytes(piece), {in})};
}

Node StageWriter::tagged(NodeKind kind, int piece) const {
  return {.kind = kind,
          .phase = phase_,
          .iteration = iteration_,
          .micro_batch = micro_batch_,
          .layer = piece};
}

std::int32_t StageWriter::compute(int piece, double duration_sec, const Deps& deps) {
  Node node = tagged(NodeKind::kCompute, piece);
  node.duration_sec = duration_sec;
  return program_.add(node, deps);
}

std::int32_t StageWriter::collective(CollectiveOp op, Role role, int piece, std::uint64_t bytes,
                                     const Deps& deps) {
  Node node = tagged(NodeKind::kCollective, piece);
  node.op = op;
  node.comm = role_index_[role];
  node.bytes = bytes;
  return program_.add(node, deps);
}

std::int32_t StageWriter::p2p(NodeKind kind, Role role, int piece, std::uint64_t bytes,
                              const Deps& deps) {
  Node node = tagged(kind, piece);
  node.comm = role_index_[role];
  node.peer = kind == NodeKind::kSend ? 1 : 0;
  node.bytes = bytes;
  return program_.add(node, deps);
}

Deps StageWriter::with_input(Deps deps) const {
  if (input_ >= 0 && std::find(deps.begin(), deps.end(), input_) == deps.end()) {
    deps.push_back(input_);
  }
  return deps;
}

Deps StageWriter::piece_collectives(int piece, PieceStep step, Deps deps) {
  for (const PieceCollective& c : model_.pieces[static_cast<std::size_t>(piece)].collectives) {
    const Role role = c.group == PieceGroup::kTp ? kTp : kSpatial;
    if (c.step == step && has(role)) {
      deps = {collective(c.op, role, piece, c.bytes, with_input(deps))};
    }
  }
  return deps;
}

Deps StageWriter::halos(int piece, bool forward, Deps deps) {
  const ModelPiece& p = model_.pieces[static_cast<std::size_t>(piece)];
  Deps received;
  for (int d = 0; d < 3; ++d) {
    const auto u = static_cast<std::size_t>(d);
    // Forward sends down what the one below needs, up what the one above needs; backward
    // returns the gradient of what came from each side.
    const std::uint64_t to_below = forward ? p.halo_down_bytes[u] : p.halo_up_bytes[u];
    const std::uint64_t to_above = forward ? p.halo_up_bytes[u] : p.halo_down_bytes[u];
    if (to_above > 0 && has(halo_role(d, kUpSend))) {
      p2p(NodeKind::kSend, halo_role(d, kUpSend), piece, to_above, with_input(deps));
    }
    if (to_below > 0 && has(halo_role(d, kDownSend))) {
      p2p(NodeKind::kSend, halo_role(d, kDownSend), piece, to_below, with_input(deps));
    }
    if (to_above > 0 && has(halo_role(d, kUpRecv))) {  // the one below sent it up
      received.push_back(p2p(NodeKind::kRecv, halo_role(d, kUpRecv), piece, to_above, {}));
    }
    if (to_below > 0 && has(halo_role(d, kDownRecv))) {
      received.push_back(p2p(NodeKind::kRecv, halo_role(d, kDownRecv), piece, to_below, {}));
    }
  }
  deps.insert(deps.end(), received.begin(), received.end());
  return deps;
}

std::int32_t StageWriter::piece_compute(int piece, double duration_sec, std::uint64_t ring_bytes,
                                        const Deps& deps) {
  const int cp = job_.degrees.cp;
  if (cp == 1 || ring_bytes == 0) {
    return compute(piece, duration_sec, deps);
  }
  std::int32_t part = compute(piece, duration_sec / cp, deps);
  std::int32_t received = -1;
  for (int k = 1; k < cp; ++k) {
    p2p(NodeKind::kSend, kCpNext, piece, ring_bytes, k == 1 ? deps : Deps{received});
    received = p2p(NodeKind::kRecv, kCpPrev, piece, ring_bytes, {});
    part = compute(piece, duration_sec / cp, {received});
  }
  return part;
}

bool StageWriter::overlaps(std::uint64_t bytes, double gemm_sec) const {
  return job_.tp_overlap && job_.sequence_parallel && has(kTp) && bytes > 0 && gemm_sec > 0;
}

std::uint64_t StageWriter::ring_step_bytes(std::uint64_t bytes) const {
  const auto steps = static_cast<std::uint64_t>(job_.degrees.tp - 1);
  return (bytes + steps - 1) / steps;
}

std::int32_t StageWriter::gather_beside_gemm(int piece, std::uint64_t bytes, double gemm_sec,
                                             const Deps& deps) {
  const int tp = job_.degrees.tp;
  std::int32_t chunk = compute(piece, gemm_sec / tp, deps);
  Deps shard = with_input(deps);
  for (int k = 1; k < tp; ++k) {
    shard = {collective(CollectiveOp::kAllGather, kTp, piece, ring_step_bytes(bytes), shard)};
    chunk = compute(piece, gemm_sec / tp, shard);
  }
  return chunk;
}

std::int32_t StageWriter::reduce_scatter_beside_gemm(int piece, std::uint64_t bytes,
                                                     double gemm_sec, const Deps& deps) {
  const int tp = job_.degrees.tp;
  Deps sum = {compute(piece, gemm_sec / tp, deps)};
  for (int k = 1; k < tp; ++k) {
    const std::int32_t step =
        collective(CollectiveOp::kReduceScatter, kTp, piece, ring_step_bytes(bytes), sum);
    sum = {compute(piece, gemm_sec / tp, {}), step};
  }
  return compute(piece, 0, sum);
}

void StageWriter::forward_piece(int piece, double duration_sec, bool gather) {
  const ModelPiece& p = model_.pieces[static_cast<std::size_t>(piece)];
  const bool sp = job_.sequence_parallel;
  Deps deps = wait_;
  if (gather && param_ready_[static_cast<std::size_t>(piece)] >= 0) {
    deps.push_back(param_ready_[static_cast<std::size_t>(piece)]);
    param_ready_[static_cast<std::size_t>(piece)] = -1;
  }
  if (zero3_gather_ >= 0) {
    deps.push_back(zero3_gather_);
  }
  // Early stop: a recomputation that stops within the piece reduces no output.
  const bool output = phase_ != Phase::kRecompute || !p.recompute_skips_output;
  const bool overlap_in = overlaps(p.tp_in_bytes, p.tp_in_gemm_sec);
  const bool overlap_out = output && overlaps(p.tp_out_bytes, p.tp_out_gemm_sec);
  const std::uint64_t gather_in_bytes = p.tp_gather_bytes(p.tp_in_bytes);
  if (has(kTp) && sp && p.tp_in_bytes > 0 && !overlap_in) {
    deps = {collective(CollectiveOp::kAllGather, kTp, piece, gather_in_bytes, with_input(deps))};
  }
  if (has(kEp) && p.expert) {
    deps = {collective(CollectiveOp::kAllToAll, kEp, piece, p.ep_bytes, with_input(deps))};
  }
  deps = halos(piece, true, piece_collectives(piece, PieceStep::kBeforeForward, deps));
  double rest_sec = duration_sec;
  if (overlap_in) {
    deps = {gather_beside_gemm(piece, gather_in_bytes, p.tp_in_gemm_sec, deps)};
    rest_sec -= p.tp_in_gemm_sec;
  }
  rest_sec -= overlap_out ? p.tp_out_gemm_sec : 0;
  last_ = input_ = piece_compute(piece, std::max(0.0, rest_sec), p.cp_kv_bytes, deps);
  wait_.clear();
  if (overlap_out) {
    last_ = input_ = reduce_scatter_beside_gemm(piece, p.tp_out_bytes, p.tp_out_gemm_sec, {});
  }
  if (const Deps after = piece_collectives(piece, PieceStep::kAfterForward, {last_});
      after != Deps{last_}) {
    wait_ = after;
    last_ = after.front();
  }
  if (has(kEp) && p.expert) {
    wait_ = {last_ = collective(CollectiveOp::kAllToAll, kEp, piece, p.ep_bytes, {last_})};
  }
  if (has(kTp) && output && p.tp_out_bytes > 0 && !overlap_out) {
    const CollectiveOp op = sp ? CollectiveOp::kReduceScatter : CollectiveOp::kAllReduce;
    wait_ = {last_ = collective(op, kTp, piece, p.tp_out_bytes, {last_})};
  }
  for (int k = 0; has(kTp) && p.tp_loss_bytes > 0 && k < p.tp_loss_collectives; ++k) {
    wait_ = {last_ = collective(CollectiveOp::kAllReduce, kTp, piece, p.tp_loss_bytes, {last_})};
  }
}

std::int32_t StageWriter::backward_piece(int piece) {
  const ModelPiece& p = model_.pieces[static_cast<std::size_t>(piece)];
  const bool sp = job_.sequence_parallel;
  Deps deps = wait_;
  if (zero3_gather_ >= 0) {
    deps.push_back(zero3_gather_);
  }
  // Overlapped TP: the output gradient's gather beside the input-gradient GEMM of the piece's
  // last linear layer; the input gradient's reduce-scatter beside the weight-gradient GEMM of
  // its first, which needs no input gradient (Transformer Engine's bulk overlap).
  const bool overlap_out = overlaps(p.tp_out_bytes, p.tp_out_gemm_sec);
  const bool overlap_in = overlaps(p.tp_in_bytes, p.tp_in_gemm_sec);
  double rest_sec = p.backward_sec - (overlap_in ? p.tp_in_gemm_sec : 0);
  const std::uint64_t gather_out_bytes = p.tp_gather_bytes(p.tp_out_bytes);
  if (overlap_out) {
    deps = {gather_beside_gemm(piece, gather_out_bytes, p.tp_out_gemm_sec, deps)};
    rest_sec -= p.tp_out_gemm_sec;
  } else if (has(kTp) && sp && p.tp_out_bytes > 0) {
    deps = {collective(CollectiveOp::kAllGather, kTp, piece, gather_out_bytes, with_input(deps))};
  }
  if (has(kEp) && p.expert) {
    deps = {collective(CollectiveOp::kAllToAll, kEp, piece, p.ep_bytes, with_input(deps))};
  }
  // Ring attention's backward passes the key/value blocks and their gradients around, then
  // each gradient block travels one step more, home; the piece's gradients are ready once it
  // arrived.
  deps = piece_collectives(piece, PieceStep::kBeforeBackward, deps);
  std::int32_t gradients = piece_compute(piece, std::max(0.0, rest_sec), 2 * p.cp_kv_bytes, deps);
  if (job_.degrees.cp > 1 && p.cp_kv_bytes > 0) {
    p2p(NodeKind::kSend, kCpNext, piece, p.cp_kv_bytes, {gradients});
    gradients = p2p(NodeKind::kRecv, kCpPrev, piece, p.cp_kv_bytes, {});
  }
  return finish_backward(piece, gradients, overlap_in);
}

std::int32_t StageWriter::finish_backward(int piece, std::int32_t gradients, bool overlap_in) {
  const ModelPiece& p = model_.pieces[static_cast<std::size_t>(piece)];
  last_ = input_ = gradients;
  wait_.clear();
  if (p.cp_kv_bytes > 0 && job_.degrees.cp > 1) {
    wait_ = {gradients};  // the input gradient needs the key/value gradients
  }
  if (has(kEp) && p.expert) {
    wait_ = {last_ = collective(CollectiveOp::kAllToAll, kEp, piece, p.ep_bytes, {last_})};
  }
  if (has(kTp) && p.tp_in_bytes > 0) {
    const CollectiveOp op =
        job_.sequence_parallel ? CollectiveOp::kReduceScatter : CollectiveOp::kAllReduce;
    wait_ = {last_ = collective(op, kTp, piece, p.tp_in_bytes, {last_})};
  }
  if (overlap_in) {
    gradients = compute(piece, p.tp_in_gemm_sec, {gradients});
  }
  if (p.backward_halo) {  // the sends go after the gradients they carry
    const Deps got = halos(piece, false, {gradients});
    wait_.insert(wait_.end(), got.begin() + 1, got.end());
  }
  if (const Deps after = piece_collectives(piece, PieceStep::kAfterBackward, {last_});
      after != Deps{last_}) {
    wait_.push_back(after.front());
    last_ = after.front();
  }
  return gradients;
}

}  // namespace dtsim::sim::hybrid
