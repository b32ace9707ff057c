#include "sim/collectives/tree.h"

#include <algorithm>
#include <functional>
#include <numeric>

#include "sim/collectives/schedule_builder.h"
#include "sim/collectives/schedule_cost.h"

namespace dtsim::sim {

int tree_parent(int r, int p) {
  const int b = r & -r;  // lowest set bit
  const int up = (r ^ b) | (b << 1);
  return up < p ? up : (r ^ b);
}

namespace {

// NCCL's in-order tree with its positions mapped to ranks by `rank_of`.
struct Tree {
  std::vector<int> parent;                 // per rank; -1 for the root
  std::vector<std::vector<int>> children;  // per rank
  std::vector<int> top_down;               // ranks, parents before children
  int root = 0;

  Tree(int p, const std::function<int(int)>& rank_of)
      : parent(static_cast<std::size_t>(p), -1), children(static_cast<std::size_t>(p)) {
    std::vector<int> depth(static_cast<std::size_t>(p), 0);
    for (int v = 1; v < p; ++v) {
      const int up = tree_parent(v, p);
      parent[static_cast<std::size_t>(rank_of(v))] = rank_of(up);
      children[static_cast<std::size_t>(rank_of(up))].push_back(rank_of(v));
      for (int u = v; u != 0; u = tree_parent(u, p)) {
        ++depth[static_cast<std::size_t>(v)];
      }
    }
    std::vector<int> positions(static_cast<std::size_t>(p));
    std::iota(positions.begin(), positions.end(), 0);
    std::stable_sort(positions.begin(), positions.end(), [&depth](int a, int b) {
      return depth[static_cast<std::size_t>(a)] < depth[static_cast<std::size_t>(b)];
    });
    for (int v : positions) {
      top_down.push_back(rank_of(v));
    }
    root = rank_of(0);
  }
};

// Per-rank index of the latest op that moved the current chunk up (into the parent) or down
// (into this rank).
struct ChunkOps {
  std::vector<int> up, down;
  explicit ChunkOps(int p)
      : up(static_cast<std::size_t>(p), -1), down(static_cast<std::size_t>(p), -1) {}
};

// One chunk of the vector: `size` bytes at `offset`.
struct Chunk {
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
};

// Reduce one chunk up the tree: deepest ranks first, each after all its children's.
void reduce_chunk(ScheduleBuilder& b, const Tree& t, Chunk chunk, ChunkOps& ops, int channel = 0) {
  for (auto it = t.top_down.rbegin(); it != t.top_down.rend(); ++it) {
    const int v = *it;
    if (v == t.root) {
      continue;
    }
    std::vector<int> deps;
    for (int c : t.children[static_cast<std::size_t>(v)]) {
      deps.push_back(ops.up[static_cast<std::size_t>(c)]);
    }
    ops.up[static_cast<std::size_t>(v)] = b.transfer(
        v, t.parent[static_cast<std::size_t>(v)], chunk.size, deps, channel,
        DataMove{.src_offset = chunk.offset, .dst_offset = chunk.offset, .reduce = true});
  }
}

// Broadcast one chunk down the tree; with `after_reduce`, the root waits for the chunk's
// reduction first.
void broadcast_chunk(ScheduleBuilder& b, const Tree& t, Chunk chunk, bool after_reduce,
                     ChunkOps& ops, int channel = 0) {
  for (int v : t.top_down) {
    if (v == t.root) {
      continue;
    }
    const int parent = t.parent[static_cast<std::size_t>(v)];
    std::vector<int> deps;
    if (parent != t.root) {
      deps.push_back(ops.down[static_cast<std::size_t>(parent)]);
    } else if (after_reduce) {
      for (int c : t.children[static_cast<std::size_t>(t.root)]) {
        deps.push_back(ops.up[static_cast<std::size_t>(c)]);
      }
    }
    ops.down[static_cast<std::size_t>(v)] =
        b.transfer(parent, v, chunk.size, deps, channel,
                   DataMove{.src_offset = chunk.offset, .dst_offset = chunk.offset});
  }
}

std::uint64_t chunk_count(std::uint64_t bytes, std::uint64_t chunk_bytes) {
  return std::max<std::uint64_t>(1, (bytes + chunk_bytes - 1) / chunk_bytes);
}

// One tree of a collapsed all-reduce: the tree, its bytes and its chunk count.
struct PipelinedTree {
  const Tree* tree;
  std::uint64_t bytes;
  std::uint64_t chunks;
};

// The chunked all-reduce's fill on tree `t`: the first chunk climbs to the root and comes back
// down the deepest path, 2D hops on the way, each of route latency + k chunks / route bandwidth,
// k the number of children of the hop's parent (their chunks share its link). That sharing is
// exact when siblings' subtrees are equally deep, so that their chunks arrive together; when
// they are not, the fill is overestimated (measured: +7 % at p = 13, +10 % at p = 6, one chunk).
double fill_sec(const PipelinedTree& pt, const TopologyHints& hints) {
  const Tree& t = *pt.tree;
  const double chunk_bytes = static_cast<double>(pt.bytes) / static_cast<double>(pt.chunks);
  // One hop carrying `chunks` chunks over the route's narrowest link.
  const auto hop_sec = [&](int src, int dst, double chunks) {
    double narrowest = 0;
    for (const auto& [id, bytes_per_sec] : hints.links(src, dst)) {
      narrowest = narrowest == 0 ? bytes_per_sec : std::min(narrowest, bytes_per_sec);
    }
    return hints.latency_sec(src, dst) + (narrowest > 0 ? chunks * chunk_bytes / narrowest : 0.0);
  };
  std::vector<double> up(t.parent.size(), 0), down(t.parent.size(), 0);
  double longest = 0;
  for (int v : t.top_down) {  // parents first: accumulate each rank's path to the root
    const int parent = t.parent[static_cast<std::size_t>(v)];
    if (parent < 0) {
      continue;
    }
    // The parent's link carries the chunk of every child at once, on the way up and down.
    const auto siblings = static_cast<double>(t.children[static_cast<std::size_t>(parent)].size());
    up[static_cast<std::size_t>(v)] =
        up[static_cast<std::size_t>(parent)] + hop_sec(v, parent, siblings);
    down[static_cast<std::size_t>(v)] =
        down[static_cast<std::size_t>(parent)] + hop_sec(parent, v, siblings);
    longest = std::max(longest, up[static_cast<std::size_t>(v)]);
  }
  return longest + *std::max_element(down.begin(), down.end());
}

// The all-reduce on `trees` (one channel each) with every pipeline collapsed: per tree edge one
// transfer up and one down, each of the tree's whole bytes, all started on entry; then one wait
// after which every rank exits (so ranks fold and repeats memoize, as with the collapsed ring).
// The chunked replay takes, uncontended, fill + (c - 1) (alpha + busiest link's bytes per chunk
// / its bandwidth): chunks follow each other on a connection, each paying its latency. The
// collapsed transfers take about alpha + busiest link's bytes / bandwidth, so the wait is the
// difference: fill + (c - 2) alpha - busiest / c, at least 0.
Schedule collapsed_all_reduce(int p, const std::vector<PipelinedTree>& trees,
                              const TopologyHints& hints) {
  Schedule schedule = joined_schedule(p);
  ScheduleOp tail{.kind = ScheduleOp::Kind::kWait, .deps = {0}};  // after the join, always
  for (std::size_t i = 0; i < trees.size(); ++i) {
    const Tree& t = *trees[i].tree;
    const int channel = static_cast<int>(i);
    for (int v = 0; v < p; ++v) {
      const int parent = t.parent[static_cast<std::size_t>(v)];
      if (parent < 0 || trees[i].bytes == 0) {
        continue;
      }
      for (const auto& [src, dst] : {std::pair{v, parent}, std::pair{parent, v}}) {
        tail.deps.push_back(static_cast<int>(schedule.ops.size()));
        schedule.ops.push_back(
            {.src = src, .dst = dst, .channel = channel, .bytes = trees[i].bytes, .deps = {0}});
      }
    }
  }
  const ScheduleShape shape = schedule_shape(schedule, hints);
  double wait_sec = 0;
  for (const PipelinedTree& pt : trees) {
    const auto c = static_cast<double>(pt.chunks);
    wait_sec = std::max(wait_sec, fill_sec(pt, hints) + (c - 2) * shape.max_latency_sec -
                                      shape.busiest_link_sec / c);
  }
  tail.wait_sec = wait_sec;
  end_with(schedule, std::move(tail));
  return schedule;
}

}  // namespace

std::string TreeAlgorithm::unsupported(const CollectiveRequest& request,
                                       const TopologyHints& /*hints*/) const {
  switch (request.op) {
    case CollectiveOp::kAllReduce:
    case CollectiveOp::kBroadcast:
    case CollectiveOp::kReduce:
      return "";
    default:
      return "tree has no " + std::string(op_name(request.op)) +
             " (it has all-reduce, broadcast and reduce)";
  }
}

Schedule TreeAlgorithm::build(const CollectiveRequest& request, const TopologyHints& hints) const {
  const int p = request.ranks;
  ScheduleBuilder b(p);
  if (p <= 1) {
    return std::move(b).finish();
  }
  const int root = request.op == CollectiveOp::kAllReduce ? 0 : request.root;
  const Tree t(p, [root, p](int v) { return (v + root) % p; });
  const std::uint64_t chunks = chunk_count(request.bytes, options_.chunk_bytes);
  if (options_.collapse_pipelines && request.op == CollectiveOp::kAllReduce) {
    return collapsed_all_reduce(p, {{&t, request.bytes, chunks}}, hints);
  }
  ChunkOps ops(p);
  for (std::uint64_t k = 0; k < chunks; ++k) {
    const Chunk chunk{piece_offset(request.bytes, chunks, k),
                      piece_bytes(request.bytes, chunks, k)};
    if (request.op != CollectiveOp::kBroadcast) {
      reduce_chunk(b, t, chunk, ops);
    }
    if (request.op != CollectiveOp::kReduce) {
      broadcast_chunk(b, t, chunk, request.op == CollectiveOp::kAllReduce, ops);
    }
  }
  return std::move(b).finish();
}

std::string DoubleTreeAlgorithm::unsupported(const CollectiveRequest& request,
                                             const TopologyHints& /*hints*/) const {
  if (request.op != CollectiveOp::kAllReduce) {
    return "double-tree has only all-reduce (as NCCL's)";
  }
  return "";
}

Schedule DoubleTreeAlgorithm::build(const CollectiveRequest& request,
                                    const TopologyHints& hints) const {
  const int p = request.ranks;
  ScheduleBuilder b(p);
  if (p <= 1) {
    return std::move(b).finish();
  }
  const Tree tree0(p, [](int v) { return v; });
  const Tree tree1(p, [p](int v) { return p % 2 == 0 ? p - 1 - v : (v + 1) % p; });
  const std::uint64_t half[2] = {piece_bytes(request.bytes, 2, 0),
                                 piece_bytes(request.bytes, 2, 1)};
  const std::uint64_t chunks[2] = {chunk_count(half[0], options_.chunk_bytes),
                                   chunk_count(half[1], options_.chunk_bytes)};
  if (options_.collapse_pipelines) {
    return collapsed_all_reduce(p, {{&tree0, half[0], chunks[0]}, {&tree1, half[1], chunks[1]}},
                                hints);
  }
  ChunkOps ops0(p), ops1(p);
  // Chunks of the two trees interleave on their own connections (channels 0 and 1), as NCCL's
  // channels of tree 0 and tree 1 run side by side.
  for (std::uint64_t k = 0; k < std::max(chunks[0], chunks[1]); ++k) {
    if (k < chunks[0]) {  // tree 0 moves the first half of the vector
      const Chunk chunk{piece_offset(half[0], chunks[0], k), piece_bytes(half[0], chunks[0], k)};
      reduce_chunk(b, tree0, chunk, ops0);
      broadcast_chunk(b, tree0, chunk, true, ops0);
    }
    if (k < chunks[1]) {  // tree 1 the second
      const Chunk chunk{half[0] + piece_offset(half[1], chunks[1], k),
                        piece_bytes(half[1], chunks[1], k)};
      reduce_chunk(b, tree1, chunk, ops1, /*channel=*/1);
      broadcast_chunk(b, tree1, chunk, true, ops1, /*channel=*/1);
    }
  }
  return std::move(b).finish();
}

}  // namespace dtsim::sim
