// Reading and validating workload traces (workloads/FORMAT.md): what a good trace reads as, and
// the exact message for each kind of bad input. Messages are asserted verbatim (style G19): if the
// wording changes, these tests change in the same commit.
#include "workloads/trace_reader.h"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "workloads/trace.h"
#include "workloads/trace_error.h"
#include "workloads/trace_writer.h"

namespace dtsim::workloads {
namespace {

using nlohmann::json;

// The message of the TraceError that reading `path` throws, or "<no error>".
std::string read_error(const std::string& path) {
  try {
    (void)read_workload(path);
  } catch (const TraceError& e) {
    return e.what();
  }
  return "<no error>";
}

// The message of the TraceError that workload_from_json(`text`, "inline.json") throws.
std::string parse_error(const std::string& text) {
  try {
    (void)workload_from_json(json::parse(text), "inline.json");
  } catch (const TraceError& e) {
    return e.what();
  }
  return "<no error>";
}

// A valid trace with one layer; `layer` replaces that layer's JSON object.
std::string one_layer_trace(const std::string& layer) {
  return R"({"format_version": 1, "model": "m", "device": "d", "precision": "fp32",
             "batch_per_device": 8, "source": "s", "optimizer_sec": 0, "layers": [)" +
         layer + "]}";
}

TEST(TraceReader, ReadsEveryFieldOfTinyTrace) {
  // Field by field from tests/testdata/wl_tiny_trace.json.
  const Workload expected{
      .format_version = 1,
      .model = "tiny_mlp",
      .device = "test-device",
      .precision = "fp32",
      .batch_per_device = 8,
      .source = "hand-written test data: three layers, round numbers",
      .optimizer_sec = 0.0005,
      .layers = {{.name = "fc1",
                  .forward_sec = 0.001,
                  .backward_sec = 0.002,
                  .param_bytes = 4000,
                  .forward_flops = 1e6},
                 {.name = "relu", .forward_sec = 0.0001, .backward_sec = 0.0001, .param_bytes = 0},
                 {.name = "fc2",
                  .forward_sec = 0.003,
                  .backward_sec = 0.006,
                  .param_bytes = 2000000,
                  .forward_flops = 3e6}}};
  EXPECT_EQ(read_workload("tests/testdata/wl_tiny_trace.json"), expected);
}

TEST(TraceReader, KeepsLayersInFileOrder) {
  const Workload w = read_workload("tests/testdata/wl_tiny_trace.json");
  ASSERT_EQ(w.layers.size(), 3u);
  EXPECT_EQ(w.layers[0].name, "fc1");
  EXPECT_EQ(w.layers[1].name, "relu");
  EXPECT_EQ(w.layers[2].name, "fc2");
}

TEST(TraceReader, SumsOfTinyTraceMatchHandCalculation) {
  const Workload w = read_workload("tests/testdata/wl_tiny_trace.json");
  // 4000 + 0 + 2000000 bytes.
  EXPECT_EQ(w.param_bytes(), 2004000u);
  // 0.001 + 0.0001 + 0.003 s.
  EXPECT_DOUBLE_EQ(w.forward_sec(), 0.0041);
  // 0.002 + 0.0001 + 0.006 s.
  EXPECT_DOUBLE_EQ(w.backward_sec(), 0.0081);
  // forward 0.0041 + backward 0.0081 + optimizer 0.0005 s.
  EXPECT_DOUBLE_EQ(w.compute_sec(), 0.0127);
}

TEST(TraceReader, LeavesAbsentForwardFlopsEmpty) {
  const Workload w = read_workload("tests/testdata/wl_tiny_trace.json");
  // The "relu" layer of wl_tiny_trace.json has no forward_flops key.
  EXPECT_FALSE(w.layers[1].forward_flops.has_value());
}

TEST(TraceReader, AcceptsParamBytesUpTo1PiBAndNoMore) {
  // 2^50 = 1125899906842624 (workloads::kMaxBytes) is accepted; 2^64 - 1, which overflowed the
  // collectives' byte arithmetic, is not.
  const Workload w = workload_from_json(
      json::parse(one_layer_trace(
          R"({"name": "a", "forward_sec": 0, "backward_sec": 0, "param_bytes": 1125899906842624})")),
      "inline.json");
  EXPECT_EQ(w.layers[0].param_bytes, std::uint64_t{1} << 50);
  EXPECT_EQ(
      parse_error(one_layer_trace(
          R"({"name": "a", "forward_sec": 0, "backward_sec": 0, "param_bytes": 18446744073709551615})")),
      "inline.json: /layers/0/param_bytes: expected at most 2^50 (1 PiB), got "
      "18446744073709551615");
}

TEST(TraceReader, RejectsGradientsOfMoreThan1PiBInAll) {
  // Two layers of 2^50 bytes each: each is allowed, their sum 2^51 is not.
  EXPECT_EQ(
      parse_error(one_layer_trace(
          R"({"name": "a", "forward_sec": 0, "backward_sec": 0, "param_bytes": 1125899906842624},
             {"name": "b", "forward_sec": 0, "backward_sec": 0, "param_bytes": 1125899906842624})")),
      "inline.json: /layers: the layers' param_bytes add up to more than 2^50 (1 PiB)");
}

TEST(TraceReader, AcceptsNonNegativeIntegersBuiltInCode) {
  // Bug: nlohmann stores a non-negative integer *parsed from text* as number_unsigned but one
  // *built in C++* (json(4000)) as number_integer, and JsonFields::unsigned_integer accepted only
  // the former, so workload_from_json rejected a document built in code with
  // "expected an integer >= 0, got number 4000".
  json doc = json::parse(
      one_layer_trace(R"({"name": "a", "forward_sec": 0, "backward_sec": 0, "param_bytes": 0})"));
  doc["layers"][0]["param_bytes"] = 4000;  // an int: stored as number_integer
  ASSERT_TRUE(doc["layers"][0]["param_bytes"].is_number_integer());
  ASSERT_FALSE(doc["layers"][0]["param_bytes"].is_number_unsigned());
  EXPECT_EQ(workload_from_json(doc, "inline.json").layers[0].param_bytes, 4000u);
}

TEST(TraceReader, ReportsMissingFile) {
  EXPECT_EQ(read_error("tests/testdata/wl_no_such_trace.json"),
            "tests/testdata/wl_no_such_trace.json: cannot open workload trace");
}

TEST(TraceReader, ReportsMalformedJsonWithLineAndColumn) {
  // wl_malformed.json has a trailing comma after "model": the parser meets '}' on line 4, column 1
  // where it expects the next key.
  EXPECT_EQ(
      read_error("tests/testdata/wl_malformed.json"),
      "tests/testdata/wl_malformed.json: [json.exception.parse_error.101] parse error at line "
      "4, column 1: syntax error while parsing object key - unexpected '}'; expected string "
      "literal");
}

TEST(TraceReader, ReportsJsonPointerOfWrongField) {
  EXPECT_EQ(read_error("tests/testdata/wl_wrong_type.json"),
            "tests/testdata/wl_wrong_type.json: /layers/1/forward_sec: expected a number, got "
            "string \"3ms\"");
}

TEST(TraceReader, RejectsNegativeForwardSec) {
  EXPECT_EQ(read_error("tests/testdata/wl_negative_forward.json"),
            "tests/testdata/wl_negative_forward.json: /layers/0/forward_sec: expected a finite "
            "number >= 0, got -1");
}

TEST(TraceReader, RejectsUnknownLayerKeyAndListsTheKnownOnes) {
  EXPECT_EQ(read_error("tests/testdata/wl_unknown_key.json"),
            "tests/testdata/wl_unknown_key.json: /layers/0/flops: unknown key (expected one of "
            "name, forward_sec, backward_sec, param_bytes, forward_flops, forward_iqr_sec, "
            "backward_iqr_sec, activation_bytes)");
}

TEST(TraceReader, RejectsUnknownTopLevelKey) {
  EXPECT_EQ(parse_error(R"({"format_version": 1, "model": "m", "device": "d", "precision": "p",
                           "batch_per_device": 1, "source": "s", "optimizer_sec": 0,
                           "layers": [{"name": "a", "forward_sec": 0, "backward_sec": 0,
                                       "param_bytes": 0}],
                           "comment": "x"})"),
            "inline.json: /comment: unknown key (expected one of format_version, model, device, "
            "precision, batch_per_device, source, optimizer_sec, layers, measurement)");
}

TEST(TraceReader, RejectsDuplicateLayerNameNamingTheFirstUse) {
  EXPECT_EQ(read_error("tests/testdata/wl_duplicate_name.json"),
            "tests/testdata/wl_duplicate_name.json: /layers/2/name: \"fc\" already names "
            "/layers/0");
}

TEST(TraceReader, RejectsOtherFormatVersionBeforeLookingFurther) {
  // wl_version4.json also has a non-array "layers", which is not reported: nothing else of a file
  // of another version is checked.
  EXPECT_EQ(read_error("tests/testdata/wl_version4.json"),
            "tests/testdata/wl_version4.json: /format_version: unsupported version 4 (this dtsim "
            "reads versions 1 to 3)");
}

TEST(TraceReader, RejectsMissingFormatVersion) {
  EXPECT_EQ(parse_error(R"({"model": "m", "device": "d", "precision": "p", "batch_per_device": 1,
                           "source": "s", "optimizer_sec": 0,
                           "layers": [{"name": "a", "forward_sec": 0, "backward_sec": 0,
                                       "param_bytes": 0}]})"),
            "inline.json: /format_version: missing");
}

TEST(TraceReader, RejectsFormatVersionWrittenAsFloat) {
  // JSON Schema would call 1.0 an integer; the reader wants an integer literal.
  EXPECT_EQ(parse_error(R"({"format_version": 1.0, "model": "m", "device": "d", "precision": "p",
                           "batch_per_device": 1, "source": "s", "optimizer_sec": 0,
                           "layers": [{"name": "a", "forward_sec": 0, "backward_sec": 0,
                                       "param_bytes": 0}]})"),
            "inline.json: /format_version: expected an integer, got number 1.0");
}

TEST(TraceReader, RejectsFractionalParamBytes) {
  EXPECT_EQ(parse_error(one_layer_trace(
                R"({"name": "a", "forward_sec": 0, "backward_sec": 0, "param_bytes": 4000.5})")),
            "inline.json: /layers/0/param_bytes: expected an integer >= 0, got number 4000.5");
}

TEST(TraceReader, RejectsDocumentThatIsNotAnObject) {
  EXPECT_EQ(parse_error("[1, 2]"), "inline.json: /: expected an object, got array [1,2]");
}

TEST(TraceReader, RejectsLayersThatAreNotAnArray) {
  EXPECT_EQ(parse_error(R"({"format_version": 1, "model": "m", "device": "d", "precision": "p",
                           "batch_per_device": 1, "source": "s", "optimizer_sec": 0,
                           "layers": {"name": "a"}})"),
            "inline.json: /layers: expected an array of layers, got object {\"name\":\"a\"}");
}

TEST(TraceReader, RejectsTraceWithoutLayers) {
  EXPECT_EQ(parse_error(R"({"format_version": 1, "model": "m", "device": "d", "precision": "p",
                           "batch_per_device": 1, "source": "s", "optimizer_sec": 0,
                           "layers": []})"),
            "inline.json: /layers: a trace needs at least one layer");
}

TEST(TraceReader, RejectsBatchPerDeviceBeyondIntRange) {
  // Bug: 4294967297 = 2^32 + 1 was narrowed to int, became 1 and was accepted as batch 1.
  EXPECT_EQ(parse_error(R"({"format_version": 1, "model": "m", "device": "d", "precision": "p",
                           "batch_per_device": 4294967297, "source": "s", "optimizer_sec": 0,
                           "layers": [{"name": "a", "forward_sec": 0, "backward_sec": 0,
                                       "param_bytes": 0}]})"),
            "inline.json: /batch_per_device: expected an integer between 1 and 2147483647, got "
            "4294967297");
}

TEST(TraceReader, ReportsEveryStructuralProblemAtOnce) {
  // In document order, except that an object's unknown keys come first (sorted by key).
  EXPECT_EQ(read_error("tests/testdata/wl_many_problems.json"),
            "tests/testdata/wl_many_problems.json: /comment: unknown key (expected one of "
            "format_version, model, device, precision, batch_per_device, source, optimizer_sec, "
            "layers, measurement)\n"
            "tests/testdata/wl_many_problems.json: /device: expected a string, got number 7\n"
            "tests/testdata/wl_many_problems.json: /batch_per_device: missing\n"
            "tests/testdata/wl_many_problems.json: /layers/0/backward_sec: expected a number, got "
            "null\n"
            "tests/testdata/wl_many_problems.json: /layers/1/param_bytes: expected an integer >= "
            "0, got number -5\n"
            "tests/testdata/wl_many_problems.json: /layers/2: expected an object, got number 42");
}

TEST(TraceReader, ReportsEveryValueProblemAtOnce) {
  EXPECT_EQ(read_error("tests/testdata/wl_many_semantic_problems.json"),
            "tests/testdata/wl_many_semantic_problems.json: /model: must not be empty\n"
            "tests/testdata/wl_many_semantic_problems.json: /batch_per_device: expected an "
            "integer > 0, got 0\n"
            "tests/testdata/wl_many_semantic_problems.json: /optimizer_sec: expected a finite "
            "number >= 0, got -0.5\n"
            "tests/testdata/wl_many_semantic_problems.json: /layers/0/backward_sec: expected a "
            "finite number >= 0, got -0.002\n"
            "tests/testdata/wl_many_semantic_problems.json: /layers/0/forward_flops: expected a "
            "finite number >= 0, got -1\n"
            "tests/testdata/wl_many_semantic_problems.json: /layers/1/name: must not be empty\n"
            "tests/testdata/wl_many_semantic_problems.json: /layers/2/name: \"fc1\" already "
            "names /layers/0");
}

TEST(TraceReader, ReportsNumberTooLargeForADouble) {
  // Bug: nlohmann reports 1e400 as json::out_of_range, not json::parse_error, and read_workload
  // caught only parse_error, so the exception left without the file name and dtsim aborted
  // (exit 134) instead of exiting with code 2.
  EXPECT_EQ(read_error("tests/testdata/wl_number_overflow.json"),
            "tests/testdata/wl_number_overflow.json: [json.exception.out_of_range.406] number "
            "overflow parsing '1e400'");
}

TEST(TraceReader, RejectsNonFiniteTimeBuiltInCode) {
  // JSON text cannot hold infinity (see above), but a document built in C++ can.
  json doc = json::parse(
      one_layer_trace(R"({"name": "a", "forward_sec": 0, "backward_sec": 0, "param_bytes": 0})"));
  doc["layers"][0]["backward_sec"] = std::numeric_limits<double>::infinity();
  try {
    (void)workload_from_json(doc, "inline.json");
    ADD_FAILURE() << "no TraceError";
  } catch (const TraceError& e) {
    EXPECT_EQ(std::string(e.what()),
              "inline.json: /layers/0/backward_sec: expected a finite number >= 0, got inf");
  }
}

TEST(TraceReader, ReportsValueProblemsAlongsideTypeProblems) {
  // Values are checked even when other fields failed to read: type problems first, then value
  // problems.
  EXPECT_EQ(parse_error(R"({"format_version": 1, "model": "m", "device": "d", "precision": "p",
                           "batch_per_device": 1, "source": "s", "optimizer_sec": -1,
                           "layers": [{"name": "a", "forward_sec": "1", "backward_sec": 0,
                                       "param_bytes": 0}]})"),
            "inline.json: /layers/0/forward_sec: expected a number, got string \"1\"\n"
            "inline.json: /optimizer_sec: expected a finite number >= 0, got -1");
}

TEST(TraceReader, DoesNotCheckValuesOfFieldsThatFailedToRead) {
  // The missing name is not also reported as empty, nor the string time as negative.
  EXPECT_EQ(parse_error(one_layer_trace(R"({"forward_sec": "-1", "backward_sec": 0,
                                           "param_bytes": 0})")),
            "inline.json: /layers/0/name: missing\n"
            "inline.json: /layers/0/forward_sec: expected a number, got string \"-1\"");
}

TEST(TraceReader, DoesNotCheckFieldsInsideAnObjectThatFailedToRead) {
  // Bug: the fields of a layer that is not an object were then checked as defaults, adding
  // "/layers/0/name: must not be empty"; for a document that is not an object, "/model: must not
  // be empty" and "/layers: a trace needs at least one layer".
  EXPECT_EQ(parse_error(one_layer_trace("42")),
            "inline.json: /layers/0: expected an object, got number 42");
  EXPECT_EQ(parse_error("[1, 2]"), "inline.json: /: expected an object, got array [1,2]");
}

}  // namespace
}  // namespace dtsim::workloads

namespace dtsim::workloads {
namespace {

TEST(TraceReaderV2, ReadsMeasurementAndSpreads) {
  const Workload w = read_workload("tests/testdata/wl_measured_v2.json");
  EXPECT_EQ(w.format_version, 2);
  ASSERT_TRUE(w.measurement.has_value());
  EXPECT_EQ(w.measurement->clock, "cuda_events");
  EXPECT_EQ(w.measurement->warmup_iterations, 5);
  EXPECT_EQ(w.measurement->timed_iterations, 20);
  EXPECT_EQ(w.measurement->host, "NVIDIA H200");
  EXPECT_EQ(w.layers[0].forward_iqr_sec, 0.00001);
  EXPECT_EQ(w.layers[0].backward_iqr_sec, 0.00002);
  EXPECT_FALSE(w.layers[1].forward_iqr_sec.has_value());
}

TEST(TraceReaderV2, RoundTripsThroughTheWriter) {
  const Workload w = read_workload("tests/testdata/wl_measured_v2.json");
  EXPECT_EQ(workload_from_json(nlohmann::json::parse(workload_to_json(w).dump()), "x"), w);
}

TEST(TraceReaderV2, VersionOneFilesCannotUseVersionTwoFields) {
  EXPECT_EQ(read_error("tests/testdata/wl_v1_with_v2_fields.json"),
            "tests/testdata/wl_v1_with_v2_fields.json: /measurement: needs format_version 2\n"
            "tests/testdata/wl_v1_with_v2_fields.json: /measurement/clock: expected cuda_events, "
            "thread_cpu or wall, got \"sundial\"\n"
            "tests/testdata/wl_v1_with_v2_fields.json: /measurement/timed_iterations: expected an "
            "integer >= 1, got 0\n"
            "tests/testdata/wl_v1_with_v2_fields.json: /layers/0/backward_iqr_sec: needs "
            "format_version 2");
}

}  // namespace
}  // namespace dtsim::workloads

namespace dtsim::workloads {
namespace {

// A valid version-3 trace with one layer; `layer` replaces that layer's JSON object.
std::string v3_trace(const std::string& layer, int version = 3) {
  return R"({"format_version": )" + std::to_string(version) +
         R"(, "model": "m", "device": "d", "precision": "fp32",
             "batch_per_device": 8, "source": "s", "optimizer_sec": 0, "layers": [)" +
         layer + "]}";
}

TEST(TraceReaderV3, ReadsActivationBytesAndLeavesAbsentOnesUnknown) {
  const Workload w = read_workload("tests/testdata/wl_tiny_v3.json");
  EXPECT_EQ(w.format_version, 3);
  // fc1 outputs 8 x 100 fp32 values, fc2 8 x 10; relu has no activation_bytes key.
  EXPECT_EQ(w.layers[0].activation_bytes, std::uint64_t{8 * 100 * 4});
  EXPECT_FALSE(w.layers[1].activation_bytes.has_value());
  EXPECT_EQ(w.layers[2].activation_bytes, std::uint64_t{8 * 10 * 4});
  EXPECT_EQ(workload_from_json(json::parse(workload_to_json(w).dump()), "x"), w);
}

TEST(TraceReaderV3, AcceptsActivationBytesUpTo1PiBAndNoMore) {
  const std::string at_most = v3_trace(R"({"name": "a", "forward_sec": 0, "backward_sec": 0,
                             "param_bytes": 0, "activation_bytes": 1125899906842624})");
  const Workload w = workload_from_json(json::parse(at_most), "inline.json");
  EXPECT_EQ(w.layers[0].activation_bytes, std::uint64_t{1} << 50);
  EXPECT_EQ(parse_error(v3_trace(R"({"name": "a", "forward_sec": 0, "backward_sec": 0,
                                     "param_bytes": 0, "activation_bytes": 1125899906842625})")),
            "inline.json: /layers/0/activation_bytes: expected at most 2^50 (1 PiB), got "
            "1125899906842625");
}

TEST(TraceReaderV3, RejectsActivationBytesThatAreNotNonNegativeIntegers) {
  EXPECT_EQ(parse_error(v3_trace(R"({"name": "a", "forward_sec": 0, "backward_sec": 0,
                                     "param_bytes": 0, "activation_bytes": -4})")),
            "inline.json: /layers/0/activation_bytes: expected an integer >= 0, got number -4");
  EXPECT_EQ(parse_error(v3_trace(R"({"name": "a", "forward_sec": 0, "backward_sec": 0,
                                     "param_bytes": 0, "activation_bytes": 320.5})")),
            "inline.json: /layers/0/activation_bytes: expected an integer >= 0, got number "
            "320.5");
  EXPECT_EQ(parse_error(v3_trace(R"({"name": "a", "forward_sec": 0, "backward_sec": 0,
                                     "param_bytes": 0, "activation_bytes": "320"})")),
            "inline.json: /layers/0/activation_bytes: expected an integer >= 0, got string "
            "\"320\"");
}

TEST(TraceReaderV3, OlderVersionsCannotUseActivationBytes) {
  for (const int version : {1, 2}) {
    EXPECT_EQ(parse_error(v3_trace(R"({"name": "a", "forward_sec": 0, "backward_sec": 0,
                                       "param_bytes": 0, "activation_bytes": 320})",
                                   version)),
              "inline.json: /layers/0/activation_bytes: needs format_version 3")
        << version;
  }
}

TEST(TraceReaderV3, StillReadsVersionOneAndTwoFiles) {
  // The fixtures of versions 1 and 2 keep their version and have no activation sizes.
  for (const std::string path :
       {"tests/testdata/wl_tiny_trace.json", "tests/testdata/wl_measured_v2.json"}) {
    const Workload w = read_workload(path);
    EXPECT_LT(w.format_version, 3) << path;
    for (const Layer& layer : w.layers) {
      EXPECT_FALSE(layer.activation_bytes.has_value()) << path << " " << layer.name;
    }
  }
}

TEST(TraceReaderV3, ReadsEveryShippedTraceOfEveryVersion) {
  // The measured traces in workloads/traces/ (profiler runs that cannot be repeated exactly) stay
  // version 2; the analytical ones, regenerated, are version 3 with every layer's output size.
  std::vector<std::string> paths;
  for (const auto& entry : std::filesystem::directory_iterator("workloads/traces")) {
    if (entry.path().extension() == ".json") {
      paths.push_back(entry.path().string());
    }
  }
  std::sort(paths.begin(), paths.end());
  std::vector<std::string> old_versions;
  for (const std::string& path : paths) {
    const Workload w = read_workload(path);
    if (w.format_version < 3) {
      old_versions.push_back(std::filesystem::path(path).filename().string());
    }
    for (const Layer& layer : w.layers) {
      EXPECT_EQ(layer.activation_bytes.has_value(), w.format_version >= 3)
          << path << " " << layer.name;
    }
    // Written back in its own version, without keys that version does not have.
    EXPECT_EQ(workload_from_json(json::parse(workload_to_json(w).dump()), "x"), w) << path;
  }
  EXPECT_EQ(old_versions,
            (std::vector<std::string>{"bert_large_cpu_b2_seq128.json", "gpt2_cpu_b1_seq512.json",
                                      "gpt2_h200_b8_seq1024_bf16.json", "resnet50_cpu_b8.json",
                                      "resnet50_h200_b128_bf16.json", "vgg16_cpu_b4.json",
                                      "vgg16_h200_b32_fp32.json"}));
}

}  // namespace
}  // namespace dtsim::workloads
