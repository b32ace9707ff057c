// The analytical workload generator: a model from the zoo (model_zoo.h) on a datasheet device,
// timed with a roofline, optionally calibrated to a measured single-device iteration time.
// The method and every constant are documented in workloads/GENERATOR.md.
#ifndef DTSIM_WORKLOADS_GENERATOR_H_
#define DTSIM_WORKLOADS_GENERATOR_H_

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "workloads/compute_model.h"
#include "workloads/generator_error.h"
#include "workloads/model_zoo.h"
#include "workloads/roofline.h"
#include "workloads/trace.h"

namespace dtsim::workloads {

// Optimizer step cost: bytes moved per parameter (it is memory-bound).
inline constexpr double kSgdMomentumBytesPerParam = 20;  // read p, g, m; write p, m (fp32)
inline constexpr double kAdamWBytesPerParam = 28;        // read p, g, m, v; write p, m, v (fp32)
// LAMB in two stages: read g, p, m, v, write m, v, update; read update, p, write p.
inline constexpr double kLambBytesPerParam = 40;

struct GeneratorConfig {
  ModelShape shape;
  std::string device = "v100";
  std::string precision = "fp32";  // fp32, tf32, fp16, bf16 (fp16/bf16: mixed precision)
  std::string optimizer;           // "sgd", "adamw" or "lamb"; empty: sgd for CNNs, else adamw
  std::optional<double> calibrate_iteration_sec;         // scale to this single-device iteration
  ComputeModel compute_model = ComputeModel::kRoofline;  // how layers are timed
  GemmEfficiency efficiency;                             // op-class only: its GEMM efficiencies
  bool fuse_norm_relu = false;  // op-class only: ReLU and add + ReLU inside the batch norm
  ConvLayout conv_layout = ConvLayout::kNhwc;  // op-class only: NCHW pays cuDNN's transposes
  std::string note;  // appended to the trace's source, e.g. where the calibration time is from
};

// One layer's forward and backward time on `roofline`, as generate_workload times it.
[[nodiscard]] LayerSeconds layer_seconds(const LayerCost& layer, const Roofline& roofline);

// The trace of `config` (format version 3 without a measurement record: it is modelled).
// With ComputeModel::kOpClass, layers are timed by op_class_seconds (compute_model.h); else
// per layer, on the device's roofline (roofline.h): forward = max(flops / (peak *
// kComputeEfficiency), bytes / (memory bandwidth * kMemoryEfficiency)),
// backward the same with backward_factor times the FLOPs and twice the activation traffic;
// optimizer = bytes per parameter * parameters / (bandwidth * kMemoryEfficiency). With
// calibrate_iteration_sec, forward and backward times are scaled by one factor so that forward
// + backward + optimizer equals it. Gradients are all-reduced in fp32 (mixed precision keeps
// fp32 master weights): param_bytes = 4 * parameters. activation_bytes = the layer's
// LayerCost::output_elements * the precision's element bytes (4 fp32/tf32, 2 fp16/bf16).
[[nodiscard]] Workload generate_workload(const GeneratorConfig& config);

// How `w`'s compute times were obtained: "measured" (a profiler's trace), "calibrated"
// (generated, then scaled to a given iteration time), "op-class" or "roofline" (generated),
// or "unknown" (a trace from elsewhere). Reads the source text generate_workload writes.
[[nodiscard]] std::string compute_timing(const Workload& w);

}  // namespace dtsim::workloads

#endif  // DTSIM_WORKLOADS_GENERATOR_H_
