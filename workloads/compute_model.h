// The op-class compute model: a layer's time on a GPU nobody profiled, from its kernels' shapes
// and the device's datasheet. Matrix multiplies and convolutions run on the math unit the
// framework picks for the precision (tensor cores or CUDA cores) at a fraction of its peak that
// falls with tile and wave quantization; normalization, activations, pooling and the other
// memory-bound operations move the bytes their kernels read and write. workloads/COMPUTE.md
// states every rule and where each constant comes from.
#ifndef DTSIM_WORKLOADS_COMPUTE_MODEL_H_
#define DTSIM_WORKLOADS_COMPUTE_MODEL_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "workloads/model_zoo.h"
#include "workloads/roofline.h"

namespace dtsim::workloads {

// How the generator times a layer: the roofline of roofline.h (one efficiency for every kernel)
// or the op-class model here.
enum class ComputeModel { kRoofline, kOpClass };
[[nodiscard]] std::string_view compute_model_name(ComputeModel model);
[[nodiscard]] std::optional<ComputeModel> parse_compute_model(std::string_view name);

// Fractions of a math unit's datasheet peak that a GEMM kernel with full tiles and full waves
// reaches, and the output tile one thread block computes (COMPUTE.md: how they were chosen).
inline constexpr double kTensorCoreEfficiency = 0.5;
inline constexpr double kCudaCoreEfficiency = 0.75;
inline constexpr double kGemmTileRows = 128;
inline constexpr double kGemmTileCols = 128;
// A GEMM with fewer tiles than SMs is split along k into pieces of at least this many.
inline constexpr double kMinSplitK = 256;
// 3x3 stride-1 convolutions on CUDA cores run as Winograd F(2x2, 3x3): 16 multiplies per 2x2
// output tile and input channel instead of 4 x 9 = 36, 2.25x fewer (Lavin and Gray, CVPR 2016;
// cuDNN's CUDNN_CONVOLUTION_*_ALGO_WINOGRAD*).
inline constexpr double kWinogradReduction = 2.25;

// How the framework lays out a convolution's activations. cuDNN's tensor-core convolutions
// compute in NHWC; given NCHW tensors (PyTorch's and MXNet's default), each call transposes its
// activation operands in and its result back (COMPUTE.md, "Layout").
enum class ConvLayout { kNhwc, kNchw };
[[nodiscard]] std::string_view conv_layout_name(ConvLayout layout);
[[nodiscard]] std::optional<ConvLayout> parse_conv_layout(std::string_view name);

// The two GEMM efficiencies, overridable for a study (`--tensor-core-efficiency`, ...). The
// tensor cores' is the H200's; math_rate scales it to the device (roofline.h, tensor_core_scale).
struct GemmEfficiency {
  double tensor_core = kTensorCoreEfficiency;
  double cuda_core = kCudaCoreEfficiency;
};

enum class MathUnit { kTensorCore, kCudaCore };

// The math unit a kernel runs on, its datasheet peak and the fraction of it a GEMM reaches
// (on tensor cores: GemmEfficiency::tensor_core times the device's tensor_core_scale; under a
// power limit, times its clock_scale).
struct MathRate {
  MathUnit unit = MathUnit::kCudaCore;
  double peak_flops_per_sec = 0;
  double efficiency = 0;
  // Tensor cores take operands in multiples of this many elements: 8 for fp16/bf16, 4 for TF32
  // (channels and GEMM dimensions are padded up to it); 1 on CUDA cores.
  int pad_elements = 1;
};

// What the framework runs at `precision` ("fp32", "tf32", "fp16", "bf16"): fp16/bf16 on tensor
// cores; tf32 on TF32 tensor cores; fp32 on CUDA cores, except convolutions on a GPU with TF32,
// which PyTorch runs as TF32 by default (torch.backends.cudnn.allow_tf32 = True, while
// torch.backends.cuda.matmul.allow_tf32 = False). Throws GeneratorError("precision") where the
// device lacks the precision.
[[nodiscard]] MathRate math_rate(const DeviceSpec& device, const std::string& precision,
                                 bool convolution, const GemmEfficiency& efficiency = {});

// The fraction of full tiles and full waves of `gemm` on `sm_count` SMs, in (0, 1]: output
// tiles of kGemmTileRows x kGemmTileCols (tile quantization), `count` GEMMs in one launch, and
// split along k while there are fewer tiles than SMs (wave quantization).
[[nodiscard]] double gemm_quantization(const Gemm& gemm, int sm_count);

// The time of `gemm` (dimensions already padded): max(its FLOPs at the unit's efficiency times
// its quantization, its operands' bytes at memory speed).
[[nodiscard]] double gemm_seconds(const Gemm& gemm, const MathRate& rate, const DeviceSpec& device,
                                  double element_bytes);

struct LayerSeconds {
  double forward_sec = 0;
  double backward_sec = 0;
};

// The layer on `device` at `precision` with the op-class model. Backward runs each GEMM's two
// gradient products (input and weight; only the weight's where backward_factor < 2). With
// ConvLayout::kNchw, a convolution on tensor cores also moves its input and output through a
// transpose (read and written) in each of its calls: forward, weight gradient, input gradient.
[[nodiscard]] LayerSeconds op_class_seconds(const LayerCost& layer, const DeviceSpec& device,
                                            const std::string& precision,
                                            const GemmEfficiency& efficiency = {},
                                            ConvLayout layout = ConvLayout::kNhwc);

// Every layer of a model in order. With `fuse_norm_relu` (NVIDIA's MXNet ResNet runner in
// float16: --fuse-bn-relu 1 --fuse-bn-add-relu 1), a ReLU right after a batch norm and a
// residual add + ReLU right after one run inside the norm's kernel: the ReLU moves no bytes of
// its own, the add only reads the other branch (forward) and writes its gradient (backward).
[[nodiscard]] std::vector<LayerSeconds> op_class_model(
    const std::vector<LayerCost>& layers, const DeviceSpec& device, const std::string& precision,
    const GemmEfficiency& efficiency, bool fuse_norm_relu, ConvLayout layout = ConvLayout::kNhwc);

}  // namespace dtsim::workloads

#endif  // DTSIM_WORKLOADS_COMPUTE_MODEL_H_
