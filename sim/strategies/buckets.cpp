#include "sim/strategies/buckets.h"

namespace dtsim::sim {

std::vector<Bucket> assign_buckets(const workloads::Workload& workload, std::uint64_t cap_bytes,
                                   std::uint64_t first_cap_bytes) {
  std::vector<Bucket> buckets;
  Bucket open;
  bool has_open = false;
  for (int i = static_cast<int>(workload.layers.size()) - 1; i >= 0; --i) {
    const std::uint64_t bytes = workload.layers[static_cast<std::size_t>(i)].param_bytes;
    if (bytes == 0) {
      continue;
    }
    if (!has_open) {
      open = Bucket{.bytes = 0, .first_layer = i, .last_layer = i};
      has_open = true;
    }
    open.bytes += bytes;
    open.first_layer = i;
    if (open.bytes >= (buckets.empty() ? first_cap_bytes : cap_bytes)) {
      buckets.push_back(open);
      has_open = false;
    }
  }
  if (has_open) {
    buckets.push_back(open);
  }
  return buckets;
}

}  // namespace dtsim::sim
