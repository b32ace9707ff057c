#include "sim/collectives/ring_steps.h"

namespace dtsim::sim {

RingSteps ring_steps_of(CollectiveOp op, int q) {
  switch (op) {
    case CollectiveOp::kReduceScatter:
      return {0, q - 1};
    case CollectiveOp::kAllGather:
      return {q - 1, q - 1};
    default:
      return {0, 2 * (q - 1)};
  }
}

std::vector<std::vector<int>> add_ring_steps(ScheduleBuilder& b, const std::vector<int>& members,
                                             std::uint64_t bytes, RingSteps steps,
                                             const std::vector<std::vector<int>>& before,
                                             std::uint64_t offset) {
  const int q = static_cast<int>(members.size());
  std::vector<std::vector<int>> done(static_cast<std::size_t>(q));
  if (q <= 1) {
    if (q == 1 && !before.empty()) {
      done[0] = before[0];
    }
    return done;
  }
  auto at = [q](int i) {
    return static_cast<std::size_t>(((i % q) + q) % q);
  };
  std::vector<int> previous(static_cast<std::size_t>(q), -1);  // per member: its last send
  for (int s = 0; s < steps.count; ++s) {
    std::vector<int> sent(static_cast<std::size_t>(q));
    for (int i = 0; i < q; ++i) {
      std::vector<int> deps;
      if (s == 0) {
        if (!before.empty()) {
          deps = before[at(i)];
          deps.insert(deps.end(), before[at(i + 1)].begin(), before[at(i + 1)].end());
        }
      } else {
        deps.push_back(previous[at(i - 1)]);  // the chunk member i forwards has arrived
      }
      const int step = steps.first + s;
      const auto chunk = static_cast<std::uint64_t>(ring_chunk_sent(i, step, q));
      const std::uint64_t at_byte =
          offset + piece_offset(bytes, static_cast<std::uint64_t>(q), chunk);
      sent[at(i)] = b.transfer(
          members[at(i)], members[at(i + 1)],
          piece_bytes(bytes, static_cast<std::uint64_t>(q), chunk), deps, 0,
          DataMove{.src_offset = at_byte, .dst_offset = at_byte, .reduce = step < q - 1});
    }
    previous = std::move(sent);
  }
  for (int i = 0; i < q; ++i) {
    done[at(i)] = {previous[at(i)], previous[at(i - 1)]};
  }
  return done;
}

}  // namespace dtsim::sim
