// Gradient buckets by PyTorch DDP's rule, as used in steady state (after DDP rebuilt its buckets
// in gradient-ready order at the end of the first iteration).
#ifndef DTSIM_SIM_STRATEGIES_BUCKETS_H_
#define DTSIM_SIM_STRATEGIES_BUCKETS_H_

#include <cstdint>
#include <vector>

#include "workloads/trace.h"

namespace dtsim::sim {

// PyTorch's dist._DEFAULT_FIRST_BUCKET_BYTES: the first bucket is kept small so that the first
// all-reduce starts early in the backward pass.
inline constexpr std::uint64_t kFirstBucketCapBytes = 1024 * 1024;
// DDP's default bucket_cap_mb = 25 (MiB).
inline constexpr std::uint64_t kDefaultBucketCapBytes = 25 * 1024 * 1024;

// A bucket holds the gradients of layers [first_layer, last_layer] (forward indices; only those
// with param_bytes > 0 contribute). Its all-reduce may start once the backward pass reached
// first_layer, the last of its layers in backward order.
struct Bucket {
  std::uint64_t bytes = 0;
  int first_layer = 0;
  int last_layer = 0;
  bool operator==(const Bucket&) const = default;
};

// Buckets in the order their gradients become ready (reverse layer order), by DDP's
// compute_bucket_assignment_by_size: walk layers with gradients backwards, adding each to the
// open bucket; close it as soon as its size reaches the current cap. The cap is
// `first_cap_bytes` for the first bucket and `cap_bytes` after. A layer is never split (dtsim
// treats a layer's parameters as one tensor; DDP splits weight and bias, which can move a
// boundary by one tensor). REQUIRES: caps >= 1.
[[nodiscard]] std::vector<Bucket> assign_buckets(const workloads::Workload& workload,
                                                 std::uint64_t cap_bytes,
                                                 std::uint64_t first_cap_bytes);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_STRATEGIES_BUCKETS_H_
