#include "sim/collectives/nvls.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "sim/collectives/schedule_builder.h"
#include "sim/collectives/tree.h"

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

// The slowest route between any two of the p ranks.
double slowest_route_sec(int p, const TopologyHints& hints) {
  double slowest = 0;
  for (int s = 0; s < p; ++s) {
    for (int d = 0; d < p; ++d) {
      if (s != d) {
        slowest = std::max(slowest, hints.latency_sec(s, d));
      }
    }
  }
  return slowest;
}

// The first rank whose node holds another count of ranks than the first node, as an error.
std::string unequal_nodes(const std::string& name, const std::map<int, std::vector<int>>& nodes) {
  const std::size_t g = nodes.begin()->second.size();
  for (const auto& [node, ranks] : nodes) {
    if (ranks.size() != g) {
      return name + " across nodes needs as many ranks on every node, and node " +
             std::to_string(node) + " has " + std::to_string(ranks.size()) + " where node " +
             std::to_string(nodes.begin()->first) + " has " + std::to_string(g);
    }
  }
  return "";
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
  return unequal_nodes("nvls", nodes);
}

Schedule NvlsAlgorithm::build(const CollectiveRequest& request, const TopologyHints& hints) const {
  const int p = request.ranks;
  ScheduleBuilder b(p);
  if (p <= 1) {
    return std::move(b).finish();
  }
  std::vector<int> everyone(static_cast<std::size_t>(p));
  std::iota(everyone.begin(), everyone.end(), 0);
  const int start =
      b.wait(std::max(0.0, kNvlsLatencySec - slowest_route_sec(p, hints)), {}, everyone);
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

std::string NvlsTreeAlgorithm::unsupported(const CollectiveRequest& request,
                                           const TopologyHints& hints) const {
  if (request.op != CollectiveOp::kAllReduce) {
    return "nvls-tree has only all-reduce";
  }
  if (!hints.in_switch_reduction) {
    return "nvls-tree needs nodes whose NVSwitch reduces in the network (node \"nvlink_sharp\": "
           "true, as in the hgx-h200 preset)";
  }
  const std::map<int, std::vector<int>> nodes = ranks_by_node(request.ranks, hints);
  if (nodes.size() < 2) {
    return "nvls-tree runs a tree between nodes, and every rank is on node " +
           std::to_string(nodes.begin()->first) + " (on one node use nvls)";
  }
  return unequal_nodes("nvls-tree", nodes);
}

Schedule NvlsTreeAlgorithm::build(const CollectiveRequest& request,
                                  const TopologyHints& hints) const {
  const int p = request.ranks;
  ScheduleBuilder b(p);
  const std::map<int, std::vector<int>> by_node = ranks_by_node(p, hints);
  std::vector<std::vector<int>> nodes;  // node position -> its ranks
  for (const auto& [node, ranks] : by_node) {
    nodes.push_back(ranks);
  }
  const int n = static_cast<int>(nodes.size());
  std::vector<int> everyone(static_cast<std::size_t>(p));
  std::iota(everyone.begin(), everyone.end(), 0);
  const double latency_sec = kNvlsLatencySec + 2 * std::floor(std::log2(n)) * kNvlsTreeNetHopSec;
  const int start = b.wait(std::max(0.0, latency_sec - slowest_route_sec(p, hints)), {}, everyone);
  const auto bytes = static_cast<double>(request.bytes);
  for (const std::vector<int>& ranks : nodes) {
    within_node(b, ranks, bytes, start);
  }
  // NCCL's two trees over the node positions (tree.h), each with half of every GPU's shard.
  const double g = static_cast<double>(nodes.front().size());
  const std::uint64_t half_shard = rounded(bytes / (2 * g));
  for (int tree = 0; tree < 2; ++tree) {
    const auto node_at = [n, tree](int v) {
      return tree == 0 ? v : n % 2 == 0 ? n - 1 - v : (v + 1) % n;
    };
    for (int v = 1; v < n; ++v) {
      const std::vector<int>& child = nodes[static_cast<std::size_t>(node_at(v))];
      const std::vector<int>& parent = nodes[static_cast<std::size_t>(node_at(tree_parent(v, n)))];
      for (std::size_t i = 0; i < child.size(); ++i) {
        // Each tree on its own channel, as NCCL's: the two trees' edges between two nodes
        // run side by side, not one after the other.
        b.transfer(child[i], parent[i], half_shard, {start}, tree);  // reduced up
        b.transfer(parent[i], child[i], half_shard, {start}, tree);  // broadcast down
      }
    }
  }
  return std::move(b).finish();
}

}  // namespace dtsim::sim
