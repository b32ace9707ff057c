#include "sim/planner/network_model.h"

#include <algorithm>
#include <variant>

namespace dtsim::sim {

namespace {

using platforms::LinkSpec;

// The slowest and the summed latency of a host's links from the host up `levels` levels.
PathClass host_path(const LinkSpec& link, const std::vector<LinkSpec>& level_links,
                    unsigned levels) {
  PathClass p{.bandwidth_bytes_per_sec = link.bandwidth_bytes_per_sec};
  for (unsigned l = 0; l < levels; ++l) {
    const LinkSpec& at = level_links.empty() ? link : level_links[l];
    p.bandwidth_bytes_per_sec = std::min(p.bandwidth_bytes_per_sec, at.bandwidth_bytes_per_sec);
    p.latency_sec += 2 * at.latency_sec;  // up and down
  }
  return p;
}

// `fabric` (host to host) seen from GPUs of `node`, if any.
PlannerNetwork with_node(PathClass fabric, unsigned hosts,
                         const std::optional<platforms::NodeSpec>& node) {
  if (!node) {
    return {.hosts = static_cast<int>(hosts),
            .intra = fabric,
            .inter = fabric,
            .nic_bytes_per_sec = fabric.bandwidth_bytes_per_sec};
  }
  const platforms::NodeSpec& n = *node;
  const PathClass intra{.bandwidth_bytes_per_sec = n.gpu_link_bandwidth_bytes_per_sec,
                        .latency_sec = 2 * n.gpu_link_latency_sec};
  const PathClass inter{
      .bandwidth_bytes_per_sec =
          std::min(n.gpu_link_bandwidth_bytes_per_sec, fabric.bandwidth_bytes_per_sec),
      .latency_sec = intra.latency_sec + 2 * n.nic_latency_sec + fabric.latency_sec};
  return {.hosts = static_cast<int>(hosts),
          .gpus_per_node = static_cast<int>(n.gpus),
          .intra = intra,
          .inter = inter,
          .nic_bytes_per_sec = n.nic_bandwidth_bytes_per_sec,
          .rails = n.rails};
}

}  // namespace

PlannerNetwork planner_network(const platforms::PlatformSpec& spec) {
  if (const auto* star = std::get_if<platforms::StarSpec>(&spec.topology)) {
    return with_node(host_path(star->link, {}, 1), spec.host_count(), star->node);
  }
  if (const auto* tree = std::get_if<platforms::FatTreeSpec>(&spec.topology)) {
    return with_node(host_path(tree->link, tree->level_links, tree->levels), spec.host_count(),
                     tree->node);
  }
  throw platforms::PlatformError(spec.file +
                                 ": the planner's estimate supports star and fat-tree platforms, "
                                 "not " +
                                 spec.topology_name());
}

PathClass group_path(const PlannerNetwork& net, RankGroup group) {
  const int gpn = net.gpus_per_node;
  if (1LL * group.stride * group.size <= gpn) {
    return net.intra;
  }
  const int sharing = net.rails ? 1 : std::min(group.stride, gpn);
  return {.bandwidth_bytes_per_sec =
              std::min(net.inter.bandwidth_bytes_per_sec, net.nic_bytes_per_sec / sharing),
          .latency_sec = net.inter.latency_sec};
}

double ring_sec(const PlannerNetwork& net, RingOp op, RankGroup group, std::uint64_t bytes) {
  const int n = group.size;
  if (n <= 1 || bytes == 0) {
    return 0;
  }
  const PathClass p = group_path(net, group);
  const double steps = op == RingOp::kAllReduce ? 2.0 * (n - 1) : 1.0 * (n - 1);
  return steps * p.latency_sec + steps / n * static_cast<double>(bytes) / p.bandwidth_bytes_per_sec;
}

double transfer_sec(const PlannerNetwork& net, RankGroup group, std::uint64_t bytes) {
  if (group.size <= 1 || bytes == 0) {
    return 0;
  }
  const PathClass p = group_path(net, group);
  return p.latency_sec + static_cast<double>(bytes) / p.bandwidth_bytes_per_sec;
}

}  // namespace dtsim::sim
