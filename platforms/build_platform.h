// Builds the SimGrid network of a PlatformSpec and lists its hosts in a canonical order.
#ifndef DTSIM_PLATFORMS_BUILD_PLATFORM_H_
#define DTSIM_PLATFORMS_BUILD_PLATFORM_H_

#include <vector>

#include <simgrid/forward.h>

#include "platforms/platform_spec.h"

namespace dtsim::platforms {

// Host speed of generated platforms. dtsim replays measured durations, so no computation is
// converted through it; it only has to be positive.
inline constexpr double kHostSpeedFlopsPerSec = 1e12;

// A built platform. Hosts are owned by the SimGrid engine.
struct Platform {
  // The canonical host order, which rank placement starts from:
  //  - star: host i is the i-th host attached to the switch;
  //  - fat-tree: SimGrid's host index, leaf-major (hosts 0..down[0]-1 share the first leaf
  //    switch, and so on);
  //  - torus: index = x0 + d0 * (x1 + d1 * (x2 + ...)), the first coordinate varying fastest
  //    (SimGrid's index);
  //  - xml: the order in which the file declares hosts (cluster radicals in order).
  std::vector<simgrid::s4u::Host*> hosts;
};

// Builds `spec` into the engine's root zone.
// REQUIRES: an s4u::Engine exists, its network model is configured, and no platform was built
// yet (SimGrid allows one fat-tree zone per process). Throws PlatformError if SimGrid refuses.
[[nodiscard]] Platform build_platform(const PlatformSpec& spec);

// Latency of the route from `src` to `dst` (sum of the link latencies on it), in seconds.
[[nodiscard]] double route_latency_sec(const simgrid::s4u::Host* src,
                                       const simgrid::s4u::Host* dst);

// The links of the route from `src` to `dst`, in order. Owned by the engine.
[[nodiscard]] std::vector<simgrid::s4u::Link*> route_links(const simgrid::s4u::Host* src,
                                                           const simgrid::s4u::Host* dst);

}  // namespace dtsim::platforms

#endif  // DTSIM_PLATFORMS_BUILD_PLATFORM_H_
