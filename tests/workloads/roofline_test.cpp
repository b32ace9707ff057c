#include "workloads/roofline.h"

#include <gtest/gtest.h>

namespace dtsim::workloads {
namespace {

// The expected rates are hand calculations: datasheet peak (roofline.cpp) x 0.5 (the tensor-core
// efficiency measured on an H200, COMPUTE.md) x the device's matmul share over the H200's bf16
// one, from the MAMF table of Bekman's ML Engineering book: A100 SXM 271.2 / 312 = 86.9 %, H100
// and H200 794.5 / 989 = 80.3 % in bf16; fp8 1402.6 / 1979 = 70.9 % (H100), 1453.4 / 1979 =
// 73.4 % (H200).

TEST(Roofline, TheH200KeepsTheMeasuredEfficiency) {
  const Roofline r = make_roofline(find_device("h200"), "bf16");
  EXPECT_DOUBLE_EQ(r.peak_flops_per_sec, 989.4e12);
  EXPECT_DOUBLE_EQ(r.flops_per_sec, 0.5 * 989.4e12);
  EXPECT_DOUBLE_EQ(r.attention_flops_per_sec, 0.5 * 989.4e12);
}

TEST(Roofline, AnA100ReachesAMeasuredShareMoreOfItsPeak) {
  for (const char* name : {"a100", "a100-40gb"}) {
    for (const char* precision : {"bf16", "fp16", "tf32"}) {
      const Roofline r = make_roofline(find_device(name), precision);
      EXPECT_NEAR(r.flops_per_sec / r.peak_flops_per_sec, 0.5 * 0.869 / 0.803, 1e-12)
          << name << " " << precision;
    }
  }
  // 312 TFLOP/s x 0.5 x 1.0822 = 168.8 TFLOP/s.
  EXPECT_NEAR(make_roofline(find_device("a100"), "bf16").flops_per_sec, 168.8e12, 0.1e12);
}

TEST(Roofline, Fp8GemmsReachTheirOwnMeasuredShare) {
  const Roofline h100 = make_roofline(find_device("h100"), "fp8");
  EXPECT_TRUE(h100.fp8_linears);
  // 1979 x 0.5 x 0.709 / 0.803 = 873.7 TFLOP/s; the rest stays at the bf16 rate.
  EXPECT_NEAR(h100.linear_flops_per_sec, 1979e12 * 0.5 * 0.709 / 0.803, 1e3);
  EXPECT_NEAR(h100.linear_flops_per_sec, 873.7e12, 0.1e12);
  EXPECT_DOUBLE_EQ(h100.flops_per_sec, 0.5 * 989.4e12);
  const Roofline h200 = make_roofline(find_device("h200"), "fp8");
  EXPECT_NEAR(h200.linear_flops_per_sec, 1979e12 * 0.5 * 0.734 / 0.803, 1e3);
}

TEST(Roofline, AnUnmeasuredGpuTakesTheH200sShares) {
  // No MAMF for the V100 or the L40S: 16 bits at 0.5, fp8 at the H200's fp8 share.
  EXPECT_DOUBLE_EQ(make_roofline(find_device("v100"), "fp16").flops_per_sec, 0.5 * 125e12);
  const Roofline l40s = make_roofline(find_device("l40s"), "fp8");
  EXPECT_DOUBLE_EQ(l40s.flops_per_sec, 0.5 * 362e12);
  EXPECT_NEAR(l40s.linear_flops_per_sec, 733e12 * 0.5 * 0.734 / 0.803, 1e3);
}

TEST(Roofline, CudaCoresAreNotScaled) {
  // fp32 is the CUDA-core peak in the roofline: 19.5 TFLOP/s x 0.5 on an A100.
  EXPECT_DOUBLE_EQ(make_roofline(find_device("a100"), "fp32").flops_per_sec, 0.5 * 19.5e12);
}

TEST(Roofline, TheScaleIsTheShareOverTheReference) {
  EXPECT_DOUBLE_EQ(tensor_core_scale(find_device("h200"), false), 1.0);
  EXPECT_DOUBLE_EQ(tensor_core_scale(find_device("h100"), false), 1.0);
  EXPECT_NEAR(tensor_core_scale(find_device("b200"), false), 0.776 / 0.803, 1e-12);
  EXPECT_NEAR(tensor_core_scale(find_device("b200"), true), 0.763 / 0.803, 1e-12);
  EXPECT_NEAR(tensor_core_scale(find_device("a100-pcie"), false), 0.811 / 0.803, 1e-12);
}

}  // namespace
}  // namespace dtsim::workloads
