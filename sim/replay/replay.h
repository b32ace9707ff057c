// Executes a TaskGraph on a SimGrid platform: one actor per lane; compute and waits are sleeps
// of their measured duration, transfers are host-to-host communications, so the network model
// (max-min sharing over the routed links) sees every concurrent transfer.
#ifndef DTSIM_SIM_REPLAY_REPLAY_H_
#define DTSIM_SIM_REPLAY_REPLAY_H_

#include <cstddef>
#include <functional>
#include <vector>

#include <simgrid/forward.h>

#include "sim/lowering/task_graph.h"

namespace dtsim::sim {

// Looks at a replay while it runs: `check` gets the times so far each time another
// `every_tasks` tasks have ended (ReplayTimes::ended says which). When it returns false the
// replay stops there: every actor is killed, and replay returns the times so far with `stopped`
// set. (A folded replay whose check already failed need not run to its end: fold.h.)
struct ReplayWatch {
  std::size_t every_tasks = 0;  // 0: never
  std::function<bool(const ReplayTimes&)> check;
};

// Runs `graph` to completion, or until `watch` stops it, and returns its task times (relative to
// the engine's clock when called). `rank_hosts[r]` is the host of rank r.
// REQUIRES: the engine and platform exist; engine->run() was not called yet (one run per
// process); every rank in the graph has a host.
[[nodiscard]] ReplayTimes replay(const TaskGraph& graph,
                                 const std::vector<simgrid::s4u::Host*>& rank_hosts,
                                 const ReplayWatch& watch);
[[nodiscard]] inline ReplayTimes replay(const TaskGraph& graph,
                                        const std::vector<simgrid::s4u::Host*>& rank_hosts) {
  return replay(graph, rank_hosts, {});
}

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_REPLAY_REPLAY_H_
