// Named what-if optimizations, each a short composition of the primitives (primitives.h), and
// the platform-level ones (a faster network). WHATIF.md gives each one's rule and source.
//
//   g = mixed_precision(std::move(g), find_device("v100"), "fp32", "fp16");
//   scale_network(spec, 2, 1);   // every link twice the bandwidth
#ifndef DTSIM_SIM_WHATIF_OPTIMIZATIONS_H_
#define DTSIM_SIM_WHATIF_OPTIMIZATIONS_H_

#include <string>

#include "platforms/platform_spec.h"
#include "sim/graph/execution_graph.h"
#include "workloads/roofline.h"

namespace dtsim::sim {

// Mixed precision (AMP with fp16, or bf16) on `device`, from precision `from` (fp32 or tf32) to
// `to` (fp16 or bf16): compute nodes of op class "matmul" scaled by peak(from) / peak(to) of
// the datasheet, those of op class "memory" by the bytes of an element (2 / 4); before the first
// forward node of every micro-batch, one node that casts the fp32 weights to `to` (reads 4,
// writes 2 bytes per parameter at the datasheet bandwidth x kMemoryEfficiency; the parameters
// are the gradient bytes of the backward collectives). Gradients stay fp32 (PyTorch AMP), so
// collectives keep their bytes. Throws ConfigError("what_if", ...) if a compute node has no op
// class, or for precisions the device lacks or that are not a step down.
[[nodiscard]] ExecutionGraph mixed_precision(ExecutionGraph g, const workloads::DeviceSpec& device,
                                             const std::string& from, const std::string& to);

// The same work on GPU `to` instead of `from`, at `precision`: "matmul" nodes scaled by the
// ratio of the peaks at that precision, "memory" nodes by the ratio of memory bandwidths.
// Throws ConfigError("what_if", ...) if a compute node has no op class or a device lacks the
// precision.
[[nodiscard]] ExecutionGraph change_gpu(ExecutionGraph g, const workloads::DeviceSpec& from,
                                        const workloads::DeviceSpec& to,
                                        const std::string& precision);

// Gradient compression at ratio r (0 < r <= 1; top-k, PowerSGD): every backward all-reduce
// carries r x its bytes, with an encode node before it and a decode node after it on the compute
// stream, each streaming (1 + r) x the bytes through memory at `memory_bytes_per_sec`.
[[nodiscard]] ExecutionGraph compress_gradients(ExecutionGraph g, double ratio,
                                                double memory_bytes_per_sec);

// A fused optimizer (apex's FusedAdam, PyTorch's foreach/fused step): one multi-tensor kernel per
// chunk of parameters instead of a few kernels per parameter tensor, so the step costs what its
// bytes cost. Each iteration's optimizer nodes are scaled together to bytes_per_param x the
// parameters / memory_bytes_per_sec (the generator's optimizer rule, workloads/generator.h), the
// parameters counted from the iteration's gradient all-reduces (fp32 gradients, 4 bytes each);
// where they already take less, they are left as they are. Throws ConfigError("what_if", ...)
// for an iteration with an optimizer node and no gradient all-reduce.
[[nodiscard]] ExecutionGraph fuse_optimizer(ExecutionGraph g, double bytes_per_param,
                                            double memory_bytes_per_sec);

// Every link of the platform (fabric, GPU links, NICs) with bandwidth x bandwidth_factor and
// latency x latency_factor. Perturbations stay relative to the new values. Throws
// ConfigError("what_if", ...) for a SimGrid XML platform (its links are not in the spec) or a
// factor that is not finite > 0.
void scale_network(platforms::PlatformSpec& spec, double bandwidth_factor, double latency_factor);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_WHATIF_OPTIMIZATIONS_H_
