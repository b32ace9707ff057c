#include "platforms/routed_fat_tree.h"

#include <map>
#include <set>
#include <tuple>

#include <simgrid/s4u.hpp>

namespace dtsim::platforms {

namespace sg4 = simgrid::s4u;

namespace {

using Direction = sg4::LinkInRoute::Direction;
// A link: (level of its lower node, lower node's index in its level, parent, parallel link).
using LinkKey = std::tuple<unsigned, std::size_t, unsigned, unsigned>;

// The generalized fat-tree PGFT(h; down; up; parallel). A node of level l has h digits: digit
// i < l counts in up[i] (which parent was taken at level i), digit i >= l in down[i] (which
// child). A node's parents at level l+1 differ from it in digit l only; hosts (level 0) are
// numbered with digit 0 fastest, as SimGrid does (leaf-major).
class Pgft {
 public:
  explicit Pgft(const FatTreeSpec& t) : t_(t) {
    for (unsigned l = 0; l <= t.levels; ++l) {
      std::size_t n = 1;
      for (unsigned i = 0; i < t.levels; ++i) {
        n *= radix(l, i);
      }
      offset_.push_back(l == 0 ? 0 : offset_[l - 1] + count_[l - 1]);
      count_.push_back(n);
    }
  }

  [[nodiscard]] std::size_t count(unsigned level) const { return count_[level]; }
  [[nodiscard]] unsigned radix(unsigned level, unsigned digit) const {
    return digit < level ? t_.up[digit] : t_.down[digit];
  }
  [[nodiscard]] std::size_t index(unsigned level, const std::vector<unsigned>& d) const {
    std::size_t index = 0;
    for (unsigned i = t_.levels; i-- > 0;) {
      index = index * radix(level, i) + d[i];
    }
    return index;
  }
  [[nodiscard]] std::vector<unsigned> digits(unsigned level, std::size_t index) const {
    std::vector<unsigned> d(t_.levels);
    for (unsigned i = 0; i < t_.levels; ++i) {
      d[i] = static_cast<unsigned>(index % radix(level, i));
      index /= radix(level, i);
    }
    return d;
  }
  // Netpoint-like id, as in SimGrid's link names: hosts first, then each level's switches.
  [[nodiscard]] std::size_t id(unsigned level, std::size_t index) const {
    return offset_[level] + index;
  }

 private:
  const FatTreeSpec& t_;
  std::vector<std::size_t> offset_, count_;
};

class Router {
 public:
  Router(const FatTreeSpec& t, const Pgft& g, const std::map<LinkKey, sg4::Link*>& links)
      : t_(t), g_(g), links_(links) {}

  // The route from host `src` to host `dst` (distinct), or empty if the failed links cut them.
  [[nodiscard]] std::vector<sg4::LinkInRoute> route(std::size_t src, std::size_t dst) const {
    const std::vector<unsigned> s = g_.digits(0, src), d = g_.digits(0, dst);
    unsigned top = t_.levels;  // lowest level whose subtree holds both: digits >= top agree
    while (top > 0 && s[top - 1] == d[top - 1]) {
      --top;
    }
    std::vector<sg4::LinkInRoute> out;
    if (!up(0, s, top, d, dst, out)) {
      out.clear();
    }
    return out;
  }

 private:
  [[nodiscard]] sg4::Link* live(const LinkKey& key) const {
    auto it = links_.find(key);
    return it == links_.end() ? nullptr : it->second;
  }

  // From node (level l, digits c) up to level `top`, then down to dst. D-mod-K: the first live
  // port from (dst mod ports), port p going to parent p mod up[l] over its link p div up[l];
  // ports from which dst cannot be reached are skipped.
  bool up(unsigned l, const std::vector<unsigned>& c, unsigned top, const std::vector<unsigned>& d,
          std::size_t dst, std::vector<sg4::LinkInRoute>& out) const {
    if (l == top) {
      return down(l, c, d, dst, out);
    }
    const unsigned parents = t_.up[l], ports = parents * t_.parallel[l];
    for (unsigned n = 0; n < ports; ++n) {
      const unsigned port = static_cast<unsigned>((dst + n) % ports);
      sg4::Link* link = live({l, g_.index(l, c), port % parents, port / parents});
      if (link == nullptr) {
        continue;
      }
      std::vector<unsigned> parent = c;
      parent[l] = port % parents;
      out.emplace_back(link, Direction::UP);
      if (up(l + 1, parent, top, d, dst, out)) {
        return true;
      }
      out.pop_back();
    }
    return false;
  }

  // From node (level l, digits c) down to dst: the child holding dst is unique; of its
  // parallel links to c, the first live one from (dst mod parallel).
  bool down(unsigned l, std::vector<unsigned> c, const std::vector<unsigned>& d, std::size_t dst,
            std::vector<sg4::LinkInRoute>& out) const {
    const std::size_t mark = out.size();
    for (; l > 0; --l) {
      const unsigned parent = c[l - 1];
      c[l - 1] = d[l - 1];
      const unsigned parallel = t_.parallel[l - 1];
      sg4::Link* link = nullptr;
      for (unsigned n = 0; n < parallel && link == nullptr; ++n) {
        link =
            live({l - 1, g_.index(l - 1, c), parent, static_cast<unsigned>((dst + n) % parallel)});
      }
      if (link == nullptr) {
        out.erase(out.begin() + static_cast<std::ptrdiff_t>(mark), out.end());
        return false;
      }
      out.emplace_back(link, Direction::DOWN);
    }
    return true;
  }

  const FatTreeSpec& t_;
  const Pgft& g_;
  const std::map<LinkKey, sg4::Link*>& links_;
};

// Every live link of the tree, named as SimGrid names fat-tree links.
std::map<LinkKey, sg4::Link*> make_links(sg4::NetZone* zone, const FatTreeSpec& t, const Pgft& g,
                                         const std::set<LinkKey>& failed) {
  std::map<LinkKey, sg4::Link*> links;
  for (unsigned l = 0; l < t.levels; ++l) {
    const LinkSpec& spec = t.level_links.empty() ? t.link : t.level_links[l];
    for (std::size_t x = 0; x < g.count(l); ++x) {
      const std::vector<unsigned> lower = g.digits(l, x);
      for (unsigned j = 0; j < t.up[l]; ++j) {
        std::vector<unsigned> upper = lower;
        upper[l] = j;
        for (unsigned k = 0; k < t.parallel[l]; ++k) {
          const LinkKey key{l, x, j, k};
          if (failed.contains(key)) {
            continue;
          }
          const std::string name = "link_from_" + std::to_string(g.id(l, x)) + "_" +
                                   std::to_string(g.id(l + 1, g.index(l + 1, upper))) + "_" +
                                   std::to_string(k);
          links[key] = zone->create_split_duplex_link(name, spec.bandwidth_bytes_per_sec)
                           ->set_latency(spec.latency_sec)
                           ->seal();
        }
      }
    }
  }
  return links;
}

}  // namespace

Platform build_routed_fat_tree(const FatTreeSpec& tree, const std::vector<FailedLink>& failed,
                               const std::string& file) {
  const Pgft g(tree);
  if (g.count(0) > kMaxRoutedFatTreeHosts) {
    throw PlatformError(file + ": " + failed.front().where + ": routing around failed links " +
                        "is limited to fat-trees of " + std::to_string(kMaxRoutedFatTreeHosts) +
                        " hosts (dtsim stores every host pair's route), this one has " +
                        std::to_string(g.count(0)));
  }
  std::set<LinkKey> failed_keys;
  for (const FailedLink& f : failed) {
    failed_keys.insert({f.level, f.lower, f.parent, f.parallel});
  }
  sg4::NetZone* zone = sg4::create_full_zone("fat-tree");
  Platform platform;
  for (std::size_t h = 0; h < g.count(0); ++h) {
    platform.hosts.push_back(
        zone->create_host("host-" + std::to_string(h), kHostSpeedFlopsPerSec)->seal());
  }
  const std::map<LinkKey, sg4::Link*> links = make_links(zone, tree, g, failed_keys);
  const Router router(tree, g, links);
  for (std::size_t a = 0; a < platform.hosts.size(); ++a) {
    for (std::size_t b = 0; b < platform.hosts.size(); ++b) {
      if (a == b) {
        continue;
      }
      const std::vector<sg4::LinkInRoute> route = router.route(a, b);
      if (route.empty()) {
        throw PlatformError(file + ": /perturbations/failed_links: host " + std::to_string(a) +
                            " cannot reach host " + std::to_string(b) +
                            " without the failed links");
      }
      zone->add_route(platform.hosts[a]->get_netpoint(), platform.hosts[b]->get_netpoint(), nullptr,
                      nullptr, route, false);
    }
  }
  zone->seal();
  return platform;
}

}  // namespace dtsim::platforms
