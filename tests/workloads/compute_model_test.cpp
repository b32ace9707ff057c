#include "workloads/compute_model.h"

#include <cmath>
#include <numeric>

#include <gtest/gtest.h>

#include "workloads/generator.h"

// Expected values are hand calculations from the rules of workloads/COMPUTE.md and the
// datasheet figures of roofline.cpp (V100: 15.7 TFLOP/s fp32, 900 GB/s, 80 SMs; A100: 19.5
// fp32, 156 TF32, 312 fp16, 2039 GB/s, 108 SMs).
namespace dtsim::workloads {
namespace {

// The A100's tensor-core scale: its MAMF share over the H200's, 86.9 % / 80.3 % (the MAMF table
// of Bekman's ML Engineering book, workloads/roofline.cpp).
constexpr double kA100Scale = 0.869 / 0.803;

TEST(GemmQuantization, FullTilesAndFullWavesLoseNothing) {
  // 2 x 2 tiles of 128 x 128 on 4 SMs: one full wave.
  EXPECT_DOUBLE_EQ(gemm_quantization({.m = 256, .n = 256, .k = 1024}, 4), 1.0);
}

TEST(GemmQuantization, PartialTilesAndAPartialWaveMultiply) {
  // m = 200: two row tiles, 200 of 256 rows used (0.78125); 2 tiles on 8 SMs, k = 64 too short
  // to split (64 / 256 < 1): one wave a quarter full.
  EXPECT_DOUBLE_EQ(gemm_quantization({.m = 200, .n = 128, .k = 64}, 8), 0.78125 * 0.25);
  // 5 tiles on 4 SMs: two waves, 5 of 8 slots busy.
  EXPECT_DOUBLE_EQ(gemm_quantization({.m = 640, .n = 128, .k = 64}, 4), 5.0 / 8);
  // A batched product: 3 GEMMs of one tile each on 4 SMs.
  EXPECT_DOUBLE_EQ(gemm_quantization({.m = 128, .n = 128, .k = 128, .count = 3}, 4), 0.75);
}

TEST(GemmQuantization, FewTilesAreSplitAlongK) {
  // One tile, k = 4096: split 8 ways (min(8 SMs / 1 tile, 4096 / 256)), a full wave.
  EXPECT_DOUBLE_EQ(gemm_quantization({.m = 128, .n = 128, .k = 4096}, 8), 1.0);
  // One tile, k = 512: split only twice (512 / 256), 2 of 8 SMs busy.
  EXPECT_DOUBLE_EQ(gemm_quantization({.m = 128, .n = 128, .k = 512}, 8), 0.25);
}

TEST(MathRate, PrecisionPicksTheUnitAsPyTorchDoes) {
  const DeviceSpec& v100 = find_device("v100");
  const DeviceSpec& a100 = find_device("a100");
  const MathRate v100_conv = math_rate(v100, "fp32", true);
  EXPECT_EQ(v100_conv.unit, MathUnit::kCudaCore);
  EXPECT_DOUBLE_EQ(v100_conv.peak_flops_per_sec, 15.7e12);
  EXPECT_DOUBLE_EQ(v100_conv.efficiency, kCudaCoreEfficiency);
  // fp32 on an A100: convolutions in TF32 (cudnn.allow_tf32), matrix multiplies in fp32.
  const MathRate a100_conv = math_rate(a100, "fp32", true);
  EXPECT_EQ(a100_conv.unit, MathUnit::kTensorCore);
  EXPECT_DOUBLE_EQ(a100_conv.peak_flops_per_sec, 156e12);
  EXPECT_EQ(a100_conv.pad_elements, 4);
  const MathRate a100_linear = math_rate(a100, "fp32", false);
  EXPECT_EQ(a100_linear.unit, MathUnit::kCudaCore);
  EXPECT_DOUBLE_EQ(a100_linear.peak_flops_per_sec, 19.5e12);
  EXPECT_DOUBLE_EQ(math_rate(a100, "tf32", false).peak_flops_per_sec, 156e12);
  const MathRate half = math_rate(v100, "fp16", false);
  EXPECT_EQ(half.unit, MathUnit::kTensorCore);
  EXPECT_DOUBLE_EQ(half.peak_flops_per_sec, 125e12);
  EXPECT_EQ(half.pad_elements, 8);
  EXPECT_DOUBLE_EQ(half.efficiency, kTensorCoreEfficiency);  // no MAMF for the V100: unscaled
  // The A100's tensor cores: 0.5 x its matmul share over the H200's (MAMF table: 86.9 / 80.3 %);
  // its CUDA cores keep 0.75.
  EXPECT_NEAR(a100_conv.efficiency, kTensorCoreEfficiency * kA100Scale, 1e-15);
  EXPECT_DOUBLE_EQ(a100_linear.efficiency, kCudaCoreEfficiency);
  EXPECT_THROW((void)math_rate(v100, "bf16", false), GeneratorError);
  EXPECT_THROW((void)math_rate(v100, "tf32", true), GeneratorError);
  EXPECT_THROW((void)math_rate(v100, "int8", true), GeneratorError);
}

TEST(MathRate, APowerLimitSlowsBothUnitsByTheClock) {
  // An A100 SXM held to 200 W of its 400: clock x (1/2)^(1/3) = 0.7937 (roofline.h,
  // clock_scale) on tensor and CUDA cores alike; the datasheet peaks stay.
  const DeviceSpec& capped = find_device("a100@200W");
  const double clock = std::cbrt(0.5);
  const MathRate tensor = math_rate(capped, "fp16", false);
  EXPECT_DOUBLE_EQ(tensor.peak_flops_per_sec, 312e12);
  EXPECT_NEAR(tensor.efficiency, kTensorCoreEfficiency * kA100Scale * clock, 1e-15);
  const MathRate cuda = math_rate(capped, "fp32", false);
  EXPECT_DOUBLE_EQ(cuda.peak_flops_per_sec, 19.5e12);
  EXPECT_NEAR(cuda.efficiency, kCudaCoreEfficiency * clock, 1e-15);
}

TEST(GemmSeconds, ComputeBoundOrMemoryBoundByItsShape) {
  const DeviceSpec& a100 = find_device("a100");
  const MathRate fp16 = math_rate(a100, "fp16", false);
  // 108 row tiles x 1 column tile on 108 SMs: full. 2mnk at 0.5 x the A100's scale x 312 TFLOP/s.
  const Gemm big{.m = 108 * 128, .n = 128, .k = 4096};
  EXPECT_DOUBLE_EQ(gemm_seconds(big, fp16, a100, 2),
                   2.0 * 108 * 128 * 128 * 4096 / (0.5 * kA100Scale * 312e12));
  // n = k = 8: 13824 x 8 x 8 barely computes; its 2-byte operands at 0.9 x 2039 GB/s.
  const Gemm thin{.m = 108 * 128, .n = 8, .k = 8};
  const double bytes = (13824.0 * 8 + 8 * 8 + 13824.0 * 8) * 2;
  EXPECT_DOUBLE_EQ(gemm_seconds(thin, fp16, a100, 2), bytes / (0.9 * 2039e9));
}

// A 3x3 stride-1 convolution 64 -> 128 channels on one 56 x 56 image.
LayerCost conv3x3() {
  return {.name = "conv",
          .forward_flops = 2.0 * 56 * 56 * 128 * 64 * 9,
          .activation_elements = 56.0 * 56 * (64 + 128),
          .params = 64 * 128 * 9,
          .output_elements = 56.0 * 56 * 128,
          .cnn = {.op = CnnOp::kConv,
                  .batch = 1,
                  .in_channels = 64,
                  .out_channels = 128,
                  .in_extent = {56, 56, 1},
                  .out_extent = {56, 56, 1},
                  .kernel = 3,
                  .stride = 1,
                  .pad = 1}};
}

TEST(OpClass, ConvolutionOnCudaCoresIsAWinogradImplicitGemm) {
  const DeviceSpec& v100 = find_device("v100");
  // Forward GEMM m = 3136 positions, n = 128, k = 576: 25 row tiles (3136 of 3200 rows: 0.98),
  // 25 tiles < 80 SMs split twice along k (min(80 / 25, 576 / 256) = 2): 50 of 80 SMs.
  const double q = 3136.0 / 3200 * 50 / 80;
  const double flops = 2.0 * 3136 * 128 * 576 / 2.25;  // Winograd F(2x2, 3x3)
  const LayerSeconds s = op_class_seconds(conv3x3(), v100, "fp32");
  EXPECT_NEAR(s.forward_sec, flops / (15.7e12 * kCudaCoreEfficiency * q), 1e-15);
  // Backward: weight gradient m = 576, n = 128, k = 3136 (5 x 1 tiles, 576 of 640 rows, split
  // min(16, 12) = 12 ways: 60 of 80 SMs); input gradient m = 3136, n = 576, k = 128 (25 x 5 =
  // 125 tiles, 576 of 640 columns: two waves, 125 of 160 slots).
  const double q_dw = 576.0 / 640 * 60 / 80;
  const double q_dx = 3136.0 / 3200 * 576 / 640 * 125 / 160;
  EXPECT_NEAR(s.backward_sec, flops / (15.7e12 * kCudaCoreEfficiency) * (1 / q_dw + 1 / q_dx),
              1e-15);
}

TEST(OpClass, APowerLimitSlowsAGroupedConvolutionOnCudaCores) {
  // conv3x3() in 32 groups, given 1 TFLOP forward so that it is compute-bound (its 2.7 MB move
  // in 3 us): a direct kernel on CUDA cores at 0.75 of the V100's 15.7 TFLOP/s, times
  // (150 / 300)^(1/3) under a 150 W limit (roofline.h, clock_scale); backward twice the FLOPs.
  LayerCost grouped = conv3x3();
  grouped.cnn.groups = 32;
  grouped.forward_flops = 1e12;
  const double rate = 15.7e12 * kCudaCoreEfficiency * std::cbrt(0.5);
  const LayerSeconds s = op_class_seconds(grouped, find_device("v100@150W"), "fp32");
  EXPECT_NEAR(s.forward_sec, 1e12 / rate, 1e-12);
  EXPECT_NEAR(s.backward_sec, 2e12 / rate, 1e-12);
}

TEST(OpClass, NchwTensorCoreConvolutionsPayATransposePerCall) {
  // conv3x3(): 56 x 56 positions, 64 channels in, 128 out. NCHW on tensor cores: each call
  // (forward, weight gradient, input gradient) reads and writes its input and output once more:
  // 2 x 56 x 56 x (64 + 128) elements of 2 bytes (fp16), at 0.9 of the A100's 2039 GB/s.
  const DeviceSpec& a100 = find_device("a100");
  const LayerSeconds nhwc = op_class_seconds(conv3x3(), a100, "fp16");
  const LayerSeconds nchw = op_class_seconds(conv3x3(), a100, "fp16", {}, ConvLayout::kNchw);
  const double transpose = 2 * 56.0 * 56 * 192 * 2 / (0.9 * 2039e9);
  EXPECT_NEAR(nchw.forward_sec - nhwc.forward_sec, transpose, 1e-15);
  EXPECT_NEAR(nchw.backward_sec - nhwc.backward_sec, 2 * transpose, 1e-15);
  // On CUDA cores (fp32 on a V100) cuDNN computes NCHW natively: no transposes.
  const DeviceSpec& v100 = find_device("v100");
  EXPECT_EQ(op_class_seconds(conv3x3(), v100, "fp32", {}, ConvLayout::kNchw).forward_sec,
            op_class_seconds(conv3x3(), v100, "fp32").forward_sec);
  EXPECT_EQ(parse_conv_layout("nchw"), ConvLayout::kNchw);
  EXPECT_EQ(conv_layout_name(ConvLayout::kNhwc), "nhwc");
  EXPECT_FALSE(parse_conv_layout("NCHW"));
}

TEST(OpClass, ConvolutionOnTensorCoresPadsChannelsAndSkipsWinograd) {
  LayerCost c = conv3x3();
  c.cnn.in_channels = 3;  // an image's first layer: padded to 8 channels in fp16
  c.backward_factor = 1;  // no input gradient
  c.forward_flops = 2.0 * 56 * 56 * 128 * 3 * 9;
  c.activation_elements = 56.0 * 56 * (3 + 128);
  c.params = 3 * 128 * 9;
  const DeviceSpec& a100 = find_device("a100");
  const LayerSeconds s = op_class_seconds(c, a100, "fp16");
  // m = 3136, n = 128, k = 8 x 9 = 72: 25 tiles on 108 SMs, too short to split: 25 of 108.
  const double q = 3136.0 / 3200 * 25 / 108;
  const double compute = 2.0 * 3136 * 128 * 72 / (312e12 * kTensorCoreEfficiency * kA100Scale * q);
  const double memory = (56.0 * 56 * 131 * 2 + 2.0 * 3456) / (0.9 * 2039e9);
  EXPECT_NEAR(s.forward_sec, std::max(compute, memory), 1e-15);
  EXPECT_GT(compute, memory);
  // Backward: only the weight gradient, m = 72, n = 128, k = 3136 (one tile, 72 of 128 rows,
  // split min(108, 12) = 12 ways: 12 of 108 SMs).
  const double q_dw = 72.0 / 128 * 12 / 108;
  EXPECT_NEAR(s.backward_sec,
              2.0 * 3136 * 128 * 72 / (312e12 * kTensorCoreEfficiency * kA100Scale * q_dw), 1e-15);
}

TEST(OpClass, MemoryBoundLayersMoveTheirKernelsBytes) {
  const DeviceSpec& v100 = find_device("v100");
  const double x = 32.0 * 64 * 112 * 112, bw = 0.9 * 900e9;
  const auto layers = model_layers({.model = "resnet50", .batch = 32});
  // bn1: statistics then normalize (x read twice, y written): 3 x; backward 5 x. fp32.
  EXPECT_EQ(layers[1].name, "bn1");
  LayerSeconds s = op_class_seconds(layers[1], v100, "fp32");
  EXPECT_DOUBLE_EQ(s.forward_sec, 3 * x * 4 / bw);
  EXPECT_DOUBLE_EQ(s.backward_sec, 5 * x * 4 / bw);
  // relu: read x, write y; backward reads the gradient and y, writes the input's gradient.
  s = op_class_seconds(layers[2], v100, "fp16");
  EXPECT_DOUBLE_EQ(s.forward_sec, 2 * x * 2 / bw);
  EXPECT_DOUBLE_EQ(s.backward_sec, 3 * x * 2 / bw);
  // maxpool 3x3 stride 2 to 56 x 56: forward reads x and writes y and an int64 index per
  // output; backward zeroes and writes the input gradient, reads the output's and the indices.
  const double y = 32.0 * 64 * 56 * 56;
  s = op_class_seconds(layers[3], v100, "fp32");
  EXPECT_DOUBLE_EQ(s.forward_sec, ((x + y) * 4 + 8 * y) / bw);
  EXPECT_DOUBLE_EQ(s.backward_sec, ((2 * x + y) * 4 + 8 * y) / bw);
}

TEST(OpClass, FusedNormReluMovesOnlyTheOtherBranch) {
  const DeviceSpec& v100 = find_device("v100");
  const auto layers = model_layers({.model = "resnet50", .batch = 8});
  const auto plain = op_class_model(layers, v100, "fp16", {}, false);
  const auto fused = op_class_model(layers, v100, "fp16", {}, true);
  ASSERT_EQ(fused.size(), layers.size());
  int relus = 0, adds = 0;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const std::string& name = layers[i].name;
    if (name.ends_with("add")) {
      // Reads the shortcut forward, writes its gradient backward: one tensor each way.
      const double bytes = layers[i].output_elements * 2;
      EXPECT_DOUBLE_EQ(fused[i].forward_sec, bytes / (0.9 * 900e9)) << name;
      EXPECT_DOUBLE_EQ(fused[i].backward_sec, bytes / (0.9 * 900e9)) << name;
      ++adds;
    } else if (name.find("relu") != std::string::npos) {
      EXPECT_EQ(fused[i].forward_sec, 0) << name;
      EXPECT_EQ(fused[i].backward_sec, 0) << name;
      ++relus;
    } else {
      EXPECT_EQ(fused[i].forward_sec, plain[i].forward_sec) << name;
      EXPECT_EQ(fused[i].backward_sec, plain[i].backward_sec) << name;
    }
  }
  EXPECT_EQ(adds, 16);       // one per bottleneck block
  EXPECT_EQ(relus, 1 + 48);  // the stem's and three per block
}

TEST(OpClass, TransformerGemmsAccountForTheirLayersMatrixFlops) {
  // BERT-large at seq 128: the self-attention's GEMMs are its FLOPs less the softmax's
  // 5 per score (16 heads x 128 x 128 per sample).
  const auto layers = model_layers({.model = "bert_large", .batch = 2, .seq_len = 128});
  const LayerCost& attention = layers[1];
  ASSERT_EQ(attention.name, "bert.encoder.layer.0.attention.self");
  double gemm_flops = 0;
  for (const Gemm& g : attention.gemms) {
    gemm_flops += 2 * g.m * g.n * g.k * g.count;
  }
  EXPECT_DOUBLE_EQ(attention.forward_flops - gemm_flops, 5.0 * 256 * 16 * 128);
  // intermediate: one GEMM tokens x 4096 x 1024, the GELU beside it.
  const LayerCost& ffn = layers[3];
  ASSERT_EQ(ffn.gemms.size(), 1u);
  EXPECT_EQ(ffn.gemms[0], (Gemm{.m = 256, .n = 4096, .k = 1024}));
  EXPECT_DOUBLE_EQ(ffn.elementwise_elements, 256.0 * 4096);
}

TEST(OpClass, GeneratorUsesItOnlyWhenAsked) {
  GeneratorConfig c{.shape = {.model = "resnet50", .batch = 8}, .device = "a100"};
  const Workload roofline = generate_workload(c);
  c.compute_model = ComputeModel::kOpClass;
  const Workload op_class = generate_workload(c);
  const auto times = op_class_model(model_layers(c.shape), find_device("a100"), "fp32", {}, false);
  ASSERT_EQ(op_class.layers.size(), times.size());
  for (std::size_t i = 0; i < times.size(); ++i) {
    EXPECT_EQ(op_class.layers[i].forward_sec, times[i].forward_sec);
    EXPECT_EQ(op_class.layers[i].backward_sec, times[i].backward_sec);
  }
  EXPECT_NE(op_class.layers[0].forward_sec, roofline.layers[0].forward_sec);
  EXPECT_NE(op_class.source.find("op-class compute model"), std::string::npos);
  // Its knobs belong to it: refused with the roofline, and fractions must be in (0, 1].
  c.compute_model = ComputeModel::kRoofline;
  c.fuse_norm_relu = true;
  EXPECT_THROW((void)generate_workload(c), GeneratorError);
  c.compute_model = ComputeModel::kOpClass;
  c.efficiency.cuda_core = 1.5;
  EXPECT_THROW((void)generate_workload(c), GeneratorError);
}

}  // namespace
}  // namespace dtsim::workloads
