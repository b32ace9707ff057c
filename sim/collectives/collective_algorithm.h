// The interface of collective algorithms: pure functions from (ranks, bytes, topology hints) to a
// Schedule. No SimGrid here; tests run algorithms without an engine.
#ifndef DTSIM_SIM_COLLECTIVES_COLLECTIVE_ALGORITHM_H_
#define DTSIM_SIM_COLLECTIVES_COLLECTIVE_ALGORITHM_H_

#include <cstdint>
#include <functional>
#include <string_view>

#include "sim/collectives/schedule.h"

namespace dtsim::sim {

// What an algorithm may know of the network, provided by the caller.
struct TopologyHints {
  // Latency in seconds of the route from rank `src` to rank `dst`. Unset: 0.
  std::function<double(int src, int dst)> route_latency_sec;

  [[nodiscard]] double latency_sec(int src, int dst) const {
    return route_latency_sec ? route_latency_sec(src, dst) : 0.0;
  }
};

// How schedules are expressed.
struct AlgorithmOptions {
  // Collapse provably identical steps (e.g. a ring's 2(p-1) steps into one transfer per edge plus
  // the remaining latency terms). Same answer when no other traffic interleaves; much faster.
  bool collapse = true;
  // Pipelining granularity of the tree (bytes per chunk).
  std::uint64_t tree_chunk_bytes = 512 * 1024;
};

class CollectiveAlgorithm {
 public:
  virtual ~CollectiveAlgorithm() = default;
  // E.g. "ring".
  [[nodiscard]] virtual std::string_view name() const = 0;
  // Transfers that all-reduce `bytes` (per rank) over ranks 0..ranks-1.
  // Pure: no SimGrid calls. REQUIRES: ranks >= 1.
  [[nodiscard]] virtual Schedule all_reduce(int ranks, std::uint64_t bytes,
                                            const TopologyHints& hints) const = 0;
};

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_COLLECTIVES_COLLECTIVE_ALGORITHM_H_
