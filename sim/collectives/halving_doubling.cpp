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
    f.ready_after.push_back(v < f.extra ? b.transfer(rank - 1, rank, bytes) : -1);
  }
  return f;
}

void unfold(ScheduleBuilder& b, const Folding& f, std::uint64_t bytes,
            const std::vector<std::vector<int>>& done) {
  for (int v = 0; v < f.extra; ++v) {
    b.transfer(f.rank_of[static_cast<std::size_t>(v)], f.rank_of[static_cast<std::size_t>(v)] - 1,
               bytes, done[static_cast<std::size_t>(v)]);
  }
}

std::vector<int> initial(const Folding& f, int v) {
  const int op = f.ready_after[static_cast<std::size_t>(v)];
  return op < 0 ? std::vector<int>{} : std::vector<int>{op};
}

// Each participant's byte range [lo, hi) of the vector, halved or doubled step by step.
struct Segment {
  std::uint64_t lo = 0, hi = 0;
};

// Recursive halving over the participants: step s pairs v with v ^ (P >> (s+1)); the lower
// partner keeps the lower half. Returns per participant the op it last received, and leaves each
// participant's final segment in `seg`.
std::vector<int> recursive_halving(ScheduleBuilder& b, const Folding& f, std::uint64_t bytes,
                                   std::vector<Segment>& seg) {
  const int n = f.participants;
  seg.assign(static_cast<std::size_t>(n), Segment{0, bytes});
  std::vector<int> last(static_cast<std::size_t>(n), -1);
  for (int distance = n / 2; distance >= 1; distance /= 2) {
    std::vector<int> received(static_cast<std::size_t>(n));
    std::vector<Segment> next(static_cast<std::size_t>(n));
    for (int v = 0; v < n; ++v) {
      const int partner = v ^ distance;
      const Segment s = seg[static_cast<std::size_t>(v)];
      const std::uint64_t mid = s.lo + (s.hi - s.lo) / 2;
      const bool lower = v < partner;
      next[static_cast<std::size_t>(v)] = lower ? Segment{s.lo, mid} : Segment{mid, s.hi};
      const std::uint64_t send = lower ? s.hi - mid : mid - s.lo;  // the partner's half
      std::vector<int> deps = last[static_cast<std::size_t>(v)] < 0
                                  ? initial(f, v)
                                  : std::vector<int>{last[static_cast<std::size_t>(v)]};
      received[static_cast<std::size_t>(partner)] =
          b.transfer(f.rank_of[static_cast<std::size_t>(v)],
                     f.rank_of[static_cast<std::size_t>(partner)], send, deps);
    }
    last = std::move(received);
    seg = std::move(next);
  }
  return last;
}

// Recursive doubling of segments: step pairs v with v ^ distance, distance 1, 2, ..., P/2; each
// sends its whole current segment and both end with the union. `last` holds per participant the
// op it must wait for before sending its first segment.
std::vector<int> recursive_doubling_segments(ScheduleBuilder& b, const Folding& f,
                                             std::vector<Segment> seg, std::vector<int> last,
                                             const std::vector<std::vector<int>>& first_deps) {
  const int n = f.participants;
  for (int distance = 1; distance < n; distance *= 2) {
    std::vector<int> received(static_cast<std::size_t>(n));
    std::vector<Segment> next(static_cast<std::size_t>(n));
    for (int v = 0; v < n; ++v) {
      const int partner = v ^ distance;
      const Segment mine = seg[static_cast<std::size_t>(v)];
      const Segment theirs = seg[static_cast<std::size_t>(partner)];
      next[static_cast<std::size_t>(v)] = {std::min(mine.lo, theirs.lo),
                                           std::max(mine.hi, theirs.hi)};
      std::vector<int> deps = last[static_cast<std::size_t>(v)] < 0
                                  ? first_deps[static_cast<std::size_t>(v)]
                                  : std::vector<int>{last[static_cast<std::size_t>(v)]};
      received[static_cast<std::size_t>(partner)] =
          b.transfer(f.rank_of[static_cast<std::size_t>(v)],
                     f.rank_of[static_cast<std::size_t>(partner)], mine.hi - mine.lo, deps);
    }
    last = std::move(received);
    seg = std::move(next);
  }
  return last;
}

std::vector<std::vector<int>> as_done(const std::vector<int>& last) {
  std::vector<std::vector<int>> done;
  for (int op : last) {
    done.push_back(op < 0 ? std::vector<int>{} : std::vector<int>{op});
  }
  return done;
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
    // Each rank starts with its own 1/p of the vector.
    const Folding f = fold(b, p, 0);  // p is a power of two: no folding ops
    std::vector<Segment> seg;
    for (int v = 0; v < p; ++v) {
      seg.push_back({piece_offset(n, p, v), piece_offset(n, p, v + 1)});
    }
    recursive_doubling_segments(b, f, seg, std::vector<int>(static_cast<std::size_t>(p), -1),
                                std::vector<std::vector<int>>(static_cast<std::size_t>(p)));
    return std::move(b).finish();
  }
  const Folding f = fold(b, p, n);
  std::vector<Segment> seg;
  const std::vector<int> last = recursive_halving(b, f, n, seg);
  if (request.op == CollectiveOp::kAllReduce) {
    std::vector<std::vector<int>> first_deps;
    for (int v = 0; v < f.participants; ++v) {
      first_deps.push_back(initial(f, v));
    }
    const auto done = recursive_doubling_segments(b, f, seg, last, first_deps);
    unfold(b, f, n, as_done(done));
  }
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
  // Whole-vector exchanges: every participant's "segment" is the full vector.
  std::vector<Segment> seg(static_cast<std::size_t>(f.participants), Segment{0, n});
  std::vector<std::vector<int>> first_deps;
  for (int v = 0; v < f.participants; ++v) {
    first_deps.push_back(initial(f, v));
  }
  const int count = f.participants;
  std::vector<int> last(static_cast<std::size_t>(count), -1);
  for (int distance = 1; distance < count; distance *= 2) {
    std::vector<int> received(static_cast<std::size_t>(count));
    for (int v = 0; v < count; ++v) {
      std::vector<int> deps = last[static_cast<std::size_t>(v)] < 0
                                  ? first_deps[static_cast<std::size_t>(v)]
                                  : std::vector<int>{last[static_cast<std::size_t>(v)]};
      received[static_cast<std::size_t>(v ^ distance)] =
          b.transfer(f.rank_of[static_cast<std::size_t>(v)],
                     f.rank_of[static_cast<std::size_t>(v ^ distance)], n, deps);
    }
    last = std::move(received);
  }
  unfold(b, f, n, as_done(last));
  return std::move(b).finish();
}

}  // namespace dtsim::sim
