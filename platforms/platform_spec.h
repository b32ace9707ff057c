// Platform specs: the documented JSON description of a cluster network (platforms/FORMAT.md),
// parsed and fully validated before SimGrid sees it.
//
//   {"topology": "star", "hosts": 16, "link_bandwidth": "25GBps", "link_latency": "1us"}
//   {"topology": "fat-tree", "levels": 2, "down": [16, 16], "up": [1, 16], "parallel": [1, 1],
//    "link_bandwidth": "25GBps", "link_latency": "1us"}
//   {"topology": "fat-tree", "k": 4, "n": 3, "taper": [2, 1], "link_bandwidth": ["25GBps",
//    "25GBps", "50GBps"], "link_latency": "1us"}       (k-ary n-tree; per-level links)
//   {"topology": "torus", "dims": [4, 4, 4], "link_bandwidth": "25GBps", "link_latency": "1us"}
//   {"topology": "dragonfly", "groups": 2, "chassis": 1, "routers": 2, "nodes": 4,
//    "link_bandwidth": "25GBps", "link_latency": "1us"}
//   {"topology": "xml", "file": "cluster.xml"}          (a SimGrid XML platform, path relative
//                                                        to the spec's folder)
#ifndef DTSIM_PLATFORMS_PLATFORM_SPEC_H_
#define DTSIM_PLATFORMS_PLATFORM_SPEC_H_

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

namespace dtsim::platforms {

// A platform that cannot be used; what() starts with the file name and JSON pointer.
class PlatformError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Every link of a generated topology has this bandwidth and latency.
struct LinkSpec {
  double bandwidth_bytes_per_sec = 25e9;
  double latency_sec = 1e-6;
  bool operator==(const LinkSpec&) const = default;
};

// A multi-GPU node: `gpus` GPUs, each with its own link to the node's internal switch
// (NVSwitch-like; PCIe switches are modelled the same way with PCIe bandwidths), and one NIC
// link from that switch to the fabric, shared by the node's GPUs. A node's several NICs are one
// link of their summed bandwidth. Route between GPUs of one node: gpu link up, gpu link down;
// between nodes: gpu link, NIC link, fabric..., NIC link, gpu link.
// With `rails`, every GPU has its own NIC link (rail-optimized nodes: GPU i uses NIC i, "rail"
// i): a GPU's traffic to another node crosses only its own NIC, and GPUs do not share NICs.
struct NodeSpec {
  unsigned gpus = 8;
  double gpu_link_bandwidth_bytes_per_sec = 300e9;
  double gpu_link_latency_sec = 0;
  // The node's one NIC link (all its NICs summed); with rails, each GPU's NIC link.
  double nic_bandwidth_bytes_per_sec = 25e9;
  double nic_latency_sec = 0;
  bool rails = false;
  // The node's switch reduces in the network (NVLink SHARP: H100 and later NVSwitch nodes), which
  // the nvls all-reduce needs.
  bool nvlink_sharp = false;
  // The GPU links are NVLink: a GPU reaches the node's NIC(s) over a link of its own (PCIe and
  // GPUDirect RDMA), with the GPU link's bandwidth and latency, so traffic inside the node and
  // traffic leaving it share no link, as on NVLink machines. false: both cross the GPU link (a
  // PCIe server, where they do).
  bool nvlink = false;
  bool operator==(const NodeSpec&) const = default;
};

// One switch; each host has its own full-duplex link to it.
struct StarSpec {
  unsigned hosts = 16;
  LinkSpec link;
  // Set: every host of the topology is a multi-GPU node (hosts = nodes x gpus).
  std::optional<NodeSpec> node;
  bool operator==(const StarSpec&) const = default;
};

// SimGrid's generalized fat-tree (FatTreeParams): down[i] children per switch of level i+1,
// up[i] parents per node of level i, parallel[i] links between each such pair.
// Hosts = product(down).
struct FatTreeSpec {
  unsigned levels = 2;
  std::vector<unsigned> down{4, 4};
  std::vector<unsigned> up{1, 4};
  std::vector<unsigned> parallel{1, 1};
  // Every level's links, or (with level_links) the hosts' links, level_links[0].
  LinkSpec link;
  // Empty, or one per level: level_links[i] for the links between level i and level i+1
  // (i = 0: hosts to leaf switches). SimGrid's FatTreeZone takes one bandwidth and latency;
  // build_platform sets the other levels' links after building it.
  std::vector<LinkSpec> level_links;
  // Set: every host of the topology is a multi-GPU node (hosts = nodes x gpus).
  std::optional<NodeSpec> node;
  // The switches reduce in the network (InfiniBand SHARP), so that with NVLink SHARP nodes the
  // nvls all-reduce may span nodes ("sharp"; sim/collectives/nvls.h).
  bool sharp = false;
  bool operator==(const FatTreeSpec&) const = default;
};

// A torus with wrap-around in every dimension; hosts = product(dims).
struct TorusSpec {
  std::vector<unsigned> dims{4, 4, 4};
  LinkSpec link;
  // Set: every host of the topology is a multi-GPU node (hosts = nodes x gpus).
  std::optional<NodeSpec> node;
  bool operator==(const TorusSpec&) const = default;

  // The dimensions SimGrid is given: those of size 1 have no links, but SimGrid's torus would
  // give each host a link to itself there, and abort on the second such dimension (the same
  // link name twice). Leaving them out builds the same network, with the same host numbering.
  // {1} if every dimension is 1 (one host).
  [[nodiscard]] std::vector<unsigned> dims_with_links() const {
    std::vector<unsigned> out;
    for (unsigned d : dims) {
      if (d > 1) {
        out.push_back(d);
      }
    }
    return out.empty() ? std::vector<unsigned>{1} : out;
  }
};

// SimGrid's dragonfly (DragonflyZone): `groups` groups of `chassis` chassis of `routers` routers,
// each router with `nodes` hosts. Routers of a chassis are all joined (green links), routers at
// the same position of a group's chassis too (black links), and each pair of groups by one blue
// link. A "*_links" count is a bandwidth multiplier: SimGrid makes one link of that many times
// link_bandwidth. Hosts = groups x chassis x routers x nodes.
struct DragonflySpec {
  unsigned groups = 2;
  unsigned chassis = 1;
  unsigned routers = 2;
  unsigned nodes = 2;
  unsigned blue_links = 1;   // between two groups
  unsigned black_links = 1;  // between two chassis of a group
  unsigned green_links = 1;  // between two routers of a chassis
  // Every link, or (with level_links) the hosts' links, level_links[0].
  LinkSpec link;
  // Empty, or per kind of link (before the multipliers): kDragonflyLinkKinds order: host links
  // ("local"), green, black, blue. build_platform sets them after SimGrid builds the zone.
  std::vector<LinkSpec> level_links;
  // Set: every host of the topology is a multi-GPU node (hosts = nodes x gpus).
  std::optional<NodeSpec> node;
  bool operator==(const DragonflySpec&) const = default;
};

// The kinds of dragonfly links, in DragonflySpec::level_links order; also the keys of a
// per-kind "link_bandwidth" / "link_latency" object.
inline constexpr const char* kDragonflyLinkKinds[] = {"local", "green", "black", "blue"};

// A SimGrid XML platform file; hosts in the order the file declares them.
struct XmlSpec {
  std::string path;  // resolved (relative to the spec's folder, or as given)
  bool operator==(const XmlSpec&) const = default;
};

using Topology = std::variant<StarSpec, FatTreeSpec, TorusSpec, XmlSpec, DragonflySpec>;

// Departures from the healthy platform ("perturbations", platforms/FORMAT.md). Each entry keeps
// the JSON pointer it was read from, for errors found once SimGrid has built the platform.
struct SlowLinks {
  std::string where;              // e.g. "/perturbations/slow_links/0"
  std::optional<unsigned> level;  // a fat-tree level: every link between level and level+1
  std::string link;               // or a SimGrid link name (name, name_UP or name_DOWN)
  std::optional<unsigned> host;   // or every link attached to this host (canonical index)
  double bandwidth_factor = 1;    // 0 < factor: new bandwidth = factor x bandwidth
  bool operator==(const SlowLinks&) const = default;
};
// A failed fat-tree link: between node `lower` of level `level` (a host index at level 0, else a
// switch's index in its level) and its `parent`-th parent, the `parallel`-th of their links.
struct FailedLink {
  std::string where;
  unsigned level = 0;
  unsigned lower = 0;
  unsigned parent = 0;
  unsigned parallel = 0;
  bool operator==(const FailedLink&) const = default;
};
struct SlowGpu {
  std::string where;
  std::optional<unsigned> host;  // the GPU at this canonical host index (whatever rank runs there)
  std::optional<unsigned> rank;  // or this rank
  double compute_factor = 1;     // > 0: its forward, backward and optimizer take factor x longer
  bool operator==(const SlowGpu&) const = default;
};
struct BackgroundFlow {
  std::string where;
  unsigned from = 0, to = 0;  // canonical host indices
  double bytes_per_sec = 0;   // either a flow capped at this rate, for the whole run,
  std::uint64_t bytes = 0;    // or a transfer of `bytes` started every `period_sec` (from t = 0;
  double period_sec = 0;      // late ones start as soon as the previous one ends)
  bool operator==(const BackgroundFlow&) const = default;
};
struct Perturbations {
  std::vector<SlowLinks> slow_links;
  std::vector<FailedLink> failed_links;  // fat-tree only: routed around (build_platform.h)
  std::vector<SlowGpu> slow_gpus;
  std::vector<BackgroundFlow> background;
  bool operator==(const Perturbations&) const = default;
};

struct PlatformSpec {
  std::string file;  // where it was read from; labels errors and reports
  Topology topology;
  Perturbations perturbations;

  // Hosts (GPUs) of a generated topology; 0 for XML (known only once loaded).
  [[nodiscard]] unsigned host_count() const;
  // GPUs per node (1 without a "node" section, and for XML).
  [[nodiscard]] unsigned gpus_per_node() const;
  // Whether the nodes' switches reduce in the network ("nvlink_sharp"; false without nodes).
  [[nodiscard]] bool nvlink_sharp() const;
  // Whether the fabric's switches reduce in the network (a fat-tree's "sharp").
  [[nodiscard]] bool network_sharp() const;
  // "star", "fat-tree", "torus", "xml" or "dragonfly".
  [[nodiscard]] std::string topology_name() const;
};

// Reads the spec at `path`. A path ending in ".xml" is taken as a SimGrid XML platform.
// Throws PlatformError listing every problem as "<path>: <json pointer>: <problem>".
[[nodiscard]] PlatformSpec read_platform_spec(const std::string& path);

}  // namespace dtsim::platforms

#endif  // DTSIM_PLATFORMS_PLATFORM_SPEC_H_
