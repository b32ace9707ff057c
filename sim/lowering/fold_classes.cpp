#include "sim/lowering/fold_classes.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

namespace dtsim::sim::fold_internal {

std::vector<std::vector<RoleTraffic>> role_traffic(const ExecutionGraph& g) {
  std::vector<std::vector<RoleTraffic>> out;
  for (const Program& p : g.programs) {
    std::vector<RoleTraffic> roles(p.comms.size());
    std::set<std::tuple<std::int32_t, std::int32_t, std::uint64_t, std::int32_t>> seen;
    for (std::size_t i = 0; i < p.nodes.size(); ++i) {
      const Node& node = p.nodes[i];
      if (node.kind == NodeKind::kSend) {
        roles[static_cast<std::size_t>(node.comm)].peers.insert(node.peer);
      } else if (node.kind == NodeKind::kRecv) {
        roles[static_cast<std::size_t>(node.comm)].sources.insert(node.peer);
      } else if (node.kind == NodeKind::kCollective &&
                 seen.emplace(node.comm, static_cast<std::int32_t>(node.op), node.bytes, node.root)
                     .second) {
        roles[static_cast<std::size_t>(node.comm)].collectives.push_back(
            static_cast<std::int32_t>(i));
      }
    }
    out.push_back(std::move(roles));
  }
  return out;
}

namespace {

using Shape = std::vector<double>;  // a route's latency, then its links' bandwidths
// Per rank: the distinct shapes of the routes it uses, per slot: (its role, the collective's op,
// bytes and root), or (its role, kSends or kReceives, 0, 0) for point-to-point.
using Slot = std::tuple<int, int, std::uint64_t, int>;
using RouteUse = std::map<Slot, std::set<Shape>>;
constexpr int kSends = -1;
constexpr int kReceives = -2;

// route_shape, each (source, destination) asked once.
class Shapes {
 public:
  explicit Shapes(const RouteShape& route_shape) : route_shape_(route_shape) {}

  const Shape& operator()(int src, int dst) {
    auto [it, inserted] = cache_.try_emplace({src, dst});
    if (inserted) {
      it->second = route_shape_(src, dst);
    }
    return it->second;
  }

 private:
  const RouteShape& route_shape_;
  std::map<std::pair<int, int>, Shape> cache_;
};

// Rank r's role on communicator c (its first, if it has several: then it is a class of its own).
int role_on(const ExecutionGraph& g, int r, std::int32_t c) {
  const std::vector<std::int32_t>& comms = g.ranks[static_cast<std::size_t>(r)].comms;
  return static_cast<int>(std::find(comms.begin(), comms.end(), c) - comms.begin());
}

// Adds to `uses` the routes of the collectives of rank `front`, the first member of its
// communicator on role `role`: each distinct (source, destination) of their schedules once,
// marked 0 at the source and 1 at the destination, under each end's own role.
void add_collective_routes(const ExecutionGraph& g, const RoleTraffic& traffic, int front, int role,
                           const ScheduleOf& schedule_of, Shapes& shapes,
                           std::vector<RouteUse>& uses) {
  const std::int32_t c =
      g.ranks[static_cast<std::size_t>(front)].comms[static_cast<std::size_t>(role)];
  const std::vector<int>& ranks = g.communicators[static_cast<std::size_t>(c)].ranks;
  for (std::int32_t index : traffic.collectives) {
    const Node& node = g.program_of(front).nodes[static_cast<std::size_t>(index)];
    std::set<std::pair<int, int>> pairs;
    for (const ScheduleOp& op : schedule_of(front, index).ops) {
      if (op.kind == ScheduleOp::Kind::kTransfer) {
        pairs.emplace(ranks[static_cast<std::size_t>(op.src)],
                      ranks[static_cast<std::size_t>(op.dst)]);
      }
    }
    for (const auto& [src, dst] : pairs) {
      Shape shape = shapes(src, dst);
      for (const auto& [end, mark] : {std::pair{src, 0}, std::pair{dst, 1}}) {
        shape.insert(shape.begin(), mark);
        uses[static_cast<std::size_t>(end)]
            [{role_on(g, end, c), static_cast<int>(node.op), node.bytes, node.root}]
                .insert(shape);
        shape.erase(shape.begin());
      }
    }
  }
}

// Per rank: the shapes of the routes of its sends, receives and collective transfers, as one
// key (each slot's four numbers, then its shapes each ended by -1, then -2: no op, latency or
// bandwidth is negative).
std::vector<std::vector<double>> route_keys(const ExecutionGraph& g,
                                            const std::vector<std::vector<RoleTraffic>>& traffic,
                                            const ScheduleOf& schedule_of,
                                            const RouteShape& route_shape) {
  Shapes shapes(route_shape);
  std::vector<RouteUse> uses(static_cast<std::size_t>(g.rank_count()));
  for (int r = 0; r < g.rank_count(); ++r) {
    const RankProgram& rp = g.ranks[static_cast<std::size_t>(r)];
    for (std::size_t role = 0; role < rp.comms.size(); ++role) {
      const std::vector<int>& ranks =
          g.communicators[static_cast<std::size_t>(rp.comms[role])].ranks;
      const RoleTraffic& t = traffic[static_cast<std::size_t>(rp.program)][role];
      const int role_index = static_cast<int>(role);
      for (std::int32_t peer : t.peers) {
        uses[static_cast<std::size_t>(r)][{role_index, kSends, 0, 0}].insert(
            shapes(r, ranks[static_cast<std::size_t>(peer)]));
      }
      for (std::int32_t source : t.sources) {
        uses[static_cast<std::size_t>(r)][{role_index, kReceives, 0, 0}].insert(
            shapes(ranks[static_cast<std::size_t>(source)], r));
      }
      if (ranks.front() == r) {  // a collective's schedule is the same from every member
        add_collective_routes(g, t, r, role_index, schedule_of, shapes, uses);
      }
    }
  }
  std::vector<std::vector<double>> keys(uses.size());
  for (std::size_t r = 0; r < uses.size(); ++r) {
    for (const auto& [slot, slot_shapes] : uses[r]) {
      const auto& [role, op, bytes, root] = slot;
      keys[r].insert(keys[r].end(), {static_cast<double>(role), static_cast<double>(op),
                                     static_cast<double>(bytes), static_cast<double>(root)});
      for (const Shape& shape : slot_shapes) {
        keys[r].insert(keys[r].end(), shape.begin(), shape.end());
        keys[r].push_back(-1);
      }
      keys[r].push_back(-2);
    }
  }
  return keys;
}

// Splits the classes `color` (per rank) until each class's ranks receive from ranks of the same
// classes, per role and source, and use communicators whose members are of the same classes.
// A send's time does not depend on its receiver (replay posts every receive at the start), but
// a receive ends after its sender sent, and a collective after its last member entered.
std::vector<int> refine(const ExecutionGraph& g,
                        const std::vector<std::vector<RoleTraffic>>& traffic,
                        std::vector<int> color) {
  std::size_t classes = std::set<int>(color.begin(), color.end()).size();
  while (true) {
    std::map<std::vector<int>, int> comm_ids;
    std::vector<int> comm_color;
    for (const Communicator& c : g.communicators) {
      std::vector<int> members;
      for (int r : c.ranks) {
        members.push_back(color[static_cast<std::size_t>(r)]);
      }
      std::sort(members.begin(), members.end());
      comm_color.push_back(
          comm_ids.try_emplace(std::move(members), static_cast<int>(comm_ids.size()))
              .first->second);
    }
    std::map<std::vector<int>, int> ids;
    std::vector<int> next;
    for (int r = 0; r < g.rank_count(); ++r) {
      const RankProgram& rp = g.ranks[static_cast<std::size_t>(r)];
      std::vector<int> key{color[static_cast<std::size_t>(r)]};
      for (std::size_t role = 0; role < rp.comms.size(); ++role) {
        const auto c = static_cast<std::size_t>(rp.comms[role]);
        const RoleTraffic& t = traffic[static_cast<std::size_t>(rp.program)][role];
        if (!t.collectives.empty()) {
          key.push_back(comm_color[c]);
        }
        for (std::int32_t source : t.sources) {
          key.push_back(color[static_cast<std::size_t>(
              g.communicators[c].ranks[static_cast<std::size_t>(source)])]);
        }
      }
      next.push_back(ids.try_emplace(std::move(key), static_cast<int>(ids.size())).first->second);
    }
    if (ids.size() == classes) {  // refining only splits: as many classes, the same classes
      return color;
    }
    classes = ids.size();
    color = std::move(next);
  }
}

}  // namespace

std::vector<std::vector<int>> candidate_classes(
    const ExecutionGraph& g, const std::vector<std::vector<RoleTraffic>>& traffic,
    const FoldPlatform& platform, FoldMode mode, const ScheduleOf& schedule_of) {
  const bool verified = mode != FoldMode::kExact;
  std::vector<std::vector<double>> routes(static_cast<std::size_t>(g.rank_count()));
  if (verified && platform.route_shape) {
    routes = route_keys(g, traffic, schedule_of, platform.route_shape);
  }
  using Key = std::tuple<std::int32_t, std::vector<std::int64_t>, double, std::vector<double>>;
  std::map<Key, int> ids;
  std::vector<int> color;
  for (int r = 0; r < g.rank_count(); ++r) {
    const RankProgram& rp = g.ranks[static_cast<std::size_t>(r)];
    const double k = platform.compute_factor.empty()
                         ? 1.0
                         : platform.compute_factor[static_cast<std::size_t>(r)];
    std::vector<std::int64_t> comms;
    for (std::int32_t c : rp.comms) {
      comms.push_back(verified ? static_cast<std::int64_t>(
                                     g.communicators[static_cast<std::size_t>(c)].ranks.size())
                               : c);
    }
    if (verified &&
        std::set<std::int32_t>(rp.comms.begin(), rp.comms.end()).size() != rp.comms.size()) {
      comms.push_back(-1 - r);  // two roles on one communicator: a class of its own
    }
    if (mode == FoldMode::kNode && !platform.rank_nodes.empty()) {
      comms.push_back(-1 - g.rank_count() - platform.rank_nodes[static_cast<std::size_t>(r)]);
    }
    Key key{rp.program, std::move(comms), k, std::move(routes[static_cast<std::size_t>(r)])};
    color.push_back(ids.try_emplace(std::move(key), static_cast<int>(ids.size())).first->second);
  }
  if (verified) {
    color = refine(g, traffic, std::move(color));
  }
  std::map<int, std::vector<int>> classes;
  for (int r = 0; r < g.rank_count(); ++r) {
    classes[color[static_cast<std::size_t>(r)]].push_back(r);
  }
  std::vector<std::vector<int>> out;
  for (auto& [id, members] : classes) {
    if (members.size() > 1) {
      out.push_back(std::move(members));
    }
  }
  return out;
}

}  // namespace dtsim::sim::fold_internal
