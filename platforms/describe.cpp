#include "platforms/describe.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <numeric>
#include <sstream>

namespace dtsim::platforms {

namespace {

double product(const std::vector<unsigned>& v, std::size_t from, std::size_t to) {
  double p = 1;
  for (std::size_t i = from; i < to; ++i) {
    p *= v[i];
  }
  return p;
}

// SimGrid's fat-tree: level 0 holds the hosts; level i has
// prod(down[i..L-1]) * prod(up[0..i-1]) nodes; each node of level i-1 has up[i-1] parents,
// each reached by parallel[i-1] links.
void summarize_fat_tree(const FatTreeSpec& t, double endpoint_bytes_per_sec, PlatformSummary& s) {
  const std::size_t levels = t.levels;
  auto bw = [&t](std::size_t i) {  // of the links between level i and i+1
    return t.level_links.empty() ? t.link.bandwidth_bytes_per_sec
                                 : t.level_links[i].bandwidth_bytes_per_sec;
  };
  double bisection = s.endpoints * endpoint_bytes_per_sec / 2;
  for (std::size_t i = 1; i <= levels; ++i) {
    const double lower_nodes = product(t.down, i - 1, levels) * product(t.up, 0, i - 1);
    const double links = lower_nodes * t.up[i - 1] * t.parallel[i - 1];
    LevelSummary level{.name = (i == 1 ? std::string("hosts") : "level " + std::to_string(i - 1)) +
                               " -> level " + std::to_string(i),
                       .links = static_cast<unsigned long>(links),
                       .bandwidth_bytes_per_sec = bw(i - 1)};
    if (i < levels) {
      level.oversubscription = static_cast<double>(t.down[i - 1] * t.parallel[i - 1]) * bw(i - 1) /
                               (static_cast<double>(t.up[i] * t.parallel[i]) * bw(i));
    }
    s.levels.push_back(level);
    // Half the hosts send to the other half: a cut above level i-1 is crossed by at most the
    // links going up from it.
    if (i > 1) {
      bisection = std::min(bisection, links * bw(i - 1) / 2);
    }
  }
  s.bisection_bytes_per_sec = bisection;
}

// The cut between two halves of the top level that has more than one member (groups, else the
// chassis of the one group, else the routers of the one chassis): a members on one side and
// b = total - a on the other are joined by a x b links (the level is all-to-all).
double dragonfly_cut_bytes_per_sec(const DragonflySpec& d) {
  auto cut = [](unsigned members, double links_per_pair) {
    const double a = members / 2;
    return a * (members - a) * links_per_pair;
  };
  auto bw = [&d](std::size_t kind) {  // kDragonflyLinkKinds index
    return d.level_links.empty() ? d.link.bandwidth_bytes_per_sec
                                 : d.level_links[kind].bandwidth_bytes_per_sec;
  };
  if (d.groups > 1) {
    return cut(d.groups, d.blue_links) * bw(3);
  }
  if (d.chassis > 1) {
    return cut(d.chassis, 1.0 * d.black_links * d.routers) * bw(2);  // a black link per router
  }
  if (d.routers > 1) {
    return cut(d.routers, d.green_links) * bw(1);
  }
  return std::numeric_limits<double>::infinity();  // a single router: no link to cut
}

// A dragonfly's links by kind (SimGrid's DragonflyZone: per chassis green links between every
// two routers, per group black links between every two chassis from each router, blue links
// between every two groups).
void summarize_dragonfly(const DragonflySpec& d, PlatformSummary& s) {
  auto pairs = [](unsigned n) {
    return static_cast<unsigned long>(n) * (n - 1) / 2;
  };
  const unsigned long routers = static_cast<unsigned long>(d.groups) * d.chassis * d.routers;
  const unsigned long links[] = {
      routers * d.nodes,
      static_cast<unsigned long>(d.groups) * d.chassis * pairs(d.routers) * d.green_links,
      static_cast<unsigned long>(d.groups) * pairs(d.chassis) * d.routers * d.black_links,
      pairs(d.groups) * d.blue_links};
  const char* names[] = {"hosts - routers", "intra-chassis (green)", "intra-group (black)",
                         "inter-group (blue)"};
  for (std::size_t kind = 0; kind < 4; ++kind) {
    if (links[kind] > 0) {
      s.levels.push_back({.name = names[kind],
                          .links = links[kind],
                          .bandwidth_bytes_per_sec =
                              d.level_links.empty() ? d.link.bandwidth_bytes_per_sec
                                                    : d.level_links[kind].bandwidth_bytes_per_sec});
    }
  }
}

// A torus's links by dimension: every host has one to its next neighbour along each dimension
// of more than one host (SimGrid's TorusZone).
void summarize_torus(const TorusSpec& t, PlatformSummary& s) {
  constexpr const char* kAxes[] = {"x", "y", "z"};
  for (std::size_t d = 0; d < t.dims.size(); ++d) {
    if (t.dims[d] > 1) {
      s.levels.push_back(
          {.name = "torus " + (d < 3 ? std::string(kAxes[d]) : "dimension " + std::to_string(d)) +
                   " (" + std::to_string(t.dims[d]) + " hosts)",
           .links = s.endpoints,
           .bandwidth_bytes_per_sec = t.link.bandwidth_bytes_per_sec});
    }
  }
}

}  // namespace

PlatformSummary summarize(const PlatformSpec& spec) {
  PlatformSummary s{.topology = spec.topology_name(),
                    .gpus = spec.host_count(),
                    .gpus_per_node = spec.gpus_per_node()};
  s.endpoints = s.gpus / s.gpus_per_node;
  auto endpoint_bw = [](const LinkSpec& link, const std::optional<NodeSpec>& node) {
    if (!node) {
      return link.bandwidth_bytes_per_sec;
    }
    const double nics = node->rails ? node->gpus : 1.0;  // rails: one NIC link per GPU
    return std::min(link.bandwidth_bytes_per_sec, nics * node->nic_bandwidth_bytes_per_sec);
  };
  if (const auto* star = std::get_if<StarSpec>(&spec.topology)) {
    s.bisection_bytes_per_sec = s.endpoints * endpoint_bw(star->link, star->node) / 2;
  } else if (const auto* tree = std::get_if<FatTreeSpec>(&spec.topology)) {
    summarize_fat_tree(*tree, endpoint_bw(tree->link, tree->node), s);
  } else if (const auto* dragonfly = std::get_if<DragonflySpec>(&spec.topology)) {
    summarize_dragonfly(*dragonfly, s);
    s.bisection_bytes_per_sec =
        std::min(dragonfly_cut_bytes_per_sec(*dragonfly),
                 s.endpoints * endpoint_bw(dragonfly->link, dragonfly->node) / 2);
  } else if (const auto* torus = std::get_if<TorusSpec>(&spec.topology)) {
    summarize_torus(*torus, s);
    // Cut across the largest dimension: N / d links in the cut plane, twice (wrap-around).
    const unsigned d = *std::max_element(torus->dims.begin(), torus->dims.end());
    const double cut_links = d > 2 ? 2.0 * s.endpoints / d : 1.0 * s.endpoints / std::max(d, 1u);
    s.bisection_bytes_per_sec = std::min(cut_links * torus->link.bandwidth_bytes_per_sec,
                                         s.endpoints * endpoint_bw(torus->link, torus->node) / 2);
  }
  return s;
}

namespace {

// Refuses what one SimGrid <cluster> cannot say.
void check_exportable(const PlatformSpec& spec) {
  if (std::holds_alternative<XmlSpec>(spec.topology)) {
    throw PlatformError(spec.file + ": already a SimGrid XML platform");
  }
  if (spec.perturbations != Perturbations{}) {
    throw PlatformError(spec.file +
                        ": perturbations cannot be written into a SimGrid <cluster>; export the "
                        "spec without its \"perturbations\" section");
  }
  if (spec.gpus_per_node() > 1) {
    throw PlatformError(spec.file +
                        ": multi-GPU nodes cannot be written as one SimGrid <cluster>; export "
                        "the fabric without its \"node\" section");
  }
  const auto* tree = std::get_if<FatTreeSpec>(&spec.topology);
  const auto* dragonfly = std::get_if<DragonflySpec>(&spec.topology);
  if ((tree != nullptr && !tree->level_links.empty()) ||
      (dragonfly != nullptr && !dragonfly->level_links.empty())) {
    throw PlatformError(spec.file + ": per-" + (tree != nullptr ? "level" : "kind") +
                        " link bandwidths and latencies cannot be written as one SimGrid "
                        "<cluster> (it has one bw and one lat)");
  }
}

// A <cluster>'s topology, its topo_parameters and its one link.
struct ClusterTopology {
  std::string topology, parameters;  // empty topology: a flat cluster (a star)
  LinkSpec link;
};

ClusterTopology cluster_topology(const PlatformSpec& spec) {
  auto join = [](const std::vector<unsigned>& v) {
    std::string out;
    for (unsigned x : v) {
      out += (out.empty() ? "" : ",") + std::to_string(x);
    }
    return out;
  };
  if (const auto* tree = std::get_if<FatTreeSpec>(&spec.topology)) {
    return {"FAT_TREE",
            std::to_string(tree->levels) + ";" + join(tree->down) + ";" + join(tree->up) + ";" +
                join(tree->parallel),
            tree->link};
  }
  if (const auto* torus = std::get_if<TorusSpec>(&spec.topology)) {
    return {"TORUS", join(torus->dims_with_links()), torus->link};
  }
  if (const auto* d = std::get_if<DragonflySpec>(&spec.topology)) {
    return {"DRAGONFLY",
            std::to_string(d->groups) + "," + std::to_string(d->blue_links) + ";" +
                std::to_string(d->chassis) + "," + std::to_string(d->black_links) + ";" +
                std::to_string(d->routers) + "," + std::to_string(d->green_links) + ";" +
                std::to_string(d->nodes),
            d->link};
  }
  return {"", "", std::get<StarSpec>(spec.topology).link};
}

}  // namespace

std::string to_simgrid_xml(const PlatformSpec& spec) {
  check_exportable(spec);
  const ClusterTopology cluster = cluster_topology(spec);
  char bw[64], lat[64];
  std::snprintf(bw, sizeof bw, "%.17gBps", cluster.link.bandwidth_bytes_per_sec);
  std::snprintf(lat, sizeof lat, "%.17gs", cluster.link.latency_sec);
  std::ostringstream xml;
  xml << "<?xml version='1.0'?>\n"
      << "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
      << "<!-- Written by dtsim platform export from " << spec.file << " -->\n"
      << "<platform version=\"4.1\">\n"
      << "  <zone id=\"world\" routing=\"Full\">\n"
      << "    <cluster id=\"cluster\" prefix=\"host-\" radical=\"0-" << spec.host_count() - 1
      << "\" suffix=\"\" speed=\"1Tf\" bw=\"" << bw << "\" lat=\"" << lat
      << "\" sharing_policy=\"SPLITDUPLEX\"";
  if (!cluster.topology.empty()) {
    xml << " topology=\"" << cluster.topology << "\" topo_parameters=\"" << cluster.parameters
        << "\"";
  }
  xml << "/>\n  </zone>\n</platform>\n";
  return xml.str();
}

}  // namespace dtsim::platforms
