#include "workloads/trace.h"

namespace dtsim::workloads {

double Workload::forward_sec() const {
  double total = 0;
  for (const Layer& layer : layers) {
    total += layer.forward_sec;
  }
  return total;
}

double Workload::backward_sec() const {
  double total = 0;
  for (const Layer& layer : layers) {
    total += layer.backward_sec;
  }
  return total;
}

std::uint64_t Workload::param_bytes() const {
  std::uint64_t total = 0;
  for (const Layer& layer : layers) {
    total += layer.param_bytes;
  }
  return total;
}

}  // namespace dtsim::workloads
