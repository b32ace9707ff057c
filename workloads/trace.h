// Workload trace: what one device does in one training iteration, measured or modeled.
// The file format is specified in workloads/FORMAT.md; these are its in-memory value types.
#ifndef DTSIM_WORKLOADS_TRACE_H_
#define DTSIM_WORKLOADS_TRACE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dtsim::workloads {

// The trace format version this code writes. It reads versions 1 to 3 (version 2 = version 1
// plus the optional measurement record and per-layer spreads; version 3 = version 2 plus the
// optional per-layer activation_bytes).
inline constexpr int kFormatVersion = 3;
// The most bytes dtsim models in one message or one trace's gradients: 1 PiB (2^50). It keeps the
// byte arithmetic of the collectives (2(p-1) chunks of S/p, sums over steps) inside 64 bits.
inline constexpr std::uint64_t kMaxBytes = std::uint64_t{1} << 50;
inline constexpr int kOldestFormatVersion = 1;

// One layer (a module, or a parameter-free op such as a residual add) of the model.
struct Layer {
  std::string name;                     // e.g. "layer3.1.conv2"; unique within a trace
  double forward_sec = 0;               // time of this layer's forward pass on one device
  double backward_sec = 0;              // time of its backward pass (input and weight gradients)
  std::uint64_t param_bytes = 0;        // gradient bytes this layer contributes to the all-reduce
  std::optional<double> forward_flops;  // optional: FLOPs of the forward pass (FMA = 2 FLOPs)
  // Optional (v2), for measured traces: interquartile range (p75 - p25) of the per-iteration
  // times the medians forward_sec and backward_sec were taken from.
  std::optional<double> forward_iqr_sec;
  std::optional<double> backward_iqr_sec;
  // Optional (v3): bytes of the activation this layer outputs, for batch_per_device samples in
  // the trace's precision: what a pipeline stage ending after this layer sends the next (its
  // gradient comes back with the same size). Absent: unknown. At most kMaxBytes.
  std::optional<std::uint64_t> activation_bytes;

  bool operator==(const Layer&) const = default;
};

// How a measured trace was measured (v2, optional).
struct Measurement {
  std::string tool;           // e.g. "dtsim_profile 0.1"
  std::string framework;      // e.g. "torch 2.11.0+cu130"
  std::string clock;          // "cuda_events", "thread_cpu" or "wall"
  int warmup_iterations = 0;  // iterations run and discarded first
  int timed_iterations = 0;   // iterations whose per-layer times were kept (medians reported)
  std::string date;           // YYYY-MM-DD
  std::string host;           // the device's and machine's names

  bool operator==(const Measurement&) const = default;
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
  std::optional<Measurement> measurement;  // measured traces only

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
