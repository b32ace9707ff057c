#include "workloads/generator.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace dtsim::workloads {

namespace {

constexpr double kTera = 1e12;
constexpr double kGradientBytesPerParam = 4;  // fp32 gradients

const DeviceSpec& find_device(const std::string& name) {
  for (const DeviceSpec& d : device_catalog()) {
    if (d.name == name) {
      return d;
    }
  }
  std::string names;
  for (const DeviceSpec& d : device_catalog()) {
    names += (names.empty() ? "" : ", ") + d.name;
  }
  throw GeneratorError("device", name + ": unknown device (expected one of " + names + ")");
}

// Peak FLOP/s and bytes per activation element of `precision` on `device`.
std::pair<double, double> peak_and_element_bytes(const DeviceSpec& d, const std::string& p) {
  double peak = 0;
  double bytes = 4;
  if (p == "fp32") {
    peak = d.fp32_flops_per_sec;
  } else if (p == "tf32") {
    peak = d.tf32_flops_per_sec;
  } else if (p == "fp16") {
    peak = d.fp16_flops_per_sec;
    bytes = 2;
  } else if (p == "bf16") {
    peak = d.bf16_flops_per_sec;
    bytes = 2;
  } else {
    throw GeneratorError("precision", p + ": expected fp32, tf32, fp16 or bf16");
  }
  if (peak <= 0) {
    throw GeneratorError("precision", p + ": " + d.full_name + " does not support it");
  }
  return {peak, bytes};
}

std::string format(const char* fmt, double value) {
  char text[64];
  std::snprintf(text, sizeof text, fmt, value);
  return text;
}

}  // namespace

const std::vector<DeviceSpec>& device_catalog() {
  static const std::vector<DeviceSpec> kDevices{
      {.name = "v100",
       .full_name = "NVIDIA V100-SXM2",
       .fp32_flops_per_sec = 15.7 * kTera,
       .fp16_flops_per_sec = 125 * kTera,
       .memory_bytes_per_sec = 900e9,
       .datasheet = "NVIDIA Tesla V100 datasheet (SXM2): 15.7 TFLOPS fp32, 125 TFLOPS tensor, "
                    "900 GB/s HBM2"},
      {.name = "a100",
       .full_name = "NVIDIA A100-SXM4-80GB",
       .fp32_flops_per_sec = 19.5 * kTera,
       .tf32_flops_per_sec = 156 * kTera,
       .fp16_flops_per_sec = 312 * kTera,
       .bf16_flops_per_sec = 312 * kTera,
       .memory_bytes_per_sec = 2039e9,
       .datasheet = "NVIDIA A100 datasheet (SXM4 80GB): 19.5 TFLOPS fp32, 156 TF32, 312 "
                    "fp16/bf16 (dense), 2039 GB/s HBM2e"},
      {.name = "h100",
       .full_name = "NVIDIA H100-SXM5-80GB",
       .fp32_flops_per_sec = 67 * kTera,
       .tf32_flops_per_sec = 494.7 * kTera,
       .fp16_flops_per_sec = 989.4 * kTera,
       .bf16_flops_per_sec = 989.4 * kTera,
       .memory_bytes_per_sec = 3350e9,
       .datasheet = "NVIDIA H100 datasheet (SXM): 67 TFLOPS fp32, 494.7 TF32, 989.4 fp16/bf16 "
                    "(dense), 3.35 TB/s HBM3"},
      {.name = "h200",
       .full_name = "NVIDIA H200-SXM-141GB",
       .fp32_flops_per_sec = 67 * kTera,
       .tf32_flops_per_sec = 494.7 * kTera,
       .fp16_flops_per_sec = 989.4 * kTera,
       .bf16_flops_per_sec = 989.4 * kTera,
       .memory_bytes_per_sec = 4800e9,
       .datasheet = "NVIDIA H200 datasheet (SXM): 67 TFLOPS fp32, 494.7 TF32, 989.4 fp16/bf16 "
                    "(dense), 4.8 TB/s HBM3e"},
  };
  return kDevices;
}

Workload generate_workload(const GeneratorConfig& config) {
  const DeviceSpec& device = find_device(config.device);
  const auto [peak, element_bytes] = peak_and_element_bytes(device, config.precision);
  const std::vector<LayerCost> costs = model_layers(config.shape);
  const bool cnn = config.shape.model != "bert_large" && config.shape.model != "gpt2";
  const std::string optimizer =
      config.optimizer.empty() ? (cnn ? "sgd" : "adamw") : config.optimizer;
  if (optimizer != "sgd" && optimizer != "adamw" && optimizer != "lamb") {
    throw GeneratorError("optimizer", optimizer + ": expected sgd, adamw or lamb");
  }
  if (config.calibrate_iteration_sec &&
      !(*config.calibrate_iteration_sec > 0 && std::isfinite(*config.calibrate_iteration_sec))) {
    throw GeneratorError("calibrate_iteration_sec", format("%g", *config.calibrate_iteration_sec) +
                                                        ": expected a finite time > 0 s");
  }

  const double flops_per_sec = peak * kComputeEfficiency;
  const double bytes_per_sec = device.memory_bytes_per_sec * kMemoryEfficiency;
  Workload w{.model = config.shape.model,
             .device = device.full_name,
             .precision = config.precision,
             .batch_per_device = config.shape.batch};
  std::uint64_t params = 0;
  for (const LayerCost& c : costs) {
    // Weights are read once per pass (fp32 master copy, cast on the fly for fp16/bf16).
    const double fwd_bytes = c.activation_elements * element_bytes + 4.0 * c.params;
    const double bwd_bytes = 2 * c.activation_elements * element_bytes + 8.0 * c.params;
    w.layers.push_back(
        {.name = c.name,
         .forward_sec = std::max(c.forward_flops / flops_per_sec, fwd_bytes / bytes_per_sec),
         .backward_sec = std::max(c.backward_factor * c.forward_flops / flops_per_sec,
                                  bwd_bytes / bytes_per_sec),
         .param_bytes = static_cast<std::uint64_t>(kGradientBytesPerParam * c.params),
         .forward_flops = c.forward_flops});
    params += c.params;
  }
  const double bytes_per_param = optimizer == "sgd"     ? kSgdMomentumBytesPerParam
                                 : optimizer == "adamw" ? kAdamWBytesPerParam
                                                        : kLambBytesPerParam;
  w.optimizer_sec = bytes_per_param * static_cast<double>(params) / bytes_per_sec;

  double scale = 1;
  if (config.calibrate_iteration_sec) {
    const double compute = w.forward_sec() + w.backward_sec();
    if (!(*config.calibrate_iteration_sec > w.optimizer_sec)) {
      throw GeneratorError("calibrate_iteration_sec",
                           format("%g", *config.calibrate_iteration_sec) +
                               ": shorter than the modelled optimizer step (" +
                               format("%g", w.optimizer_sec) + " s)");
    }
    scale = (*config.calibrate_iteration_sec - w.optimizer_sec) / compute;
    for (Layer& l : w.layers) {
      l.forward_sec *= scale;
      l.backward_sec *= scale;
    }
  }
  w.source =
      "dtsim workload generate (analytical, not measured): per-layer FLOPs and memory "
      "traffic from the " +
      w.model + " architecture (workloads/model_zoo.cpp), " + std::to_string(w.batch_per_device) +
      " samples; roofline on " + device.datasheet + " at " + format("%.2f", kComputeEfficiency) +
      " of peak " + config.precision + " compute and " + format("%.2f", kMemoryEfficiency) +
      " of memory bandwidth; backward = 2x forward FLOPs (1x for the first layer and "
      "weightless ops) and 2x activation traffic; optimizer " +
      optimizer + " = " + format("%g", bytes_per_param) + " bytes per parameter at memory speed" +
      (config.calibrate_iteration_sec
           ? "; forward and backward scaled by " + format("%.6g", scale) +
                 " so the iteration takes the given " +
                 format("%.6g", *config.calibrate_iteration_sec) + " s"
           : std::string()) +
      " (see workloads/GENERATOR.md).";
  if (!config.note.empty()) {
    w.source += " " + config.note;
  }
  return w;
}

}  // namespace dtsim::workloads
