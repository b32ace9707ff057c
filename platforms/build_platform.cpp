#include "platforms/build_platform.h"

#include <algorithm>
#include <string>

#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/s4u.hpp>

namespace dtsim::platforms {

namespace sg4 = simgrid::s4u;
using simgrid::kernel::routing::NetPoint;

namespace {

constexpr auto kSplitDuplex = sg4::Link::SharingPolicy::SPLITDUPLEX;

std::string host_name(unsigned long index) {
  return "host-" + std::to_string(index);
}

Platform build_star(const StarSpec& spec) {
  Platform platform;
  sg4::NetZone* zone = sg4::create_star_zone("star");
  for (unsigned i = 0; i < spec.hosts; ++i) {
    sg4::Host* host = zone->create_host(host_name(i), kHostSpeedFlopsPerSec)->seal();
    sg4::Link* link = zone->create_split_duplex_link("link-" + std::to_string(i),
                                                     spec.link.bandwidth_bytes_per_sec)
                          ->set_latency(spec.link.latency_sec)
                          ->seal();
    zone->add_route(host->get_netpoint(), nullptr, nullptr, nullptr,
                    {{link, sg4::LinkInRoute::Direction::UP}}, true);
    platform.hosts.push_back(host);
  }
  zone->seal();
  return platform;
}

// A netpoint callback for SimGrid's cluster zones that records hosts by their zone index.
sg4::ClusterCallbacks recording_callbacks(std::vector<sg4::Host*>& hosts) {
  return sg4::ClusterCallbacks([&hosts](sg4::NetZone* zone,
                                        const std::vector<unsigned long>& /*coord*/,
                                        unsigned long id) -> std::pair<NetPoint*, NetPoint*> {
    sg4::Host* host = zone->create_host(host_name(id), kHostSpeedFlopsPerSec)->seal();
    if (hosts.size() <= id) {
      hosts.resize(id + 1);
    }
    hosts[id] = host;
    return {host->get_netpoint(), nullptr};
  });
}

Platform build_fat_tree(const FatTreeSpec& spec) {
  Platform platform;
  sg4::create_fatTree_zone("fat-tree", nullptr,
                           sg4::FatTreeParams(spec.levels, spec.down, spec.up, spec.parallel),
                           recording_callbacks(platform.hosts), spec.link.bandwidth_bytes_per_sec,
                           spec.link.latency_sec, kSplitDuplex)
      ->seal();
  return platform;
}

Platform build_torus(const TorusSpec& spec) {
  Platform platform;
  std::vector<unsigned long> dims(spec.dims.begin(), spec.dims.end());
  sg4::create_torus_zone("torus", nullptr, dims, recording_callbacks(platform.hosts),
                         spec.link.bandwidth_bytes_per_sec, spec.link.latency_sec, kSplitDuplex)
      ->seal();
  return platform;
}

Platform load_xml(const XmlSpec& spec) {
  Platform platform;
  sg4::Engine* engine = sg4::Engine::get_instance();
  engine->load_platform(spec.path);
  platform.hosts = engine->get_all_hosts();
  // get_all_hosts() sorts by name; netpoint ids follow declaration order.
  std::sort(platform.hosts.begin(), platform.hosts.end(), [](sg4::Host* a, sg4::Host* b) {
    return a->get_netpoint()->id() < b->get_netpoint()->id();
  });
  return platform;
}

}  // namespace

Platform build_platform(const PlatformSpec& spec) {
  try {
    struct Visitor {
      Platform operator()(const StarSpec& s) const { return build_star(s); }
      Platform operator()(const FatTreeSpec& s) const { return build_fat_tree(s); }
      Platform operator()(const TorusSpec& s) const { return build_torus(s); }
      Platform operator()(const XmlSpec& s) const { return load_xml(s); }
    };
    Platform platform = std::visit(Visitor{}, spec.topology);
    if (platform.hosts.empty()) {
      throw PlatformError(spec.file + ": the platform has no hosts");
    }
    return platform;
  } catch (const PlatformError&) {
    throw;
  } catch (const std::exception& e) {  // std::invalid_argument, simgrid::ParseError, ...
    throw PlatformError(spec.file + ": SimGrid refused the platform: " + e.what());
  }
}

double route_latency_sec(const sg4::Host* src, const sg4::Host* dst) {
  std::vector<sg4::Link*> links;
  double latency_sec = 0;
  src->route_to(dst, links, &latency_sec);
  return latency_sec;
}

double route_bandwidth_bytes_per_sec(const sg4::Host* src, const sg4::Host* dst) {
  std::vector<sg4::Link*> links;
  double latency_sec = 0;
  src->route_to(dst, links, &latency_sec);
  double bandwidth = 0;
  for (const sg4::Link* link : links) {
    bandwidth = bandwidth == 0 ? link->get_bandwidth() : std::min(bandwidth, link->get_bandwidth());
  }
  return bandwidth;
}

}  // namespace dtsim::platforms
