// What a platform spec amounts to, for people: hosts, levels, bisection bandwidth and
// oversubscription (`dtsim platform describe`), and the equivalent SimGrid XML
// (`dtsim platform export --xml`). Pure: no SimGrid.
#ifndef DTSIM_PLATFORMS_DESCRIBE_H_
#define DTSIM_PLATFORMS_DESCRIBE_H_

#include <string>
#include <vector>

#include "platforms/platform_spec.h"

namespace dtsim::platforms {

struct LevelSummary {
  std::string name;         // "hosts -> level 1", ...; a dragonfly's kinds; a torus's dimensions
  unsigned long links = 0;  // links between the two levels (each split-duplex)
  double bandwidth_bytes_per_sec = 0;  // of each of them, per direction
  // Of the upper level's switches: capacity down / capacity up (0 for the top level).
  double oversubscription = 0;
};

struct PlatformSummary {
  std::string topology;
  unsigned long endpoints = 0;  // hosts of the fabric (nodes, with a "node" section)
  unsigned long gpus = 0;       // hosts dtsim places ranks on
  unsigned gpus_per_node = 1;
  // Fat-tree: between levels; dragonfly: by kind of link (as the link report names them);
  // torus: per dimension of more than one host.
  std::vector<LevelSummary> levels;
  // Bytes/s that can cross the worst cut splitting the hosts in two halves (per direction).
  double bisection_bytes_per_sec = 0;
};

// REQUIRES: spec is not XML (its structure is known only to SimGrid).
[[nodiscard]] PlatformSummary summarize(const PlatformSpec& spec);

// A SimGrid XML platform (version 4.1) equivalent to `spec`: one <cluster> with the topology's
// parameters. Throws PlatformError for what a single cluster cannot express (multi-GPU nodes,
// XML input).
[[nodiscard]] std::string to_simgrid_xml(const PlatformSpec& spec);

}  // namespace dtsim::platforms

#endif  // DTSIM_PLATFORMS_DESCRIBE_H_
