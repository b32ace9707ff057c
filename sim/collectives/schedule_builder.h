// Builds a Schedule op by op and works out, per rank, what it must wait for on entry and what
// marks its exit, so that algorithms only state transfers and their data dependencies.
#ifndef DTSIM_SIM_COLLECTIVES_SCHEDULE_BUILDER_H_
#define DTSIM_SIM_COLLECTIVES_SCHEDULE_BUILDER_H_

#include <cstdint>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_set>
#include <utility>
#include <vector>

#include "sim/collectives/schedule.h"

namespace dtsim::sim {

class ScheduleBuilder {
 public:
  explicit ScheduleBuilder(int ranks);

  // Adds a transfer of `bytes` from `src` to `dst` after `deps` (earlier op indices) and after
  // the previous transfer on the same src -> dst channel; returns its index.
  // Entry: the op waits for src (dst) to enter the collective unless a dependency or the channel
  // predecessor already involves src (dst) — every op thus (transitively) waits for both of its
  // ranks to have entered. `data` says what it moves (for schedule_check.h); unset on a transfer
  // that stands for several steps. REQUIRES: src != dst, both in [0, ranks).
  int transfer(int src, int dst, std::uint64_t bytes, std::vector<int> deps = {}, int channel = 0,
               std::optional<DataMove> data = std::nullopt);

  // Adds a local copy or reduction on `rank` (`data` within its own buffers), taking no time,
  // after `deps`; it waits for `rank` to enter unless a dependency involves it.
  int local(int rank, std::uint64_t bytes, std::vector<int> deps, DataMove data);

  // Adds a pure delay after `deps`, counted as an operation of every rank in `ranks`; it also
  // waits for those of `ranks` that no transfer among `deps` involves to enter.
  int wait(double sec, std::vector<int> deps, const std::vector<int>& ranks);

  // The schedule. Each rank exits after its frontier: the ops involving it that no later op
  // involving it depends on (directly or as channel successor).
  [[nodiscard]] Schedule finish() &&;

 private:
  // Whether a transfer among `ops` has `rank` as an endpoint (so `rank` has entered by then).
  [[nodiscard]] bool involves(const std::vector<int>& ops, int rank) const;
  void touch(int rank, int op, const std::vector<int>& deps);

  // A rank's frontier: the ops it took part in, in order, and those still on the frontier (no
  // later op of the rank depends on them). A set, not a scan of the list, so that a rank with
  // thousands of independent ops (a direct all-reduce of 1024 ranks) costs O(ops), not O(ops^2).
  struct Frontier {
    std::vector<int> order;
    std::unordered_set<int> live;
  };

  Schedule schedule_;
  std::map<std::tuple<int, int, int>, int> last_on_channel_;  // (src, dst, channel) -> op
  std::vector<Frontier> frontier_;                            // per rank
};

// For collapsed algorithms, whose transfers all start together: a schedule of `ranks` whose op 0
// is a join of every rank's entry (transfers depend on it), ...
[[nodiscard]] Schedule joined_schedule(int ranks);
// ... closed by `tail` (a wait, after its deps), which becomes every rank's exit.
void end_with(Schedule& schedule, ScheduleOp tail);

// `schedule` with every rank first waiting `sec` after entering, before any of its operations:
// one wait op per taking-part rank, on which that rank's entry-dependent ops depend instead.
// An idle network's time thus grows by exactly `sec`.
[[nodiscard]] Schedule with_entry_latency(Schedule schedule, double sec);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_COLLECTIVES_SCHEDULE_BUILDER_H_
