// The compute-side cost of gradient buckets (WHATIF.md, "Bucket cost"): an NCCL all-reduce is a
// CUDA kernel of one thread block per channel, so while it runs during the backward pass it holds
// `channels` of the GPU's streaming multiprocessors, and the backward kernels run on the others.
// Many small buckets spend longer in NCCL (a latency per ring step each), hence take SMs from
// the backward pass for longer: the cost that makes 1 MB buckets slower than 25 MB ones. And
// some DDP versions launch kernels of their own per bucket on the compute stream, each paying the
// GPU's fixed cost of a kernel whatever its bytes.
#ifndef DTSIM_SIM_WHATIF_BUCKET_COST_H_
#define DTSIM_SIM_WHATIF_BUCKET_COST_H_

#include <functional>
#include <string>

#include "sim/graph/execution_graph.h"

namespace dtsim::sim {

// Streaming multiprocessors of a catalogue GPU (workloads/roofline.h): v100 80 (Volta
// whitepaper), a100 108 (Ampere whitepaper), h100 and h200 132 (Hopper whitepaper, SXM5), under
// a power limit or not ("h100@500W"); 0 for another name.
[[nodiscard]] int streaming_multiprocessors(const std::string& device);

// Estimated seconds of one collective node (its algorithm's alpha + beta terms).
using CollectiveSeconds = std::function<double(const ExecutionGraph&, const Node&)>;

// `g` with, for every backward all-reduce that waits for a backward node followed by more
// backward compute of its micro-batch, a compute node right before that next compute node
// lasting min(T, R) x sm_share: T the all-reduce's estimate, R the backward compute left after
// its gradients are ready (only that overlaps it), sm_share = channels / SMs. Labelled "nccl sm
// share". Throws ConfigError("nccl_channels", ...) unless 0 <= sm_share <= 1.
[[nodiscard]] ExecutionGraph add_bucket_contention(ExecutionGraph g, const CollectiveSeconds& sec,
                                                   double sm_share);

// Seconds a GPU's stream spends on each of back-to-back launched kernels that do no work, the
// fixed cost of a kernel: v100 1.83e-6 and a100 2.7e-6 (CSCS's ReFrame check
// gpu_kernel_latency, its "async" references on ault's V100 and A100 nodes); h100 and h200 3e-6
// (NVIDIA's developer forum, 2022: null kernels "about 3 microseconds with recent hardware and
// software"), the same under a power limit ("h100@500W": the clock it lowers is left out); 0 for
// another name.
[[nodiscard]] double kernel_launch_sec(const std::string& device);

// `g` with, right after each compute node whose gradients a backward all-reduce waits for (the
// last of its dependencies), a compute node of `seconds`: the kernels DDP launches per bucket
// on the compute stream (WHATIF.md "Bucket cost"). What waited for that node waits for the new
// one, the all-reduces (all of a bucket's P3 slices: one insertion per node) included.
// Labelled "ddp bucket kernels". Throws ConfigError("bucket_kernels", ...) unless seconds >= 0.
[[nodiscard]] ExecutionGraph add_bucket_kernels(ExecutionGraph g, double seconds);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_WHATIF_BUCKET_COST_H_
