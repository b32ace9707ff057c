#include "sim/collectives/hierarchical.h"

#include <map>

#include "sim/collectives/ring_steps.h"

namespace dtsim::sim {

namespace {

// All-reduce over a `inner` x `outer` grid of ranks (grid position (i, o) is rank
// layout[i + inner * o]): reduce-scatter along the inner rings, all-reduce along the outer rings
// of what each rank holds, all-gather along the inner rings.
Schedule two_level_all_reduce(int inner, int outer, std::uint64_t bytes,
                              const std::vector<int>& layout) {
  const int p = inner * outer;
  ScheduleBuilder b(p);
  auto at = [&](int i, int o) {
    return layout[static_cast<std::size_t>(i + inner * o)];
  };
  auto inner_ring = [&](int o) {
    std::vector<int> m;
    for (int i = 0; i < inner; ++i) {
      m.push_back(at(i, o));
    }
    return m;
  };
  std::vector<std::vector<int>> done(static_cast<std::size_t>(p));  // per rank
  for (int o = 0; o < outer; ++o) {
    const auto members = inner_ring(o);
    const auto d =
        add_ring_steps(b, members, bytes, ring_steps_of(CollectiveOp::kReduceScatter, inner), {});
    for (int i = 0; i < inner; ++i) {
      done[static_cast<std::size_t>(members[static_cast<std::size_t>(i)])] =
          d[static_cast<std::size_t>(i)];
    }
  }
  for (int i = 0; i < inner; ++i) {
    // After the inner reduce-scatter, local index i holds chunk i.
    const auto parts = static_cast<std::uint64_t>(inner);
    const auto chunk = static_cast<std::uint64_t>(i);
    const std::uint64_t held = piece_bytes(bytes, parts, chunk);
    std::vector<int> members;
    std::vector<std::vector<int>> before;
    for (int o = 0; o < outer; ++o) {
      members.push_back(at(i, o));
      before.push_back(done[static_cast<std::size_t>(at(i, o))]);
    }
    const auto d = add_ring_steps(b, members, held, ring_steps_of(CollectiveOp::kAllReduce, outer),
                                  before, piece_offset(bytes, parts, chunk));
    for (int o = 0; o < outer; ++o) {
      if (!d[static_cast<std::size_t>(o)].empty()) {
        done[static_cast<std::size_t>(at(i, o))] = d[static_cast<std::size_t>(o)];
      }
    }
  }
  for (int o = 0; o < outer; ++o) {
    const auto members = inner_ring(o);
    std::vector<std::vector<int>> before;
    for (int r : members) {
      before.push_back(done[static_cast<std::size_t>(r)]);
    }
    add_ring_steps(b, members, bytes, ring_steps_of(CollectiveOp::kAllGather, inner), before);
  }
  return std::move(b).finish();
}

std::vector<int> identity(int p) {
  std::vector<int> out(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r) {
    out[static_cast<std::size_t>(r)] = r;
  }
  return out;
}

// The ranks grouped by the node they run on (nodes in order, ranks in order inside each), when
// every node holds exactly g of them; else consecutive groups of g (identity).
std::vector<int> node_layout(int p, int g, const TopologyHints& hints) {
  std::map<int, std::vector<int>> by_node;
  for (int r = 0; r < p; ++r) {
    by_node[hints.node_of(r)].push_back(r);
  }
  std::vector<int> out;
  for (const auto& [node, ranks] : by_node) {
    if (static_cast<int>(ranks.size()) != g) {
      return identity(p);
    }
    out.insert(out.end(), ranks.begin(), ranks.end());
  }
  return out;
}

}  // namespace

std::string HierarchicalAlgorithm::unsupported(const CollectiveRequest& request,
                                               const TopologyHints& hints) const {
  if (request.op != CollectiveOp::kAllReduce) {
    return "hierarchical has only all-reduce";
  }
  const int g = hints.ranks_per_node;
  if (g < 1 || request.ranks % g != 0) {
    return "hierarchical needs --ranks a multiple of --ranks-per-node (" +
           std::to_string(request.ranks) + " ranks, " + std::to_string(g) + " per node)";
  }
  return "";
}

Schedule HierarchicalAlgorithm::build(const CollectiveRequest& request,
                                      const TopologyHints& hints) const {
  const int g = hints.ranks_per_node;
  return two_level_all_reduce(g, request.ranks / g, request.bytes,
                              node_layout(request.ranks, g, hints));
}

std::string Torus2dAlgorithm::unsupported(const CollectiveRequest& request,
                                          const TopologyHints& hints) const {
  if (request.op != CollectiveOp::kAllReduce) {
    return "torus-2d has only all-reduce";
  }
  if (hints.grid.size() != 2 || hints.grid[0] < 1 || hints.grid[1] < 1 ||
      hints.grid[0] * hints.grid[1] != request.ranks) {
    return "torus-2d needs a grid X x Y of exactly --ranks ranks (--grid, or a 2-D torus "
           "platform with as many hosts as ranks)";
  }
  return "";
}

Schedule Torus2dAlgorithm::build(const CollectiveRequest& request,
                                 const TopologyHints& hints) const {
  return two_level_all_reduce(hints.grid[0], hints.grid[1], request.bytes, identity(request.ranks));
}

}  // namespace dtsim::sim
