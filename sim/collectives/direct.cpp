#include "sim/collectives/direct.h"

#include "sim/collectives/schedule_builder.h"

namespace dtsim::sim {

namespace {

// The pieces of an n-byte buffer split over p ranks, as every direct schedule cuts them.
struct Pieces {
  std::uint64_t n = 0;
  std::uint64_t parts = 1;

  [[nodiscard]] std::uint64_t bytes(int owner) const {
    return piece_bytes(n, parts, static_cast<std::uint64_t>(owner));
  }
  // Owner `owner`'s block, copied or added at the same offset of the receiver's buffer.
  [[nodiscard]] DataMove block(int owner, bool reduce) const {
    const std::uint64_t at = piece_offset(n, parts, static_cast<std::uint64_t>(owner));
    return DataMove{.src_offset = at, .dst_offset = at, .reduce = reduce};
  }
};

// Reduce-scatter then all-gather, every rank sending straight to every other.
void add_all_reduce(ScheduleBuilder& b, int p, const Pieces& pieces) {
  // Reduce-scatter: rank d owns chunk d; its chunk is reduced once every peer's arrived.
  std::vector<std::vector<int>> into(static_cast<std::size_t>(p));
  for (int s = 0; s < p; ++s) {
    for (int d = 0; d < p; ++d) {
      if (s != d) {
        into[static_cast<std::size_t>(d)].push_back(
            b.transfer(s, d, pieces.bytes(d), {}, 0, pieces.block(d, true)));
      }
    }
  }
  // All-gather: a rank's sends wait for its chunk to be whole, one zero-time join per rank
  // (p - 1 dependencies once, not on each of its p - 1 sends: p^2 in all, not p^3).
  for (int s = 0; s < p; ++s) {
    const int whole = b.wait(0, std::move(into[static_cast<std::size_t>(s)]), {s});
    for (int d = 0; d < p; ++d) {
      if (s != d) {
        b.transfer(s, d, pieces.bytes(s), {whole}, 0, pieces.block(s, false));
      }
    }
  }
}

// Reduce-scatter (`gather` false) or all-gather: one piece from every rank to every other.
void add_scatter_or_gather(ScheduleBuilder& b, int p, const Pieces& pieces, bool gather) {
  for (int s = 0; s < p; ++s) {
    for (int d = 0; d < p; ++d) {
      if (s != d) {
        // Reduce-scatter sends the destination's piece; all-gather the source's.
        const int owner = gather ? s : d;
        b.transfer(s, d, pieces.bytes(owner), {}, 0, pieces.block(owner, !gather));
      }
    }
  }
}

// Out of place (schedule_check.h): s's block d goes to slot s of d's output. A rank's own block
// is a local copy, not a transfer.
void add_all_to_all(ScheduleBuilder& b, int p, const Pieces& pieces) {
  for (int s = 0; s < p; ++s) {
    for (int d = 0; d < p; ++d) {
      if (s != d) {
        b.transfer(s, d, pieces.bytes(d), {}, 0,
                   DataMove{.src_offset =
                                piece_offset(pieces.n, pieces.parts, static_cast<std::uint64_t>(d)),
                            .dst_offset = static_cast<std::uint64_t>(s) * pieces.bytes(d),
                            .src_buffer = Buffer::kInput,
                            .dst_buffer = Buffer::kOutput});
      }
    }
  }
}

// Broadcast from `root` to every rank, or reduce every rank's n bytes into `root`.
void add_rooted(ScheduleBuilder& b, int p, std::uint64_t n, int root, bool broadcast) {
  for (int other = 0; other < p; ++other) {
    if (other == root) {
      continue;
    }
    if (broadcast) {
      b.transfer(root, other, n, {}, 0, DataMove{});
    } else {
      b.transfer(other, root, n, {}, 0, DataMove{.reduce = true});
    }
  }
}

}  // namespace

std::string DirectAlgorithm::unsupported(const CollectiveRequest& /*request*/,
                                         const TopologyHints& /*hints*/) const {
  return "";
}

Schedule DirectAlgorithm::build(const CollectiveRequest& request,
                                const TopologyHints& /*hints*/) const {
  const int p = request.ranks;
  const Pieces pieces{.n = request.bytes, .parts = static_cast<std::uint64_t>(p)};
  ScheduleBuilder b(p);
  if (p > 1) {
    switch (request.op) {
      case CollectiveOp::kAllReduce:
        add_all_reduce(b, p, pieces);
        break;
      case CollectiveOp::kReduceScatter:
      case CollectiveOp::kAllGather:
        add_scatter_or_gather(b, p, pieces, request.op == CollectiveOp::kAllGather);
        break;
      case CollectiveOp::kAllToAll:
        add_all_to_all(b, p, pieces);
        break;
      case CollectiveOp::kBroadcast:
      case CollectiveOp::kReduce:
        add_rooted(b, p, request.bytes, request.root, request.op == CollectiveOp::kBroadcast);
        break;
      case CollectiveOp::kSendRecv:
        b.transfer(request.root, (request.root + 1) % p, request.bytes, {}, 0, DataMove{});
        break;
    }
  }
  Schedule schedule = std::move(b).finish();
  schedule.in_place = request.op != CollectiveOp::kAllToAll;
  return schedule;
}

}  // namespace dtsim::sim
