#include "sim/collectives/nvls.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "sim/collectives/schedule_builder.h"

namespace dtsim::sim {

namespace {

// The ranks of each node, in rank order: node -> ranks.
std::map<int, std::vector<int>> ranks_by_node(int ranks, const TopologyHints& hints) {
  std::map<int, std::vector<int>> nodes;
  for (int r = 0; r < ranks; ++r) {
    nodes[hints.node_of(r)].push_back(r);
  }
  return nodes;
}

std::uint64_t rounded(double bytes) {
  return static_cast<std::uint64_t>(std::llround(bytes));
}

// NVLS inside a node: S (g+1) / g per GPU link and direction at NVLS's efficiency, as
// transfers between the node's g GPUs, all after `start`.
void within_node(ScheduleBuilder& b, const std::vector<int>& node, double bytes, int start) {
  if (node.size() < 2) {
    return;
  }
  const auto g = static_cast<double>(node.size());
  const std::uint64_t pair = rounded(bytes * (g + 1) / (g * (g - 1) * kNvlsEfficiency));
  for (int s : node) {
    for (int d : node) {
      if (s != d) {
        b.transfer(s, d, pair, {start});
      }
    }
  }
}

}  // namespace

std::string NvlsAlgorithm::unsupported(const CollectiveRequest& request,
                                       const TopologyHints& hints) const {
  if (request.op != CollectiveOp::kAllReduce) {
    return "nvls has only all-reduce";
  }
  if (!hints.in_switch_reduction) {
    return "nvls needs nodes whose NVSwitch reduces in the network (node \"nvlink_sharp\": "
           "true, as in the hgx-h200 preset)";
  }
  const std::map<int, std::vector<int>> nodes = ranks_by_node(request.ranks, hints);
  if (nodes.size() == 1) {
    return "";
  }
  if (!hints.in_network_reduction) {
    const int g = hints.ranks_per_node;
    if (request.ranks <= g) {
      int r = 1;
      while (hints.node_of(r) == hints.node_of(0)) {
        ++r;  // some rank is elsewhere: there are two nodes
      }
      return "nvls needs every rank on one NVSwitch node, and the placement puts rank " +
             std::to_string(r) + " on node " + std::to_string(hints.node_of(r)) +
             ", rank 0 on node " + std::to_string(hints.node_of(0)) + " (use --placement linear)";
    }
    return "nvls needs every rank on one NVSwitch node, and " + std::to_string(request.ranks) +
           " ranks do not fit in a node of " + std::to_string(g) + (g == 1 ? " GPU" : " GPUs") +
           " (across nodes it needs SHARP switches: a fat-tree with \"sharp\": true)";
  }
  const std::size_t g = nodes.begin()->second.size();
  for (const auto& [node, ranks] : nodes) {
    if (ranks.size() != g) {
      return "nvls across nodes needs as many ranks on every node, and node " +
             std::to_string(node) + " has " + std::to_string(ranks.size()) + " where node " +
             std::to_string(nodes.begin()->first) + " has " + std::to_string(g);
    }
  }
  return "";
}

Schedule NvlsAlgorithm::build(const CollectiveRequest& request, const TopologyHints& hints) const {
  const int p = request.ranks;
  ScheduleBuilder b(p);
  if (p <= 1) {
    return std::move(b).finish();
  }
  double slowest_route_sec = 0;
  std::vector<int> everyone;
  for (int s = 0; s < p; ++s) {
    everyone.push_back(s);
    for (int d = 0; d < p; ++d) {
      if (s != d) {
        slowest_route_sec = std::max(slowest_route_sec, hints.latency_sec(s, d));
      }
    }
  }
  const int start = b.wait(std::max(0.0, kNvlsLatencySec - slowest_route_sec), {}, everyone);
  const std::map<int, std::vector<int>> nodes = ranks_by_node(p, hints);
  const auto bytes = static_cast<double>(request.bytes);
  for (const auto& [node, ranks] : nodes) {
    within_node(b, ranks, bytes, start);
  }
  if (nodes.size() > 1) {
    // SHARP: each GPU's shard S/g goes up to the switches once and comes back summed once; as
    // forwarding transfers, S/(g (N-1)) to the same-index GPU of each of the other N-1 nodes.
    const std::size_t g = nodes.begin()->second.size();
    const double others = static_cast<double>(nodes.size() - 1);
    const std::uint64_t pair = rounded(bytes / (static_cast<double>(g) * others));
    for (std::size_t i = 0; i < g; ++i) {
      for (const auto& [src_node, src_ranks] : nodes) {
        for (const auto& [dst_node, dst_ranks] : nodes) {
          if (src_node != dst_node) {
            b.transfer(src_ranks[i], dst_ranks[i], pair, {start});
          }
        }
      }
    }
  }
  return std::move(b).finish();
}

}  // namespace dtsim::sim
