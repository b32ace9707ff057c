#include "sim/report/link_report.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>
#include <utility>

#include <simgrid/s4u.hpp>

#include "platforms/build_platform.h"
#include "platforms/describe.h"

namespace dtsim::sim {

namespace sg4 = simgrid::s4u;
using nlohmann::ordered_json;

namespace {

bool has_nodes(const platforms::PlatformSpec& spec) {
  struct Visitor {
    bool operator()(const platforms::StarSpec& s) const { return s.node.has_value(); }
    bool operator()(const platforms::FatTreeSpec& s) const { return s.node.has_value(); }
    bool operator()(const platforms::TorusSpec& s) const { return s.node.has_value(); }
    bool operator()(const platforms::DragonflySpec& s) const { return s.node.has_value(); }
    bool operator()(const platforms::XmlSpec& /*s*/) const { return false; }
  };
  return std::visit(Visitor{}, spec.topology);
}

// Whether routes go up to a turning point and down again (star, fat-tree).
bool symmetric_routes(const platforms::PlatformSpec& spec) {
  return std::holds_alternative<platforms::StarSpec>(spec.topology) ||
         std::holds_alternative<platforms::FatTreeSpec>(spec.topology);
}

constexpr int kNodeLevels = 2;  // GPU links, NIC links

// SimGrid's names of a dragonfly's kinds of links, in level order (platform_spec.h's
// kDragonflyLinkKinds), and what dtsim calls their levels.
constexpr const char* kDragonflyLinkPrefixes[] = {"local_link", "green_link", "black_link",
                                                  "blue_link"};
constexpr const char* kDragonflyLevelNames[] = {" - routers", "intra-chassis (green)",
                                                "intra-group (black)", "inter-group (blue)"};

// The fabric level a link's name tells where its place in a route does not: a dragonfly link's
// kind (0 host links ... 3 inter-group), or the dimension a torus link runs along (0: x, as
// TorusSpec::dims counts them; SimGrid names them torus_link_from_A_to_B by host index).
std::optional<int> named_fabric_level(const platforms::PlatformSpec& spec,
                                      const std::string& name) {
  if (std::holds_alternative<platforms::DragonflySpec>(spec.topology)) {
    for (int kind = 0; kind < 4; ++kind) {
      if (name.starts_with(kDragonflyLinkPrefixes[kind])) {
        return kind;
      }
    }
    return std::nullopt;
  }
  const auto* torus = std::get_if<platforms::TorusSpec>(&spec.topology);
  unsigned a = 0, b = 0;
  if (torus == nullptr || std::sscanf(name.c_str(), "torus_link_from_%u_to_%u", &a, &b) != 2) {
    return std::nullopt;
  }
  // Host index x + X (y + Y z) over the dimensions of size > 1 (TorusSpec::dims_with_links).
  for (std::size_t d = 0; d < torus->dims.size(); ++d) {
    if (torus->dims[d] <= 1) {
      continue;
    }
    if (a % torus->dims[d] != b % torus->dims[d]) {
      return static_cast<int>(d);
    }
    a /= torus->dims[d];
    b /= torus->dims[d];
  }
  return std::nullopt;
}

// Collects link loads: each link once, in the order routes first cross it.
class LinkTally {
 public:
  LinkTally(const std::vector<sg4::Host*>& rank_hosts, const platforms::PlatformSpec& spec)
      : rank_hosts_(rank_hosts), spec_(spec) {}

  void add(int src, int dst, std::uint64_t bytes) {
    for (std::size_t i : route(src, dst)) {
      loads_[i].bytes += bytes;
    }
  }
  std::vector<LinkLoad> take() { return std::move(loads_); }

 private:
  const std::vector<std::size_t>& route(int src, int dst) {
    auto [it, inserted] = routes_.try_emplace({src, dst});
    if (inserted) {
      const auto links = platforms::route_links(rank_hosts_[static_cast<std::size_t>(src)],
                                                rank_hosts_[static_cast<std::size_t>(dst)]);
      for (std::size_t pos = 0; pos < links.size(); ++pos) {
        auto [at, added] = index_.try_emplace(links[pos], loads_.size());
        if (added) {
          const auto named = named_fabric_level(spec_, links[pos]->get_name());
          const int level = named ? *named + (has_nodes(spec_) ? kNodeLevels : 0)
                                  : link_level(spec_, pos, links.size());
          loads_.push_back({.name = links[pos]->get_name(),
                            .level = level,
                            .level_name = link_level_name(spec_, level),
                            .bandwidth_bytes_per_sec = links[pos]->get_bandwidth()});
        }
        it->second.push_back(at->second);
      }
    }
    return it->second;
  }

  const std::vector<sg4::Host*>& rank_hosts_;
  const platforms::PlatformSpec& spec_;
  std::vector<LinkLoad> loads_;
  std::unordered_map<const sg4::Link*, std::size_t> index_;  // lookups only: order never read
  std::map<std::pair<int, int>, std::vector<std::size_t>> routes_;
};

std::string fabric_level_name(const platforms::PlatformSpec& spec, int level, bool nodes) {
  const std::string below = nodes ? "nodes" : "hosts";
  if (std::holds_alternative<platforms::DragonflySpec>(spec.topology) && level >= 0 && level < 4) {
    return (level == 0 ? below : "") + kDragonflyLevelNames[level];
  }
  if (std::holds_alternative<platforms::StarSpec>(spec.topology)) {
    return below + " - switch";
  }
  if (std::holds_alternative<platforms::FatTreeSpec>(spec.topology)) {
    return (level == 0 ? below : "level " + std::to_string(level)) + " - level " +
           std::to_string(level + 1);
  }
  if (std::holds_alternative<platforms::TorusSpec>(spec.topology)) {
    constexpr const char* kAxes[] = {"x", "y", "z"};
    return "torus " +
           (level < 3 ? std::string(kAxes[level]) : "dimension " + std::to_string(level)) +
           " links";
  }
  return "links";
}

}  // namespace

int link_level(const platforms::PlatformSpec& spec, std::size_t position, std::size_t route_links) {
  const int level = static_cast<int>(std::min(position, route_links - 1 - position));
  if (symmetric_routes(spec)) {
    return level;
  }
  return std::min(level, has_nodes(spec) ? kNodeLevels : 0);
}

std::string link_level_name(const platforms::PlatformSpec& spec, int level) {
  const bool nodes = has_nodes(spec);
  if (nodes && level == 0) {
    return "GPU links";
  }
  if (nodes && level == 1) {
    return "NIC links";
  }
  return fabric_level_name(spec, nodes ? level - kNodeLevels : level, nodes);
}

std::vector<double> level_oversubscription(const platforms::PlatformSpec& spec) {
  std::vector<double> out;
  if (!std::holds_alternative<platforms::FatTreeSpec>(spec.topology)) {
    return out;
  }
  // Link level L >= 1 (of the fabric) rises from the level-L switches, summary level L - 1.
  const platforms::PlatformSummary s = platforms::summarize(spec);
  out.assign((has_nodes(spec) ? kNodeLevels : 0) + 1, std::nan(""));
  for (std::size_t i = 1; i < s.levels.size(); ++i) {
    out.push_back(s.levels[i - 1].oversubscription);
  }
  return out;
}

std::vector<LinkLoad> measure_link_loads(const ExecutionGraph& g, const LoweredGraph& lowered,
                                         const std::vector<sg4::Host*>& rank_hosts,
                                         const platforms::PlatformSpec& spec,
                                         double iteration_sec) {
  LinkTally tally(rank_hosts, spec);
  const auto& tasks = lowered.tasks.tasks();
  auto add = [&](TaskId id) {
    const Task& t = tasks[static_cast<std::size_t>(id)];
    if (t.kind == TaskKind::kTransfer) {
      tally.add(t.rank, t.peer, t.bytes);
    }
  };
  // The last iteration's communication, each instance and transfer once, in the order added.
  std::int32_t last = 0;
  for (const Program& p : g.programs) {
    for (const Node& n : p.nodes) {
      last = std::max(last, n.iteration);
    }
  }
  const IterationCommunication comm = iteration_communication(g, lowered, last);
  for (std::int32_t index : comm.instances) {
    const CollectiveInstance* c = &lowered.instances[static_cast<std::size_t>(index)];
    if (c->repeats >= 0) {
      c = &lowered.instances[static_cast<std::size_t>(c->repeats)];
    }
    for (TaskId id = c->first; id < c->end; ++id) {
      add(id);
    }
  }
  for (const auto& [index, count] : comm.left_out) {  // repeats of an instance, left out
    const CollectiveInstance& c = lowered.instances[static_cast<std::size_t>(index)];
    for (TaskId id = c.first; id < c.end; ++id) {
      const Task& t = tasks[static_cast<std::size_t>(id)];
      if (t.kind == TaskKind::kTransfer) {
        tally.add(t.rank, t.peer, t.bytes * static_cast<std::uint64_t>(count));
      }
    }
  }
  for (TaskId id : comm.transfers) {
    add(id);
  }
  std::vector<LinkLoad> loads = tally.take();
  for (LinkLoad& l : loads) {
    const double capacity = l.bandwidth_bytes_per_sec * iteration_sec;
    l.utilization = capacity > 0 ? static_cast<double>(l.bytes) / capacity : 0.0;
  }
  std::sort(loads.begin(), loads.end(), [](const LinkLoad& a, const LinkLoad& b) {
    return std::tie(a.level, a.name) < std::tie(b.level, b.name);
  });
  return loads;
}

std::string link_report_csv(const std::vector<LinkLoad>& loads) {
  std::string csv = "link,level,bandwidth_bytes_per_sec,bytes,utilization\n";
  for (const LinkLoad& l : loads) {
    char numbers[96];
    std::snprintf(numbers, sizeof numbers, ",%.15g,%" PRIu64 ",%.9g\n", l.bandwidth_bytes_per_sec,
                  l.bytes, l.utilization);
    csv += l.name + "," + l.level_name + numbers;
  }
  return csv;
}

ordered_json link_levels_json(const std::vector<LinkLoad>& loads, int top) {
  std::map<int, std::vector<const LinkLoad*>> by_level;
  for (const LinkLoad& l : loads) {
    by_level[l.level].push_back(&l);
  }
  ordered_json levels = ordered_json::array();
  for (auto& [level, links] : by_level) {
    std::stable_sort(links.begin(), links.end(), [](const LinkLoad* a, const LinkLoad* b) {
      return a->utilization > b->utilization;  // ties keep name order
    });
    std::uint64_t bytes = 0;
    for (const LinkLoad* l : links) {
      bytes += l->bytes;
    }
    ordered_json busiest = ordered_json::array();
    for (std::size_t i = 0; i < links.size() && i < static_cast<std::size_t>(top); ++i) {
      busiest.push_back({{"link", links[i]->name},
                         {"bytes", links[i]->bytes},
                         {"utilization", links[i]->utilization}});
    }
    levels.push_back({{"level", links.front()->level_name},
                      {"links", links.size()},
                      {"bytes", bytes},
                      {"max_utilization", links.front()->utilization},
                      {"busiest", std::move(busiest)}});
  }
  return levels;
}

}  // namespace dtsim::sim
