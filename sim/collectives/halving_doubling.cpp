#include "sim/collectives/halving_doubling.h"

#include <bit>

#include "sim/collectives/schedule_builder.h"

namespace dtsim::sim {

namespace {

bool is_power_of_two(int p) {
  return p > 0 && std::has_single_bit(static_cast<unsigned>(p));
}

// The P = 2^floor(log2 p) participants after folding, and per participant the op that must finish
// before it starts (the fold into it, or -1).
struct Folding {
  int participants = 0;
  int extra = 0;                 // r = p - P
  std::vector<int> rank_of;      // participant -> rank
  std::vector<int> ready_after;  // participant -> op index or -1
};

Folding fold(ScheduleBuilder& b, int p, std::uint64_t bytes) {
  Folding f;
  f.participants = static_cast<int>(std::bit_floor(static_cast<unsigned>(p)));
  f.extra = p - f.participants;
  for (int v = 0; v < f.participants; ++v) {
    const int rank = v < f.extra ? 2 * v + 1 : v + f.extra;
    f.rank_of.push_back(rank);
    f.ready_after.push_back(
        v < f.extra ? b.transfer(rank - 1, rank, bytes, {}, 0, DataMove{.reduce = true}) : -1);
  }
  return f;
}

// Per participant, every transfer it sent or received so far: what its next exchange waits for.
// Starts with the fold into it, if any.
using Inboxes = std::vector<std::vector<int>>;

Inboxes initial_inboxes(const Folding& f) {
  Inboxes in(static_cast<std::size_t>(f.participants));
  for (int v = 0; v < f.participants; ++v) {
    if (f.ready_after[static_cast<std::size_t>(v)] >= 0) {
      in[static_cast<std::size_t>(v)].push_back(f.ready_after[static_cast<std::size_t>(v)]);
    }
  }
  return in;
}

void unfold(ScheduleBuilder& b, const Folding& f, std::uint64_t bytes, const Inboxes& in) {
  for (int v = 0; v < f.extra; ++v) {
    b.transfer(f.rank_of[static_cast<std::size_t>(v)], f.rank_of[static_cast<std::size_t>(v)] - 1,
               bytes, in[static_cast<std::size_t>(v)], 0, DataMove{});
  }
}

// Each participant's byte range [lo, hi) of the vector, halved or doubled step by step.
struct Segment {
  std::uint64_t lo = 0, hi = 0;
};

// One butterfly step at `distance`: every participant sends the bytes `range_to_send(v, partner)`
// of its vector to its partner v ^ distance, which adds them to its own (`reduce`) or keeps them,
// once both have finished every earlier transfer of theirs, sends included (MPI_Sendrecv
// semantics, as MPICH's implementations).
template <typename RangeFn>
void butterfly_step(ScheduleBuilder& b, const Folding& f, int distance, Inboxes& in, bool reduce,
                    RangeFn range_to_send) {
  const int n = f.participants;
  std::vector<int> sent(static_cast<std::size_t>(n));
  for (int v = 0; v < n; ++v) {
    const int partner = v ^ distance;
    std::vector<int> deps = in[static_cast<std::size_t>(v)];
    deps.insert(deps.end(), in[static_cast<std::size_t>(partner)].begin(),
                in[static_cast<std::size_t>(partner)].end());
    const Segment range = range_to_send(v, partner);
    sent[static_cast<std::size_t>(v)] =
        b.transfer(f.rank_of[static_cast<std::size_t>(v)],
                   f.rank_of[static_cast<std::size_t>(partner)], range.hi - range.lo, deps, 0,
                   DataMove{.src_offset = range.lo, .dst_offset = range.lo, .reduce = reduce});
  }
  for (int v = 0; v < n; ++v) {
    in[static_cast<std::size_t>(v ^ distance)].push_back(sent[static_cast<std::size_t>(v)]);
    in[static_cast<std::size_t>(v)].push_back(sent[static_cast<std::size_t>(v)]);
  }
}

// Recursive halving, as MPICH: distances 1, 2, ..., P/2, so the largest halves go to the
// nearest partners; the lower partner keeps the lower half of its segment and sends the upper
// one. Leaves each participant's final segment in `seg`.
void recursive_halving(ScheduleBuilder& b, const Folding& f, std::vector<Segment>& seg,
                       Inboxes& in) {
  for (int distance = 1; distance < f.participants; distance *= 2) {
    std::vector<Segment> next(seg.size());
    butterfly_step(b, f, distance, in, /*reduce=*/true, [&](int v, int partner) {
      const Segment s = seg[static_cast<std::size_t>(v)];
      const std::uint64_t mid = s.lo + (s.hi - s.lo) / 2;
      const bool lower = v < partner;
      next[static_cast<std::size_t>(v)] = lower ? Segment{s.lo, mid} : Segment{mid, s.hi};
      return lower ? Segment{mid, s.hi} : Segment{s.lo, mid};  // the partner's half
    });
    seg = std::move(next);
  }
}

// Reduce-scatter by recursive halving of the p blocks (p a power of two): distances p/2, p/4,
// ..., 1, the lower partner keeping the lower half of its blocks, so that participant v ends with
// block v, as a reduce-scatter must (the all-reduce's nearest-first order leaves the blocks in
// bit-reversed order, which its all-gather undoes).
void reduce_scatter_halving(ScheduleBuilder& b, const Folding& f, std::uint64_t bytes,
                            Inboxes& in) {
  const auto p = static_cast<std::uint64_t>(f.participants);
  std::vector<std::pair<std::uint64_t, std::uint64_t>> blocks(p, {0, p});  // [first, last)
  for (int distance = f.participants / 2; distance >= 1; distance /= 2) {
    auto next = blocks;
    butterfly_step(b, f, distance, in, /*reduce=*/true, [&](int v, int partner) {
      const auto [lo, hi] = blocks[static_cast<std::size_t>(v)];
      const std::uint64_t mid = lo + (hi - lo) / 2;
      const bool lower = v < partner;
      next[static_cast<std::size_t>(v)] = lower ? std::pair{lo, mid} : std::pair{mid, hi};
      const auto [send_lo, send_hi] = lower ? std::pair{mid, hi} : std::pair{lo, mid};
      return Segment{piece_offset(bytes, p, send_lo), piece_offset(bytes, p, send_hi)};
    });
    blocks = std::move(next);
  }
}

// Recursive doubling of segments: each sends its whole segment to v ^ distance and both keep the
// union. `first_distance` 1 doubles 1, 2, ..., P/2 (all-gather of pieces in rank order);
// P/2 halves the distance each step (after recursive halving: the reverse of its order).
void recursive_doubling(ScheduleBuilder& b, const Folding& f, std::vector<Segment> seg, Inboxes& in,
                        int first_distance) {
  const bool ascending = first_distance == 1;
  for (int distance = first_distance; distance >= 1 && distance < f.participants;
       distance = ascending ? distance * 2 : distance / 2) {
    std::vector<Segment> next(seg.size());
    butterfly_step(b, f, distance, in, /*reduce=*/false, [&](int v, int partner) {
      const Segment mine = seg[static_cast<std::size_t>(v)];
      const Segment theirs = seg[static_cast<std::size_t>(partner)];
      next[static_cast<std::size_t>(v)] = {std::min(mine.lo, theirs.lo),
                                           std::max(mine.hi, theirs.hi)};
      return mine;
    });
    seg = std::move(next);
  }
}

std::string power_of_two_only(const CollectiveRequest& request, const char* name) {
  return std::string(name) + " " + std::string(op_name(request.op)) +
         " needs a power-of-two number of ranks, not " + std::to_string(request.ranks) +
         " (all-reduce works for any number)";
}

}  // namespace

std::string HalvingDoublingAlgorithm::unsupported(const CollectiveRequest& request,
                                                  const TopologyHints& /*hints*/) const {
  switch (request.op) {
    case CollectiveOp::kAllReduce:
      return "";
    case CollectiveOp::kReduceScatter:
    case CollectiveOp::kAllGather:
      return is_power_of_two(request.ranks) ? "" : power_of_two_only(request, "halving-doubling");
    default:
      return "halving-doubling has no " + std::string(op_name(request.op));
  }
}

Schedule HalvingDoublingAlgorithm::build(const CollectiveRequest& request,
                                         const TopologyHints& /*hints*/) const {
  const int p = request.ranks;
  ScheduleBuilder b(p);
  if (p <= 1) {
    return std::move(b).finish();
  }
  const std::uint64_t n = request.bytes;
  if (request.op == CollectiveOp::kAllGather) {
    // Each rank starts with its own 1/p of the vector; p is a power of two: nothing to fold.
    const Folding f = fold(b, p, 0);
    std::vector<Segment> seg;
    for (int v = 0; v < p; ++v) {
      const auto i = static_cast<std::uint64_t>(v);
      seg.push_back({piece_offset(n, static_cast<std::uint64_t>(p), i),
                     piece_offset(n, static_cast<std::uint64_t>(p), i + 1)});
    }
    Inboxes in = initial_inboxes(f);
    recursive_doubling(b, f, seg, in, /*first_distance=*/1);
    return std::move(b).finish();
  }
  const Folding f = fold(b, p, n);
  Inboxes in = initial_inboxes(f);
  if (request.op == CollectiveOp::kReduceScatter) {
    reduce_scatter_halving(b, f, n, in);
    return std::move(b).finish();
  }
  std::vector<Segment> seg(static_cast<std::size_t>(f.participants), Segment{0, n});
  recursive_halving(b, f, seg, in);
  recursive_doubling(b, f, seg, in, /*first_distance=*/f.participants / 2);
  unfold(b, f, n, in);
  return std::move(b).finish();
}

std::string RecursiveDoublingAlgorithm::unsupported(const CollectiveRequest& request,
                                                    const TopologyHints& /*hints*/) const {
  switch (request.op) {
    case CollectiveOp::kAllReduce:
      return "";
    case CollectiveOp::kAllGather:
      return is_power_of_two(request.ranks) ? "" : power_of_two_only(request, "recursive-doubling");
    default:
      return "recursive-doubling has no " + std::string(op_name(request.op));
  }
}

Schedule RecursiveDoublingAlgorithm::build(const CollectiveRequest& request,
                                           const TopologyHints& hints) const {
  if (request.op == CollectiveOp::kAllGather) {
    return HalvingDoublingAlgorithm().build(request, hints);  // the same doubling phase
  }
  const int p = request.ranks;
  ScheduleBuilder b(p);
  if (p <= 1) {
    return std::move(b).finish();
  }
  const std::uint64_t n = request.bytes;
  const Folding f = fold(b, p, n);
  Inboxes in = initial_inboxes(f);
  for (int distance = 1; distance < f.participants; distance *= 2) {
    butterfly_step(b, f, distance, in, /*reduce=*/true, [n](int, int) {
      return Segment{0, n};
    });  // the whole vector
  }
  unfold(b, f, n, in);
  return std::move(b).finish();
}

}  // namespace dtsim::sim
