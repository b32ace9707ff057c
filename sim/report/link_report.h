// Bytes each network link carries in one steady-state iteration, and how busy that keeps it
// (`--link-report`, and the busiest links per topology level in the report and summary).
// Bytes are counted by walking every transfer's route (platforms::route_links), so they are
// exact whatever the network model; no SimGrid instrumentation.
#ifndef DTSIM_SIM_REPORT_LINK_REPORT_H_
#define DTSIM_SIM_REPORT_LINK_REPORT_H_

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <simgrid/forward.h>

#include "platforms/platform_spec.h"
#include "sim/graph/execution_graph.h"
#include "sim/lowering/lowering.h"

namespace dtsim::sim {

// One direction of a link (SimGrid's split-duplex links are two: NAME_UP and NAME_DOWN).
struct LinkLoad {
  std::string name;        // SimGrid's link name
  int level = 0;           // 0: the links nearest the hosts; see link_level
  std::string level_name;  // link_level_name
  double bandwidth_bytes_per_sec = 0;
  std::uint64_t bytes = 0;  // carried in one steady-state iteration
  double utilization = 0;   // bytes / (bandwidth * iteration time)
};

// The level of the i-th link of a route of n links: routes are symmetric (up to a turning point
// and down again), so min(i, n-1-i): 0 = the hosts' own links. XML platforms have no such
// structure: their fabric links are one level (after the node levels, if any). A dragonfly's
// and a torus's links are levelled by their SimGrid names instead: a dragonfly's by kind, a
// torus's by the dimension they run along.
// Names, by topology:
//   star: "hosts - switch"; fat-tree: "hosts - level 1", "level 1 - level 2", ...;
//   dragonfly: "hosts - routers", "intra-chassis (green)", "intra-group (black)",
//   "inter-group (blue)"; torus: "torus x links", "torus y links", ...; xml: "links";
//   with multi-GPU nodes, first "GPU links" and "NIC links", then the fabric's ("nodes - ...").
[[nodiscard]] int link_level(const platforms::PlatformSpec& spec, std::size_t position,
                             std::size_t route_links);
[[nodiscard]] std::string link_level_name(const platforms::PlatformSpec& spec, int level);

// Per link level (link_level), the down:up capacity ratio of the switches below it: a fat-tree's
// (platforms/describe.h, > 1: oversubscribed); NaN for the hosts' and nodes' own links and where
// the topology says nothing (star, torus, dragonfly, XML).
[[nodiscard]] std::vector<double> level_oversubscription(const platforms::PlatformSpec& spec);

// The load of every link that the transfers of `graph`'s last iteration cross (its collectives'
// and its sends'; a memoized collective moves what the replay it repeats moved; links no
// transfer crosses are left out), ranks placed on `rank_hosts`, in (level, name) order.
// REQUIRES: an engine with the platform of `spec`; iteration_sec > 0 for a non-zero utilization.
[[nodiscard]] std::vector<LinkLoad> measure_link_loads(
    const ExecutionGraph& graph, const LoweredGraph& lowered,
    const std::vector<simgrid::s4u::Host*>& rank_hosts, const platforms::PlatformSpec& spec,
    double iteration_sec);

// The CSV of `--link-report`: a header line, then one line per link:
// link,level,bandwidth_bytes_per_sec,bytes,utilization
[[nodiscard]] std::string link_report_csv(const std::vector<LinkLoad>& loads);

// Per level (in level order): {"level", "links", "bytes", "max_utilization", "busiest": the
// `top` most utilized links (ties by name) as {"link", "bytes", "utilization"}}.
[[nodiscard]] nlohmann::ordered_json link_levels_json(const std::vector<LinkLoad>& loads,
                                                      int top = 3);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_REPORT_LINK_REPORT_H_
