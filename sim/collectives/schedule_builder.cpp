#include "sim/collectives/schedule_builder.h"

#include <algorithm>

#include "sim/invariant.h"

namespace dtsim::sim {

ScheduleBuilder::ScheduleBuilder(int ranks)
    : schedule_{.ranks = ranks}, frontier_(static_cast<std::size_t>(ranks)) {}

int ScheduleBuilder::transfer(int src, int dst, std::uint64_t bytes, std::vector<int> deps,
                              int channel, std::optional<DataMove> data) {
  DTSIM_CHECK(src != dst && src >= 0 && dst >= 0 && src < schedule_.ranks && dst < schedule_.ranks,
              "a transfer joins two distinct ranks of the schedule");
  const int index = static_cast<int>(schedule_.ops.size());
  auto [it, inserted] = last_on_channel_.emplace(std::make_tuple(src, dst, channel), index);
  std::vector<int> covering = deps;
  if (!inserted) {
    covering.push_back(it->second);  // the channel predecessor, implicit in the replay
    it->second = index;
  }
  ScheduleOp op{.src = src,
                .dst = dst,
                .channel = channel,
                .bytes = bytes,
                .deps = std::move(deps),
                .data = data};
  for (int endpoint : {src, dst}) {
    if (!involves(covering, endpoint)) {
      op.entry_ranks.push_back(endpoint);
    }
  }
  schedule_.ops.push_back(std::move(op));
  touch(src, index, covering);
  touch(dst, index, covering);
  return index;
}

int ScheduleBuilder::wait(double sec, std::vector<int> deps, const std::vector<int>& ranks) {
  const int index = static_cast<int>(schedule_.ops.size());
  ScheduleOp op{.kind = ScheduleOp::Kind::kWait, .wait_sec = sec, .deps = deps};
  for (int r : ranks) {
    if (!involves(deps, r)) {  // as for transfers: wait for r to enter unless a dep involves r
      op.entry_ranks.push_back(r);
    }
  }
  schedule_.ops.push_back(std::move(op));
  for (int r : ranks) {
    touch(r, index, deps);
  }
  return index;
}

int ScheduleBuilder::local(int rank, std::uint64_t bytes, std::vector<int> deps, DataMove data) {
  const int index = wait(0, std::move(deps), {rank});
  ScheduleOp& op = schedule_.ops[static_cast<std::size_t>(index)];
  op.src = op.dst = rank;
  op.bytes = bytes;
  op.data = data;
  return index;
}

bool ScheduleBuilder::involves(const std::vector<int>& ops, int rank) const {
  return std::any_of(ops.begin(), ops.end(), [&](int d) {
    const ScheduleOp& prev = schedule_.ops[static_cast<std::size_t>(d)];
    return prev.kind == ScheduleOp::Kind::kTransfer && (prev.src == rank || prev.dst == rank);
  });
}

void ScheduleBuilder::touch(int rank, int op, const std::vector<int>& deps) {
  Frontier& f = frontier_[static_cast<std::size_t>(rank)];
  for (int d : deps) {
    f.live.erase(d);
  }
  f.order.push_back(op);
  f.live.insert(op);
}

Schedule ScheduleBuilder::finish() && {
  schedule_.exit_ops.clear();
  for (Frontier& f : frontier_) {
    std::erase_if(f.order, [&f](int op) { return !f.live.contains(op); });
    schedule_.exit_ops.push_back(std::move(f.order));
  }
  return std::move(schedule_);
}

Schedule joined_schedule(int ranks) {
  Schedule schedule{.ranks = ranks, .exit_ops = std::vector<std::vector<int>>(ranks)};
  ScheduleOp join{.kind = ScheduleOp::Kind::kWait};
  for (int r = 0; r < ranks; ++r) {
    join.entry_ranks.push_back(r);
  }
  schedule.ops.push_back(std::move(join));
  return schedule;
}

void end_with(Schedule& schedule, ScheduleOp tail) {
  const int tail_index = static_cast<int>(schedule.ops.size());
  schedule.ops.push_back(std::move(tail));
  for (auto& exits : schedule.exit_ops) {
    exits = {tail_index};
  }
}

Schedule with_entry_latency(Schedule schedule, double sec) {
  if (sec <= 0 || schedule.ops.empty()) {
    return schedule;
  }
  const int p = schedule.ranks;
  std::vector<ScheduleOp> ops;
  ops.reserve(static_cast<std::size_t>(p) + schedule.ops.size());
  for (int r = 0; r < p; ++r) {
    ops.push_back({.kind = ScheduleOp::Kind::kWait, .wait_sec = sec, .entry_ranks = {r}});
  }
  for (ScheduleOp& op : schedule.ops) {
    for (int& d : op.deps) {
      d += p;
    }
    for (int r : op.entry_ranks) {
      op.deps.push_back(r);  // rank r's wait op has index r
    }
    op.entry_ranks.clear();
    ops.push_back(std::move(op));
  }
  schedule.ops = std::move(ops);
  for (auto& exits : schedule.exit_ops) {
    for (int& e : exits) {
      e += p;
    }
  }
  return schedule;
}

}  // namespace dtsim::sim
