#include "sim/strategies/hybrid.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "sim/strategies/hybrid_internal.h"

namespace dtsim::sim {

using hybrid::PieceRange;
using hybrid::Role;

namespace hybrid {

namespace {

constexpr const char* kGridDims = "hwd";  // the spatial grid's height, width, depth

// The communicator kind of a halo role: "halo_h+" (data going to the higher coordinate in
// height, both ends of the pair) or "halo_h-", and so on for w and d.
std::string halo_kind(Role role) {
  const int r = (role - kHalo) % 4;
  return std::string("halo_") + kGridDims[(role - kHalo) / 4] +
         (r == kUpSend || r == kUpRecv ? "+" : "-");
}

bool spatial_split(const HybridJob& job) {
  return job.spatial_grid[0] * job.spatial_grid[1] * job.spatial_grid[2] > 1;
}

}  // namespace

std::string role_name(Role role) {
  static constexpr const char* kNames[kHalo] = {
      "dp",          "dp_gather", "tp",         "cp_next",    "cp_prev",
      "ep",          "edp",       "pp_act_in",  "pp_act_out", "pp_grad_in",
      "pp_grad_out", "emb",       "dp_replica", "spatial",    "edp_gather"};
  if (role < kHalo) {
    return kNames[role];
  }
  const int r = (role - kHalo) % 4;
  return halo_kind(role) + (r == kUpSend || r == kDownSend ? "_send" : "_recv");
}

GridEdges grid_edges(const HybridJob& job, int cp_coordinate) {
  GridEdges e;
  int rest = cp_coordinate;
  for (std::size_t d = 0; d < 3; ++d) {
    const int n = job.spatial_grid[d];
    const int x = rest % n;
    rest /= n;
    e.below[d] = x > 0;
    e.above[d] = x + 1 < n;
  }
  return e;
}

std::vector<bool> stage_roles(const HybridModel& model, const HybridJob& job, int stage,
                              const GridEdges& edges) {
  const ParallelDegrees& d = job.degrees;
  std::vector<bool> roles(kRoleCount, false);
  bool experts = false;
  for (const ModelPiece& p : model.pieces) {
    experts = experts || p.expert;
  }
  roles[kDp] = true;
  roles[kDpGather] = job.zero_stage == 3;
  roles[kTp] = d.tp > 1;
  roles[kCpNext] = roles[kCpPrev] = d.cp > 1 && !spatial_split(job);
  roles[kSpatial] = spatial_split(job);
  for (int dim = 0; dim < 3; ++dim) {
    const auto u = static_cast<std::size_t>(dim);
    roles[halo_role(dim, kUpSend)] = roles[halo_role(dim, kDownRecv)] = edges.above[u];
    roles[halo_role(dim, kDownSend)] = roles[halo_role(dim, kUpRecv)] = edges.below[u];
  }
  roles[kEp] = d.ep > 1 && experts;
  roles[kEdp] = experts;
  roles[kEdpGather] = experts && job.zero_stage == 3;
  // A device receives activations unless it only holds the first virtual stage, and sends them
  // on unless it only holds the last (interleaving wraps the last device to the first).
  const bool wraps = job.schedule.virtual_stages > 1;
  roles[kActIn] = roles[kGradOut] = d.pp > 1 && (stage > 0 || wraps);
  roles[kActOut] = roles[kGradIn] = d.pp > 1 && (stage + 1 < d.pp || wraps);
  roles[kDpReplica] = job.zero_stage == 3 && job.dp_shard > 0 && job.dp_shard < d.dp * d.cp;
  roles[kEmb] = d.pp > 1 && model.tied_grad_bytes > 0 && (stage == 0 || stage + 1 == d.pp);
  return roles;
}

bool scatters_boundary(const HybridModel& model, int tp, std::uint64_t bytes) {
  return model.scatter_gather_boundary && tp > 1 && bytes % static_cast<std::uint64_t>(tp) == 0;
}

std::vector<PieceRange> virtual_stage_pieces(const HybridModel& model, const HybridJob& job) {
  const int parts = job.degrees.pp * job.schedule.virtual_stages;
  const int units = model.pieces.back().unit + 1;
  const std::vector<int> split =
      job.stage_units.empty() ? split_units(units - model.first_units - model.last_units, parts)
                              : job.stage_units;
  std::vector<PieceRange> ranges(static_cast<std::size_t>(parts));
  int next_unit = 0;
  std::size_t piece = 0;
  for (int v = 0; v < parts; ++v) {
    next_unit += split[static_cast<std::size_t>(v)] + (v == 0 ? model.first_units : 0) +
                 (v + 1 == parts ? model.last_units : 0);
    ranges[static_cast<std::size_t>(v)].begin = static_cast<int>(piece);
    while (piece < model.pieces.size() && model.pieces[piece].unit < next_unit) {
      ++piece;
    }
    ranges[static_cast<std::size_t>(v)].end = static_cast<int>(piece);
  }
  return ranges;
}

}  // namespace hybrid

FsdpUnshard fsdp_unshard(const HybridJob& job) {
  if (job.fsdp_unshard != FsdpUnshard::kAuto) {
    return job.fsdp_unshard;
  }
  return job.degrees.pp > 1 ? FsdpUnshard::kStep : FsdpUnshard::kUnit;
}

namespace {
constexpr std::array<std::pair<FsdpUnshard, std::string_view>, 4> kUnshardNames{
    {{FsdpUnshard::kAuto, "auto"},
     {FsdpUnshard::kUnit, "unit"},
     {FsdpUnshard::kMicroBatch, "micro-batch"},
     {FsdpUnshard::kStep, "step"}}};
}  // namespace

std::string fsdp_unshard_name(FsdpUnshard unshard) {
  for (const auto& [value, name] : kUnshardNames) {
    if (value == unshard) {
      return std::string(name);
    }
  }
  return "auto";
}

std::optional<FsdpUnshard> parse_fsdp_unshard(std::string_view text) {
  for (const auto& [value, name] : kUnshardNames) {
    if (name == text) {
      return value;
    }
  }
  return std::nullopt;
}

std::vector<int> split_units(int units, int parts) {
  std::vector<int> split(static_cast<std::size_t>(parts), units / parts);
  for (int v = 0; v < units % parts; ++v) {
    ++split[static_cast<std::size_t>(v)];
  }
  return split;
}

namespace {

std::string check_pieces(const HybridModel& model) {
  if (model.pieces.empty()) {
    return "pieces: the model has no pieces";
  }
  int unit = 0;
  for (std::size_t i = 0; i < model.pieces.size(); ++i) {
    const int u = model.pieces[i].unit;
    if (u != unit && u != unit + 1) {
      return "pieces: piece " + std::to_string(i) + " is in unit " + std::to_string(u) +
             ", expected " + std::to_string(unit) + " or " + std::to_string(unit + 1) +
             " (units are numbered 0, 1, ... in forward order)";
    }
    unit = u;
    const ModelPiece& p = model.pieces[i];
    const double gemms_sec = p.tp_in_gemm_sec + p.tp_out_gemm_sec;
    const double room = 1 + 1e-9;  // the pass's own sum may round below its parts'
    if (!(p.tp_in_gemm_sec >= 0) || !(p.tp_out_gemm_sec >= 0) || !std::isfinite(gemms_sec) ||
        gemms_sec > p.forward_sec * room || gemms_sec > p.backward_sec * room) {
      return "pieces: piece " + std::to_string(i) + " (" + p.name +
             "): the GEMMs beside its TP collectives take " + std::to_string(gemms_sec) +
             " s, expected >= 0 and at most its forward and its backward";
    }
  }
  const int balanced = unit + 1 - model.first_units - model.last_units;
  if (model.first_units < 0 || model.last_units < 0 || balanced < 1) {
    return "pieces: the model has no unit to balance over the pipeline";
  }
  return "";
}

// The job's ZeRO, FSDP and TP-overlap knobs (`experts`: the model has expert pieces).
std::string check_sharding(const HybridJob& job, bool experts) {
  const ParallelDegrees& d = job.degrees;
  if (job.zero_stage < 0 || job.zero_stage > 3) {
    return "zero: " + std::to_string(job.zero_stage) + " is not a ZeRO stage (0, 1, 2 or 3)";
  }
  if (job.dp_shard != 0 &&
      (job.zero_stage != 3 || job.dp_shard < 0 || (d.dp * d.cp) % job.dp_shard != 0)) {
    return "dp_shard: " + std::to_string(job.dp_shard) +
           " must divide dp * cp = " + std::to_string(d.dp * d.cp) + ", with ZeRO-3";
  }
  if (job.fsdp_unshard != FsdpUnshard::kAuto && job.zero_stage != 3) {
    return "fsdp_unshard: how long gathered weights are kept applies to ZeRO-3 only";
  }
  if (job.dp_shard != 0 && experts) {
    return "dp_shard: " + std::to_string(job.dp_shard) +
           ": hybrid sharding of a model with experts is not modelled";
  }
  if (job.tp_overlap && d.tp > 1 && !job.sequence_parallel) {
    return "tp_overlap: overlapped TP communication needs sequence parallelism (it overlaps the "
           "gathers and reduce-scatters that replace the all-reduces)";
  }
  return "";
}

std::string check_split(const HybridModel& model, const HybridJob& job) {
  const int parts = job.degrees.pp * job.schedule.virtual_stages;
  const int balanced = model.pieces.back().unit + 1 - model.first_units - model.last_units;
  if (job.stage_units.empty()) {
    if (balanced < parts) {
      return "pp: " + std::to_string(parts) + " virtual pipeline stages for " +
             std::to_string(balanced) + " layers: every stage needs one at least";
    }
    return "";
  }
  if (job.stage_units.size() != static_cast<std::size_t>(parts)) {
    return "stage_units: " + std::to_string(job.stage_units.size()) + " counts for " +
           std::to_string(parts) + " virtual pipeline stages";
  }
  long long sum = 0;
  for (int n : job.stage_units) {
    if (n < 1) {
      return "stage_units: every virtual stage needs one layer at least";
    }
    sum += n;
  }
  if (sum != balanced) {
    return "stage_units: the counts add up to " + std::to_string(sum) + ", the model has " +
           std::to_string(balanced) + " layers";
  }
  return "";
}

// Every piece that ends a virtual stage (but the last) knows the bytes of its output.
std::string check_boundaries(const HybridModel& model, const HybridJob& job) {
  if (job.degrees.pp == 1) {
    return "";
  }
  const std::vector<PieceRange> ranges = hybrid::virtual_stage_pieces(model, job);
  for (std::size_t v = 0; v + 1 < ranges.size(); ++v) {
    const ModelPiece& last = model.pieces[static_cast<std::size_t>(ranges[v].end - 1)];
    if (last.output_bytes == 0) {
      return "pp: a pipeline stage ending with " + last.name +
             " sends its output to the next, and the model does not say how many bytes it is "
             "(a workload trace needs activation_bytes, format version 3)";
    }
  }
  return "";
}

}  // namespace

std::string check_hybrid(const HybridModel& model, const HybridJob& job) {
  const ParallelDegrees& d = job.degrees;
  if (std::string why = check_pieces(model); !why.empty()) {
    return why;
  }
  if (d.dp % d.ep != 0) {
    return "ep: " + std::to_string(d.ep) + " does not divide dp = " + std::to_string(d.dp);
  }
  bool experts = false;
  for (const ModelPiece& p : model.pieces) {
    experts = experts || p.expert;
  }
  if (d.ep > 1 && !experts) {
    return "ep: expert parallelism needs a model with experts";
  }
  if (std::string why = check_sharding(job, experts); !why.empty()) {
    return why;
  }
  if (hybrid::spatial_split(job)) {
    const auto& g = job.spatial_grid;
    if (g[0] < 1 || g[1] < 1 || g[2] < 1 || 1LL * g[0] * g[1] * g[2] != d.cp) {
      return "cp: the spatial grid " + std::to_string(g[0]) + "x" + std::to_string(g[1]) + "x" +
             std::to_string(g[2]) + " is not cp = " + std::to_string(d.cp) + " ranks";
    }
    for (const ModelPiece& p : model.pieces) {
      if (p.cp_kv_bytes > 0) {
        return "cp: a spatial split of a model with ring attention";
      }
    }
  }
  if (job.micro_batches < 1) {
    return "micro_batches: " + std::to_string(job.micro_batches) + ", expected 1 or more";
  }
  if (job.schedule.kind == PipelineScheduleKind::kInterleaved && d.pp < 2) {
    return "schedule: interleaving needs pp >= 2";
  }
  if (std::string why = check_pipeline(job.schedule, d.pp, job.micro_batches); !why.empty()) {
    return "schedule: " + why;
  }
  if (job.iterations < 1) {
    return "iterations: " + std::to_string(job.iterations) + ", expected 1 or more";
  }
  if (std::string why = check_split(model, job); !why.empty()) {
    return why;
  }
  return check_boundaries(model, job);
}

namespace {

// What kind of communicator a role binds: the two ends of a pair share one ("pp_act" is the
// sender's pp_act_out and the receiver's pp_act_in).
std::string comm_kind(Role role) {
  if (role >= hybrid::kHalo) {
    return hybrid::halo_kind(role);
  }
  switch (role) {
    case hybrid::kCpNext:
    case hybrid::kCpPrev:
      return "cp";
    case hybrid::kActIn:
    case hybrid::kActOut:
      return "pp_act";
    case hybrid::kGradIn:
    case hybrid::kGradOut:
      return "pp_grad";
    default:
      return hybrid::role_name(role);
  }
}

// Communicators by (kind, members), named by the kind alone when it has one, else "KIND.K" in
// order of first appearance.
class CommTable {
 public:
  std::int32_t add(Role role, std::vector<int> members) {
    std::string kind = comm_kind(role);
    auto [it, inserted] = index_.try_emplace({kind, members}, 0);
    if (inserted) {
      it->second = static_cast<std::int32_t>(comms_.size());
      comms_.push_back({kind, std::move(members)});
      ++count_[kind];
    }
    return it->second;
  }

  std::vector<Communicator> finish() {
    std::map<std::string, int> seen;
    for (Communicator& c : comms_) {
      if (count_[c.name] > 1) {
        const int k = seen[c.name]++;
        c.name += "." + std::to_string(k);
      }
    }
    return std::move(comms_);
  }

 private:
  std::map<std::pair<std::string, std::vector<int>>, std::int32_t> index_;
  std::map<std::string, int> count_;
  std::vector<Communicator> comms_;
};

// The two-rank communicator from `from` to `to` (sender local 0, receiver local 1).
std::vector<int> pair(int from, int to) {
  return {from, to};
}

// The data x context group of `rank` (context fastest), or under hybrid sharding (`shard` > 0)
// its block of `shard` consecutive members (dp, dp_gather) or the members at its position in
// every block (dp_replica).
std::vector<int> data_group(const RankLayout& layout, int rank, Role role, int shard) {
  std::vector<int> all = layout.group(rank, {Dim::kCp, Dim::kDp});
  if (shard <= 0 || shard == static_cast<int>(all.size())) {
    return all;
  }
  const auto i = static_cast<int>(std::find(all.begin(), all.end(), rank) - all.begin());
  std::vector<int> members;
  if (role == hybrid::kDpReplica) {
    for (int j = i % shard; j < static_cast<int>(all.size()); j += shard) {
      members.push_back(all[static_cast<std::size_t>(j)]);
    }
  } else {
    const int first = i / shard * shard;
    members.assign(all.begin() + first, all.begin() + first + shard);
  }
  return members;
}

// The communicator rank `rank` binds `role` to (`shard`: HybridJob::dp_shard under ZeRO-3;
// `grid`: HybridJob::spatial_grid).
std::vector<int> members(const RankLayout& layout, int rank, Role role, int shard,
                         const std::array<int, 3>& grid) {
  const ParallelDegrees& d = layout.degrees();
  auto shifted = [&](Dim dim, int by) {
    std::array<int, kDims> c{};
    for (int i = 0; i < kDims; ++i) {
      c[static_cast<std::size_t>(i)] = layout.coordinate(rank, static_cast<Dim>(i));
    }
    const int n = layout.degree(dim);
    int& x = c[static_cast<std::size_t>(dim)];
    x = ((x + by) % n + n) % n;
    return layout.rank_at(c);
  };
  switch (role) {
    case hybrid::kDp:
    case hybrid::kDpGather:
    case hybrid::kDpReplica:
      return data_group(layout, rank, role, shard);
    case hybrid::kTp:
      return layout.group(rank, {Dim::kTp});
    case hybrid::kCpNext:
      return pair(rank, shifted(Dim::kCp, 1));
    case hybrid::kCpPrev:
      return pair(shifted(Dim::kCp, -1), rank);
    case hybrid::kEp:
      return layout.expert_group(rank);
    case hybrid::kEdp:
    case hybrid::kEdpGather: {
      std::vector<int> all;  // the expert-data group of every context rank
      for (int c : layout.group(rank, {Dim::kCp})) {
        for (int m : layout.expert_data_group(c)) {
          all.push_back(m);
        }
      }
      return d.cp == 1 ? layout.expert_data_group(rank) : all;
    }
    case hybrid::kActIn:
      return pair(shifted(Dim::kPp, -1), rank);
    case hybrid::kActOut:
      return pair(rank, shifted(Dim::kPp, 1));
    case hybrid::kGradIn:
      return pair(shifted(Dim::kPp, 1), rank);
    case hybrid::kGradOut:
      return pair(rank, shifted(Dim::kPp, -1));
    case hybrid::kEmb: {
      const std::vector<int> pipeline = layout.group(rank, {Dim::kPp});
      return {pipeline.front(), pipeline.back()};
    }
    case hybrid::kSpatial:
      return layout.group(rank, {Dim::kCp});
    default:
      break;
  }
  if (role >= hybrid::kHalo && role < hybrid::kRoleCount) {
    const int dim = (role - hybrid::kHalo) / 4;
    int stride = 1;  // of grid dimension dim in the context coordinate (height fastest)
    for (int k = 0; k < dim; ++k) {
      stride *= grid[static_cast<std::size_t>(k)];
    }
    switch ((role - hybrid::kHalo) % 4) {
      case hybrid::kUpSend:
        return pair(rank, shifted(Dim::kCp, stride));
      case hybrid::kUpRecv:
        return pair(shifted(Dim::kCp, -stride), rank);
      case hybrid::kDownSend:
        return pair(rank, shifted(Dim::kCp, -stride));
      default:  // kDownRecv
        return pair(shifted(Dim::kCp, stride), rank);
    }
  }
  return {};
}

}  // namespace

ExecutionGraph build_hybrid(const HybridModel& model, const HybridJob& job) {
  ExecutionGraph g;
  for (const ModelPiece& p : model.pieces) {
    g.layers.push_back(p.name);
  }
  const RankLayout layout(job.degrees, job.order);
  // One program per stage and place in the spatial grid (its edges decide its halos).
  std::map<std::pair<int, hybrid::GridEdges>, std::int32_t> program_of;
  std::vector<std::vector<bool>> roles;
  CommTable comms;
  g.ranks.resize(static_cast<std::size_t>(layout.ranks()));
  for (int r = 0; r < layout.ranks(); ++r) {
    const int stage = layout.coordinate(r, Dim::kPp);
    const hybrid::GridEdges edges = hybrid::grid_edges(job, layout.coordinate(r, Dim::kCp));
    auto [it, inserted] = program_of.try_emplace({stage, edges}, 0);
    if (inserted) {
      it->second = static_cast<std::int32_t>(g.programs.size());
      g.programs.push_back(hybrid::build_stage_program(model, job, stage, edges, g));
      roles.push_back(hybrid::stage_roles(model, job, stage, edges));
    }
    RankProgram& rp = g.ranks[static_cast<std::size_t>(r)];
    rp.program = it->second;
    const std::vector<bool>& has = roles[static_cast<std::size_t>(rp.program)];
    for (int role = 0; role < hybrid::kRoleCount; ++role) {
      if (has[static_cast<std::size_t>(role)]) {
        const Role ro = static_cast<Role>(role);
        rp.comms.push_back(comms.add(
            ro, members(layout, r, ro, job.zero_stage == 3 ? job.dp_shard : 0, job.spatial_grid)));
      }
    }
  }
  g.communicators = comms.finish();
  return g;
}

}  // namespace dtsim::sim
