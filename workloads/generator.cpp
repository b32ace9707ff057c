#include "workloads/generator.h"

#include <cmath>
#include <cstdio>

namespace dtsim::workloads {

namespace {

constexpr double kGradientBytesPerParam = 4;  // fp32 gradients

std::string format(const char* fmt, double value) {
  char text[64];
  std::snprintf(text, sizeof text, fmt, value);
  return text;
}

// Phrases of the source text that compute_timing reads back.
constexpr const char* kGeneratedSource = "dtsim workload generate (analytical, not measured)";
constexpr const char* kCalibratedSource = " so the iteration takes the given ";
constexpr const char* kOpClassSource = "op-class compute model";

std::string roofline_source(const DeviceSpec& device, const std::string& precision) {
  const Roofline r = make_roofline(device, precision);
  return "roofline on " + device.datasheet + " at " +
         format("%.3g", r.flops_per_sec / r.peak_flops_per_sec) + " of peak " + precision +
         " compute and " + format("%.2f", kMemoryEfficiency) +
         " of memory bandwidth; backward = 2x forward FLOPs (1x for the first layer and "
         "weightless ops) and 2x activation traffic";
}

std::string op_class_source(const DeviceSpec& device, const std::string& precision,
                            const GemmEfficiency& e, bool fuse, ConvLayout layout) {
  return std::string(kOpClassSource) + " (workloads/COMPUTE.md) on " + device.datasheet + ", " +
         std::to_string(device.sm_count) + " SMs, " + precision + ": GEMMs and convolutions at " +
         format("%.3g", e.tensor_core * tensor_core_scale(device, false) * clock_scale(device)) +
         " (tensor cores) or " + format("%.3g", e.cuda_core * clock_scale(device)) +
         " (CUDA cores) of peak times their tile and wave quantization, memory-bound kernels by "
         "their bytes at " +
         format("%.2f", kMemoryEfficiency) + " of memory bandwidth" +
         (fuse ? "; ReLU and add + ReLU fused into the batch norm before them" : "") +
         (layout == ConvLayout::kNchw
              ? "; NCHW activations, transposed around each tensor-core convolution call"
              : "");
}

// Throws unless both GEMM efficiencies are fractions, the tensor cores' also once scaled to
// `device` (the figure is the H200's: tensor_core_scale).
void check_efficiencies(const GemmEfficiency& e, const DeviceSpec& device) {
  for (const auto& [field, value] : {std::pair{"tensor_core_efficiency", e.tensor_core},
                                     std::pair{"cuda_core_efficiency", e.cuda_core}}) {
    if (!(value > 0 && value <= 1)) {
      throw GeneratorError(field, format("%g", value) + ": expected a fraction in (0, 1]");
    }
  }
  const double scale = tensor_core_scale(device, false);
  if (e.tensor_core * scale > 1) {
    throw GeneratorError(
        "tensor_core_efficiency",
        format("%g", e.tensor_core) + ": on " + device.full_name + " that is " +
            format("%.3g", e.tensor_core * scale) +
            " of its peak (the figure is the H200's, times this GPU's measured matmul share "
            "over the H200's, " +
            format("%.3g", scale) + "; workloads/COMPUTE.md): expected at most " +
            format("%.3g", 1 / scale));
  }
}

}  // namespace

LayerSeconds layer_seconds(const LayerCost& c, const Roofline& roofline) {
  // Weights are read once per pass (fp32 master copy, cast on the fly for fp16/bf16).
  const double element_bytes = roofline.element_bytes;
  const double fwd_bytes = c.activation_elements * element_bytes + 4.0 * c.params;
  const double bwd_bytes = 2 * c.activation_elements * element_bytes + 8.0 * c.params;
  return {.forward_sec = roofline.seconds(c.forward_flops, fwd_bytes),
          .backward_sec = roofline.seconds(c.backward_factor * c.forward_flops, bwd_bytes)};
}

namespace {

// Throws GeneratorError for an optimizer, efficiencies or a calibration the generator cannot use
// on `device`; returns the optimizer it models (the model's default where none is given).
std::string checked_optimizer(const GeneratorConfig& config, const DeviceSpec& device, bool cnn) {
  const std::string optimizer =
      config.optimizer.empty() ? (cnn ? "sgd" : "adamw") : config.optimizer;
  if (optimizer != "sgd" && optimizer != "adamw" && optimizer != "lamb") {
    throw GeneratorError("optimizer", optimizer + ": expected sgd, adamw or lamb");
  }
  check_efficiencies(config.efficiency, device);
  if (config.compute_model != ComputeModel::kOpClass &&
      (config.efficiency.tensor_core != kTensorCoreEfficiency ||
       config.efficiency.cuda_core != kCudaCoreEfficiency || config.fuse_norm_relu ||
       config.conv_layout != ConvLayout::kNhwc)) {
    throw GeneratorError("compute_model",
                         "roofline: the GEMM efficiencies, fusions and layouts are the op-class "
                         "model's "
                         "(give --compute-model op-class)");
  }
  if (config.calibrate_iteration_sec &&
      !(*config.calibrate_iteration_sec > 0 && std::isfinite(*config.calibrate_iteration_sec))) {
    throw GeneratorError("calibrate_iteration_sec", format("%g", *config.calibrate_iteration_sec) +
                                                        ": expected a finite time > 0 s");
  }
  return optimizer;
}

// Scales `w`'s forward and backward times so that an iteration, its optimizer step included,
// takes `iteration_sec`; returns the factor. Throws GeneratorError if the optimizer step alone
// takes longer.
double calibrate(Workload& w, double iteration_sec) {
  if (!(iteration_sec > w.optimizer_sec)) {
    throw GeneratorError("calibrate_iteration_sec",
                         format("%g", iteration_sec) +
                             ": shorter than the modelled optimizer step (" +
                             format("%g", w.optimizer_sec) + " s)");
  }
  const double scale = (iteration_sec - w.optimizer_sec) / (w.forward_sec() + w.backward_sec());
  for (Layer& l : w.layers) {
    l.forward_sec *= scale;
    l.backward_sec *= scale;
  }
  return scale;
}

}  // namespace

Workload generate_workload(const GeneratorConfig& config) {
  const DeviceSpec& device = find_device(config.device);
  if (config.precision == "fp8") {
    throw GeneratorError("precision",
                         "fp8: float8 linear layers are modelled by the transformer description "
                         "(simulate --model ... --parallel), not by the layer generator");
  }
  const Roofline roofline = make_roofline(device, config.precision);
  const std::vector<LayerCost> costs = model_layers(config.shape);
  const bool cnn = config.shape.model != "bert_large" && config.shape.model != "gpt2";
  const std::string optimizer = checked_optimizer(config, device, cnn);

  const double element_bytes = roofline.element_bytes;
  Workload w{.model = config.shape.model,
             .device = device.full_name,
             .precision = config.precision,
             .batch_per_device = config.shape.batch};
  std::uint64_t params = 0;
  const bool op_class = config.compute_model == ComputeModel::kOpClass;
  const std::vector<LayerSeconds> op_class_times =
      op_class ? op_class_model(costs, device, config.precision, config.efficiency,
                                config.fuse_norm_relu, config.conv_layout)
               : std::vector<LayerSeconds>();
  for (std::size_t i = 0; i < costs.size(); ++i) {
    const LayerCost& c = costs[i];
    const LayerSeconds sec = op_class ? op_class_times[i] : layer_seconds(c, roofline);
    w.layers.push_back(
        {.name = c.name,
         .forward_sec = sec.forward_sec,
         .backward_sec = sec.backward_sec,
         .param_bytes = static_cast<std::uint64_t>(kGradientBytesPerParam * c.params),
         .forward_flops = c.forward_flops,
         .activation_bytes = static_cast<std::uint64_t>(c.output_elements * element_bytes)});
    params += c.params;
  }
  const double bytes_per_param = optimizer == "sgd"     ? kSgdMomentumBytesPerParam
                                 : optimizer == "adamw" ? kAdamWBytesPerParam
                                                        : kLambBytesPerParam;
  w.optimizer_sec = bytes_per_param * static_cast<double>(params) / roofline.bytes_per_sec;
  const double scale =
      config.calibrate_iteration_sec ? calibrate(w, *config.calibrate_iteration_sec) : 1.0;
  w.source =
      std::string(kGeneratedSource) + ": per-layer FLOPs and memory traffic from the " + w.model +
      " architecture (workloads/model_zoo.cpp), " + std::to_string(w.batch_per_device) +
      " samples; " +
      (op_class ? op_class_source(device, config.precision, config.efficiency,
                                  config.fuse_norm_relu, config.conv_layout)
                : roofline_source(device, config.precision)) +
      "; optimizer " + optimizer + " = " + format("%g", bytes_per_param) +
      " bytes per parameter at memory speed; activation_bytes = each layer's output elements x " +
      format("%g", element_bytes) + " bytes" +
      (config.calibrate_iteration_sec
           ? "; forward and backward scaled by " + format("%.6g", scale) + kCalibratedSource +
                 format("%.6g", *config.calibrate_iteration_sec) + " s"
           : std::string()) +
      " (see workloads/GENERATOR.md).";
  if (!config.note.empty()) {
    w.source += " " + config.note;
  }
  return w;
}

std::string compute_timing(const Workload& w) {
  if (w.measurement) {
    return "measured";
  }
  if (!w.source.starts_with(kGeneratedSource)) {
    return "unknown";
  }
  if (w.source.find(kCalibratedSource) != std::string::npos) {
    return "calibrated";
  }
  return w.source.find(kOpClassSource) != std::string::npos ? "op-class" : "roofline";
}

}  // namespace dtsim::workloads
