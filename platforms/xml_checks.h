// Checks of a SimGrid XML platform that SimGrid 3.32 does not make itself: on these mistakes it
// crashes (a null route dereferenced, "The Impossible Did Happen") instead of saying what is
// wrong.
#ifndef DTSIM_PLATFORMS_XML_CHECKS_H_
#define DTSIM_PLATFORMS_XML_CHECKS_H_

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include <simgrid/forward.h>

namespace dtsim::platforms {

// Loads `file` into a SimGrid engine in a forked child first, because SimGrid 3.32 aborts the
// process on some platforms it rejects (an unknown routing model, a link declared twice, a
// cluster with fewer radicals than its topology needs). Throws PlatformError "<file>: SimGrid
// refused the platform: <SimGrid's message>" if the child dies; returns if it loads or throws
// (the caller's own load then throws the same exception). Throws std::runtime_error if the
// child cannot be started.
void check_xml_loads(const std::string& file);

// Throws PlatformError naming `file` and the object if the name of a host, link or router is not
// valid UTF-8 (reports are JSON, which must be).
void check_xml_names(const std::string& file);

// Throws PlatformError naming `file` and the link if a link's bandwidth is not a finite number
// > 0 or its latency not a finite number >= 0.
void check_xml_links(const std::string& file);

// Up to this many hosts, check_xml_routes looks up every ordered pair of `hosts` (about 3 s for
// 2048 hosts, 0.7 µs a lookup); beyond, only the `pairs`.
inline constexpr std::size_t kMaxRouteCheckedHosts = 2048;

using HostPair = std::pair<simgrid::s4u::Host*, simgrid::s4u::Host*>;

// Throws PlatformError naming `file` and both hosts if the route from one host to another has
// neither a link nor a latency, or cannot be looked up: between any two distinct `hosts` (while
// there are at most kMaxRouteCheckedHosts of them), and for each of `pairs` (e.g. background
// flows). The lookups run in a forked child first, because SimGrid segfaults on a route the file
// does not declare. Throws std::runtime_error if the child cannot be started.
void check_xml_routes(const std::string& file, const std::vector<simgrid::s4u::Host*>& hosts,
                      const std::vector<HostPair>& pairs = {});

}  // namespace dtsim::platforms

#endif  // DTSIM_PLATFORMS_XML_CHECKS_H_
