#include "sim/collectives/nvls.h"

#include <algorithm>
#include <cmath>

#include "sim/collectives/schedule_builder.h"

namespace dtsim::sim {

std::string NvlsAlgorithm::unsupported(const CollectiveRequest& request,
                                       const TopologyHints& hints) const {
  if (request.op != CollectiveOp::kAllReduce) {
    return "nvls has only all-reduce";
  }
  if (!hints.in_switch_reduction) {
    return "nvls needs nodes whose NVSwitch reduces in the network (node \"nvlink_sharp\": "
           "true, as in the hgx-h200 preset)";
  }
  if (request.ranks > hints.ranks_per_node) {
    const int g = hints.ranks_per_node;
    return "nvls needs every rank on one NVSwitch node, and " + std::to_string(request.ranks) +
           " ranks do not fit in a node of " + std::to_string(g) + (g == 1 ? " GPU" : " GPUs") +
           " (across nodes NCCL needs SHARP switches, which dtsim does not model)";
  }
  for (int r = 1; r < request.ranks; ++r) {
    if (hints.node_of(r) != hints.node_of(0)) {
      return "nvls needs every rank on one NVSwitch node, and the placement puts rank " +
             std::to_string(r) + " on node " + std::to_string(hints.node_of(r)) +
             ", rank 0 on node " + std::to_string(hints.node_of(0)) + " (use --placement linear)";
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
  // S (n+1)/n per GPU link, spread over the n-1 peers, at NCCL's NVLS efficiency.
  const auto pair_bytes = static_cast<std::uint64_t>(
      std::llround(static_cast<double>(request.bytes) * (p + 1) /
                   (static_cast<double>(p) * (p - 1) * kNvlsEfficiency)));
  for (int s = 0; s < p; ++s) {
    for (int d = 0; d < p; ++d) {
      if (s != d) {
        b.transfer(s, d, pair_bytes, {start});
      }
    }
  }
  return std::move(b).finish();
}

}  // namespace dtsim::sim
