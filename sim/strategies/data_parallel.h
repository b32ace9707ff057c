// Data parallelism as PyTorch DDP over NCCL runs it, as an execution graph: every rank runs one
// program (the replica) that, per iteration and micro-batch, runs forward over the layers and
// backward in reverse order, all-reduces each gradient bucket on the "dp" communicator (all
// ranks) while the last micro-batch's backward pass goes on, then steps the optimizer.
#ifndef DTSIM_SIM_STRATEGIES_DATA_PARALLEL_H_
#define DTSIM_SIM_STRATEGIES_DATA_PARALLEL_H_

#include <cstdint>
#include <optional>
#include <string>

#include "sim/graph/execution_graph.h"
#include "sim/strategies/buckets.h"
#include "workloads/trace.h"

namespace dtsim::sim {

// When a rank's gradient all-reduces may run (--overlap).
enum class Overlap {
  // Bucket b's all-reduce starts once its gradients are computed, while the backward pass goes on
  // (NCCL on GPUs: communication has its own engines and links).
  kBackward,
  // Communication cannot run while the rank computes: every all-reduce starts after the rank's
  // whole backward pass (communication needs the cores that compute, e.g. gloo on CPUs).
  kNone,
};

// "backward" or "none"; nothing for other names.
[[nodiscard]] std::optional<Overlap> parse_overlap(const std::string& name);
[[nodiscard]] std::string overlap_name(Overlap overlap);

struct DataParallelJob {
  int ranks = 1;
  std::uint64_t bucket_cap_bytes = kDefaultBucketCapBytes;
  std::uint64_t first_bucket_cap_bytes = kFirstBucketCapBytes;
  int iterations = 3;  // simulated back to back; the last one is the steady state
  // Micro-batches per optimizer step (gradient accumulation): the first steps-1 run forward and
  // backward with no communication (DDP's no_sync), the last one all-reduces as usual.
  int accumulation_steps = 1;
  Overlap overlap = Overlap::kBackward;
};

// The graph of `job` on `workload`. Per iteration and micro-batch m, one compute node per layer
// forward (phase forward, layer order) and backward (phase backward, reverse order), tagged with
// the layer; in the last micro-batch, after the backward node of bucket b's first layer (with
// Overlap::kNone: also after the last backward node), an all-reduce of the bucket's bytes on "dp"
// (tagged with the bucket's layer range and labelled "bucket B"); then the optimizer node
// (phase optimizer), which waits for the last all-reduce. Buckets by assign_buckets. Nodes are
// listed iteration by iteration: compute, then the all-reduces in bucket order, then the
// optimizer. REQUIRES: job.ranks >= 1, job.iterations >= 1, job.accumulation_steps >= 1,
// caps >= 1.
[[nodiscard]] ExecutionGraph build_data_parallel(const workloads::Workload& workload,
                                                 const DataParallelJob& job);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_STRATEGIES_DATA_PARALLEL_H_
