// Named what-if optimizations on the hand-built graph of whatif_graphs.h; the expected values are
// worked out by hand from the datasheet figures in workloads/roofline.cpp.
#include "sim/whatif/optimizations.h"

#include <algorithm>
#include <cmath>

#include <gtest/gtest.h>

#include "sim/config_error.h"
#include "sim/graph/graph_validate.h"
#include "sim/whatif/bucket_cost.h"
#include "sim/whatif/op_classes.h"
#include "sim/whatif/what_if.h"
#include "tests/sim/whatif/whatif_graphs.h"
#include "workloads/roofline.h"
#include "workloads/trace_reader.h"

namespace dtsim::sim {
namespace {

using V = std::vector<std::int32_t>;

TEST(MixedPrecision, ScalesByDatasheetRatiosAndCastsTheWeights) {
  // V100: 15.7 TFLOP/s fp32, 125 fp16 (tensor cores); 900 GB/s. matmul x 15.7/125 = 0.1256,
  // memory x 2/4. The cast before forward a: 300 parameter bytes (both buckets) read as fp32 and
  // written as fp16: 300 * 6/4 = 450 bytes at 0.9 * 900e9 B/s.
  const ExecutionGraph g =
      mixed_precision(two_layer_graph(), workloads::find_device("v100"), "fp32", "fp16");
  const auto& n = g.programs[0].nodes;
  ASSERT_EQ(n.size(), 8u);
  EXPECT_DOUBLE_EQ(n[0].duration_sec, 450 / (0.9 * 900e9));
  EXPECT_EQ(g.labels[static_cast<std::size_t>(n[0].label)], "amp weight cast");
  EXPECT_DOUBLE_EQ(n[1].duration_sec, 1.0 * 0.1256);  // forward a
  EXPECT_DOUBLE_EQ(n[2].duration_sec, 0.25);          // forward b
  EXPECT_DOUBLE_EQ(n[3].duration_sec, 0.5);           // backward b
  EXPECT_DOUBLE_EQ(n[4].duration_sec, 2.0 * 0.1256);  // backward a
  EXPECT_EQ(n[5].bytes, 100u);                        // fp32 gradients: bytes kept
  EXPECT_DOUBLE_EQ(n[7].duration_sec, 0.125);         // optimizer
  EXPECT_EQ(deps_of(g, 1), (V{0}));
}

TEST(MixedPrecision, Tf32ToBf16OnAnA100) {
  // A100: 156 TF32, 312 bf16: matmul x 0.5.
  const ExecutionGraph g =
      mixed_precision(two_layer_graph(), workloads::find_device("a100"), "tf32", "bf16");
  EXPECT_DOUBLE_EQ(g.programs[0].nodes[4].duration_sec, 1.0);
}

TEST(MixedPrecision, RefusesUntaggedComputeAndAMissingPrecision) {
  ExecutionGraph untagged = two_layer_graph();
  untagged.programs[0].nodes[2].op_class = -1;
  // fp8 (workloads/TRANSFORMER.md): no single peak scales an fp8 run's matmul nodes.
  EXPECT_THROW(
      (void)mixed_precision(two_layer_graph(), workloads::find_device("h100"), "bf16", "fp8"),
      ConfigError);
  EXPECT_THROW((void)mixed_precision(untagged, workloads::find_device("v100"), "fp32", "fp16"),
               ConfigError);
  try {
    (void)mixed_precision(two_layer_graph(), workloads::find_device("v100"), "fp32", "bf16");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("bf16"), std::string::npos) << e.what();
  }
}

TEST(ChangeGpu, ComputeByPeaksMemoryByBandwidth) {
  // V100 -> H100 at fp32: matmul x 15.7/67, memory x 900/3350.
  const ExecutionGraph g = change_gpu(two_layer_graph(), workloads::find_device("v100"),
                                      workloads::find_device("h100"), "fp32");
  const auto& n = g.programs[0].nodes;
  EXPECT_DOUBLE_EQ(n[3].duration_sec, 2.0 * 15.7 / 67);
  EXPECT_DOUBLE_EQ(n[2].duration_sec, 1.0 * 900 / 3350);
  EXPECT_DOUBLE_EQ(n[6].duration_sec, 0.25 * 900 / 3350);
}

TEST(ChangeGpu, APowerLimitSlowsTheMatmulsOnly) {
  // An H100 held to 350 W of its 700: matmul nodes x 1 / (1/2)^(1/3) (roofline.h, clock_scale),
  // memory nodes unchanged.
  const ExecutionGraph g = change_gpu(two_layer_graph(), workloads::find_device("h100"),
                                      workloads::find_device("h100@350W"), "bf16");
  const auto& n = g.programs[0].nodes;
  EXPECT_NEAR(n[3].duration_sec, 2.0 / std::cbrt(0.5), 1e-12);
  EXPECT_DOUBLE_EQ(n[2].duration_sec, 1.0);
  EXPECT_DOUBLE_EQ(n[6].duration_sec, 0.25);
}

TEST(CatalogueDevice, ReadsAGeneratedTracesPowerLimitBack) {
  // A trace generated with --device NAME@WATTS records the limited GPU's full name.
  EXPECT_EQ(catalogue_device(workloads::find_device("v100@150W").full_name), "v100@150W");
  EXPECT_EQ(catalogue_device("NVIDIA V100-SXM2"), "v100");
  EXPECT_EQ(catalogue_device("Tesla V100-SXM2-32GB at a 200 W power limit"), "v100@200W");
  EXPECT_EQ(catalogue_device("a TPU at a 200 W power limit"), "");
}

TEST(CompressGradients, ScalesBytesAndInsertsEncodeAndDecode) {
  // r = 0.1; encode and decode stream (1 + r) x the bytes at 1e3 B/s: 0.11 s for b's 100 bytes,
  // 0.22 s for a's 200. Order: 0 1 2(bwd b) Eb 3(bwd a) Ea ARb Db ARa Da opt.
  const ExecutionGraph g = compress_gradients(two_layer_graph(), 0.1, 1e3);
  const auto& n = g.programs[0].nodes;
  ASSERT_EQ(n.size(), 11u);
  EXPECT_DOUBLE_EQ(n[3].duration_sec, 0.11);
  EXPECT_EQ(deps_of(g, 3), (V{2}));
  EXPECT_DOUBLE_EQ(n[5].duration_sec, 0.22);
  EXPECT_EQ(deps_of(g, 5), (V{4}));
  EXPECT_EQ(n[6].bytes, 10u);
  EXPECT_EQ(deps_of(g, 6), (V{3}));
  EXPECT_EQ(deps_of(g, 7), (V{6}));  // decode b
  EXPECT_EQ(n[8].bytes, 20u);
  EXPECT_EQ(deps_of(g, 8), (V{5}));
  EXPECT_EQ(deps_of(g, 9), (V{8}));   // decode a
  EXPECT_EQ(deps_of(g, 10), (V{9}));  // the optimizer waits for the last decode
  EXPECT_TRUE(validate_execution_graph(g).empty());
}

TEST(ScaleNetwork, EveryLinkOfTheSpec) {
  platforms::PlatformSpec spec{
      .file = "p.json",
      .topology =
          platforms::StarSpec{.hosts = 4, .link = {25e9, 1e-6}, .node = platforms::NodeSpec{}}};
  scale_network(spec, 2, 0.5);
  const auto& star = std::get<platforms::StarSpec>(spec.topology);
  EXPECT_EQ(star.link.bandwidth_bytes_per_sec, 50e9);
  EXPECT_EQ(star.link.latency_sec, 0.5e-6);
  EXPECT_EQ(star.node->gpu_link_bandwidth_bytes_per_sec, 600e9);
  EXPECT_EQ(star.node->nic_bandwidth_bytes_per_sec, 50e9);
  platforms::PlatformSpec xml{.file = "p.xml", .topology = platforms::XmlSpec{.path = "p.xml"}};
  EXPECT_THROW(scale_network(xml, 2, 1), ConfigError);
}

TEST(LayerOpClasses, ComputeBoundAtHalfTheFastestLayersRate) {
  // Achieved FLOP/s: 1e12, 0.4e12 (below half), none, 0.6e12.
  workloads::Workload w;
  w.layers = {{.name = "a", .forward_sec = 1, .forward_flops = 1e12},
              {.name = "b", .forward_sec = 1, .forward_flops = 4e11},
              {.name = "c", .forward_sec = 1},
              {.name = "d", .forward_sec = 2, .forward_flops = 1.2e12}};
  EXPECT_EQ(layer_op_classes(w),
            (std::vector<std::string>{"matmul", "memory", "memory", "matmul"}));
  w.layers = {{.name = "a", .forward_sec = 1}};
  EXPECT_TRUE(layer_op_classes(w).empty());
}

TEST(FuseOptimizer, TheStepCostsItsBytesWhereThatIsLess) {
  // two_layer_graph: 300 gradient bytes = 75 fp32 parameters; AdamW moves 28 bytes each:
  // 2100 bytes at 1000 B/s = 2.1 s fused. The step takes 0.25 s: already less, kept.
  EXPECT_EQ(fuse_optimizer(two_layer_graph(), 28, 1000), two_layer_graph());
  // At 1e6 B/s the fused step takes 2.1 ms instead of 0.25 s.
  const ExecutionGraph g = fuse_optimizer(two_layer_graph(), 28, 1e6);
  EXPECT_DOUBLE_EQ(g.programs[0].nodes[6].duration_sec, 2100 / 1e6);
  EXPECT_EQ(g.programs[0].nodes[2].duration_sec, 1.0);  // nothing else moves
  ExecutionGraph no_gradients = two_layer_graph();
  no_gradients.programs[0].nodes[4].bytes = 0;
  no_gradients.programs[0].nodes[5].bytes = 0;
  EXPECT_THROW((void)fuse_optimizer(no_gradients, 28, 1e6), ConfigError);
}

TEST(ParseWhatIf, KnowsEachForm) {
  EXPECT_EQ(parse_what_if("network=2x").kind, WhatIfKind::kPlatform);
  EXPECT_EQ(parse_what_if("network=2x").factor, 2);
  EXPECT_EQ(parse_what_if("fp16").name, "amp");
  EXPECT_EQ(parse_what_if("compress=0.01").factor, 0.01);
  EXPECT_EQ(parse_what_if("p3=4MB").factor, 4e6);
  EXPECT_EQ(parse_what_if("fused-optimizer=adamw").value, "adamw");
  EXPECT_EQ(parse_what_if("algorithm@tp=tree").role, "tp");
  EXPECT_THROW((void)parse_what_if("fused-optimizer=adam"), ConfigError);
  EXPECT_THROW((void)parse_what_if("p3=0"), ConfigError);
  EXPECT_THROW((void)parse_what_if("algorithm@=tree"), ConfigError);
  const std::vector<std::string> flags{"bucket-mb", "zero"};
  const WhatIf knob = parse_what_if("bucket-mb=1", flags);
  EXPECT_EQ(knob.kind, WhatIfKind::kFlag);
  EXPECT_EQ(knob.value, "1");
  try {
    (void)parse_what_if("gpu=a999");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(),
                 "apply gpu=a999: a999: unknown device (expected one of v100, v100-pcie, t4, a100, "
                 "a100-40gb, a100-pcie, a10, l40s, l4, h100-pcie, h100, h200, b200, or one of them "
                 "@WATTS, e.g. h100@500W)");
  }
  EXPECT_THROW((void)parse_what_if("bucket-mb=1"), ConfigError);  // not a flag here
  EXPECT_THROW((void)parse_what_if("compress=2"), ConfigError);
  EXPECT_THROW((void)parse_what_if("network=-1x"), ConfigError);
}

TEST(ApplyGraphWhatIfs, NeedsTheDeviceForAmp) {
  const std::vector<WhatIf> amp{parse_what_if("amp")};
  EXPECT_THROW((void)apply_graph_what_ifs(two_layer_graph(), amp, {.origin = "g.json"}),
               ConfigError);
  const ExecutionGraph g = apply_graph_what_ifs(
      two_layer_graph(), amp, {.device = "v100", .precision = "fp32", .origin = "w.json"});
  EXPECT_EQ(g.programs[0].nodes.size(), 8u);
}

TEST(BucketContention, TakesTheSmShareWhileTheAllReduceOverlapsBackward) {
  // b's all-reduce (node 4) is ready after backward b (node 2); backward a (2 s) follows, so a
  // node of min(T, 2 s) x share goes right before it. a's all-reduce (node 5) is ready when
  // backward ends: nothing to slow. T = 0.5 s, share 0.1: 0.05 s; T = 10 s: 0.2 s.
  for (const auto& [t, expected] : {std::pair{0.5, 0.05}, std::pair{10.0, 0.2}}) {
    const ExecutionGraph g = add_bucket_contention(
        two_layer_graph(), [t = t](const ExecutionGraph&, const Node&) { return t; }, 0.1);
    const auto& n = g.programs[0].nodes;
    ASSERT_EQ(n.size(), 8u);
    EXPECT_DOUBLE_EQ(n[3].duration_sec, expected);
    EXPECT_EQ(g.labels[static_cast<std::size_t>(n[3].label)], "nccl sm share");
    EXPECT_EQ(n[4].layer, 0);  // backward a, now after it
    EXPECT_EQ(deps_of(g, 4), (V{3}));
    EXPECT_EQ(deps_of(g, 5), (V{2}));  // b's all-reduce still waits for backward b only
  }
  EXPECT_EQ(streaming_multiprocessors("v100"), 80);
  EXPECT_THROW((void)add_bucket_contention(
                   two_layer_graph(), [](const ExecutionGraph&, const Node&) { return 1.0; }, 2),
               ConfigError);
}

TEST(BucketKernels, RunOnTheComputeStreamBeforeEachGradientAllReduce) {
  // Each all-reduce (old nodes 4 and 5) gets a node of 1 ms that waits for its gradients (old
  // backward b = 2, backward a = 3) and that it waits for; in issue order right after them:
  // fwd a, fwd b, bwd b, kernels b, bwd a, kernels a, all-reduce b, all-reduce a, optimizer.
  const ExecutionGraph g = add_bucket_kernels(two_layer_graph(), 1e-3);
  const auto& n = g.programs[0].nodes;
  ASSERT_EQ(n.size(), 9u);
  for (const std::size_t i : {3u, 5u}) {
    EXPECT_EQ(n[i].kind, NodeKind::kCompute);
    EXPECT_EQ(n[i].duration_sec, 1e-3);
    EXPECT_EQ(g.labels[static_cast<std::size_t>(n[i].label)], "ddp bucket kernels");
  }
  EXPECT_EQ(n[4].layer, 0);  // backward a
  EXPECT_EQ(deps_of(g, 3), (V{2}));
  EXPECT_EQ(deps_of(g, 5), (V{4}));
  EXPECT_EQ(deps_of(g, 6), (V{3}));  // b's all-reduce
  EXPECT_EQ(deps_of(g, 7), (V{5}));  // a's all-reduce
  EXPECT_EQ(n[6].bytes, 100u);
  EXPECT_EQ(add_bucket_kernels(two_layer_graph(), 0).programs[0].nodes.size(), 7u);
  // A second all-reduce of b's gradients (a P3 slice: it waits for backward b too) is the same
  // bucket to DDP: still one kernel node per bucket, and both slices wait for it.
  ExecutionGraph sliced = two_layer_graph();
  sliced.programs[0].add({.kind = NodeKind::kCollective,
                          .phase = Phase::kBackward,
                          .layer = 1,
                          .last_layer = 1,
                          .label = 0,
                          .comm = 0,
                          .bytes = 50},
                         {2});
  const ExecutionGraph k = add_bucket_kernels(std::move(sliced), 1e-3);
  const auto& kn = k.programs[0].nodes;
  ASSERT_EQ(kn.size(), 10u);
  EXPECT_EQ(std::count_if(kn.begin(), kn.end(),
                          [&](const Node& x) {
                            return x.label >= 0 && k.labels[static_cast<std::size_t>(x.label)] ==
                                                       "ddp bucket kernels";
                          }),
            2);
  EXPECT_EQ(deps_of(k, 6), (V{3}));  // b's all-reduce
  EXPECT_EQ(deps_of(k, 9), (V{3}));  // and its second slice
  EXPECT_THROW((void)add_bucket_kernels(two_layer_graph(), -1), ConfigError);
  // The per-kernel costs the header cites (CSCS ReFrame; NVIDIA's forum for Hopper).
  EXPECT_EQ(kernel_launch_sec("v100"), 1.83e-6);
  EXPECT_EQ(kernel_launch_sec("a100"), 2.7e-6);
  EXPECT_EQ(kernel_launch_sec("h200"), 3e-6);
  EXPECT_EQ(kernel_launch_sec("mi300x"), 0);
}

TEST(LayerOpClasses, TheGeneratorsResNet50ConvolutionsAreComputeBound) {
  // workloads/traces/resnet50_v100_b32.json comes from the roofline generator: conv1 runs
  // 7.55e9 FLOPs in 0.73 ms (1.0e13 FLOP/s, the trace's top rate: compute-bound on a V100),
  // bn1 2.1e8 in 0.19 ms (1.1e12 FLOP/s: memory-bound), relu less still.
  const workloads::Workload w = workloads::read_workload("workloads/traces/resnet50_v100_b32.json");
  const std::vector<std::string> classes = layer_op_classes(w);
  ASSERT_EQ(classes.size(), w.layers.size());
  EXPECT_EQ(w.layers[0].name, "conv1");
  EXPECT_EQ(classes[0], "matmul");
  EXPECT_EQ(classes[1], "memory");  // bn1
  EXPECT_EQ(classes[2], "memory");  // relu
}

TEST(ApplyPlatformWhatIfs, NetworkScalesBandwidthLatencyDividesLatency) {
  platforms::PlatformSpec spec{.file = "p.json",
                               .topology = platforms::StarSpec{.hosts = 2, .link = {25e9, 1e-6}}};
  const std::vector<WhatIf> what_ifs{parse_what_if("network=2x"), parse_what_if("latency=4x"),
                                     parse_what_if("amp")};  // a graph pass: not the platform's
  apply_platform_what_ifs(spec, what_ifs);
  const auto& star = std::get<platforms::StarSpec>(spec.topology);
  EXPECT_EQ(star.link.bandwidth_bytes_per_sec, 50e9);
  EXPECT_DOUBLE_EQ(star.link.latency_sec, 0.25e-6);
}

}  // namespace
}  // namespace dtsim::sim
