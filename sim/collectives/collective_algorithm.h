// The interface of collective algorithms: pure functions from (operation, ranks, bytes, topology
// hints) to a Schedule. No SimGrid here; tests run algorithms without an engine, and
// schedule_cost.h estimates a schedule's time for `--algorithm auto`.
#ifndef DTSIM_SIM_COLLECTIVES_COLLECTIVE_ALGORITHM_H_
#define DTSIM_SIM_COLLECTIVES_COLLECTIVE_ALGORITHM_H_

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/collectives/schedule.h"

namespace dtsim::sim {

// The operations. Sizes follow nccl-tests: `bytes` is
//  - all-reduce, broadcast, reduce: the buffer each rank holds;
//  - all-gather: the gathered result (each rank contributes bytes / p);
//  - reduce-scatter: each rank's input (each rank ends with bytes / p);
//  - all-to-all: each rank's send buffer (bytes / p to every rank);
//  - send-recv: the message from `root` to rank (root + 1) mod p.
enum class CollectiveOp {
  kAllReduce,
  kReduceScatter,
  kAllGather,
  kBroadcast,
  kReduce,
  kAllToAll,
  kSendRecv
};

// "all-reduce", "reduce-scatter", "all-gather", "broadcast", "reduce", "all-to-all", "send-recv".
[[nodiscard]] std::string_view op_name(CollectiveOp op);
[[nodiscard]] std::optional<CollectiveOp> parse_op(std::string_view name);
[[nodiscard]] const std::vector<CollectiveOp>& all_ops();

struct CollectiveRequest {
  CollectiveOp op = CollectiveOp::kAllReduce;
  int ranks = 1;
  std::uint64_t bytes = 0;
  int root = 0;  // broadcast, reduce, send-recv
  // The algorithm a graph names for this collective (a --algorithm value: a name, file:PATH,
  // auto or auto:A,B), or empty: the run's (ExecutionGraph's Node::algorithm).
  std::string algorithm;
};

// What an algorithm may know of the network, provided by the caller.
struct TopologyHints {
  // Latency in seconds of the route from rank `src` to rank `dst`. Unset: 0.
  std::function<double(int src, int dst)> route_latency_sec;
  // The links of the route from `src` to `dst`, as (link id, bytes/s). Unset: each rank has one
  // full-duplex link of injection_bytes_per_sec (a star).
  std::function<std::vector<std::pair<int, double>>(int src, int dst)> route_links;
  double injection_bytes_per_sec = 0;
  // Ranks that share a node (hierarchical: consecutive ranks form a node).
  int ranks_per_node = 1;
  // The nodes' switches reduce in the network (NVLink SHARP), as nvls needs.
  bool in_switch_reduction = false;
  // The fabric's switches do too (InfiniBand SHARP), as nvls across nodes needs.
  bool in_network_reduction = false;
  // The node each rank runs on, under the run's placement. Empty: rank / ranks_per_node.
  std::vector<int> rank_nodes;
  // Torus 2-D algorithm: ranks form a grid[0] x grid[1] grid, rank = x + grid[0] * y.
  std::vector<int> grid;

  [[nodiscard]] int node_of(int rank) const {
    return rank_nodes.empty() ? rank / std::max(1, ranks_per_node)
                              : rank_nodes[static_cast<std::size_t>(rank)];
  }
  [[nodiscard]] double latency_sec(int src, int dst) const {
    return route_latency_sec ? route_latency_sec(src, dst) : 0.0;
  }
  // The links of the route from `src` to `dst`: route_links', or a star's (rank r's up link is
  // 2r, its down link 2r + 1, both of injection_bytes_per_sec).
  [[nodiscard]] std::vector<std::pair<int, double>> links(int src, int dst) const {
    if (route_links) {
      return route_links(src, dst);
    }
    return {{2 * src, injection_bytes_per_sec}, {2 * dst + 1, injection_bytes_per_sec}};
  }
};

// How schedules are expressed.
struct AlgorithmOptions {
  // Collapse provably identical steps (a ring's steps into one transfer per edge plus the
  // remaining latency terms). Same answer when no other traffic interleaves; much faster.
  bool collapse = true;
  // Also collapse pipelines (tree and double-tree all-reduce): one transfer per tree edge and
  // direction carrying every chunk, plus the pipeline's fill as a wait. An approximation of the
  // chunked replay (tree.h says how close); `--replay fast`.
  bool collapse_pipelines = false;
  // Pipelining granularity of trees and chains (bytes per chunk).
  std::uint64_t chunk_bytes = 512 * 1024;
  // Software latency every rank pays once per collective before its first transfer (kernel
  // launch and the communication library's fixed cost; NCCL's base latency is 8.4 us).
  double collective_latency_sec = 0;
  // A named algorithm whose schedule would start more transfers at once is refused (the
  // replay holds each, about 40 KB); auto skips such a candidate from 1e5 on.
  double max_concurrent_transfers = 3e5;
};

class CollectiveAlgorithm {
 public:
  virtual ~CollectiveAlgorithm() = default;
  // E.g. "ring".
  [[nodiscard]] virtual std::string_view name() const = 0;
  // Empty if the algorithm can run `request` with `hints`; else why not (for messages).
  [[nodiscard]] virtual std::string unsupported(const CollectiveRequest& request,
                                                const TopologyHints& hints) const = 0;
  // The transfers implementing `request` over ranks 0..ranks-1. Pure: no SimGrid calls.
  // REQUIRES: unsupported(request, hints) is empty; request.ranks >= 1.
  [[nodiscard]] virtual Schedule build(const CollectiveRequest& request,
                                       const TopologyHints& hints) const = 0;
  // Shorthand for build({kAllReduce, ranks, bytes}, hints).
  [[nodiscard]] Schedule all_reduce(int ranks, std::uint64_t bytes,
                                    const TopologyHints& hints) const {
    return build({.op = CollectiveOp::kAllReduce, .ranks = ranks, .bytes = bytes}, hints);
  }
};

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_COLLECTIVES_COLLECTIVE_ALGORITHM_H_
