#include "workloads/compute_model.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "workloads/generator_error.h"

namespace dtsim::workloads {

namespace {

// PyTorch's max pooling also writes (forward) and reads (backward) one int64 index per output.
constexpr double kPoolIndexBytes = 8;

// 16-bit activations under mixed precision, 4 bytes otherwise (TF32 stores fp32).
double activation_element_bytes(const std::string& precision) {
  return (precision == "fp16" || precision == "bf16") ? 2 : 4;
}

double round_up(double value, int multiple) {
  return std::ceil(value / multiple) * multiple;
}

double memory_seconds(double bytes, const DeviceSpec& device) {
  return bytes / (device.memory_bytes_per_sec * kMemoryEfficiency);
}

// A matrix multiply's operands and result, read and written once each.
double dense_bytes(const Gemm& g, double element_bytes) {
  return (g.m * g.k + g.k * g.n + g.m * g.n) * g.count * element_bytes;
}

Gemm input_gradient(const Gemm& g) {
  return {.m = g.m, .n = g.k, .k = g.n, .count = g.count};
}
Gemm weight_gradient(const Gemm& g) {
  return {.m = g.k, .n = g.n, .k = g.m, .count = g.count};
}

// A GEMM timed by its FLOPs (times `flop_fraction` of them executed) and quantization, floored
// by `bytes` at memory speed.
double timed(const Gemm& g, const MathRate& rate, const DeviceSpec& device, double bytes,
             double flop_fraction = 1) {
  const double efficiency = rate.efficiency;
  const double flops = 2 * g.m * g.n * g.k * g.count * flop_fraction;
  const double compute =
      flops / (rate.peak_flops_per_sec * efficiency * gemm_quantization(g, device.sm_count));
  return std::max(compute, memory_seconds(bytes, device));
}

// What one call of a convolution spends on layout: cuDNN's tensor-core kernels compute in NHWC,
// so with NCHW tensors each call transposes its input in and its output back, each read and
// written once (COMPUTE.md, "Layout"). CUDA-core kernels read NCHW as it is.
double nchw_transpose_seconds(const LayerCost& c, const MathRate& rate, ConvLayout layout,
                              const DeviceSpec& device, double element_bytes) {
  if (layout != ConvLayout::kNchw || rate.unit != MathUnit::kTensorCore) {
    return 0;
  }
  return memory_seconds(2 * c.activation_elements * element_bytes, device);
}

// A convolution as an implicit GEMM (im2col without materializing it): M = output positions,
// N = output channels, K = input channels x window. Its bytes are the tensors', not im2col's.
LayerSeconds convolution(const LayerCost& c, const DeviceSpec& device, const std::string& precision,
                         const GemmEfficiency& e, double element_bytes, ConvLayout layout) {
  const CnnGeometry& g = c.cnn;
  const double fwd_bytes = c.activation_elements * element_bytes + element_bytes * c.params;
  const double grad_bytes = c.activation_elements * element_bytes + 4.0 * c.params;
  if (g.groups > 1) {
    // Grouped convolutions run as direct kernels on CUDA cores (no implicit-GEMM tiles).
    const double peak = device.fp32_flops_per_sec * e.cuda_core * clock_scale(device);
    return {.forward_sec = std::max(c.forward_flops / peak, memory_seconds(fwd_bytes, device)),
            .backward_sec = std::max(c.backward_factor * c.forward_flops / peak,
                                     memory_seconds(fwd_bytes + grad_bytes, device))};
  }
  const MathRate rate = math_rate(device, precision, /*convolution=*/true, e);
  double window = 1;
  double positions = g.batch;
  for (std::size_t d = 0; d < static_cast<std::size_t>(g.dims); ++d) {
    window *= g.kernel_along(d);
    positions *= g.out_extent[d];
  }
  const Gemm fwd{.m = positions,
                 .n = round_up(g.out_channels, rate.pad_elements),
                 .k = round_up(g.in_channels, rate.pad_elements) * window};
  const bool winograd = rate.unit == MathUnit::kCudaCore && g.kernel == 3 && g.kernel_width == 0 &&
                        g.stride == 1 && g.dims == 2;
  const double fraction = winograd ? 1 / kWinogradReduction : 1;
  const double transpose_sec = nchw_transpose_seconds(c, rate, layout, device, element_bytes);
  LayerSeconds s{.forward_sec = timed(fwd, rate, device, fwd_bytes, fraction) + transpose_sec};
  s.backward_sec = timed(weight_gradient(fwd), rate, device, grad_bytes, fraction) + transpose_sec;
  if (c.backward_factor >= 2) {
    s.backward_sec += timed(input_gradient(fwd), rate, device, fwd_bytes, fraction) + transpose_sec;
  }
  return s;
}

// Matrix multiplies (a CNN's fully connected layer or a transformer layer's GEMMs) plus the
// layer's elementwise traffic.
LayerSeconds matmuls(const LayerCost& c, const std::vector<Gemm>& gemms, double elementwise,
                     const DeviceSpec& device, const std::string& precision,
                     const GemmEfficiency& e, double element_bytes) {
  const MathRate rate = math_rate(device, precision, /*convolution=*/false, e);
  LayerSeconds s{.forward_sec = memory_seconds(elementwise * element_bytes, device),
                 .backward_sec = memory_seconds(1.5 * elementwise * element_bytes, device)};
  for (Gemm g : gemms) {
    g.n = round_up(g.n, rate.pad_elements);
    g.k = round_up(g.k, rate.pad_elements);
    s.forward_sec += timed(g, rate, device, dense_bytes(g, element_bytes));
    const Gemm dw = weight_gradient(g);
    s.backward_sec += timed(dw, rate, device, dense_bytes(dw, element_bytes));
    if (c.backward_factor >= 2) {
      const Gemm dx = input_gradient(g);
      s.backward_sec += timed(dx, rate, device, dense_bytes(dx, element_bytes));
    }
  }
  if (element_bytes < 4 && !gemms.empty()) {
    // Autocast casts the fp32 weights to 16 bits once per forward: read 4, write 2 bytes each.
    s.forward_sec += memory_seconds(6.0 * c.params, device);
  }
  if (gemms.empty()) {
    s.backward_sec += memory_seconds(4.0 * c.params, device);  // the weight gradient written
  }
  return s;
}

// Normalization, activations, residual adds and pooling: bytes at memory speed.
LayerSeconds memory_bound(const LayerCost& c, const DeviceSpec& device, double element_bytes) {
  const double out = c.output_elements;
  const double in = c.activation_elements - out;
  double fwd = c.activation_elements * element_bytes;
  double bwd = c.activation_elements * element_bytes;
  switch (c.cnn.op) {
    case CnnOp::kNorm:  // statistics, then normalize: x read twice; backward two passes
      fwd = 3 * out * element_bytes;
      bwd = 5 * out * element_bytes;
      break;
    case CnnOp::kElementwise:  // backward: the upstream gradient and one tensor in, one out
      bwd = 3 * out * element_bytes;
      break;
    case CnnOp::kPool:  // backward zeroes the input gradient, then scatters into it
      fwd += kPoolIndexBytes * out;
      bwd = (2 * in + out) * element_bytes + kPoolIndexBytes * out;
      break;
    default:
      break;
  }
  return {.forward_sec = memory_seconds(fwd, device), .backward_sec = memory_seconds(bwd, device)};
}

}  // namespace

std::string_view compute_model_name(ComputeModel model) {
  return model == ComputeModel::kRoofline ? "roofline" : "op-class";
}

std::optional<ComputeModel> parse_compute_model(std::string_view name) {
  if (name == "roofline") {
    return ComputeModel::kRoofline;
  }
  if (name == "op-class") {
    return ComputeModel::kOpClass;
  }
  return std::nullopt;
}

std::string_view conv_layout_name(ConvLayout layout) {
  return layout == ConvLayout::kNhwc ? "nhwc" : "nchw";
}

std::optional<ConvLayout> parse_conv_layout(std::string_view name) {
  if (name == "nhwc") {
    return ConvLayout::kNhwc;
  }
  if (name == "nchw") {
    return ConvLayout::kNchw;
  }
  return std::nullopt;
}

MathRate math_rate(const DeviceSpec& device, const std::string& precision, bool convolution,
                   const GemmEfficiency& e) {
  const double clock = clock_scale(device);
  const double tensor_core = e.tensor_core * tensor_core_scale(device, false) * clock;
  MathRate r;
  if (precision == "fp16" || precision == "bf16") {
    r = {.unit = MathUnit::kTensorCore,
         .peak_flops_per_sec =
             precision == "fp16" ? device.fp16_flops_per_sec : device.bf16_flops_per_sec,
         .efficiency = tensor_core,
         .pad_elements = 8};
  } else if (precision == "tf32" ||
             (precision == "fp32" && convolution && device.tf32_flops_per_sec > 0)) {
    r = {.unit = MathUnit::kTensorCore,
         .peak_flops_per_sec = device.tf32_flops_per_sec,
         .efficiency = tensor_core,
         .pad_elements = 4};
  } else if (precision == "fp32") {
    r = {.unit = MathUnit::kCudaCore,
         .peak_flops_per_sec = device.fp32_flops_per_sec,
         .efficiency = e.cuda_core * clock};
  } else {
    throw GeneratorError("precision", precision + ": expected fp32, tf32, fp16 or bf16");
  }
  if (r.peak_flops_per_sec <= 0) {
    throw GeneratorError("precision", precision + ": " + device.full_name + " does not support it");
  }
  return r;
}

double gemm_quantization(const Gemm& g, int sm_count) {
  const double tiles_m = std::ceil(g.m / kGemmTileRows);
  const double tiles_n = std::ceil(g.n / kGemmTileCols);
  const double tile = g.m * g.n / (tiles_m * kGemmTileRows * tiles_n * kGemmTileCols);
  const double tiles = tiles_m * tiles_n * g.count;
  const double sms = sm_count;
  double splits = 1;
  if (tiles < sms) {
    splits = std::max(1.0, std::min(std::floor(sms / tiles), std::floor(g.k / kMinSplitK)));
  }
  const double units = tiles * splits;
  return tile * units / (std::ceil(units / sms) * sms);
}

double gemm_seconds(const Gemm& gemm, const MathRate& rate, const DeviceSpec& device,
                    double element_bytes) {
  return timed(gemm, rate, device, dense_bytes(gemm, element_bytes));
}

LayerSeconds op_class_seconds(const LayerCost& c, const DeviceSpec& device,
                              const std::string& precision, const GemmEfficiency& e,
                              ConvLayout layout) {
  const double element_bytes = activation_element_bytes(precision);
  (void)math_rate(device, precision, false, e);  // refuses a precision the device lacks
  switch (c.cnn.op) {
    case CnnOp::kConv:
      return convolution(c, device, precision, e, element_bytes, layout);
    case CnnOp::kLinear: {
      const CnnGeometry& g = c.cnn;
      double in = g.in_channels;
      for (int d = 0; d < g.dims; ++d) {
        in *= g.in_extent[static_cast<std::size_t>(d)];
      }
      const Gemm fc{.m = 1.0 * g.batch, .n = 1.0 * g.out_channels, .k = in};
      return matmuls(c, {fc}, g.batch * g.out_channels, device, precision, e, element_bytes);
    }
    case CnnOp::kNone:
      return matmuls(c, c.gemms, c.elementwise_elements, device, precision, e, element_bytes);
    default:
      return memory_bound(c, device, element_bytes);
  }
}

std::vector<LayerSeconds> op_class_model(const std::vector<LayerCost>& layers,
                                         const DeviceSpec& device, const std::string& precision,
                                         const GemmEfficiency& efficiency, bool fuse_norm_relu,
                                         ConvLayout layout) {
  const double element_bytes = activation_element_bytes(precision);
  std::vector<LayerSeconds> out;
  bool fused_before = false;  // the previous layer ran inside a norm's kernel, or was one
  for (const LayerCost& c : layers) {
    LayerSeconds s = op_class_seconds(c, device, precision, efficiency, layout);
    const bool elementwise = c.cnn.op == CnnOp::kElementwise;
    if (fuse_norm_relu && elementwise && fused_before) {
      const bool add = c.activation_elements > 2 * c.output_elements;  // two inputs
      const double other_branch = add ? c.output_elements * element_bytes : 0;
      s = {.forward_sec = memory_seconds(other_branch, device),
           .backward_sec = memory_seconds(other_branch, device)};
    }
    fused_before = c.cnn.op == CnnOp::kNorm || (fused_before && elementwise);
    out.push_back(s);
  }
  return out;
}

}  // namespace dtsim::workloads
