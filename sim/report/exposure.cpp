#include "sim/report/exposure.h"

#include <algorithm>

#include "sim/report/measure.h"

namespace dtsim::sim {

std::string communication_kind(std::string_view name) {
  const std::string_view prefix = name.substr(0, name.find('.'));
  if (prefix.starts_with("pp")) {
    return "pp";
  }
  if (prefix.starts_with("halo_")) {
    return "halo";  // a CNN spatial split's neighbour exchanges, every direction
  }
  if (prefix == "dp_gather" || prefix == "edp" || prefix == "edp_gather" || prefix == "emb" ||
      prefix == "dp_replica") {
    return "dp";
  }
  return std::string(prefix);
}

namespace {

// Charges the wait [from, to] of `rank`'s compute stream to communication node `node`, which
// ended at `to` or later: the part before `node` could start (its own communication
// dependencies still running) to whichever of them ended last, recursively, the rest to
// `node`'s kind. So a gather that waited for a pipeline receive charges that time to "pp".
void charge(const ExecutionGraph& g, const LoweredGraph& lowered, const ReplayTimes& times,
            const LocalRanks& local, int rank, std::int32_t node, double from, double to,
            std::map<std::string, double>& waiting) {
  const Program& p = g.program_of(rank);
  const Node& n = p.nodes[static_cast<std::size_t>(node)];
  double ready = from;
  std::int32_t binding = -1;
  for (std::int32_t d : p.deps_of(n)) {
    if (p.nodes[static_cast<std::size_t>(d)].kind == NodeKind::kCompute) {
      continue;
    }
    const double end = node_exit_sec(g, lowered, times, local, rank, d);
    if (end > ready) {
      ready = end;
      binding = d;
    }
  }
  const double split = std::min(ready, to);
  if (binding >= 0 && split > from) {
    charge(g, lowered, times, local, rank, binding, from, split, waiting);
  }
  if (to > split) {
    waiting[communication_kind(g.communicator_of(rank, n).name)] += to - split;
  }
}

}  // namespace

RankExposure measure_exposure(const ExecutionGraph& g, const LoweredGraph& lowered,
                              const ReplayTimes& times, int rank, std::int32_t iteration,
                              double start_sec, double end_sec) {
  const LocalRanks local(g);
  const Program& p = g.program_of(rank);
  RankExposure e{.rank = rank};
  double cursor = start_sec;  // where the compute stream became free
  double waited = 0;
  for (std::size_t i = 0; i < p.nodes.size(); ++i) {
    const Node& node = p.nodes[i];
    if (node.kind != NodeKind::kCompute || node.iteration != iteration) {
      continue;
    }
    const auto index = static_cast<std::int32_t>(i);
    const double start = node_start_sec(g, lowered, times, rank, index);
    if (start > cursor) {
      // The communication dependency that ended last held this node back.
      double latest = cursor;
      std::int32_t blame = -1;
      for (std::int32_t d : p.deps_of(node)) {
        const Node& dep = p.nodes[static_cast<std::size_t>(d)];
        if (dep.kind == NodeKind::kCompute) {
          continue;
        }
        const double end = node_exit_sec(g, lowered, times, local, rank, d);
        if (end > latest) {
          latest = end;
          blame = d;
        }
      }
      if (blame >= 0) {
        const double until = std::min(start, latest);
        charge(g, lowered, times, local, rank, blame, cursor, until, e.waiting_sec);
        waited += until - cursor;
      }
    }
    e.compute_sec += node_duration_sec(g, lowered, rank, index);
    cursor = std::max(cursor, node_end_sec(g, lowered, times, rank, index));
  }
  // After its last compute: the rank's own communication that ends last (gradients, gathers).
  double latest = cursor;
  std::int32_t blame = -1;
  for (std::size_t i = 0; i < p.nodes.size(); ++i) {
    if (p.nodes[i].kind != NodeKind::kCompute && p.nodes[i].iteration == iteration) {
      const double end =
          node_exit_sec(g, lowered, times, local, rank, static_cast<std::int32_t>(i));
      if (end > latest) {
        latest = end;
        blame = static_cast<std::int32_t>(i);
      }
    }
  }
  if (blame >= 0) {
    const double until = std::min(end_sec, latest);
    charge(g, lowered, times, local, rank, blame, cursor, until, e.waiting_sec);
    waited += until - cursor;
  }
  e.idle_sec = std::max(0.0, end_sec - start_sec - e.compute_sec - waited);
  return e;
}

}  // namespace dtsim::sim
