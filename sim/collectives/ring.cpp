#include "sim/collectives/ring.h"

#include <algorithm>

#include "sim/collectives/ring_steps.h"
#include "sim/collectives/schedule_builder.h"

namespace dtsim::sim {

namespace {

int mod(int a, int p) {
  return ((a % p) + p) % p;
}

// The bytes rank r sends to r+1 over `steps`: the chunks (r - s - 1) mod p for s in the steps,
// i.e. `count` consecutive chunk indices (mod p) ending at c = (r - first - 1) mod p. Whole turns
// of the ring carry all `bytes`; the rest is a cyclic range of piece_bytes, summed with
// piece_offset. O(1) per edge instead of O(steps).
std::uint64_t ring_edge_bytes(int r, int p, std::uint64_t bytes, RingSteps steps) {
  const auto q = static_cast<std::uint64_t>(p);
  const auto count = static_cast<std::uint64_t>(steps.count);
  const auto turns = count / q;
  const auto rest = count % q;
  const auto last = static_cast<std::uint64_t>(mod(r - steps.first - 1, p));
  // chunks (last - rest, last] mod p, i.e. [begin, begin + rest) with begin = last + 1 - rest
  const std::uint64_t begin = (last + 1 + q - rest) % q;
  std::uint64_t partial = 0;
  if (begin + rest <= q) {
    partial = piece_offset(bytes, q, begin + rest) - piece_offset(bytes, q, begin);
  } else {
    partial = (bytes - piece_offset(bytes, q, begin)) + piece_offset(bytes, q, begin + rest - q);
  }
  return turns * bytes + partial;
}

Schedule step_level(int p, std::uint64_t bytes, RingSteps steps) {
  ScheduleBuilder b(p);
  std::vector<int> members(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r) {
    members[static_cast<std::size_t>(r)] = r;
  }
  add_ring_steps(b, members, bytes, steps, {});
  return std::move(b).finish();
}

Schedule collapsed(int p, std::uint64_t bytes, RingSteps steps, const TopologyHints& hints) {
  Schedule schedule = joined_schedule(p);
  double alpha_max_sec = 0;
  ScheduleOp tail{.kind = ScheduleOp::Kind::kWait};
  for (int r = 0; r < p; ++r) {
    const std::uint64_t edge_bytes = ring_edge_bytes(r, p, bytes, steps);
    alpha_max_sec = std::max(alpha_max_sec, hints.latency_sec(r, mod(r + 1, p)));
    tail.deps.push_back(static_cast<int>(schedule.ops.size()));
    schedule.ops.push_back({.src = r, .dst = mod(r + 1, p), .bytes = edge_bytes, .deps = {0}});
  }
  // The aggregated transfer paid one latency; a step-level ring pays one per step, and each step
  // waits for its slowest edge.
  tail.wait_sec = (steps.count - 1) * alpha_max_sec;
  end_with(schedule, std::move(tail));
  return schedule;
}

// A chain through all ranks, pipelined in chunks: root, root+1, ..., root+p-1 for a broadcast;
// the reverse for a reduce.
Schedule chain(int p, std::uint64_t bytes, int root, bool towards_root, std::uint64_t chunk_bytes) {
  ScheduleBuilder b(p);
  const std::uint64_t chunks = std::max<std::uint64_t>(1, (bytes + chunk_bytes - 1) / chunk_bytes);
  // position i of the chain holds rank node(i); data moves from position i to i+1.
  auto node = [&](int i) {
    return towards_root ? mod(root + p - 1 - i, p) : mod(root + i, p);
  };
  std::vector<int> previous(static_cast<std::size_t>(p), -1);  // per position: last op into it
  for (std::uint64_t k = 0; k < chunks; ++k) {
    const std::uint64_t size = piece_bytes(bytes, chunks, k);
    for (int i = 0; i + 1 < p; ++i) {
      std::vector<int> deps;
      if (i > 0) {
        deps.push_back(previous[static_cast<std::size_t>(i)]);  // chunk k reached position i
      }
      const std::uint64_t at_byte = piece_offset(bytes, chunks, k);
      previous[static_cast<std::size_t>(i + 1)] = b.transfer(
          node(i), node(i + 1), size, deps, 0,
          DataMove{.src_offset = at_byte, .dst_offset = at_byte, .reduce = towards_root});
    }
  }
  return std::move(b).finish();
}

}  // namespace

std::string RingAlgorithm::unsupported(const CollectiveRequest& request,
                                       const TopologyHints& /*hints*/) const {
  switch (request.op) {
    case CollectiveOp::kAllToAll:
    case CollectiveOp::kSendRecv:
      return "ring has no " + std::string(op_name(request.op)) + " (use direct)";
    default:
      return "";
  }
}

Schedule RingAlgorithm::build(const CollectiveRequest& request, const TopologyHints& hints) const {
  const int p = request.ranks;
  if (p <= 1) {
    return Schedule{.ranks = p, .exit_ops = std::vector<std::vector<int>>(p)};
  }
  switch (request.op) {
    case CollectiveOp::kBroadcast:
      return chain(p, request.bytes, request.root, false, options_.chunk_bytes);
    case CollectiveOp::kReduce:
      return chain(p, request.bytes, request.root, true, options_.chunk_bytes);
    default: {
      const RingSteps steps = ring_steps_of(request.op, p);
      return options_.collapse ? collapsed(p, request.bytes, steps, hints)
                               : step_level(p, request.bytes, steps);
    }
  }
}

}  // namespace dtsim::sim
