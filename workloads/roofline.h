// The roofline that the analytical generators time work with: a datasheet GPU at one precision,
// derated by two global efficiency constants. The generator (generator.h) and the transformer
// description (transformer.h) share it; the constants are justified in workloads/GENERATOR.md.
#ifndef DTSIM_WORKLOADS_ROOFLINE_H_
#define DTSIM_WORKLOADS_ROOFLINE_H_

#include <string>
#include <utility>
#include <vector>

namespace dtsim::workloads {

// Datasheet figures of one GPU (dense, no sparsity), in FLOP/s and bytes/s.
struct DeviceSpec {
  std::string name;       // "v100", ...
  std::string full_name;  // "NVIDIA V100-SXM2-32GB"
  double fp32_flops_per_sec = 0;
  double tf32_flops_per_sec = 0;  // 0: not supported
  double fp16_flops_per_sec = 0;  // tensor cores
  double bf16_flops_per_sec = 0;  // 0: not supported
  double fp8_flops_per_sec = 0;   // tensor cores, E4M3/E5M2; 0: not supported (before Hopper/Ada)
  double memory_bytes_per_sec = 0;
  // Device memory: the datasheet's "N GB" of HBM taken as N GiB (N * 2^30 bytes), because HBM
  // stacks are built in binary sizes (an 80 GB H100 is five 16 GiB stacks) and the drivers
  // report about that much (nvidia-smi: 81559 MiB on an H100 SXM5 80GB). sim/strategies/
  // MEMORY.md says why and for which card; the memory model's OOM verdict compares with it.
  double memory_capacity_bytes = 0;
  // The board power the datasheet allows (its maximum TDP, the default power limit) and the
  // limit the GPU runs under: 0 for the TDP, else what `nvidia-smi -pl` set ("h100@500W",
  // find_device). Under a lower limit the clock drops and every math unit with it (clock_scale).
  double tdp_watts = 0;
  double power_limit_watts = 0;
  // Streaming multiprocessors: how many GEMM tiles run at once (compute_model.h). From NVIDIA's
  // architecture whitepapers: V100 80, A100 108, H100 SXM5 132; H200 is the same GH100 chip;
  // B200 148 (two dies of 74); the PCIe and Ada/Ampere cards' from their datasheets (T4 40,
  // A10 72, L4 58, L40S 142, H100 PCIe 114).
  int sm_count = 0;
  // CUDA compute capability times ten (NVIDIA's CUDA GPUs list): V100 70, T4 75, A100 80, A10 86,
  // L4 and L40S 89, H100 and H200 90, B200 100. Which kernels a GPU runs, and how well, depends
  // on it (the attention kernels of workloads/TRANSFORMER.md).
  int compute_capability = 0;
  // The best share of the dense bf16 and fp8 peaks that a matmul reached on this GPU: the
  // maximum achievable matmul FLOPS (MAMF) that Bekman's ML Engineering book measured with
  // PyTorch 2.5-2.7 (its "MAMF comparison table"); 0 where no one published it. How the GEMMs'
  // efficiency follows it: tensor_core_scale.
  double matmul_bf16_share = 0;
  double matmul_fp8_share = 0;
  std::string datasheet;  // where the figures come from
};

// "v100", "v100-pcie", "t4", "a100", "a100-40gb", "a100-pcie", "a10", "l40s", "l4",
// "h100-pcie", "h100", "h200", "b200".
[[nodiscard]] const std::vector<DeviceSpec>& device_catalog();

// The catalogue's names in order, joined by `separator`: "v100, a100, ...".
[[nodiscard]] std::string device_names(const std::string& separator);

// Fractions of the datasheet peaks any kernel achieves, applied to every layer and model (see
// GENERATOR.md for how they were chosen); the transformer's attention core has its kernel's own
// share (attention_efficiency, TRANSFORMER.md). On tensor cores kComputeEfficiency is the share
// measured on an H200 (COMPUTE.md) and other GPUs scale it (tensor_core_scale).
inline constexpr double kComputeEfficiency = 0.5;
inline constexpr double kMemoryEfficiency = 0.9;

// The reference GPU's matmul shares (the H200, on which the tensor-core efficiency was measured):
// bf16 as the H100's, "H200 is the same" in the MAMF table; fp8 measured on the H200.
inline constexpr double kReferenceMatmulBf16Share = 0.803;
inline constexpr double kReferenceMatmulFp8Share = 0.734;

// What a GEMM's tensor-core efficiency on `device` is, as a multiple of the one measured on the
// H200: the device's MAMF share (fp8 or 16-bit, TF32 taken as 16-bit) over the H200's bf16 one.
// A GPU nobody measured takes the H200's shares: 1 in 16 bits, 0.734 / 0.803 in fp8. CUDA
// cores are not scaled (no measurement). A100 SXM 1.082, B200 0.966, H100 fp8 0.883.
[[nodiscard]] double tensor_core_scale(const DeviceSpec& device, bool fp8);

// The share of its clock at the TDP that `device` keeps under its power limit, which every
// kernel's FLOP rate follows (memory bandwidth does not: the HBM has its own clock). A kernel
// that keeps the math units busy draws the TDP (the datasheet's efficiencies were measured so);
// its dynamic power goes as f V^2 and the voltage with the clock, so power as f^3 and the
// clock as the cube root of the power: (limit / TDP)^(1/3), 1 without a limit. 500 W on a
// 700 W H100: 0.894. A first-order rule (workloads/COMPUTE.md, "Power limit"): it leaves out
// static power, so it understates the slowdown the lower the limit.
[[nodiscard]] double clock_scale(const DeviceSpec& device);
// The catalogue entry called `name`, or "NAME@WATTSW" (e.g. "h100@500W"): that entry under a
// power limit of WATTS, from half its TDP to its TDP (below half, the static power clock_scale
// leaves out is too large a share for it to hold). Throws GeneratorError("device", ...) naming
// `name` and listing the known names, or saying what is wrong with the limit. The reference
// lives as long as the program (the catalogue, or a cache of the limited entries asked for).
[[nodiscard]] const DeviceSpec& find_device(const std::string& name);
// A power-limited device's full name ("NVIDIA H100-SXM5-80GB at a 500 W power limit", as a
// generated trace records it) split into the catalogue's text and find_device's suffix:
// {"NVIDIA H100-SXM5-80GB", "@500W"}; {text, ""} for any other text.
[[nodiscard]] std::pair<std::string, std::string> split_power_limit(const std::string& text);

// One device at one precision, derated by the efficiency constants.
struct Roofline {
  double peak_flops_per_sec = 0;  // the precision's dense datasheet peak (MFU's denominator)
  // peak_flops_per_sec * kComputeEfficiency, times tensor_core_scale on tensor cores, times
  // clock_scale
  double flops_per_sec = 0;
  double bytes_per_sec = 0;  // memory bandwidth * kMemoryEfficiency
  double element_bytes = 0;  // bytes of one activation element: 4 (fp32, tf32) or 2 (fp16, bf16)
  // fp8 (float8 training, workloads/TRANSFORMER.md): the linear layers' GEMMs run on fp8 operands
  // at linear_flops_per_sec (the fp8 peak * kComputeEfficiency * tensor_core_scale(fp8));
  // everything else in bf16.
  // Otherwise linear_flops_per_sec = flops_per_sec.
  bool fp8_linears = false;
  double linear_flops_per_sec = 0;
  // With fp8_linears: bytes moved per weight element to cast it in each forward, which the
  // transformer description sets from its recipe (0: once per step, not counted per micro-batch).
  double fp8_weight_cast_bytes = 0;
  // The attention core's rate (workloads/TRANSFORMER.md, "Attention kernels"): flops_per_sec
  // unless the transformer description sets its kernel's.
  double attention_flops_per_sec = 0;

  // The time of a kernel that executes `flops` and moves `bytes` to and from memory:
  // max(flops / flops_per_sec, bytes / bytes_per_sec).
  [[nodiscard]] double seconds(double flops, double bytes) const;
};

// `device` at `precision` ("fp32", "tf32", "fp16", "bf16"; fp16/bf16 are mixed precision; "fp8"
// is bf16 with fp8 linear layers, which only the transformer description models). Throws
// GeneratorError("precision", ...) for another name or one the device does not support.
[[nodiscard]] Roofline make_roofline(const DeviceSpec& device, const std::string& precision);

}  // namespace dtsim::workloads

#endif  // DTSIM_WORKLOADS_ROOFLINE_H_
