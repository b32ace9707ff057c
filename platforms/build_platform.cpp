#include "platforms/build_platform.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <numeric>
#include <optional>
#include <string>

#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/s4u.hpp>

#include "platforms/routed_fat_tree.h"
#include "platforms/xml_checks.h"
#include "workloads/parsing/units.h"

namespace dtsim::platforms {

using parsing::format_number;

namespace sg4 = simgrid::s4u;
using simgrid::kernel::routing::NetPoint;

namespace {

constexpr auto kSplitDuplex = sg4::Link::SharingPolicy::SPLITDUPLEX;

std::string host_name(unsigned long index) {
  return "host-" + std::to_string(index);
}

// A link with its latency, split-duplex (each direction independent), sealed.
sg4::Link* make_link(sg4::NetZone* zone, const std::string& name, double bytes_per_sec,
                     double latency_sec) {
  return zone->create_split_duplex_link(name, bytes_per_sec)->set_latency(latency_sec)->seal();
}

// Attaches `point` to a star zone behind `link` (routes to and from it cross that link).
void attach(sg4::NetZone* star, NetPoint* point, sg4::Link* link) {
  star->add_route(point, nullptr, nullptr, nullptr, {{link, sg4::LinkInRoute::Direction::UP}},
                  true);
}

void record(std::vector<sg4::Host*>& hosts, std::size_t index, sg4::Host* host) {
  if (hosts.size() <= index) {
    hosts.resize(index + 1);
  }
  hosts[index] = host;
}

// Routes between every two GPUs of a full-zone node: one's GPU link up, the other's down.
void add_gpu_routes(sg4::NetZone* node, const std::vector<NetPoint*>& gpus,
                    const std::vector<sg4::Link*>& gpu_links) {
  using Direction = sg4::LinkInRoute::Direction;
  for (std::size_t a = 0; a < gpus.size(); ++a) {
    for (std::size_t b = 0; b < gpus.size(); ++b) {
      if (a != b) {
        node->add_route(gpus[a], gpus[b], nullptr, nullptr,
                        {{gpu_links[a], Direction::UP}, {gpu_links[b], Direction::DOWN}}, false);
      }
    }
  }
}

// The link GPU `gpu` (whose GPU link is `gpu_link`) reaches the NIC over: with NVLink GPU links
// a PCIe path of its own with the GPU link's bandwidth and latency, else the GPU link itself.
sg4::Link* nic_path(sg4::NetZone* links, const NodeSpec& spec, const std::string& gpu,
                    sg4::Link* gpu_link) {
  if (!spec.nvlink) {
    return gpu_link;
  }
  return make_link(links, gpu + "-pcie-link", spec.gpu_link_bandwidth_bytes_per_sec,
                   spec.gpu_link_latency_sec);
}

// A node as a full zone inside `fabric` (rail-optimized, or with NVLink GPU links): GPU g's
// routes to the other GPUs cross its GPU link and theirs; its route to the NIC router (the
// gateway) crosses its path to the NIC (nic_path) and then its own NIC link (rails: rail g) or
// the node's one NIC link. Every route is given in both directions (split-duplex links). The
// node's links are created in `links` (node_links_zone).
std::pair<NetPoint*, NetPoint*> build_full_node(sg4::NetZone* fabric, sg4::NetZone* links,
                                                unsigned long id, const NodeSpec& spec,
                                                std::vector<sg4::Host*>& hosts) {
  using Direction = sg4::LinkInRoute::Direction;
  const std::string name = "node-" + std::to_string(id);
  sg4::NetZone* node = sg4::create_full_zone(name);
  node->set_parent(fabric);
  NetPoint* nic = node->create_router(name + "-nic");
  sg4::Link* shared_nic = spec.rails
                              ? nullptr
                              : make_link(links, name + "-nic-link",
                                          spec.nic_bandwidth_bytes_per_sec, spec.nic_latency_sec);
  std::vector<NetPoint*> gpus;
  std::vector<sg4::Link*> gpu_links;
  for (unsigned g = 0; g < spec.gpus; ++g) {
    const std::string gpu = name + "-gpu-" + std::to_string(g);
    sg4::Host* host = node->create_host(gpu, kHostSpeedFlopsPerSec)->seal();
    record(hosts, id * spec.gpus + g, host);
    gpus.push_back(host->get_netpoint());
    gpu_links.push_back(make_link(links, gpu + "-link", spec.gpu_link_bandwidth_bytes_per_sec,
                                  spec.gpu_link_latency_sec));
    sg4::Link* nic_link = spec.rails
                              ? make_link(links, gpu + "-nic-link",
                                          spec.nic_bandwidth_bytes_per_sec, spec.nic_latency_sec)
                              : shared_nic;
    sg4::Link* path = nic_path(links, spec, gpu, gpu_links[g]);
    node->add_route(gpus[g], nic, nullptr, nullptr,
                    {{path, Direction::UP}, {nic_link, Direction::UP}}, false);
    node->add_route(nic, gpus[g], nullptr, nullptr,
                    {{nic_link, Direction::DOWN}, {path, Direction::DOWN}}, false);
  }
  add_gpu_routes(node, gpus, gpu_links);
  node->seal();
  return {node->get_netpoint(), nic};
}

// A multi-GPU node as a star zone inside `fabric`: its GPUs and a NIC router, each behind its
// own link (created in `links`). Returns the zone's netpoint and the NIC, its gateway to the
// fabric.
std::pair<NetPoint*, NetPoint*> build_node(sg4::NetZone* fabric, sg4::NetZone* links,
                                           unsigned long id, const NodeSpec& spec,
                                           std::vector<sg4::Host*>& hosts) {
  if (spec.nvlink) {
    return build_full_node(fabric, links, id, spec, hosts);
  }
  const std::string name = "node-" + std::to_string(id);
  sg4::NetZone* node = sg4::create_star_zone(name);
  node->set_parent(fabric);
  for (unsigned g = 0; g < spec.gpus; ++g) {
    const std::string gpu = name + "-gpu-" + std::to_string(g);
    sg4::Host* host = node->create_host(gpu, kHostSpeedFlopsPerSec)->seal();
    attach(node, host->get_netpoint(),
           make_link(links, gpu + "-link", spec.gpu_link_bandwidth_bytes_per_sec,
                     spec.gpu_link_latency_sec));
    record(hosts, id * spec.gpus + g, host);
  }
  NetPoint* nic = node->create_router(name + "-nic");
  attach(
      node, nic,
      make_link(links, name + "-nic-link", spec.nic_bandwidth_bytes_per_sec, spec.nic_latency_sec));
  node->seal();
  return {node->get_netpoint(), nic};
}

// The zone a cluster's node links are created in: SimGrid 3.32 checks each new link's name by
// searching every zone from the root, so links created in N node zones make building the
// platform quadratic in N (2,048 DGX nodes: 18.6 s of CPU, 4.4 s this way). Created first, this
// empty zone is the root, holds every node's links (a route may cross links of any zone) and
// the cluster zone as its one child, in which each search finds empty node zones.
sg4::NetZone* node_links_zone() {
  return sg4::create_empty_zone("platform");
}

// A netpoint callback for SimGrid's cluster zones that records hosts by their zone index:
// endpoint `id` is one host, or with `node` a node holding hosts id * gpus ... id * gpus + gpus-1,
// its links created in `links`.
sg4::ClusterCallbacks recording_callbacks(std::vector<sg4::Host*>& hosts,
                                          const std::optional<NodeSpec>& node,
                                          sg4::NetZone* links) {
  return sg4::ClusterCallbacks(
      [&hosts, node, links](sg4::NetZone* zone, const std::vector<unsigned long>& /*coord*/,
                            unsigned long id) -> std::pair<NetPoint*, NetPoint*> {
        if (node) {
          return node->rails ? build_full_node(zone, links, id, *node, hosts)
                             : build_node(zone, links, id, *node, hosts);
        }
        sg4::Host* host = zone->create_host(host_name(id), kHostSpeedFlopsPerSec)->seal();
        record(hosts, id, host);
        return {host->get_netpoint(), nullptr};
      });
}

// The two nodes a FatTreeZone link joins, from its name "link_from_<lower>_<upper>_<n>_UP|DOWN"
// (SimGrid 3.32: endpoints are nodes 0..E-1, switches follow); nothing for other links.
std::optional<std::pair<long, long>> fat_tree_link_ends(const std::string& name) {
  long lower = 0, upper = 0, unique = 0;
  char direction[8] = {};
  if (std::sscanf(name.c_str(), "link_from_%ld_%ld_%ld_%7s", &lower, &upper, &unique, direction) !=
      4) {
    return std::nullopt;
  }
  return std::pair{lower, upper};
}

// The level of every link of the built fat-tree: a link's level is its lower node's, found
// upwards from the endpoints (level 0), so level i joins level i and i+1.
std::vector<std::pair<sg4::Link*, std::size_t>> fat_tree_link_levels(const FatTreeSpec& spec) {
  std::vector<std::pair<sg4::Link*, std::pair<long, long>>> links;
  for (sg4::Link* link : sg4::Engine::get_instance()->get_all_links()) {
    if (auto ends = fat_tree_link_ends(link->get_name())) {
      links.emplace_back(link, *ends);
    }
  }
  std::map<long, std::size_t> level;
  const auto endpoints = static_cast<long>(
      std::accumulate(spec.down.begin(), spec.down.end(), 1.0, std::multiplies<>()));
  for (long e = 0; e < endpoints; ++e) {
    level[e] = 0;
  }
  for (std::size_t pass = 0; pass < spec.levels; ++pass) {
    for (const auto& [link, ends] : links) {
      if (auto it = level.find(ends.first); it != level.end()) {
        level[ends.second] = it->second + 1;
      }
    }
  }
  std::vector<std::pair<sg4::Link*, std::size_t>> out;
  for (const auto& [link, ends] : links) {
    auto it = level.find(ends.first);
    if (it == level.end() || it->second >= spec.levels) {
      throw PlatformError("cannot tell the level of SimGrid's fat-tree link " + link->get_name());
    }
    out.emplace_back(link, it->second);
  }
  return out;
}

// Gives the links between level i and i+1 the bandwidth and latency of spec.level_links[i].
void set_level_links(const FatTreeSpec& spec) {
  for (const auto& [link, level] : fat_tree_link_levels(spec)) {
    const LinkSpec& wanted = spec.level_links[level];
    link->set_bandwidth(wanted.bandwidth_bytes_per_sec);
    link->set_latency(wanted.latency_sec);
  }
}

Platform build_fat_tree(const FatTreeSpec& spec) {
  Platform platform;
  sg4::NetZone* root = node_links_zone();
  sg4::create_fatTree_zone("fat-tree", root,
                           sg4::FatTreeParams(spec.levels, spec.down, spec.up, spec.parallel),
                           recording_callbacks(platform.hosts, spec.node, root),
                           spec.link.bandwidth_bytes_per_sec, spec.link.latency_sec, kSplitDuplex);
  root->seal();
  if (!spec.level_links.empty()) {
    set_level_links(spec);
  }
  return platform;
}

Platform build_torus(const TorusSpec& spec) {
  Platform platform;
  const std::vector<unsigned> linked = spec.dims_with_links();
  std::vector<unsigned long> dims(linked.begin(), linked.end());
  sg4::NetZone* root = node_links_zone();
  sg4::create_torus_zone("torus", root, dims, recording_callbacks(platform.hosts, spec.node, root),
                         spec.link.bandwidth_bytes_per_sec, spec.link.latency_sec, kSplitDuplex);
  root->seal();
  return platform;
}

// Gives each kind of dragonfly link its bandwidth (times the kind's multiplier, as SimGrid
// does) and latency; the kind is the prefix of SimGrid's link name.
void set_dragonfly_links(const DragonflySpec& spec) {
  const std::pair<const char*, unsigned> kinds[] = {{"local_link_", 1},
                                                    {"green_link_", spec.green_links},
                                                    {"black_link_", spec.black_links},
                                                    {"blue_link_", spec.blue_links}};
  for (sg4::Link* link : sg4::Engine::get_instance()->get_all_links()) {
    for (std::size_t k = 0; k < std::size(kinds); ++k) {
      if (link->get_name().starts_with(kinds[k].first)) {
        link->set_bandwidth(spec.level_links[k].bandwidth_bytes_per_sec * kinds[k].second);
        link->set_latency(spec.level_links[k].latency_sec);
      }
    }
  }
}

Platform build_dragonfly(const DragonflySpec& spec) {
  Platform platform;
  sg4::NetZone* root = node_links_zone();
  sg4::create_dragonfly_zone(
      "dragonfly", root,
      sg4::DragonflyParams({spec.groups, spec.blue_links}, {spec.chassis, spec.black_links},
                           {spec.routers, spec.green_links}, spec.nodes),
      recording_callbacks(platform.hosts, spec.node, root), spec.link.bandwidth_bytes_per_sec,
      spec.link.latency_sec, kSplitDuplex);
  root->seal();
  if (!spec.level_links.empty()) {
    set_dragonfly_links(spec);
  }
  return platform;
}

Platform build_star(const StarSpec& spec) {
  if (spec.node) {
    // A star of nodes is a one-level fat-tree: one switch, one link per node.
    return build_fat_tree({.levels = 1,
                           .down = {spec.hosts},
                           .up = {1},
                           .parallel = {1},
                           .link = spec.link,
                           .node = spec.node});
  }
  Platform platform;
  sg4::NetZone* zone = sg4::create_star_zone("star");
  for (unsigned i = 0; i < spec.hosts; ++i) {
    sg4::Host* host = zone->create_host(host_name(i), kHostSpeedFlopsPerSec)->seal();
    attach(zone, host->get_netpoint(),
           make_link(zone, "link-" + std::to_string(i), spec.link.bandwidth_bytes_per_sec,
                     spec.link.latency_sec));
    platform.hosts.push_back(host);
  }
  zone->seal();
  return platform;
}

// The links attached to host `host` (canonical index): its own link(s) to the network; for a
// GPU of a multi-GPU node its GPU link (and with rails its NIC link). Names are dtsim's and
// SimGrid's (platforms/FORMAT.md, "Perturbations"). REQUIRES: not XML.
std::vector<sg4::Link*> host_links(const PlatformSpec& spec, unsigned host) {
  sg4::Engine* engine = sg4::Engine::get_instance();
  std::vector<sg4::Link*> out;
  auto add = [&](const std::string& name) {
    for (const std::string& n : {name, name + "_UP", name + "_DOWN"}) {
      if (sg4::Link* link = engine->link_by_name_or_null(n)) {
        out.push_back(link);
      }
    }
  };
  const std::optional<NodeSpec>* node = std::visit(
      [](const auto& t) -> const std::optional<NodeSpec>* {
        if constexpr (requires { t.node; }) {
          return &t.node;
        } else {
          return nullptr;
        }
      },
      spec.topology);
  if (node != nullptr && node->has_value()) {
    const std::string gpu = "node-" + std::to_string(host / (*node)->gpus) + "-gpu-" +
                            std::to_string(host % (*node)->gpus);
    add(gpu + "-link");
    if ((*node)->nvlink) {
      add(gpu + "-pcie-link");
    }
    if ((*node)->rails) {
      add(gpu + "-nic-link");
    }
    return out;
  }
  if (std::holds_alternative<StarSpec>(spec.topology)) {
    add("link-" + std::to_string(host));
  } else if (const auto* tree = std::get_if<FatTreeSpec>(&spec.topology)) {
    for (const auto& [link, level] : fat_tree_link_levels(*tree)) {
      if (level == 0 && fat_tree_link_ends(link->get_name())->first == static_cast<long>(host)) {
        out.push_back(link);
      }
    }
  } else if (std::holds_alternative<TorusSpec>(spec.topology)) {
    for (sg4::Link* link : engine->get_all_links()) {
      long from = 0, to = 0;
      char direction[8] = {};
      if (std::sscanf(link->get_cname(), "torus_link_from_%ld_to_%ld_%7s", &from, &to, direction) ==
              3 &&
          (from == static_cast<long>(host) || to == static_cast<long>(host))) {
        out.push_back(link);
      }
    }
  } else if (const auto* d = std::get_if<DragonflySpec>(&spec.topology)) {
    const std::string prefix = "local_link_from_router_" + std::to_string(host / d->nodes) +
                               "_to_node_" + std::to_string(host % d->nodes) + "_";
    for (sg4::Link* link : engine->get_all_links()) {
      if (link->get_name().starts_with(prefix)) {
        out.push_back(link);
      }
    }
  }
  return out;
}

// Scales the bandwidth of the links each "slow_links" entry names (both directions of a
// split-duplex link). Throws PlatformError naming the entry if a link name matches nothing.
void apply_slow_links(const PlatformSpec& spec) {
  sg4::Engine* engine = sg4::Engine::get_instance();
  for (const SlowLinks& slow : spec.perturbations.slow_links) {
    std::vector<sg4::Link*> links;
    if (slow.host) {
      links = host_links(spec, *slow.host);
      if (links.empty()) {  // a naming mismatch with SimGrid: never silently do nothing
        throw PlatformError(spec.file + ": " + slow.where + "/host: found no link of host " +
                            std::to_string(*slow.host));
      }
    } else if (slow.level) {
      for (const auto& [link, level] : fat_tree_link_levels(std::get<FatTreeSpec>(spec.topology))) {
        if (level == *slow.level) {
          links.push_back(link);
        }
      }
    } else {
      for (const std::string& name : {slow.link, slow.link + "_UP", slow.link + "_DOWN"}) {
        if (sg4::Link* link = engine->link_by_name_or_null(name)) {
          links.push_back(link);
        }
      }
      if (links.empty()) {
        throw PlatformError(spec.file + ": " + slow.where + "/link: no SimGrid link named \"" +
                            slow.link + "\" (link names: platforms/FORMAT.md, \"Perturbations\")");
      }
    }
    for (sg4::Link* link : links) {
      const double bandwidth = link->get_bandwidth() * slow.bandwidth_factor;
      if (!std::isfinite(bandwidth) || bandwidth <= 0) {
        throw PlatformError(spec.file + ": " + slow.where + "/bandwidth_factor: link \"" +
                            link->get_name() + "\" would get a bandwidth of " +
                            format_number("%g", bandwidth) +
                            " bytes/s (expected a finite number > 0)");
      }
      link->set_bandwidth(bandwidth);
    }
  }
}

Platform load_xml(const XmlSpec& spec) {
  Platform platform;
  sg4::Engine* engine = sg4::Engine::get_instance();
  check_xml_loads(spec.path);
  engine->load_platform(spec.path);
  check_xml_names(spec.path);
  check_xml_links(spec.path);
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
      Platform operator()(const DragonflySpec& s) const { return build_dragonfly(s); }
    };
    const auto* tree = std::get_if<FatTreeSpec>(&spec.topology);
    Platform platform =
        tree != nullptr && !spec.perturbations.failed_links.empty()
            ? build_routed_fat_tree(*tree, spec.perturbations.failed_links, spec.file)
            : std::visit(Visitor{}, spec.topology);
    if (platform.hosts.empty()) {
      throw PlatformError(spec.file + ": the platform has no hosts");
    }
    apply_slow_links(spec);
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

std::vector<sg4::Link*> route_links(const sg4::Host* src, const sg4::Host* dst) {
  std::vector<sg4::Link*> links;
  double latency_sec = 0;
  src->route_to(dst, links, &latency_sec);
  return links;
}

}  // namespace dtsim::platforms
