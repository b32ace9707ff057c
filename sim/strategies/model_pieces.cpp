#include "sim/strategies/model_pieces.h"

namespace dtsim::sim {

namespace {

std::uint64_t element_bytes(const std::string& precision) {
  return precision == "fp16" || precision == "bf16" ? 2 : 4;
}

}  // namespace

HybridModel model_from_trace(const workloads::Workload& workload) {
  HybridModel model{.optimizer_sec = workload.optimizer_sec};
  const std::uint64_t element = element_bytes(workload.precision);
  int unit = 0;
  for (const workloads::Layer& layer : workload.layers) {
    model.pieces.push_back({.name = layer.name,
                            .unit = unit++,
                            .forward_sec = layer.forward_sec,
                            .backward_sec = layer.backward_sec,
                            .grad_bytes = layer.param_bytes,
                            .weight_bytes = layer.param_bytes / 4 * element,
                            .output_bytes = layer.activation_bytes.value_or(0)});
  }
  return model;
}

}  // namespace dtsim::sim
