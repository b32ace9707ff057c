#include "sim/collectives/direct.h"

#include "sim/collectives/schedule_builder.h"

namespace dtsim::sim {

std::string DirectAlgorithm::unsupported(const CollectiveRequest& /*request*/,
                                         const TopologyHints& /*hints*/) const {
  return "";
}

Schedule DirectAlgorithm::build(const CollectiveRequest& request,
                                const TopologyHints& /*hints*/) const {
  const int p = request.ranks;
  const std::uint64_t n = request.bytes;
  const auto parts = static_cast<std::uint64_t>(p);
  ScheduleBuilder b(p);
  if (p <= 1) {
    Schedule nothing = std::move(b).finish();
    nothing.in_place = request.op != CollectiveOp::kAllToAll;
    return nothing;
  }
  auto piece = [n, parts](int owner) {
    return piece_bytes(n, parts, static_cast<std::uint64_t>(owner));
  };
  // Owner `owner`'s block, copied or added at the same offset of the receiver's buffer.
  auto block = [n, parts](int owner, bool reduce) {
    const std::uint64_t at = piece_offset(n, parts, static_cast<std::uint64_t>(owner));
    return DataMove{.src_offset = at, .dst_offset = at, .reduce = reduce};
  };
  switch (request.op) {
    case CollectiveOp::kAllReduce: {
      // Reduce-scatter: rank d owns chunk d; its chunk is reduced once every peer's arrived.
      std::vector<std::vector<int>> into(static_cast<std::size_t>(p));
      for (int s = 0; s < p; ++s) {
        for (int d = 0; d < p; ++d) {
          if (s != d) {
            into[static_cast<std::size_t>(d)].push_back(
                b.transfer(s, d, piece(d), {}, 0, block(d, true)));
          }
        }
      }
      // All-gather: a rank's sends wait for its chunk to be whole, one zero-time join per rank
      // (p - 1 dependencies once, not on each of its p - 1 sends: p^2 in all, not p^3).
      for (int s = 0; s < p && p > 1; ++s) {
        const int whole = b.wait(0, std::move(into[static_cast<std::size_t>(s)]), {s});
        for (int d = 0; d < p; ++d) {
          if (s != d) {
            b.transfer(s, d, piece(s), {whole}, 0, block(s, false));
          }
        }
      }
      break;
    }
    case CollectiveOp::kReduceScatter:
    case CollectiveOp::kAllGather:
      for (int s = 0; s < p; ++s) {
        for (int d = 0; d < p; ++d) {
          if (s != d) {
            // Reduce-scatter sends the destination's piece; all-gather the source's.
            const bool gather = request.op == CollectiveOp::kAllGather;
            b.transfer(s, d, gather ? piece(s) : piece(d), {}, 0, block(gather ? s : d, !gather));
          }
        }
      }
      break;
    case CollectiveOp::kAllToAll:
      // Out of place (schedule_check.h): s's block d goes to slot s of d's output. A rank's
      // own block is a local copy, not a transfer.
      for (int s = 0; s < p; ++s) {
        for (int d = 0; d < p; ++d) {
          if (s != d) {
            b.transfer(s, d, piece(d), {}, 0,
                       DataMove{.src_offset = piece_offset(n, parts, static_cast<std::uint64_t>(d)),
                                .dst_offset = static_cast<std::uint64_t>(s) * piece(d),
                                .src_buffer = Buffer::kInput,
                                .dst_buffer = Buffer::kOutput});
          }
        }
      }
      break;
    case CollectiveOp::kBroadcast:
    case CollectiveOp::kReduce:
      for (int other = 0; other < p; ++other) {
        if (other == request.root) {
          continue;
        }
        if (request.op == CollectiveOp::kBroadcast) {
          b.transfer(request.root, other, n, {}, 0, DataMove{});
        } else {
          b.transfer(other, request.root, n, {}, 0, DataMove{.reduce = true});
        }
      }
      break;
    case CollectiveOp::kSendRecv:
      b.transfer(request.root, (request.root + 1) % p, n, {}, 0, DataMove{});
      break;
  }
  Schedule schedule = std::move(b).finish();
  schedule.in_place = request.op != CollectiveOp::kAllToAll;
  return schedule;
}

}  // namespace dtsim::sim
