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
    return std::move(b).finish();
  }
  auto piece = [n, parts](int owner) {
    return piece_bytes(n, parts, static_cast<std::uint64_t>(owner));
  };
  switch (request.op) {
    case CollectiveOp::kAllReduce: {
      // Reduce-scatter: rank d owns chunk d; its chunk is reduced once every peer's arrived.
      std::vector<std::vector<int>> into(static_cast<std::size_t>(p));
      for (int s = 0; s < p; ++s) {
        for (int d = 0; d < p; ++d) {
          if (s != d) {
            into[static_cast<std::size_t>(d)].push_back(b.transfer(s, d, piece(d)));
          }
        }
      }
      for (int s = 0; s < p; ++s) {
        for (int d = 0; d < p; ++d) {
          if (s != d) {
            b.transfer(s, d, piece(s), into[static_cast<std::size_t>(s)]);
          }
        }
      }
      break;
    }
    case CollectiveOp::kReduceScatter:
    case CollectiveOp::kAllToAll:
    case CollectiveOp::kAllGather:
      for (int s = 0; s < p; ++s) {
        for (int d = 0; d < p; ++d) {
          if (s != d) {
            // Reduce-scatter and all-to-all send the destination's piece; all-gather the source's.
            b.transfer(s, d, request.op == CollectiveOp::kAllGather ? piece(s) : piece(d));
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
          b.transfer(request.root, other, n);
        } else {
          b.transfer(other, request.root, n);
        }
      }
      break;
    case CollectiveOp::kSendRecv:
      b.transfer(request.root, (request.root + 1) % p, n);
      break;
  }
  return std::move(b).finish();
}

}  // namespace dtsim::sim
