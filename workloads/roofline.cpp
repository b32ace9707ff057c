#include "workloads/roofline.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <optional>
#include <string_view>

#include "workloads/generator_error.h"
#include "workloads/parsing/units.h"

namespace dtsim::workloads {

namespace {
constexpr double kTera = 1e12;
// A datasheet "GB" of HBM (roofline.h): V100 32 GB, A100 80 or 40 GB, H100 80 GB, H200 141 GB,
// B200 180 GB, as NVIDIA's datasheets of the SXM cards give them.
constexpr double kGiB = 1024.0 * 1024 * 1024;
// The matmul shares (roofline.h): the MAMF table of Bekman's ML Engineering book ("Maximum
// Achievable Matmul FLOPS comparison table", BF16 and FP8, the best of a brute-force search of
// shapes, mean of 100 iterations): A100 SXM 271.2 of 312 TFLOP/s (its card's memory size not
// given: taken for both SXM4 cards, whose clocks and SMs are the same), A100 PCIe 252.9, H100
// SXM 794.5 of 989 bf16 and 1402.6 of 1979 fp8, H200 1453.4 fp8 (bf16 "the same" as the H100),
// B200 1745 of 2250 and 3432.5 of 4500.
constexpr double kA100SxmMatmulShare = 0.869;
// TDPs (tdp_watts): the datasheets' maximum power, the default limit of the SXM cards and the
// PCIe cards' maximum: V100 SXM2 300 W, PCIe 250; T4 70; A100 SXM4 400 (80 and 40 GB), PCIe
// 80 GB 300; A10 150; L40S 350; L4 72; H100 SXM 700, PCIe 350; H200 SXM 700; B200 1000 (HGX).
}  // namespace

const std::vector<DeviceSpec>& device_catalog() {
  static const std::vector<DeviceSpec> kDevices{
      {.name = "v100",
       .full_name = "NVIDIA V100-SXM2",
       .fp32_flops_per_sec = 15.7 * kTera,
       .fp16_flops_per_sec = 125 * kTera,
       .memory_bytes_per_sec = 900e9,
       .memory_capacity_bytes = 32 * kGiB,  // the 32 GB SXM2 card (a 16 GB one has half)
       .tdp_watts = 300,
       .sm_count = 80,
       .compute_capability = 70,
       .datasheet = "NVIDIA Tesla V100 datasheet (SXM2): 15.7 TFLOPS fp32, 125 TFLOPS tensor, "
                    "900 GB/s HBM2"},
      {.name = "v100-pcie",
       .full_name = "NVIDIA V100-PCIe",
       .fp32_flops_per_sec = 14 * kTera,
       .fp16_flops_per_sec = 112 * kTera,
       .memory_bytes_per_sec = 900e9,
       .memory_capacity_bytes = 32 * kGiB,
       .tdp_watts = 250,
       .sm_count = 80,
       .compute_capability = 70,
       .datasheet = "NVIDIA Tesla V100 datasheet (PCIe): 14 TFLOPS fp32, 112 TFLOPS tensor, "
                    "900 GB/s HBM2"},
      {.name = "t4",
       .full_name = "NVIDIA T4",
       .fp32_flops_per_sec = 8.1 * kTera,
       .fp16_flops_per_sec = 65 * kTera,
       .memory_bytes_per_sec = 320e9,
       .memory_capacity_bytes = 16 * kGiB,
       .tdp_watts = 70,
       .sm_count = 40,
       .compute_capability = 75,
       .datasheet = "NVIDIA T4 datasheet: 8.1 TFLOPS fp32, 65 TFLOPS fp16 tensor (mixed), "
                    "320 GB/s GDDR6"},
      {.name = "a100",
       .full_name = "NVIDIA A100-SXM4-80GB",
       .fp32_flops_per_sec = 19.5 * kTera,
       .tf32_flops_per_sec = 156 * kTera,
       .fp16_flops_per_sec = 312 * kTera,
       .bf16_flops_per_sec = 312 * kTera,
       .memory_bytes_per_sec = 2039e9,
       .memory_capacity_bytes = 80 * kGiB,
       .tdp_watts = 400,
       .sm_count = 108,
       .compute_capability = 80,
       .matmul_bf16_share = kA100SxmMatmulShare,
       .datasheet = "NVIDIA A100 datasheet (SXM4 80GB): 19.5 TFLOPS fp32, 156 TF32, 312 "
                    "fp16/bf16 (dense), 2039 GB/s HBM2e"},
      {.name = "a100-40gb",
       .full_name = "NVIDIA A100-SXM4-40GB",
       .fp32_flops_per_sec = 19.5 * kTera,
       .tf32_flops_per_sec = 156 * kTera,
       .fp16_flops_per_sec = 312 * kTera,
       .bf16_flops_per_sec = 312 * kTera,
       .memory_bytes_per_sec = 1555e9,
       .memory_capacity_bytes = 40 * kGiB,
       .tdp_watts = 400,
       .sm_count = 108,
       .compute_capability = 80,
       .matmul_bf16_share = kA100SxmMatmulShare,
       .datasheet = "NVIDIA A100 datasheet (SXM4 40GB): 19.5 TFLOPS fp32, 156 TF32, 312 "
                    "fp16/bf16 (dense), 1555 GB/s HBM2"},
      {.name = "a100-pcie",
       .full_name = "NVIDIA A100-PCIe-80GB",
       .fp32_flops_per_sec = 19.5 * kTera,
       .tf32_flops_per_sec = 156 * kTera,
       .fp16_flops_per_sec = 312 * kTera,
       .bf16_flops_per_sec = 312 * kTera,
       .memory_bytes_per_sec = 1935e9,
       .memory_capacity_bytes = 80 * kGiB,
       .tdp_watts = 300,
       .sm_count = 108,
       .compute_capability = 80,
       .matmul_bf16_share = 0.811,
       .datasheet = "NVIDIA A100 datasheet (PCIe 80GB): 19.5 TFLOPS fp32, 156 TF32, 312 "
                    "fp16/bf16 (dense), 1935 GB/s HBM2e"},
      {.name = "a10",
       .full_name = "NVIDIA A10",
       .fp32_flops_per_sec = 31.2 * kTera,
       .tf32_flops_per_sec = 62.5 * kTera,
       .fp16_flops_per_sec = 125 * kTera,
       .bf16_flops_per_sec = 125 * kTera,
       .memory_bytes_per_sec = 600e9,
       .memory_capacity_bytes = 24 * kGiB,
       .tdp_watts = 150,
       .sm_count = 72,
       .compute_capability = 86,
       .datasheet = "NVIDIA A10 datasheet: 31.2 TFLOPS fp32, 62.5 TF32, 125 fp16/bf16 (dense), "
                    "600 GB/s GDDR6"},
      {.name = "l40s",
       .full_name = "NVIDIA L40S",
       .fp32_flops_per_sec = 91.6 * kTera,
       .tf32_flops_per_sec = 183 * kTera,
       .fp16_flops_per_sec = 362 * kTera,
       .bf16_flops_per_sec = 362 * kTera,
       .fp8_flops_per_sec = 733 * kTera,
       .memory_bytes_per_sec = 864e9,
       .memory_capacity_bytes = 48 * kGiB,
       .tdp_watts = 350,
       .sm_count = 142,
       .compute_capability = 89,
       .datasheet =
           "NVIDIA L40S datasheet: 91.6 TFLOPS fp32, 183 TF32, 362 fp16/bf16, 733 fp8 (dense: "
           "half the sparse figures), 864 GB/s GDDR6"},
      {.name = "l4",
       .full_name = "NVIDIA L4",
       .fp32_flops_per_sec = 30.3 * kTera,
       .tf32_flops_per_sec = 60 * kTera,
       .fp16_flops_per_sec = 121 * kTera,
       .bf16_flops_per_sec = 121 * kTera,
       .fp8_flops_per_sec = 242.5 * kTera,
       .memory_bytes_per_sec = 300e9,
       .memory_capacity_bytes = 24 * kGiB,
       .tdp_watts = 72,
       .sm_count = 58,
       .compute_capability = 89,
       .datasheet =
           "NVIDIA L4 datasheet: 30.3 TFLOPS fp32, 60 TF32, 121 fp16/bf16, 242.5 fp8 (dense: "
           "half the sparse figures), 300 GB/s GDDR6"},
      {.name = "h100-pcie",
       .full_name = "NVIDIA H100-PCIe-80GB",
       .fp32_flops_per_sec = 51 * kTera,
       .tf32_flops_per_sec = 378 * kTera,
       .fp16_flops_per_sec = 756 * kTera,
       .bf16_flops_per_sec = 756 * kTera,
       .fp8_flops_per_sec = 1513 * kTera,
       .memory_bytes_per_sec = 2000e9,
       .memory_capacity_bytes = 80 * kGiB,
       .tdp_watts = 350,
       .sm_count = 114,
       .compute_capability = 90,
       .datasheet = "NVIDIA H100 datasheet (PCIe): 51 TFLOPS fp32, 378 TF32, 756 fp16/bf16, "
                    "1513 fp8 (dense), 2 TB/s HBM2e"},
      {.name = "h100",
       .full_name = "NVIDIA H100-SXM5-80GB",
       .fp32_flops_per_sec = 67 * kTera,
       .tf32_flops_per_sec = 494.7 * kTera,
       .fp16_flops_per_sec = 989.4 * kTera,
       .bf16_flops_per_sec = 989.4 * kTera,
       .fp8_flops_per_sec = 1979 * kTera,
       .memory_bytes_per_sec = 3350e9,
       .memory_capacity_bytes = 80 * kGiB,
       .tdp_watts = 700,
       .sm_count = 132,
       .compute_capability = 90,
       .matmul_bf16_share = 0.803,
       .matmul_fp8_share = 0.709,
       .datasheet = "NVIDIA H100 datasheet (SXM): 67 TFLOPS fp32, 494.7 TF32, 989.4 fp16/bf16, "
                    "1979 fp8 (dense), 3.35 TB/s HBM3"},
      {.name = "h200",
       .full_name = "NVIDIA H200-SXM-141GB",
       .fp32_flops_per_sec = 67 * kTera,
       .tf32_flops_per_sec = 494.7 * kTera,
       .fp16_flops_per_sec = 989.4 * kTera,
       .bf16_flops_per_sec = 989.4 * kTera,
       .fp8_flops_per_sec = 1979 * kTera,
       .memory_bytes_per_sec = 4800e9,
       .memory_capacity_bytes = 141 * kGiB,
       .tdp_watts = 700,
       .sm_count = 132,
       .compute_capability = 90,
       .matmul_bf16_share = kReferenceMatmulBf16Share,
       .matmul_fp8_share = kReferenceMatmulFp8Share,
       .datasheet = "NVIDIA H200 datasheet (SXM): 67 TFLOPS fp32, 494.7 TF32, 989.4 fp16/bf16, "
                    "1979 fp8 (dense), 4.8 TB/s HBM3e"},
      {.name = "b200",
       .full_name = "NVIDIA B200 (HGX/DGX B200)",
       .fp32_flops_per_sec = 75 * kTera,
       .tf32_flops_per_sec = 1125 * kTera,
       .fp16_flops_per_sec = 2250 * kTera,
       .bf16_flops_per_sec = 2250 * kTera,
       .fp8_flops_per_sec = 4500 * kTera,
       .memory_bytes_per_sec = 8000e9,
       .memory_capacity_bytes = 180 * kGiB,
       .tdp_watts = 1000,
       .sm_count = 148,
       .compute_capability = 100,
       .matmul_bf16_share = 0.776,
       .matmul_fp8_share = 0.763,
       .datasheet = "NVIDIA DGX B200 / HGX B200 datasheet, per GPU: 75 TFLOPS fp32, 1.125 PFLOPS "
                    "TF32, 2.25 fp16/bf16, 4.5 fp8 (dense: half the sparse figures), 8 TB/s HBM3e, "
                    "180 GB"},
  };
  return kDevices;
}

std::string device_names(const std::string& separator) {
  std::string names;
  for (const DeviceSpec& d : device_catalog()) {
    names += (names.empty() ? "" : separator) + d.name;
  }
  return names;
}

namespace {

constexpr std::string_view kLimitPrefix = " at a ";
constexpr std::string_view kLimitSuffix = " W power limit";

// The catalogue entry called `name`; `asked` (what the user wrote) names it in the error.
const DeviceSpec& catalogue_entry(const std::string& name, const std::string& asked) {
  for (const DeviceSpec& d : device_catalog()) {
    if (d.name == name) {
      return d;
    }
  }
  const std::string what = asked == name ? name : asked + ": " + name;
  throw GeneratorError("device", what + ": unknown device (expected one of " + device_names(", ") +
                                     ", or one of them @WATTS, e.g. h100@500W)");
}

// `base` under a power limit of `limit_text` ("500W"), for "NAME@500W".
DeviceSpec power_limited(const DeviceSpec& base, const std::string& name,
                         const std::string& limit_text) {
  const std::optional<double> watts = parsing::parse_power(limit_text);
  if (!watts || *watts < base.tdp_watts / 2 || *watts > base.tdp_watts) {
    throw GeneratorError("device", name + ": expected NAME@WATTS with a power limit in watts ('" +
                                       limit_text + "') from half the " + base.full_name +
                                       "'s TDP to all of it, " +
                                       parsing::format_number("%g", base.tdp_watts / 2) + "W to " +
                                       parsing::format_number("%g", base.tdp_watts) + "W");
  }
  DeviceSpec d = base;
  d.name = name;
  d.power_limit_watts = *watts;
  d.full_name +=
      std::string(kLimitPrefix) + parsing::format_number("%g", *watts) + std::string(kLimitSuffix);
  d.datasheet += "; power limit " + parsing::format_number("%g", *watts) + " W of its " +
                 parsing::format_number("%g", base.tdp_watts) + " W TDP: FLOP rates x " +
                 parsing::format_number("%.3g", clock_scale(d)) + " (workloads/COMPUTE.md)";
  return d;
}

}  // namespace

const DeviceSpec& find_device(const std::string& name) {
  const std::size_t at = name.find('@');
  if (at == std::string::npos) {
    return catalogue_entry(name, name);
  }
  const DeviceSpec& base = catalogue_entry(name.substr(0, at), name);
  // The limited entries asked for, kept for the program's life so that the reference stays
  // valid as the catalogue's do; the planner looks devices up from several threads.
  static std::mutex mutex;
  static std::map<std::string, DeviceSpec> limited;
  const std::lock_guard<std::mutex> lock(mutex);
  auto it = limited.find(name);
  if (it == limited.end()) {
    it = limited.emplace(name, power_limited(base, name, name.substr(at + 1))).first;
  }
  return it->second;
}

std::pair<std::string, std::string> split_power_limit(const std::string& text) {
  const std::size_t at = text.rfind(kLimitPrefix);
  if (at == std::string::npos || !text.ends_with(kLimitSuffix)) {
    return {text, ""};
  }
  const std::size_t from = at + kLimitPrefix.size();
  const std::string watts = text.substr(from, text.size() - kLimitSuffix.size() - from);
  if (!parsing::parse_power(watts + "W")) {
    return {text, ""};
  }
  return {text.substr(0, at), "@" + watts + "W"};
}

double clock_scale(const DeviceSpec& device) {
  if (device.power_limit_watts <= 0 || device.tdp_watts <= 0) {
    return 1;
  }
  return std::cbrt(device.power_limit_watts / device.tdp_watts);
}

double tensor_core_scale(const DeviceSpec& device, bool fp8) {
  const double bf16 =
      device.matmul_bf16_share > 0 ? device.matmul_bf16_share : kReferenceMatmulBf16Share;
  const double share = !fp8                          ? bf16
                       : device.matmul_fp8_share > 0 ? device.matmul_fp8_share
                                                     : kReferenceMatmulFp8Share;
  return share / kReferenceMatmulBf16Share;
}

double Roofline::seconds(double flops, double bytes) const {
  return std::max(flops / flops_per_sec, bytes / bytes_per_sec);
}

Roofline make_roofline(const DeviceSpec& device, const std::string& precision) {
  double peak = 0;
  double element_bytes = 4;
  if (precision == "fp32") {
    peak = device.fp32_flops_per_sec;
  } else if (precision == "tf32") {
    peak = device.tf32_flops_per_sec;
  } else if (precision == "fp16") {
    peak = device.fp16_flops_per_sec;
    element_bytes = 2;
  } else if (precision == "bf16" || precision == "fp8") {
    peak = device.bf16_flops_per_sec;
    element_bytes = 2;
  } else {
    throw GeneratorError("precision", precision + ": expected fp32, tf32, fp16, bf16 or fp8");
  }
  const double linear_peak = precision == "fp8" ? device.fp8_flops_per_sec : peak;
  if (peak <= 0 || linear_peak <= 0) {
    throw GeneratorError("precision", precision + ": " + device.full_name + " does not support it");
  }
  // Everything but fp32 runs on tensor cores (fp32 is the CUDA-core peak here).
  const double clock = clock_scale(device);
  const double scale = clock * (precision == "fp32" ? 1 : tensor_core_scale(device, false));
  const double linear_scale = precision == "fp8" ? clock * tensor_core_scale(device, true) : scale;
  return {.peak_flops_per_sec = peak,
          .flops_per_sec = peak * kComputeEfficiency * scale,
          .bytes_per_sec = device.memory_bytes_per_sec * kMemoryEfficiency,
          .element_bytes = element_bytes,
          .fp8_linears = precision == "fp8",
          .linear_flops_per_sec = linear_peak * kComputeEfficiency * linear_scale,
          .attention_flops_per_sec = peak * kComputeEfficiency * scale};
}

}  // namespace dtsim::workloads
