// Workload trace v1: what one device does in one training iteration, measured or modeled.
// The file format is specified in workloads/FORMAT.md; these are its in-memory value types.
#ifndef DTSIM_WORKLOADS_TRACE_H_
#define DTSIM_WORKLOADS_TRACE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dtsim::workloads {

// The trace format version this code reads and writes.
inline constexpr int kFormatVersion = 1;

// One layer (a module, or a parameter-free op such as a residual add) of the model.
struct Layer {
  std::string name;                     // e.g. "layer3.1.conv2"; unique within a trace
  double forward_sec = 0;               // time of this layer's forward pass on one device
  double backward_sec = 0;              // time of its backward pass (input and weight gradients)
  std::uint64_t param_bytes = 0;        // gradient bytes this layer contributes to the all-reduce
  std::optional<double> forward_flops;  // optional: FLOPs of the forward pass (FMA = 2 FLOPs)

  bool operator==(const Layer&) const = default;
};

// One device's training iteration: forward over `layers` in order, backward in reverse order,
// then the optimizer step.
struct Workload {
  int format_version = kFormatVersion;
  std::string model;          // e.g. "resnet50"
  std::string device;         // the device the costs describe, e.g. "V100-SXM2"
  std::string precision;      // e.g. "fp32", "fp16", "bf16", "tf32"
  int batch_per_device = 0;   // samples per device per iteration
  std::string source;         // where the numbers came from (measurement, model, calibration)
  double optimizer_sec = 0;   // optimizer step after all gradients are reduced
  std::vector<Layer> layers;  // forward order

  bool operator==(const Workload&) const = default;

  // Sums over all layers.
  [[nodiscard]] double forward_sec() const;
  [[nodiscard]] double backward_sec() const;
  [[nodiscard]] std::uint64_t param_bytes() const;
  // forward + backward + optimizer: one device's iteration without communication.
  [[nodiscard]] double compute_sec() const {
    return forward_sec() + backward_sec() + optimizer_sec;
  }
};

}  // namespace dtsim::workloads

#endif  // DTSIM_WORKLOADS_TRACE_H_
