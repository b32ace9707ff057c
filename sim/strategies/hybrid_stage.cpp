// One pipeline stage's program: the schedule's forward and backward steps over the pieces of its
// model chunks, with every communication they need (HYBRID.md, "Per piece").
#include <algorithm>
#include <map>

#include "sim/strategies/hybrid_internal.h"
#include "workloads/trace.h"

namespace dtsim::sim::hybrid {

namespace {

using Deps = std::vector<std::int32_t>;

// " at h first, w inner" for a rank of a spatial grid (its edges), else "".
std::string grid_place(const HybridJob& job, const GridEdges& edges) {
  std::string place;
  for (std::size_t d = 0; d < 3; ++d) {
    if (job.spatial_grid[d] == 1) {
      continue;
    }
    const char* where = !edges.below[d] ? "first" : !edges.above[d] ? "last" : "inner";
    place += std::string(place.empty() ? " at " : ", ") + "hwd"[d] + " " + where;
  }
  return place;
}

// Writes one stage's program node by node. `wait` holds what the next compute node must wait
// for besides its stream (the communication that produced its input), `last` the node that
// ends the pass so far.
class StageWriter {
 public:
  StageWriter(const HybridModel& model, const HybridJob& job, int stage, const GridEdges& edges,
              ExecutionGraph& graph)
      : model_(model),
        job_(job),
        stage_(stage),
        graph_(graph),
        ranges_(virtual_stage_pieces(model, job)),
        roles_(stage_roles(model, job, stage, edges)),
        param_ready_(model.pieces.size(), -1) {
    program_.name = job.degrees.pp == 1 ? "replica" : "stage " + std::to_string(stage);
    program_.name += grid_place(job, edges);
    for (int r = 0; r < kRoleCount; ++r) {
      role_index_[r] = -1;
      if (roles_[static_cast<std::size_t>(r)]) {
        role_index_[r] = static_cast<std::int32_t>(program_.comms.size());
        program_.comms.emplace_back(role_name(static_cast<Role>(r)));
      }
    }
  }

  Program build() {
    const int pp = job_.degrees.pp;
    const std::vector<PipelineStep> order =
        stage_order(job_.schedule, pp, job_.micro_batches, stage_);
    for (iteration_ = 0; iteration_ < job_.iterations; ++iteration_) {
      dp_last_ = -1;
      edp_last_ = -1;
      for (const PipelineStep& step : order) {
        micro_batch_ = step.micro_batch;
        const int v = step.chunk * pp + stage_;
        if (step.forward) {
          forward_step(v);
        } else {
          backward_step(v);
        }
      }
      optimizer_step();
    }
    return std::move(program_);
  }

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
  [[nodiscard]] std::uint64_t boundary_bytes(int piece) const {
    const std::uint64_t bytes = output_bytes(piece);
    return scatters(piece) ? bytes / static_cast<std::uint64_t>(job_.degrees.tp) : bytes;
  }
  // Receives piece's output across a stage boundary on `role`; under scatter/gather, then
  // all-gathers it over the TP group. Returns what the stage's first compute waits for.
  Deps receive_boundary(Role role, int piece, int at) {
    const std::int32_t in = p2p(NodeKind::kRecv, role, at, boundary_bytes(piece), {});
    if (!scatters(piece)) {
      return {in};
    }
    return {collective(CollectiveOp::kAllGather, kTp, at, output_bytes(piece), {in})};
  }
  [[nodiscard]] bool last_micro_batch() const { return micro_batch_ == job_.micro_batches - 1; }

  Node tagged(NodeKind kind, int piece) const {
    return {.kind = kind,
            .phase = phase_,
            .iteration = iteration_,
            .micro_batch = micro_batch_,
            .layer = piece};
  }

  std::int32_t compute(int piece, double duration_sec, const Deps& deps) {
    Node node = tagged(NodeKind::kCompute, piece);
    node.duration_sec = duration_sec;
    return program_.add(node, deps);
  }

  std::int32_t collective(CollectiveOp op, Role role, int piece, std::uint64_t bytes,
                          const Deps& deps) {
    Node node = tagged(NodeKind::kCollective, piece);
    node.op = op;
    node.comm = role_index_[role];
    node.bytes = bytes;
    return program_.add(node, deps);
  }

  // Sends go to local rank 1 of a pair communicator, receives come from local rank 0.
  std::int32_t p2p(NodeKind kind, Role role, int piece, std::uint64_t bytes, const Deps& deps) {
    Node node = tagged(kind, piece);
    node.comm = role_index_[role];
    node.peer = kind == NodeKind::kSend ? 1 : 0;
    node.bytes = bytes;
    return program_.add(node, deps);
  }

  // `deps` and the compute whose output the communication before a pass carries (the previous
  // piece's, input_ >= 0): a halo, a statistic, a gather or a dispatch is made of that output, so
  // it waits for that compute, not only for what its own stream ran before.
  [[nodiscard]] Deps with_input(Deps deps) const {
    if (input_ >= 0 && std::find(deps.begin(), deps.end(), input_) == deps.end()) {
      deps.push_back(input_);
    }
    return deps;
  }

  // The CNN collectives of `piece` at `step`, one after another after `deps`; returns what
  // follows them must wait for (`deps` when there are none).
  Deps piece_collectives(int piece, PieceStep step, Deps deps) {
    for (const PieceCollective& c : model_.pieces[static_cast<std::size_t>(piece)].collectives) {
      const Role role = c.group == PieceGroup::kTp ? kTp : kSpatial;
      if (c.step == step && has(role)) {
        deps = {collective(c.op, role, piece, c.bytes, with_input(deps))};
      }
    }
    return deps;
  }

  // CNN halos of `piece` after `deps`: forward, the piece's halo rows to the neighbours below
  // and above in each grid dimension; backward, their gradients back. Returns `deps` and the
  // receives, which the next compute waits for.
  Deps halos(int piece, bool forward, Deps deps) {
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

  // The compute of one pass of `piece`, as a CP ring where it passes key/value blocks: the
  // block already here computes while the next one travels (HYBRID.md, "CP").
  std::int32_t piece_compute(int piece, double duration_sec, std::uint64_t ring_bytes,
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

  // Overlapped TP (HybridJob::tp_overlap, HYBRID.md): whether the collective of `bytes` beside
  // a GEMM of `gemm_sec` runs chunk by chunk with it.
  [[nodiscard]] bool overlaps(std::uint64_t bytes, double gemm_sec) const {
    return job_.tp_overlap && job_.sequence_parallel && has(kTpNext) && bytes > 0 && gemm_sec > 0;
  }
  [[nodiscard]] std::uint64_t ring_chunk(std::uint64_t bytes) const {
    const auto tp = static_cast<std::uint64_t>(job_.degrees.tp);
    return (bytes + tp - 1) / tp;
  }

  // An all-gather of `bytes` beside the GEMM that consumes it: the GEMM runs in tp chunks, the
  // first on this rank's own shard while it goes to the next rank, each next one on the shard
  // received from the previous rank, which is passed on in turn. Returns the last chunk.
  std::int32_t gather_beside_gemm(int piece, std::uint64_t bytes, double gemm_sec,
                                  const Deps& deps) {
    const int tp = job_.degrees.tp;
    std::int32_t chunk = compute(piece, gemm_sec / tp, deps);
    Deps shard = with_input(deps);
    for (int k = 1; k < tp; ++k) {
      p2p(NodeKind::kSend, kTpNext, piece, ring_chunk(bytes), shard);
      shard = {p2p(NodeKind::kRecv, kTpPrev, piece, ring_chunk(bytes), {})};
      chunk = compute(piece, gemm_sec / tp, shard);
    }
    return chunk;
  }

  // A reduce-scatter of `bytes` beside the GEMM that makes them: the GEMM runs in tp chunks,
  // each the partial sums of one rank's shard; the running sum received from the previous rank
  // is added to the next chunk and passed on while the chunk after it computes. Returns the
  // last addition, the reduced shard (a node of no duration: the additions' time is in the
  // piece's elementwise work).
  std::int32_t reduce_scatter_beside_gemm(int piece, std::uint64_t bytes, double gemm_sec,
                                          const Deps& deps) {
    const int tp = job_.degrees.tp;
    Deps sum = {compute(piece, gemm_sec / tp, deps)};
    for (int k = 1; k < tp; ++k) {
      p2p(NodeKind::kSend, kTpNext, piece, ring_chunk(bytes), sum);
      const std::int32_t got = p2p(NodeKind::kRecv, kTpPrev, piece, ring_chunk(bytes), {});
      sum = {compute(piece, gemm_sec / tp, {}), got};
    }
    return compute(piece, 0, sum);
  }

  // One forward pass of `piece` (phase_ forward or recompute) after `wait`.
  void forward_piece(int piece, double duration_sec, bool gather) {
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
    const bool overlap_in = overlaps(p.tp_in_bytes, p.tp_in_gemm_sec);
    const bool overlap_out = overlaps(p.tp_out_bytes, p.tp_out_gemm_sec);
    if (has(kTp) && sp && p.tp_in_bytes > 0 && !overlap_in) {
      deps = {collective(CollectiveOp::kAllGather, kTp, piece, p.tp_in_bytes, with_input(deps))};
    }
    if (has(kEp) && p.expert) {
      deps = {collective(CollectiveOp::kAllToAll, kEp, piece, p.ep_bytes, with_input(deps))};
    }
    deps = halos(piece, true, piece_collectives(piece, PieceStep::kBeforeForward, deps));
    double rest_sec = duration_sec;
    if (overlap_in) {
      deps = {gather_beside_gemm(piece, p.tp_in_bytes, p.tp_in_gemm_sec, deps)};
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
    if (has(kTp) && p.tp_out_bytes > 0 && !overlap_out) {
      const CollectiveOp op = sp ? CollectiveOp::kReduceScatter : CollectiveOp::kAllReduce;
      wait_ = {last_ = collective(op, kTp, piece, p.tp_out_bytes, {last_})};
    }
    for (int k = 0; has(kTp) && p.tp_loss_bytes > 0 && k < p.tp_loss_collectives; ++k) {
      wait_ = {last_ = collective(CollectiveOp::kAllReduce, kTp, piece, p.tp_loss_bytes, {last_})};
    }
  }

  // One backward pass of `piece` after `wait`; returns the node after which its gradients
  // are ready.
  std::int32_t backward_piece(int piece) {
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
    if (overlap_out) {
      deps = {gather_beside_gemm(piece, p.tp_out_bytes, p.tp_out_gemm_sec, deps)};
      rest_sec -= p.tp_out_gemm_sec;
    } else if (has(kTp) && sp && p.tp_out_bytes > 0) {
      deps = {collective(CollectiveOp::kAllGather, kTp, piece, p.tp_out_bytes, with_input(deps))};
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
    last_ = input_ = gradients;
    wait_.clear();
    if (p.cp_kv_bytes > 0 && job_.degrees.cp > 1) {
      wait_ = {gradients};  // the input gradient needs the key/value gradients
    }
    if (has(kEp) && p.expert) {
      wait_ = {last_ = collective(CollectiveOp::kAllToAll, kEp, piece, p.ep_bytes, {last_})};
    }
    if (has(kTp) && p.tp_in_bytes > 0) {
      const CollectiveOp op = sp ? CollectiveOp::kReduceScatter : CollectiveOp::kAllReduce;
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

  // A piece's gradient or weight bytes on this stage: the model's last piece also holds the
  // tied embedding's copy when the pipeline puts it on another stage than the embedding.
  [[nodiscard]] std::uint64_t piece_bytes(int i, bool weights) const {
    const ModelPiece& p = model_.pieces[static_cast<std::size_t>(i)];
    const bool copy = has(kEmb) && i + 1 == static_cast<int>(model_.pieces.size());
    return weights ? p.weight_bytes + (copy ? model_.tied_weight_bytes : 0)
                   : p.grad_bytes + (copy ? model_.tied_grad_bytes : 0);
  }

  [[nodiscard]] std::uint64_t unit_bytes(int begin, int end, bool weights) const {
    std::uint64_t bytes = 0;
    for (int i = begin; i < end; ++i) {
      bytes += piece_bytes(i, weights);
    }
    return bytes;
  }

  // Pieces [begin, end) of a virtual stage, cut into units.
  [[nodiscard]] std::vector<PieceRange> units_of(PieceRange range) const {
    std::vector<PieceRange> units;
    for (int i = range.begin; i < range.end; ++i) {
      const int unit = model_.pieces[static_cast<std::size_t>(i)].unit;
      if (units.empty() ||
          model_.pieces[static_cast<std::size_t>(units.back().begin)].unit != unit) {
        units.push_back({i, i});
      }
      units.back().end = i + 1;
    }
    return units;
  }

  // ZeRO-3: gathers unit u's parameters once the compute before unit u-1 ended (FSDP's one
  // unit of prefetch). Returns the gather, or -1 when the unit holds no weights.
  std::int32_t gather_unit(PieceRange unit, const Deps& after) {
    const std::uint64_t bytes = unit_bytes(unit.begin, unit.end, true);
    if (bytes == 0) {
      return -1;
    }
    return collective(CollectiveOp::kAllGather, kDpGather, unit.begin, bytes, after);
  }

  void forward_step(int v) {
    phase_ = Phase::kForward;
    const PieceRange range = ranges_[static_cast<std::size_t>(v)];
    wait_.clear();
    input_ = -1;
    if (v > 0 && has(kActIn)) {
      wait_ = receive_boundary(kActIn, range.begin - 1, range.begin);
    }
    const std::vector<PieceRange> units = units_of(range);
    std::vector<std::int32_t> gathers(units.size(), -1);
    std::int32_t before_previous = -1;  // the last node of unit u-2's pass
    // Kept all step, the weights are gathered for the step's first micro-batch only.
    const bool gather =
        job_.zero_stage == 3 && (unshard_ != FsdpUnshard::kStep || micro_batch_ == 0);
    for (std::size_t u = 0; u < units.size(); ++u) {
      if (gather) {
        if (u == 0) {
          gathers[0] = gather_unit(units[0], {});
        }
        if (u + 1 < units.size()) {
          gathers[u + 1] =
              gather_unit(units[u + 1], before_previous >= 0 ? Deps{before_previous} : Deps{});
        }
        zero3_gather_ = gathers[u];
      }
      for (int i = units[u].begin; i < units[u].end; ++i) {
        forward_piece(i, model_.pieces[static_cast<std::size_t>(i)].forward_sec, true);
        zero3_gather_ = -1;
      }
      before_previous = last_;
    }
    if (v + 1 < virtual_stages() && has(kActOut)) {
      p2p(NodeKind::kSend, kActOut, range.end - 1, boundary_bytes(range.end - 1), {last_});
    }
  }

  // Recomputes a unit's forward before its backward: the whole forward with its TP
  // communication (full), or the compute of the pieces that keep no activations (selective).
  void recompute_unit(PieceRange unit) {
    phase_ = Phase::kRecompute;
    for (int i = unit.begin; i < unit.end; ++i) {
      const double sec = model_.pieces[static_cast<std::size_t>(i)].recompute_sec;
      if (sec <= 0) {
        continue;
      }
      if (job_.full_recompute) {
        forward_piece(i, sec, false);
      } else {
        Deps deps = wait_;
        if (zero3_gather_ >= 0) {
          deps.push_back(zero3_gather_);  // recomputing needs the gathered weights too
        }
        last_ = compute(i, sec, deps);
        wait_.clear();
      }
    }
    phase_ = Phase::kBackward;
  }

  void backward_step(int v) {
    phase_ = Phase::kBackward;
    const PieceRange range = ranges_[static_cast<std::size_t>(v)];
    wait_.clear();
    input_ = -1;
    if (v + 1 < virtual_stages() && has(kGradIn)) {
      wait_ = receive_boundary(kGradIn, range.end - 1, range.end - 1);
    }
    std::vector<std::int32_t> ready(model_.pieces.size(), -1);
    const std::vector<PieceRange> units = units_of(range);
    std::int32_t before_previous = -1;
    std::int32_t next_gather = -1;
    const bool regather = job_.zero_stage == 3 && unshard_ == FsdpUnshard::kUnit;
    const bool reduce =
        job_.zero_stage == 3 && (unshard_ != FsdpUnshard::kStep || last_micro_batch());
    for (std::size_t k = units.size(); k-- > 0;) {
      if (regather) {
        const std::int32_t gather = k + 1 == units.size() ? gather_unit(units[k], {}) : next_gather;
        next_gather =
            k > 0 ? gather_unit(units[k - 1], before_previous >= 0 ? Deps{before_previous} : Deps{})
                  : -1;
        zero3_gather_ = gather;
      }
      recompute_unit(units[k]);
      for (int i = units[k].end; i-- > units[k].begin;) {
        ready[static_cast<std::size_t>(i)] = backward_piece(i);
        zero3_gather_ = -1;
      }
      before_previous = last_;
      if (reduce) {
        reduce_scatter_unit(units[k], ready[static_cast<std::size_t>(units[k].begin)]);
      }
    }
    if (job_.zero_stage < 3 && last_micro_batch()) {
      reduce_buckets(range, ready, false);
      reduce_buckets(range, ready, true);
    }
    if (v > 0 && has(kGradOut)) {
      p2p(NodeKind::kSend, kGradOut, range.begin, boundary_bytes(range.begin - 1), {last_});
    }
  }

  // ZeRO-3: a unit's gradients reduce-scattered over its shard group, and under hybrid
  // sharding the shard then all-reduced across the groups.
  void reduce_scatter_unit(PieceRange unit, std::int32_t ready) {
    const std::uint64_t bytes = unit_bytes(unit.begin, unit.end, false);
    if (bytes == 0) {
      return;
    }
    dp_last_ = collective(CollectiveOp::kReduceScatter, kDp, unit.begin, bytes, {ready});
    if (has(kDpReplica)) {
      const auto shard = static_cast<std::uint64_t>(job_.dp_shard);
      dp_last_ = collective(CollectiveOp::kAllReduce, kDpReplica, unit.begin,
                            (bytes + shard - 1) / shard, {dp_last_});
    }
  }

  // The gradient buckets of one virtual stage's pieces (dense or expert ones), by DDP's rule.
  void reduce_buckets(PieceRange range, const std::vector<std::int32_t>& ready, bool expert) {
    if (expert && !has(kEdp)) {
      return;
    }
    workloads::Workload chunk;  // the pieces as layers, for assign_buckets
    for (int i = range.begin; i < range.end; ++i) {
      const ModelPiece& p = model_.pieces[static_cast<std::size_t>(i)];
      chunk.layers.push_back(
          {.name = p.name, .param_bytes = p.expert == expert ? piece_bytes(i, false) : 0});
    }
    const CollectiveOp op =
        job_.zero_stage == 0 ? CollectiveOp::kAllReduce : CollectiveOp::kReduceScatter;
    for (const Bucket& b :
         assign_buckets(chunk, job_.bucket_cap_bytes, job_.first_bucket_cap_bytes)) {
      const int first = range.begin + b.first_layer;
      const int last = range.begin + b.last_layer;
      Node node = tagged(NodeKind::kCollective, first);
      node.op = op;
      node.last_layer = last;
      node.label = ExecutionGraph::intern(graph_.labels, "bucket " + std::to_string(buckets_++));
      node.comm = role_index_[expert ? kEdp : kDp];
      node.bytes = b.bytes;
      const std::int32_t index = program_.add(node, {ready[static_cast<std::size_t>(first)]});
      (expert ? edp_last_ : dp_last_) = index;
      if (job_.zero_stage > 0) {
        sharded_.push_back({first, last + 1, expert});
      }
    }
  }

  // The optimizer step over this stage's parameters (its shard under ZeRO), then, under
  // ZeRO-1/2, every bucket's updated parameters all-gathered before the next forward needs them.
  void optimizer_step() {
    phase_ = Phase::kOptimizer;
    micro_batch_ = job_.micro_batches - 1;
    Deps deps;
    for (std::int32_t d : {dp_last_, edp_last_}) {
      if (d >= 0) {
        deps.push_back(d);
      }
    }
    if (has(kEmb)) {  // after the data-parallel reduction, as Megatron-LM's finalize_model_grads
      const auto first = static_cast<int>(stage_ == 0 ? 0 : model_.pieces.size() - 1);
      deps = {collective(CollectiveOp::kAllReduce, kEmb, first, model_.tied_grad_bytes, deps)};
    }
    const std::int32_t optimizer = compute(-1, optimizer_sec(), deps);
    for (const Sharded& s : sharded_) {
      const std::uint64_t bytes = unit_bytes(s.begin, s.end, true);
      const std::int32_t gather =
          collective(CollectiveOp::kAllGather, s.expert ? kEdp : kDp, s.begin, bytes, {optimizer});
      for (int i = s.begin; i < s.end; ++i) {
        param_ready_[static_cast<std::size_t>(i)] = gather;
      }
    }
    sharded_.clear();
    buckets_ = 0;
  }

  // The whole model's optimizer time, scaled to this stage's gradient bytes and, under ZeRO,
  // divided among the ranks that share the parameters.
  [[nodiscard]] double optimizer_sec() const {
    std::uint64_t total = 0;
    std::uint64_t dense = 0;
    std::uint64_t expert = 0;
    for (const ModelPiece& p : model_.pieces) {
      total += p.grad_bytes;
    }
    const int pp = job_.degrees.pp;
    for (int chunk = 0; chunk < job_.schedule.virtual_stages; ++chunk) {
      const PieceRange r = ranges_[static_cast<std::size_t>(chunk * pp + stage_)];
      for (int i = r.begin; i < r.end; ++i) {
        const ModelPiece& p = model_.pieces[static_cast<std::size_t>(i)];
        (p.expert ? expert : dense) += p.grad_bytes;
      }
    }
    if (total == 0 || (dense + expert == total && job_.zero_stage == 0)) {
      return model_.optimizer_sec;  // exactly, as data parallelism runs it
    }
    const ParallelDegrees& d = job_.degrees;
    const double shards = job_.zero_stage == 0 ? 1.0
                          : job_.dp_shard > 0  ? 1.0 * job_.dp_shard
                                               : 1.0 * d.dp * d.cp;
    const double expert_shards = job_.zero_stage == 0 ? 1.0 : 1.0 * d.dp / d.ep * d.cp;
    return model_.optimizer_sec *
           (static_cast<double>(dense) / shards + static_cast<double>(expert) / expert_shards) /
           static_cast<double>(total);
  }

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
  int buckets_ = 0;
  std::vector<Sharded> sharded_;           // ZeRO-1/2 buckets to gather after the optimizer
  std::vector<std::int32_t> param_ready_;  // per piece: the gather its next forward waits for
};

}  // namespace

Program build_stage_program(const HybridModel& model, const HybridJob& job, int stage,
                            const GridEdges& edges, ExecutionGraph& graph) {
  return StageWriter(model, job, stage, edges, graph).build();
}

}  // namespace dtsim::sim::hybrid
