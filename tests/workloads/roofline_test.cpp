#include "workloads/roofline.h"

#include <cmath>
#include <string>
#include <utility>

#include <gtest/gtest.h>

#include "workloads/generator_error.h"

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

// Under a power limit the math rates follow the clock, the cube root of the limit over the TDP
// (roofline.h, clock_scale): 500 W on a 700 W H100 is (5/7)^(1/3) = 0.8939 (0.8939^3 = 0.7143).
TEST(Roofline, APowerLimitSlowsTheMathUnitsByTheCubeRootOfItsShareOfTheTdp) {
  const DeviceSpec& limited = find_device("h100@500W");
  EXPECT_NEAR(clock_scale(limited), 0.8939, 1e-4);
  EXPECT_DOUBLE_EQ(clock_scale(find_device("h100")), 1.0);
  EXPECT_DOUBLE_EQ(limited.power_limit_watts, 500);
  EXPECT_DOUBLE_EQ(limited.tdp_watts, 700);
  for (const char* precision : {"bf16", "fp8", "tf32", "fp32"}) {
    const Roofline full = make_roofline(find_device("h100"), precision);
    const Roofline capped = make_roofline(limited, precision);
    EXPECT_NEAR(capped.flops_per_sec, full.flops_per_sec * 0.8939, full.flops_per_sec * 1e-4)
        << precision;
    EXPECT_NEAR(capped.linear_flops_per_sec, full.linear_flops_per_sec * 0.8939,
                full.linear_flops_per_sec * 1e-4)
        << precision;
    // The HBM keeps its clock, and MFU keeps the datasheet's peak as its denominator.
    EXPECT_DOUBLE_EQ(capped.bytes_per_sec, full.bytes_per_sec) << precision;
    EXPECT_DOUBLE_EQ(capped.peak_flops_per_sec, full.peak_flops_per_sec) << precision;
  }
  // At the TDP nothing changes: 400 W on an A100 SXM.
  EXPECT_DOUBLE_EQ(clock_scale(find_device("a100@400W")), 1.0);
  // 0.2 kW on a 400 W A100: (1/2)^(1/3) = 0.7937.
  EXPECT_NEAR(clock_scale(find_device("a100@0.2kW")), 0.7937, 1e-4);
}

TEST(Roofline, APowerLimitedDeviceIsNamedAndLookedUpOnce) {
  const DeviceSpec& first = find_device("h100@500W");
  EXPECT_EQ(&first, &find_device("h100@500W"));  // the same entry, so references stay valid
  EXPECT_EQ(first.name, "h100@500W");
  EXPECT_EQ(first.full_name, "NVIDIA H100-SXM5-80GB at a 500 W power limit");
  EXPECT_NE(first.datasheet.find("power limit 500 W of its 700 W TDP"), std::string::npos);
  EXPECT_EQ(first.sm_count, 132);
  EXPECT_DOUBLE_EQ(first.memory_capacity_bytes, find_device("h100").memory_capacity_bytes);
}

TEST(Roofline, ABadPowerLimitIsRefusedWithTheDevicesTdp) {
  // From half the TDP to the TDP: 350 to 700 W on an H100 SXM.
  EXPECT_NEAR(clock_scale(find_device("h100@350W")), std::cbrt(0.5), 1e-12);
  for (const char* name : {"h100@800W", "h100@349W", "h100@0W", "h100@500", "h100@", "h100@-1W",
                           "h100@fastW", "h100@500W@1W", "h100@ 500W", "h100@nanW"}) {
    try {
      (void)find_device(name);
      ADD_FAILURE() << name << " was accepted";
    } catch (const GeneratorError& e) {
      EXPECT_EQ(e.field(), "device") << name;
      EXPECT_NE(std::string(e.what()).find(std::string(name) + ": expected NAME@WATTS"),
                std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find("from half the NVIDIA H100-SXM5-80GB's TDP to all of "
                                           "it, 350W to 700W"),
                std::string::npos)
          << e.what();
    }
  }
  // An unknown GPU is named as written, then the part before the limit.
  for (const auto& [name, said] : {std::pair{"h900@500W", "h900@500W: h900: unknown device"},
                                   std::pair{"@500W", "@500W: : unknown device"},
                                   std::pair{"H100@500W", "H100@500W: H100: unknown device"}}) {
    try {
      (void)find_device(name);
      ADD_FAILURE() << name << " was accepted";
    } catch (const GeneratorError& e) {
      EXPECT_NE(std::string(e.what()).find(said), std::string::npos) << e.what();
    }
  }
}

TEST(Roofline, APowerLimitedFullNameSplitsBackIntoTheCatalogueTextAndTheLimit) {
  // What a trace generated with --device h100@500W records as its device.
  const std::string full = find_device("h100@500W").full_name;
  EXPECT_EQ(split_power_limit(full),
            (std::pair<std::string, std::string>{"NVIDIA H100-SXM5-80GB", "@500W"}));
  EXPECT_EQ(split_power_limit("NVIDIA A100 at a 212.5 W power limit"),
            (std::pair<std::string, std::string>{"NVIDIA A100", "@212.5W"}));
  // Anything else is left whole.
  for (const char* text : {"NVIDIA H100-SXM5-80GB", "h100@500W", "GPU at a fast W power limit",
                           "NVIDIA A100 at a 500 W power limit, twice"}) {
    EXPECT_EQ(split_power_limit(text), (std::pair<std::string, std::string>{text, ""})) << text;
  }
}

TEST(Roofline, EveryCatalogueGpuHasATdp) {
  for (const DeviceSpec& d : device_catalog()) {
    EXPECT_GT(d.tdp_watts, 0) << d.name;
    EXPECT_EQ(d.power_limit_watts, 0) << d.name;
  }
}

}  // namespace
}  // namespace dtsim::workloads
