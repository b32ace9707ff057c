// One pipeline stage's program: the schedule's forward and backward steps over the pieces of its
// model chunks, data parallelism, ZeRO and the optimizer step (HYBRID.md); the pieces' passes
// are stage_passes.cpp's.
#include <map>

#include "sim/strategies/stage_writer.h"
#include "workloads/trace.h"

namespace dtsim::sim::hybrid {

namespace {

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

}  // namespace

StageWriter::StageWriter(const HybridModel& model, const HybridJob& job, int stage,
                         const GridEdges& edges, ExecutionGraph& graph)
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

Program StageWriter::build() {
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

std::uint64_t StageWriter::boundary_bytes(int piece) const {
  const std::uint64_t bytes = output_bytes(piece);
  return scatters(piece) ? bytes / static_cast<std::uint64_t>(job_.degrees.tp) : bytes;
}

std::uint64_t StageWriter::piece_bytes(int i, bool weights) const {
  const ModelPiece& p = model_.pieces[static_cast<std::size_t>(i)];
  const bool copy = has(kEmb) && i + 1 == static_cast<int>(model_.pieces.size());
  return weights ? p.weight_bytes + (copy ? model_.tied_weight_bytes : 0)
                 : p.grad_bytes + (copy ? model_.tied_grad_bytes : 0);
}

std::uint64_t StageWriter::unit_bytes(int begin, int end, bool weights, bool expert) const {
  std::uint64_t bytes = 0;
  for (int i = begin; i < end; ++i) {
    if (model_.pieces[static_cast<std::size_t>(i)].expert == expert) {
      bytes += piece_bytes(i, weights);
    }
  }
  return bytes;
}

int StageWriter::first_piece(PieceRange unit, bool expert) const {
  for (int i = unit.begin; i < unit.end; ++i) {
    if (model_.pieces[static_cast<std::size_t>(i)].expert == expert) {
      return i;
    }
  }
  return unit.begin;
}

std::vector<PieceRange> StageWriter::units_of(PieceRange range) const {
  std::vector<PieceRange> units;
  for (int i = range.begin; i < range.end; ++i) {
    const int unit = model_.pieces[static_cast<std::size_t>(i)].unit;
    if (units.empty() || model_.pieces[static_cast<std::size_t>(units.back().begin)].unit != unit) {
      units.push_back({i, i});
    }
    units.back().end = i + 1;
  }
  return units;
}

std::int32_t StageWriter::gather_unit(PieceRange unit, const Deps& after) {
  std::int32_t last = -1;
  Deps deps = after;
  if (deps.empty() && optimizer_ >= 0) {  // later ones follow compute after the optimizer
    deps.push_back(optimizer_);
  }
  if (expert_gather_ >= 0) {  // the dense gather is on another communicator than the last
    deps.push_back(expert_gather_);
  }
  for (const bool expert : {false, true}) {
    const std::uint64_t bytes = unit_bytes(unit.begin, unit.end, true, expert);
    if (bytes > 0) {
      last = collective(CollectiveOp::kAllGather, expert ? kEdpGather : kDpGather,
                        first_piece(unit, expert), bytes, deps);
      deps = {last};
      if (expert) {
        expert_gather_ = last;
      }
    }
  }
  return last;
}

void StageWriter::forward_step(int v) {
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
  const bool gather = job_.zero_stage == 3 && (unshard_ != FsdpUnshard::kStep || micro_batch_ == 0);
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

void StageWriter::recompute_unit(PieceRange unit) {
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
      // wait_ stays: the backward pass's communication needs what it holds too (a received
      // gradient, the previous piece's reduce-scatter), not only its compute stream.
      last_ = compute(i, sec, deps);
    }
  }
  phase_ = Phase::kBackward;
}

void StageWriter::backward_step(int v) {
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

void StageWriter::reduce_scatter_unit(PieceRange unit, std::int32_t ready) {
  Deps deps = {ready};
  if (edp_last_ >= 0) {  // the dense reduce-scatter after the last expert one (one stream)
    deps.push_back(edp_last_);
  }
  const std::uint64_t bytes = unit_bytes(unit.begin, unit.end, false, false);
  if (bytes > 0) {
    dp_last_ = collective(CollectiveOp::kReduceScatter, kDp, unit.begin, bytes, deps);
    deps.push_back(dp_last_);
  }
  if (bytes > 0 && has(kDpReplica)) {
    const auto shard = static_cast<std::uint64_t>(job_.dp_shard);
    dp_last_ = collective(CollectiveOp::kAllReduce, kDpReplica, unit.begin,
                          (bytes + shard - 1) / shard, {dp_last_});
  }
  const std::uint64_t expert_bytes = unit_bytes(unit.begin, unit.end, false, true);
  if (expert_bytes > 0) {
    edp_last_ =
        collective(CollectiveOp::kReduceScatter, kEdp, first_piece(unit, true), expert_bytes, deps);
  }
}

void StageWriter::reduce_buckets(PieceRange range, const std::vector<std::int32_t>& ready,
                                 bool expert) {
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

void StageWriter::optimizer_step() {
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
  optimizer_ = optimizer;
  for (const Sharded& s : sharded_) {
    const std::uint64_t bytes = unit_bytes(s.begin, s.end, true, s.expert);
    const std::int32_t gather =
        collective(CollectiveOp::kAllGather, s.expert ? kEdp : kDp,
                   first_piece({s.begin, s.end}, s.expert), bytes, {optimizer});
    for (int i = s.begin; i < s.end; ++i) {  // the bucket's own kind: it gathers no other
      if (model_.pieces[static_cast<std::size_t>(i)].expert == s.expert) {
        param_ready_[static_cast<std::size_t>(i)] = gather;
      }
    }
  }
  sharded_.clear();
  buckets_ = 0;
}

double StageWriter::optimizer_sec() const {
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

Program build_stage_program(const HybridModel& model, const HybridJob& job, int stage,
                            const GridEdges& edges, ExecutionGraph& graph) {
  return StageWriter(model, job, stage, edges, graph).build();
}

}  // namespace dtsim::sim::hybrid
