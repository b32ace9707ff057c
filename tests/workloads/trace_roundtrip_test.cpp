// The writer and the reader agree: what write_workload / workload_to_json produce reads back as an
// equal Workload, and the shipped traces survive a round trip and keep their documented totals.
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "workloads/trace.h"
#include "workloads/trace_error.h"
#include "workloads/trace_reader.h"
#include "workloads/trace_writer.h"

#include <unistd.h>

namespace dtsim::workloads {
namespace {

using nlohmann::json;

// A workload whose doubles do not print exactly in decimal (0.1, 1/3, 1e-9) and whose layers
// have and lack forward_flops and activation_bytes.
Workload awkward_workload() {
  return Workload{
      .model = "awkward",
      .device = "cpu",
      .precision = "bf16",
      .batch_per_device = 3,
      .source = "test: doubles without a short decimal form; unicode \xc3\x97 in text",
      .optimizer_sec = 1.0 / 3,
      .layers = {{.name = "embed", .forward_sec = 0.1, .backward_sec = 0.2, .param_bytes = 12345},
                 {.name = "block.0",
                  .forward_sec = 1e-9,
                  .backward_sec = 2.5e-7,
                  .param_bytes = 0,
                  .forward_flops = 1.0 / 7,
                  .activation_bytes = 3 * 1024 * 2},
                 {.name = "head",
                  .forward_sec = 0,
                  .backward_sec = 123.456789012345678,
                  .param_bytes = 1125899906842624 - 12345,  // 2^50 in all: the most allowed
                  .forward_flops = 0,
                  .activation_bytes = 1125899906842624}}};  // 2^50, the most allowed
}

// A path in the temporary folder unique to this test process (ctest runs each TEST in its own).
std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("dtsim_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

// read_workload(write_workload(w)), through a temporary file that is removed afterwards.
Workload through_file(const Workload& w) {
  const std::string path = temp_path("roundtrip.json");
  write_workload(w, path);
  Workload back = read_workload(path);
  std::filesystem::remove(path);
  return back;
}

TEST(TraceRoundtrip, JsonDocumentReadsBackEqual) {
  const Workload w = awkward_workload();
  EXPECT_EQ(workload_from_json(json::parse(workload_to_json(w).dump()), "x"), w);
}

TEST(TraceRoundtrip, FileReadsBackEqual) {
  const Workload w = awkward_workload();
  EXPECT_EQ(through_file(w), w);
}

TEST(TraceRoundtrip, WriterListsKeysInFormatOrder) {
  const auto doc = workload_to_json(awkward_workload());
  std::vector<std::string> keys;
  for (const auto& [key, unused] : doc.items()) {
    keys.push_back(key);
  }
  // The order of workloads/FORMAT.md.
  EXPECT_EQ(keys,
            (std::vector<std::string>{"format_version", "model", "device", "precision",
                                      "batch_per_device", "source", "optimizer_sec", "layers"}));
  std::vector<std::string> layer_keys;
  for (const auto& [key, unused] : doc["layers"][1].items()) {
    layer_keys.push_back(key);
  }
  EXPECT_EQ(layer_keys,
            (std::vector<std::string>{"name", "forward_sec", "backward_sec", "param_bytes",
                                      "forward_flops", "activation_bytes"}));
}

TEST(TraceRoundtrip, WriterOmitsAbsentForwardFlops) {
  const auto doc = workload_to_json(awkward_workload());
  // Layer 0 ("embed") has no forward_flops.
  EXPECT_FALSE(doc["layers"][0].contains("forward_flops"));
  EXPECT_TRUE(doc["layers"][2].contains("forward_flops"));
}

TEST(TraceRoundtrip, WriterOmitsAbsentActivationBytes) {
  const auto doc = workload_to_json(awkward_workload());
  EXPECT_FALSE(doc["layers"][0].contains("activation_bytes"));
  EXPECT_EQ(doc["layers"][1]["activation_bytes"], 6144);
}

TEST(TraceRoundtrip, WriterEndsFileWithNewline) {
  const std::string path = temp_path("newline.json");
  write_workload(awkward_workload(), path);
  std::FILE* file = std::fopen(path.c_str(), "rb");
  ASSERT_NE(file, nullptr);
  ASSERT_EQ(std::fseek(file, -1, SEEK_END), 0);
  const int last = std::fgetc(file);
  std::fclose(file);
  std::filesystem::remove(path);
  EXPECT_EQ(last, '\n');
}

TEST(TraceRoundtrip, WriterReportsUnwritablePath) {
  const std::string path = "tests/testdata/wl_no_such_folder/out.json";
  try {
    write_workload(awkward_workload(), path);
    ADD_FAILURE() << "no TraceError";
  } catch (const TraceError& e) {
    EXPECT_EQ(
        std::string(e.what()),
        "tests/testdata/wl_no_such_folder/out.json: cannot write workload trace (No such file or "
        "directory)");
  }
}

TEST(TraceRoundtrip, TinyTraceFileReadsBackEqual) {
  const Workload w = read_workload("tests/testdata/wl_tiny_trace.json");
  EXPECT_EQ(through_file(w), w);
  EXPECT_EQ(workload_from_json(json::parse(workload_to_json(w).dump()), "x"), w);
}

TEST(TraceRoundtrip, ShippedResnet50ReadsBackEqual) {
  const Workload w = read_workload("workloads/traces/resnet50_v100_b32.json");
  EXPECT_EQ(through_file(w), w);
  EXPECT_EQ(workload_from_json(json::parse(workload_to_json(w).dump()), "x"), w);
}

TEST(TraceRoundtrip, ShippedResnet50HasTorchvisionGradientBytes) {
  const Workload w = read_workload("workloads/traces/resnet50_v100_b32.json");
  // 4 bytes (fp32) x 25,557,032 torchvision resnet50 parameters = 102,228,128 bytes:
  // experiments/validation/data/published.csv, row PARAM-03.
  EXPECT_EQ(w.param_bytes(), 102228128u);
  // 53 convs + 53 bns + fc, 49 ReLUs, 16 residual adds, maxpool and avgpool
  // (dtsim workload generate, workloads/GENERATOR.md): 174 layers.
  EXPECT_EQ(w.layers.size(), 174u);
}

TEST(TraceRoundtrip, ShippedResnet50HasOutputSizesOfFp32Activations) {
  const Workload w = read_workload("workloads/traces/resnet50_v100_b32.json");
  EXPECT_EQ(w.format_version, 3);
  // conv1: 32 images x 64 channels x 112 x 112, 4 bytes each; fc: 32 x 1000 logits.
  EXPECT_EQ(w.layers.front().name, "conv1");
  EXPECT_EQ(w.layers.front().activation_bytes, std::uint64_t{32} * 64 * 112 * 112 * 4);
  EXPECT_EQ(w.layers.back().name, "fc");
  EXPECT_EQ(w.layers.back().activation_bytes, std::uint64_t{32} * 1000 * 4);
}

TEST(TraceRoundtrip, ShippedResnet50ComputesForItsCalibrationTarget) {
  const Workload w = read_workload("workloads/traces/resnet50_v100_b32.json");
  // Calibrated so that forward + backward + optimizer = 0.097 s, the single-V100 iteration time
  // of experiments/validation/data/published.csv, row DDPB-01 (per-layer values have 9 digits).
  EXPECT_NEAR(w.compute_sec(), 0.097, 1e-9);
}

TEST(TraceRoundtrip, ShippedBertLargeReadsBackEqual) {
  const Workload w = read_workload("workloads/traces/bert_large_a100_seq128_b128.json");
  EXPECT_EQ(through_file(w), w);
  EXPECT_EQ(workload_from_json(json::parse(workload_to_json(w).dump()), "x"), w);
}

TEST(TraceRoundtrip, ShippedBertLargeHasDocumentedTotals) {
  const Workload w = read_workload("workloads/traces/bert_large_a100_seq128_b128.json");
  // 4 bytes (fp32 gradients) x 336,226,108 parameters (workloads/traces/README.md) =
  // 1,344,904,432 bytes.
  EXPECT_EQ(w.param_bytes(), 1344904432u);
  EXPECT_EQ(w.layers.size(), 100u);
  // Calibrated to published.csv row DLE-111: forward + backward = 128 x 8 / 2486 s per
  // micro-batch, less 1/64 of an optimizer step (workloads/traces/README.md).
  EXPECT_NEAR(w.forward_sec() + w.backward_sec(), 128.0 * 8 / 2486 - w.optimizer_sec / 64, 1e-9);
}

}  // namespace
}  // namespace dtsim::workloads
