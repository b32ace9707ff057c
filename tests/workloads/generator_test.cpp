#include "workloads/generator.h"

#include <algorithm>
#include <limits>

#include <gtest/gtest.h>

#include "workloads/validate.h"

namespace dtsim::workloads {
namespace {

GeneratorConfig resnet50_v100(std::optional<double> calibrate = std::nullopt) {
  return {.shape = {.model = "resnet50", .batch = 32},
          .device = "v100",
          .precision = "fp32",
          .calibrate_iteration_sec = calibrate};
}

TEST(Generator, Fp8IsTheTransformerDescriptionsNotTheGenerators) {
  GeneratorConfig config = resnet50_v100();
  config.device = "h100";
  config.precision = "fp8";
  try {
    (void)generate_workload(config);
    FAIL();
  } catch (const GeneratorError& e) {
    EXPECT_EQ(e.field(), "precision");
    EXPECT_NE(std::string(e.what()).find("transformer description"), std::string::npos);
  }
}

TEST(Generator, LayerTimesFollowTheRooflineByHand) {
  const Workload w = generate_workload(resnet50_v100());
  const auto costs = model_layers({.model = "resnet50", .batch = 32});
  ASSERT_EQ(w.layers.size(), costs.size());
  // conv1: 2*7*7*3*64*112*112*32 FLOPs at 0.5 * 15.7 TFLOP/s (V100 fp32 datasheet) is compute
  // bound: 7.552e10 / 7.85e12 = 9.62 ms.
  const double conv1_flops = 2.0 * 7 * 7 * 3 * 64 * 112 * 112 * 32;
  EXPECT_DOUBLE_EQ(costs[0].forward_flops, conv1_flops);
  EXPECT_NEAR(w.layers[0].forward_sec, conv1_flops / (0.5 * 15.7e12), 1e-12);
  // Its backward needs no input gradient: the same FLOPs again.
  EXPECT_NEAR(w.layers[0].backward_sec, conv1_flops / (0.5 * 15.7e12), 1e-12);
  // bn1 after it: 8 FLOPs per element but 2 tensors of 32*64*112*112 fp32 elements move, at
  // 0.9 * 900 GB/s: memory bound.
  const double elements = 32.0 * 64 * 112 * 112;
  const double bn_bytes = 2 * elements * 4 + 4.0 * 128;  // activations + weights read
  EXPECT_EQ(w.layers[1].name, "bn1");
  EXPECT_NEAR(w.layers[1].forward_sec, bn_bytes / (0.9 * 900e9), 1e-12);
}

TEST(Generator, GradientsAreFourBytesPerParameterAndTheOptimizerIsMemoryBound) {
  const Workload w = generate_workload(resnet50_v100());
  // torchvision ResNet-50: 25,557,032 parameters; fp32 gradients.
  EXPECT_EQ(w.param_bytes(), 4u * 25'557'032u);
  // SGD with momentum moves 20 bytes per parameter at 0.9 * 900 GB/s.
  EXPECT_NEAR(w.optimizer_sec, 20.0 * 25'557'032 / (0.9 * 900e9), 1e-12);
  EXPECT_TRUE(validate(w).empty());
}

TEST(Generator, CalibrationScalesTheIterationToTheGivenTime) {
  // 0.097 s: ResNet-50 fp32 batch 32 on one V100 (experiments/validation/data/published.csv
  // DDPB-01).
  const Workload raw = generate_workload(resnet50_v100());
  const Workload w = generate_workload(resnet50_v100(0.097));
  EXPECT_NEAR(w.compute_sec(), 0.097, 1e-12);
  EXPECT_DOUBLE_EQ(w.optimizer_sec, raw.optimizer_sec);
  // One factor for every layer: ratios between layers are kept.
  const double factor = w.layers[5].forward_sec / raw.layers[5].forward_sec;
  for (std::size_t i = 0; i < w.layers.size(); ++i) {
    EXPECT_NEAR(w.layers[i].backward_sec, factor * raw.layers[i].backward_sec, 1e-15);
  }
}

TEST(Generator, UncalibratedResnet50OnV100IsWithinAFactorOfTwoOfTheMeasurement) {
  // A sanity bound, not a fit: the roofline at 0.5 of peak should land near the measured
  // 0.097 s (DDPB-01); the FLOPs alone at 100% of peak would take 50 ms.
  const double t = generate_workload(resnet50_v100()).compute_sec();
  EXPECT_GT(t, 0.097 / 2);
  EXPECT_LT(t, 0.097 * 2);
}

TEST(Generator, HalfPrecisionHalvesActivationTrafficAndUsesTensorCores) {
  GeneratorConfig c = resnet50_v100();
  c.precision = "fp16";
  const Workload half = generate_workload(c);
  const Workload full = generate_workload(resnet50_v100());
  EXPECT_LT(half.compute_sec(), full.compute_sec() / 2);
  EXPECT_EQ(half.param_bytes(), full.param_bytes());  // fp32 master gradients
}

TEST(Generator, TheNoteEndsTheSource) {
  GeneratorConfig c = resnet50_v100();
  const std::string plain = generate_workload(c).source;
  c.note = "Calibration: DDP benchmark, 1 V100, no DDP.";
  EXPECT_EQ(generate_workload(c).source, plain + " Calibration: DDP benchmark, 1 V100, no DDP.");
}

TEST(Generator, ActivationBytesAreOutputElementsTimesElementBytes) {
  // fp32: 4 bytes per element. ResNet-50's conv1 at batch 32, 224x224: 32 x 64 x 112 x 112.
  const Workload w = generate_workload(resnet50_v100());
  EXPECT_EQ(w.format_version, 3);
  EXPECT_EQ(w.layers[0].name, "conv1");
  EXPECT_EQ(w.layers[0].activation_bytes, std::uint64_t{32} * 64 * 112 * 112 * 4);  // 102760448
  EXPECT_TRUE(validate(w).empty());
  // bf16: 2 bytes. BERT-large's encoder layer output, batch 16 x seq 128 x hidden 1024.
  const Workload bert =
      generate_workload({.shape = {.model = "bert_large", .batch = 16, .seq_len = 128},
                         .device = "a100",
                         .precision = "bf16"});
  const auto encoder_output = std::find_if(bert.layers.begin(), bert.layers.end(), [](auto& l) {
    return l.name == "bert.encoder.layer.11.output";
  });
  ASSERT_NE(encoder_output, bert.layers.end());
  EXPECT_EQ(encoder_output->activation_bytes, std::uint64_t{16} * 128 * 1024 * 2);
  // tf32 keeps 4-byte activations, fp16 has 2. VGG-16's classifier.0 at batch 8: 8 x 4096.
  for (const auto& [precision, bytes] : {std::pair{"tf32", 4u}, std::pair{"fp16", 2u}}) {
    const Workload vgg = generate_workload(
        {.shape = {.model = "vgg16", .batch = 8}, .device = "a100", .precision = precision});
    const std::size_t last = vgg.layers.size() - 1;
    EXPECT_EQ(vgg.layers[last - 4].name, "classifier.0");
    EXPECT_EQ(vgg.layers[last - 4].activation_bytes, std::uint64_t{8} * 4096 * bytes);
    EXPECT_EQ(vgg.layers[last - 2].activation_bytes, std::uint64_t{8} * 4096 * bytes);
    EXPECT_EQ(vgg.layers[last].name, "classifier.6");
    EXPECT_EQ(vgg.layers[last].activation_bytes, std::uint64_t{8} * 1000 * bytes);
  }
}

TEST(Generator, OutputSizesChangeNoTime) {
  // Every zoo model, full and half precision: each layer's times are the roofline's of its FLOPs
  // and activation traffic exactly as before output sizes existed (generator.h), bit for bit.
  for (const std::string& model : model_names()) {
    for (const auto& [device, precision] : {std::pair{"v100", "fp32"}, std::pair{"h100", "bf16"}}) {
      const ModelShape shape{.model = model, .batch = 4};
      const Workload w =
          generate_workload({.shape = shape, .device = device, .precision = precision});
      const std::vector<LayerCost> costs = model_layers(shape);
      const Roofline roofline = make_roofline(find_device(device), precision);
      ASSERT_EQ(w.layers.size(), costs.size()) << model;
      for (std::size_t i = 0; i < costs.size(); ++i) {
        const LayerCost& c = costs[i];
        const double eb = roofline.element_bytes;
        EXPECT_EQ(w.layers[i].forward_sec,
                  roofline.seconds(c.forward_flops, c.activation_elements * eb + 4.0 * c.params))
            << model << " " << c.name;
        EXPECT_EQ(w.layers[i].backward_sec,
                  roofline.seconds(c.backward_factor * c.forward_flops,
                                   2 * c.activation_elements * eb + 8.0 * c.params))
            << model << " " << c.name;
        EXPECT_EQ(w.layers[i].activation_bytes, static_cast<std::uint64_t>(c.output_elements * eb))
            << model << " " << c.name;
      }
    }
  }
}

// The message of the GeneratorError that generating `c` throws, or "<no error>".
std::string error_of(const GeneratorConfig& c) {
  try {
    (void)generate_workload(c);
  } catch (const GeneratorError& e) {
    return e.what();
  }
  return "<no error>";
}

TEST(Generator, RejectsWhatItCannotModel) {
  GeneratorConfig c = resnet50_v100();
  c.precision = "bf16";
  EXPECT_EQ(error_of(c), "precision bf16: NVIDIA V100-SXM2 does not support it");
  c = resnet50_v100();
  c.device = "tpu";
  EXPECT_EQ(error_of(c),
            "device tpu: unknown device (expected one of v100, v100-pcie, t4, a100, a100-40gb, "
            "a100-pcie, a10, l40s, l4, h100-pcie, h100, h200, b200, or one of them @WATTS, e.g. "
            "h100@500W)");
  // Each message names the field at fault (they all said "--model" once); the command line
  // names its flag (tests/cli/cli_test.cpp).
  c = resnet50_v100();
  c.shape.batch = 0;
  EXPECT_EQ(error_of(c), "batch 0: expected an integer >= 1");
  c = resnet50_v100();
  c.shape.image_size = 16;
  EXPECT_EQ(error_of(c), "image_size 16: resnet50 needs at least 32 pixels");
  // Infinity used to write "forward_sec": null.
  EXPECT_EQ(error_of(resnet50_v100(std::numeric_limits<double>::infinity())),
            "calibrate_iteration_sec inf: expected a finite time > 0 s");
  EXPECT_EQ(error_of(resnet50_v100(0.0001)),
            "calibrate_iteration_sec 0.0001: shorter than the modelled optimizer step "
            "(0.000631038 s)");
}

TEST(Generator, ComputeTimingSaysHowTheTimesWereObtained) {
  GeneratorConfig c{.shape = {.model = "resnet50", .batch = 8}, .device = "a100"};
  EXPECT_EQ(compute_timing(generate_workload(c)), "roofline");
  c.compute_model = ComputeModel::kOpClass;
  EXPECT_EQ(compute_timing(generate_workload(c)), "op-class");
  c.calibrate_iteration_sec = 0.5;  // calibrated wins: the model only shares out the time
  EXPECT_EQ(compute_timing(generate_workload(c)), "calibrated");
  Workload measured = generate_workload(c);
  measured.measurement = Measurement{.tool = "dtsim_profile"};
  EXPECT_EQ(compute_timing(measured), "measured");
  Workload other;
  other.source = "written by hand";
  EXPECT_EQ(compute_timing(other), "unknown");
}

}  // namespace
}  // namespace dtsim::workloads
