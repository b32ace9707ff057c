// Rank placement: which host runs which rank. Explicit, never the order SimGrid lists hosts in.
//
//   auto policy = parse_placement("random:7");          // --placement
//   auto order = place_ranks(*policy, placement_shape(spec, hosts), ranks);  // host indices
#ifndef DTSIM_SIM_REPLAY_RANK_MAPPING_H_
#define DTSIM_SIM_REPLAY_RANK_MAPPING_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <simgrid/forward.h>

#include "platforms/build_platform.h"
#include "platforms/platform_spec.h"

namespace dtsim::sim {

// A placement policy (`--placement`). Host indices below are the platform's canonical order
// (platforms::Platform::hosts); a node is `gpus_per_node` consecutive hosts.
struct Placement {
  enum class Kind {
    kLinear,         // rank r on host r (node-major: consecutive ranks share a node, a leaf)
    kRoundRobin,     // rank r on node r mod N (N = the platform's nodes), GPU slot r / N
    kRandom,         // a seeded shuffle of all hosts; rank r on the r-th host of it
    kTopologyAware,  // ring neighbours as close as the topology allows (see place_ranks)
  };
  Kind kind = Kind::kLinear;
  std::uint64_t seed = 0;  // kRandom only
  bool operator==(const Placement&) const = default;
};

// "linear", "round-robin", "random" (seed 0), "random:SEED" (SEED a decimal integer < 2^64),
// "topology-aware"; nothing for anything else.
[[nodiscard]] std::optional<Placement> parse_placement(const std::string& text);
// "linear", "round-robin", "random" or "topology-aware" (the seed is reported apart).
[[nodiscard]] std::string placement_name(const Placement& placement);

// What placement needs to know of a platform.
struct PlacementShape {
  std::size_t hosts = 0;
  unsigned gpus_per_node = 1;
  std::vector<unsigned> torus_dims;  // of the fabric's endpoints; empty unless a torus
};

// The shape of `spec` built with `hosts` hosts (XML: known only once built).
[[nodiscard]] PlacementShape placement_shape(const platforms::PlatformSpec& spec,
                                             std::size_t hosts);

// Host index of each rank, for ranks 0..ranks-1, all distinct. Pure.
//  - linear: 0, 1, 2, ...
//  - round-robin: node r mod N, slot r / N (N = hosts / gpus_per_node); with one GPU per
//    node (no "node" section, XML) this is linear.
//  - random: a Fisher-Yates shuffle of 0..hosts-1 driven by std::mt19937_64(seed) with
//    unbiased rejection sampling (portable: no std::shuffle or distributions), truncated.
//  - topology-aware: linear, except on a torus, where fabric endpoints follow a boustrophedon
//    ("snake") order so that consecutive ranks are one hop apart; with an even-sized slowest
//    dimension, the ring closes with one hop too (see platforms/FORMAT.md).
// REQUIRES: 1 <= ranks <= shape.hosts; hosts is a multiple of gpus_per_node.
[[nodiscard]] std::vector<std::size_t> place_ranks(const Placement& placement,
                                                   const PlacementShape& shape, int ranks);

// The hosts of ranks 0..ranks-1 under `placement`. Throws ConfigError naming `platform_file`
// if ranks exceeds the hosts. REQUIRES: ranks >= 1.
[[nodiscard]] std::vector<simgrid::s4u::Host*> place_ranks_on(const platforms::Platform& platform,
                                                              const PlacementShape& shape,
                                                              const Placement& placement, int ranks,
                                                              const std::string& platform_file);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_REPLAY_RANK_MAPPING_H_
