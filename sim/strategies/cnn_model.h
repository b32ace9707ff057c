// CNN model parallelism as hybrid-parallel pieces (hybrid.h): the oracle's spatial, filter and
// channel splits (Kahira et al., HPDC 2021; Dryden et al., SC 2019) of a CNN from the model zoo,
// each beside data and pipeline parallelism. Every rule is in sim/strategies/CNN.md.
//
// A spatial split runs on the context dimension of the rank layout (the ranks that share one
// sample), a filter or channel split on the tensor dimension, so the hybrid engine's
// communicators, placement, pipeline schedules and gradient reduction apply unchanged: the
// gradients of weights every spatial rank holds are reduced over data x spatial, the shards of
// a filter or channel split over data only.
#ifndef DTSIM_SIM_STRATEGIES_CNN_MODEL_H_
#define DTSIM_SIM_STRATEGIES_CNN_MODEL_H_

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/strategies/hybrid.h"
#include "sim/strategies/memory.h"
#include "workloads/model_zoo.h"
#include "workloads/roofline.h"
#include "workloads/trace.h"

namespace dtsim::sim {

// One model-parallel split at a time (with data and pipeline parallelism around it).
struct CnnSplit {
  std::array<int, 3> spatial{1, 1, 1};  // grid over height, width, depth
  int filter = 1;                       // output channels split
  int channel = 1;                      // input channels split

  [[nodiscard]] int spatial_ranks() const { return spatial[0] * spatial[1] * spatial[2]; }
  bool operator==(const CnnSplit&) const = default;
};

// "4x4" or "2x2x2" (height x width [x depth]). Returns nullopt and sets *why for bad text.
[[nodiscard]] std::optional<std::array<int, 3>> parse_spatial_grid(std::string_view text,
                                                                   std::string* why);

// Empty if `split` can run on `layers` (the zoo's, CnnGeometry filled), else why not, starting
// with the split's name ("spatial: ...", "filter: ..."): more than one split, a grid that does
// not tile the input or has a depth for a 2-D model, a split larger than every layer's
// channels.
[[nodiscard]] std::string check_cnn_split(const std::vector<workloads::LayerCost>& layers,
                                          const CnnSplit& split);

// The pieces one rank runs under `split`: one per layer and unit, in `trace`'s times (the
// generator's or a measurement of the same layers; layer i of the trace is layers[i]) scaled per
// layer by the roofline's time of the rank's shard over that of the whole layer, gradient bytes
// as the trace's for the share of the weights the rank holds. REQUIRES: check_cnn_split is
// empty and the trace's layers are named as `layers`.
[[nodiscard]] HybridModel model_from_cnn(const std::vector<workloads::LayerCost>& layers,
                                         const workloads::Workload& trace,
                                         const workloads::Roofline& roofline,
                                         const CnnSplit& split);

// What one rank of each pipeline stage of a CNN job holds at its peak (CNN.md, "Memory"):
// its share of the weights in the compute precision, fp32 gradients, SGD's fp32 momentum (and
// fp32 master weights when `mixed_precision`), per micro-batch in flight the outputs of its
// layers' shares kept for the backward pass and the whole inputs a split gathered for them,
// NCCL's buffers per communicator and the framework reserve. REQUIRES: check_hybrid(model,
// job) is empty; `model` is model_from_cnn's.
[[nodiscard]] MemoryReport cnn_memory(const HybridModel& model, const HybridJob& job,
                                      const workloads::DeviceSpec& device, bool mixed_precision);

// Empty if `trace` has `layers` (same count, same names in order), else the first difference.
[[nodiscard]] std::string match_cnn_trace(const std::vector<workloads::LayerCost>& layers,
                                          const workloads::Workload& trace);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_STRATEGIES_CNN_MODEL_H_
