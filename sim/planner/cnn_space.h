// The configurations a CNN's plan enumerates (PLANNER.md, "CNNs"): data parallelism with at
// most one model-parallel split of the oracle's (spatial over a grid of the image, filter or
// channel; sim/strategies/CNN.md) and a pipeline, every micro-batch size and schedule that the
// hybrid graph can build for a model of the zoo on a number of GPUs. Pure: no memory model, no
// cost, no SimGrid.
//
//   CnnSearchSpace space{.model = "resnet50", .gpus = 64, .global_batch = 2048,
//                        .gpus_per_node = 8};
//   std::vector<PlanCandidate> all = enumerate_cnn_candidates(space);
#ifndef DTSIM_SIM_PLANNER_CNN_SPACE_H_
#define DTSIM_SIM_PLANNER_CNN_SPACE_H_

#include <string>
#include <vector>

#include "sim/planner/candidate.h"
#include "sim/planner/search_space.h"

namespace dtsim::sim {

struct CnnSearchSpace {
  std::string model;     // a CNN of the model zoo (workloads::is_cnn)
  int image_size = 224;  // input height = width (= depth for a volume)
  int gpus = 1;
  int global_batch = 1;   // samples per optimizer step
  int gpus_per_node = 1;  // a filter or channel split fits a node unless tp_across_nodes
  bool tp_across_nodes = false;
  StrategySet strategies;  // pp, spatial, filter, channel
  bool operator==(const CnnSearchSpace&) const = default;
};

// Every configuration of `space`, in a fixed order: the split (none; spatial grids by ranks,
// then height, width, depth ascending; filter; channel), the pipeline, the micro-batch and the
// schedule, each ascending. A configuration is listed when
//  - the split is one check_cnn_split accepts on the model's layers: a spatial grid of 2-D
//    (a 2-D model) or 3-D (a volume) extents whose product k > 1 divides gpus, a filter or
//    channel degree F > 1 dividing gpus, at most gpus_per_node unless tp_across_nodes;
//  - pp divides gpus / k; dp = gpus / (k * pp) divides global_batch, and the micro-batch b
//    divides global_batch / dp;
//  - pp = 1 runs 1f1b only; pp > 1 runs gpipe and 1f1b (CNN units are layers: no interleaving).
// The hybrid graph's own checks (a pipeline deeper than the layers) come later, in the plan.
// Throws workloads::GeneratorError for a model or image size the zoo refuses.
// REQUIRES: gpus, global_batch, gpus_per_node >= 1.
[[nodiscard]] std::vector<PlanCandidate> enumerate_cnn_candidates(const CnnSearchSpace& space);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_PLANNER_CNN_SPACE_H_
