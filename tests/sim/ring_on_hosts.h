// Test helper: a ring all-reduce with an explicit host for each rank, on the exact model (the
// path `dtsim collective` takes, placement given by hand). Include in one engine test file per
// process: it creates the SimGrid engine.
#ifndef DTSIM_TESTS_SIM_RING_ON_HOSTS_H_
#define DTSIM_TESTS_SIM_RING_ON_HOSTS_H_

#include <algorithm>
#include <string>
#include <vector>

#include <simgrid/s4u.hpp>

#include "platforms/build_platform.h"
#include "platforms/platform_spec.h"
#include "sim/collectives/registry.h"
#include "sim/lowering/task_graph.h"
#include "sim/replay/replay.h"
#include "sim/run/simulation.h"

namespace dtsim::sim {

// A ring all-reduce of `n_bytes` with rank r on host `host_of_rank[r]` of `platform`'s canonical
// order, on the exact model: the path `dtsim collective` takes, with the placement given
// explicitly (a strided order is no --placement policy on single-GPU hosts).
inline double ring_sec(const std::string& platform, const std::vector<std::size_t>& host_of_rank,
                       std::uint64_t n_bytes) {
  std::vector<std::string> args{"test", "--log=xbt_cfg.thres:warning"};
  for (const std::string& s : network_model_settings(NetworkModel::kExact)) {
    args.push_back("--cfg=" + s);
  }
  std::vector<char*> argv;
  for (std::string& a : args) {
    argv.push_back(a.data());
  }
  int argc = static_cast<int>(argv.size());
  simgrid::s4u::Engine engine(&argc, argv.data());
  const platforms::Platform built =
      platforms::build_platform(platforms::read_platform_spec("tests/testdata/" + platform));
  std::vector<simgrid::s4u::Host*> hosts;
  for (std::size_t h : host_of_rank) {
    hosts.push_back(built.hosts[h]);
  }
  TopologyHints hints;
  hints.route_latency_sec = [&hosts](int src, int dst) {
    return platforms::route_latency_sec(hosts[static_cast<std::size_t>(src)],
                                        hosts[static_cast<std::size_t>(dst)]);
  };
  const int p = static_cast<int>(hosts.size());
  const Schedule schedule = make_algorithm("ring", {})->all_reduce(p, n_bytes, hints);
  TaskGraph graph;
  graph.add_schedule(schedule, std::vector<std::vector<TaskId>>(static_cast<std::size_t>(p)));
  const ReplayTimes times = replay(graph, hosts);
  return *std::max_element(times.end_sec.begin(), times.end_sec.end());
}

}  // namespace dtsim::sim

#endif  // DTSIM_TESTS_SIM_RING_ON_HOSTS_H_
