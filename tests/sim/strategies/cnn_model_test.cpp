// CNN model parallelism (sim/strategies/CNN.md): halo bytes, the collectives of filter and
// channel splits, the unsplit case, bad splits, and the graphs they build.
#include "sim/strategies/cnn_model.h"

#include <gtest/gtest.h>

#include "sim/graph/graph_validate.h"
#include "sim/strategies/model_pieces.h"
#include "workloads/generator.h"

namespace dtsim::sim {
namespace {

using workloads::LayerCost;

struct Cnn {
  std::vector<LayerCost> layers;
  workloads::Workload trace;
  workloads::Roofline roofline;
};

Cnn zoo(const std::string& model, int batch, int image_size = 224) {
  const workloads::GeneratorConfig g{
      .shape = {.model = model, .batch = batch, .image_size = image_size},
      .device = "v100",
      .precision = "fp32"};
  return {.layers = workloads::model_layers(g.shape),
          .trace = workloads::generate_workload(g),
          .roofline = workloads::make_roofline(workloads::find_device("v100"), "fp32")};
}

HybridModel split_model(const Cnn& c, const CnnSplit& split) {
  EXPECT_EQ(check_cnn_split(c.layers, split), "");
  return model_from_cnn(c.layers, c.trace, c.roofline, split);
}

const ModelPiece& piece(const HybridModel& m, const std::string& name) {
  for (const ModelPiece& p : m.pieces) {
    if (p.name == name) {
      return p;
    }
  }
  ADD_FAILURE() << "no piece " << name;
  return m.pieces.front();
}

TEST(CnnModel, NoSplitIsTheTracesDataParallelModel) {
  // The unsplit CNN must be model_from_trace's pieces to the last bit, so that a spatial split
  // of 1 is today's data parallelism.
  for (const std::string model : {"resnet50", "vgg16", "alexnet"}) {
    const Cnn c = zoo(model, 4);
    const HybridModel split = split_model(c, {});
    const HybridModel dp = model_from_trace(c.trace);
    ASSERT_EQ(split.pieces.size(), dp.pieces.size()) << model;
    for (std::size_t i = 0; i < dp.pieces.size(); ++i) {
      EXPECT_EQ(split.pieces[i], dp.pieces[i]) << model << " " << dp.pieces[i].name;
    }
    EXPECT_EQ(split.optimizer_sec, dp.optimizer_sec);
    const HybridJob job{.degrees = {.dp = 4}, .iterations = 2};
    EXPECT_EQ(build_hybrid(split, job), build_hybrid(dp, job)) << model;
  }
}

TEST(CnnModel, HaloBytesOfThreeByThreeStrideOneAndTwo) {
  // resnet50 at batch 2 on a 2x2 grid (fp32). layer1.0.conv2: 3x3, stride 1, pad 1 on 64
  // channels of 56x56: tiles of 28x28; the tile above needs 1 row, the one below 1 row, a row
  // being 2 samples x 64 channels x 28 columns x 4 bytes = 14336 bytes; same in width.
  const HybridModel m = split_model(zoo("resnet50", 2), {.spatial = {2, 2, 1}});
  const ModelPiece& s1 = piece(m, "layer1.0.conv2");
  EXPECT_EQ(s1.halo_up_bytes, (std::array<std::uint64_t, 3>{14336, 14336, 0}));
  EXPECT_EQ(s1.halo_down_bytes, (std::array<std::uint64_t, 3>{14336, 14336, 0}));
  // layer2.0.conv2: 3x3, stride 2, pad 1 on 128 channels of 56x56: output row o reads input
  // rows 2o-1 .. 2o+1, so a tile needs 1 row from the tile below it and none from above:
  // up 1 row = 2 x 128 x 28 x 4 = 28672 bytes, down 3 - 2 - 1 = 0 rows.
  const ModelPiece& s2 = piece(m, "layer2.0.conv2");
  EXPECT_EQ(s2.halo_up_bytes, (std::array<std::uint64_t, 3>{28672, 28672, 0}));
  EXPECT_EQ(s2.halo_down_bytes, (std::array<std::uint64_t, 3>{0, 0, 0}));
  // A 1x1 convolution needs no neighbour.
  EXPECT_EQ(piece(m, "layer1.0.conv1").halo_up_bytes, (std::array<std::uint64_t, 3>{}));
}

TEST(CnnModel, HaloBytesOfSevenBySevenAndThreeD) {
  // resnet50's conv1: 7x7, stride 2, pad 3 on 3 channels of 224x224, tiles of 112 rows:
  // 3 rows up, 7 - 2 - 3 = 2 down, a row 2 x 3 x 112 x 4 = 2688 bytes. The first layer's input
  // needs no gradient: no halo in the backward pass.
  const HybridModel r = split_model(zoo("resnet50", 2), {.spatial = {2, 2, 1}});
  const ModelPiece& conv1 = r.pieces[0];
  EXPECT_EQ(conv1.name, "conv1");
  EXPECT_EQ(conv1.halo_up_bytes, (std::array<std::uint64_t, 3>{3 * 2688, 3 * 2688, 0}));
  EXPECT_EQ(conv1.halo_down_bytes, (std::array<std::uint64_t, 3>{2 * 2688, 2 * 2688, 0}));
  EXPECT_FALSE(conv1.backward_halo);
  // cosmoflow 128^3 on 2x2x2: its second conv (3x3x3, pad 1) sees 32 channels of 64^3 in
  // tiles of 32^3; a face is 1 sample x 32 channels x 32 x 32 x 4 bytes = 131072, every
  // dimension, both ways. A 2x2x2 pooling (stride 2, no pad) needs none.
  const HybridModel c = split_model(zoo("cosmoflow", 1, 128), {.spatial = {2, 2, 2}});
  const ModelPiece& conv = piece(c, "conv_blocks.1.conv");
  EXPECT_EQ(conv.halo_up_bytes, (std::array<std::uint64_t, 3>{131072, 131072, 131072}));
  EXPECT_EQ(conv.halo_down_bytes, (std::array<std::uint64_t, 3>{131072, 131072, 131072}));
  EXPECT_TRUE(conv.backward_halo);
  EXPECT_EQ(piece(c, "conv_blocks.1.pool").halo_up_bytes, (std::array<std::uint64_t, 3>{}));
  // The tile's compute: an eighth of the layer's FLOPs (its weights are all read).
  const Cnn whole = zoo("cosmoflow", 1, 128);
  EXPECT_LT(conv.forward_sec, whole.trace.layers[3].forward_sec / 7.9);
}

TEST(CnnModel, SpatialStatisticsPoolingAndGathers) {
  const HybridModel m = split_model(zoo("resnet50", 2), {.spatial = {2, 2, 1}});
  // Batch norm: per-channel sum and sum of squares in fp32, all-reduced both passes: 2 x 64 x 4.
  const ModelPiece& bn1 = piece(m, "bn1");
  ASSERT_EQ(bn1.collectives.size(), 2u);
  EXPECT_EQ(bn1.collectives[0].bytes, 512u);
  EXPECT_EQ(bn1.collectives[0].group, PieceGroup::kSpatial);
  // The global pool all-reduces its partial sums: 2 samples x 2048 channels x 4 bytes; the fc
  // after it is computed whole, with nothing to gather.
  const ModelPiece& pool = piece(m, "avgpool");
  ASSERT_EQ(pool.collectives.size(), 1u);
  EXPECT_EQ(pool.collectives[0].step, PieceStep::kAfterForward);
  EXPECT_EQ(pool.collectives[0].bytes, 2u * 2048 * 4);
  EXPECT_TRUE(piece(m, "fc").collectives.empty());
  // VGG-16's classifier flattens a 7x7 map: all-gathered first, 2 x 512 x 7 x 7 x 4 bytes.
  const HybridModel v = split_model(zoo("vgg16", 2), {.spatial = {2, 1, 1}});
  const ModelPiece& fc = piece(v, "classifier.0");
  ASSERT_EQ(fc.collectives.size(), 1u);
  EXPECT_EQ(fc.collectives[0].op, CollectiveOp::kAllGather);
  EXPECT_EQ(fc.collectives[0].bytes, 2u * 512 * 7 * 7 * 4);
}

TEST(CnnModel, FilterSplitGathersInputsAndReduceScattersTheirGradients) {
  // vgg16, batch 2, filter=4 (CNN.md, "Filter"): features.0 reads the whole image (no
  // collective) and leaves its 64 output channels split; features.2 all-gathers its input
  // (2 x 64 x 224 x 224 x 4 bytes) before its forward and reduce-scatters the input's gradient
  // after its backward; the ReLU between works on its 16 channels.
  const Cnn c = zoo("vgg16", 2);
  const HybridModel m = split_model(c, {.filter = 4});
  const std::uint64_t map = 2ULL * 64 * 224 * 224 * 4;
  EXPECT_TRUE(piece(m, "features.0").collectives.empty());
  const ModelPiece& f2 = piece(m, "features.2");
  ASSERT_EQ(f2.collectives.size(), 2u);
  EXPECT_EQ(f2.collectives[0], (PieceCollective{.step = PieceStep::kBeforeForward,
                                                .op = CollectiveOp::kAllGather,
                                                .group = PieceGroup::kTp,
                                                .bytes = map}));
  EXPECT_EQ(f2.collectives[1], (PieceCollective{.step = PieceStep::kAfterBackward,
                                                .op = CollectiveOp::kReduceScatter,
                                                .group = PieceGroup::kTp,
                                                .bytes = map}));
  // A quarter of the filters: a quarter of the weights' gradients (64 x 64 x 9 + 64 biases).
  EXPECT_EQ(f2.grad_bytes, (64ULL * 64 * 9 + 64) * 4 / 4);
  // The classifier's 1000 classes split 250 per rank; the loss gathers the logits.
  const ModelPiece& head = m.pieces.back();
  ASSERT_EQ(head.collectives.size(), 3u);
  EXPECT_EQ(head.collectives[0].bytes, 2u * 4096 * 4);
  EXPECT_EQ(head.collectives[2].op, CollectiveOp::kAllGather);
  EXPECT_EQ(head.collectives[2].bytes, 2u * 1000 * 4);
}

TEST(CnnModel, ChannelSplitReduceScattersOutputsAndGathersTheirGradients) {
  // vgg16, batch 2, channel=4 (CNN.md, "Channel"): features.0 has 3 input channels, fewer
  // than 4 ranks: computed whole. features.2 sums over its 16 of 64 input channels (a slice
  // of the whole input: the input's gradient all-gathered after the backward), then
  // reduce-scatters its output (2 x 64 x 224 x 224 x 4 bytes) and all-gathers the output's
  // gradient before its backward.
  const HybridModel m = split_model(zoo("vgg16", 2), {.channel = 4});
  const std::uint64_t map = 2ULL * 64 * 224 * 224 * 4;
  EXPECT_TRUE(piece(m, "features.0").collectives.empty());
  const ModelPiece& f2 = piece(m, "features.2");
  ASSERT_EQ(f2.collectives.size(), 3u);
  EXPECT_EQ(f2.collectives[0].step, PieceStep::kAfterBackward);
  EXPECT_EQ(f2.collectives[0].op, CollectiveOp::kAllGather);
  EXPECT_EQ(f2.collectives[1].op, CollectiveOp::kReduceScatter);
  EXPECT_EQ(f2.collectives[1].bytes, map);
  EXPECT_EQ(f2.collectives[2].step, PieceStep::kBeforeBackward);
  EXPECT_EQ(f2.collectives[2].op, CollectiveOp::kAllGather);
  // features.5 takes the split output: no gather of its input's gradient.
  EXPECT_EQ(piece(m, "features.5").collectives.size(), 2u);
  // The last layer all-reduces its partial logits: 2 x 1000 x 4 bytes.
  const ModelPiece& head = m.pieces.back();
  ASSERT_EQ(head.collectives.size(), 1u);
  EXPECT_EQ(head.collectives[0].op, CollectiveOp::kAllReduce);
  EXPECT_EQ(head.collectives[0].bytes, 2u * 1000 * 4);
}

TEST(CnnModel, BadSplitsAreRefusedWithTheReason) {
  const Cnn r = zoo("resnet50", 1);
  EXPECT_EQ(check_cnn_split(r.layers, {.spatial = {3, 1, 1}}),
            "spatial: the grid 3x1x1 does not tile the 224x224x1 input (3 does not divide 224)");
  EXPECT_EQ(check_cnn_split(r.layers, {.spatial = {2, 2, 2}}),
            "spatial: 2x2x2 splits the depth of a 2-D input");
  EXPECT_EQ(check_cnn_split(r.layers, {.filter = 4096}),
            "filter: 4096 splits, more than the widest layer's 2048 channels");
  EXPECT_EQ(check_cnn_split(r.layers, {.spatial = {2, 1, 1}, .channel = 2}),
            "spatial: one of spatial, filter and channel at a time (each beside dp and pp)");
  std::string why;
  EXPECT_FALSE(parse_spatial_grid("4", &why));
  EXPECT_FALSE(parse_spatial_grid("4x0", &why));
  EXPECT_FALSE(parse_spatial_grid("2x2x2x2", &why));
  EXPECT_EQ(parse_spatial_grid("4x2", &why), (std::array<int, 3>{4, 2, 1}));
}

// Halo sends of a program (on its "halo_*" roles).
int halo_sends(const Program& p) {
  int n = 0;
  for (const Node& node : p.nodes) {
    n += node.kind == NodeKind::kSend &&
         p.comms[static_cast<std::size_t>(node.comm)].starts_with("halo_");
  }
  return n;
}

TEST(CnnModel, SpatialGraphsValidateWithOneProgramPerPlaceInTheGrid) {
  // cosmoflow 64^3 split in 4 along its height, two replicas, two pipeline stages: valid
  // (matching sends and receives, no deadlock).
  const Cnn c = zoo("cosmoflow", 1, 64);
  const HybridModel m = split_model(c, {.spatial = {4, 1, 1}});
  HybridJob job{.degrees = {.cp = 4, .dp = 2, .pp = 2}, .micro_batches = 2, .iterations = 1};
  job.spatial_grid = {4, 1, 1};
  ASSERT_EQ(check_hybrid(m, job), "");
  const ExecutionGraph g = build_hybrid(m, job);
  EXPECT_EQ(validate_execution_graph(g), std::vector<std::string>{});
  // Per stage: first, inner and last in height: 6 programs. The first sends and receives on
  // one side only, an inner rank on both: twice as many halo transfers.
  ASSERT_EQ(g.programs.size(), 6u);
  EXPECT_EQ(g.programs[0].name, "stage 0 at h first");
  EXPECT_EQ(g.programs[1].name, "stage 0 at h inner");
  EXPECT_EQ(g.programs[2].name, "stage 0 at h last");
  EXPECT_GT(halo_sends(g.programs[0]), 0);
  EXPECT_EQ(2 * halo_sends(g.programs[0]), halo_sends(g.programs[1]));
  EXPECT_EQ(halo_sends(g.programs[0]), halo_sends(g.programs[2]));
}

TEST(CnnMemory, AlexnetByHand) {
  // torchvision's AlexNet, one 224x224 image, fp32, one GPU: 61,100,840 parameters, their
  // gradients and SGD's momentum at 4 bytes each; the outputs kept for the backward pass,
  // counted by hand layer by layer: conv 64x55x55 and its ReLU, pool 64x27x27, conv 192x27x27
  // and ReLU, pool 192x13x13, conv 384x13x13 and ReLU, two convs 256x13x13 and their ReLUs,
  // pool 256x6x6, fc 4096 and ReLU twice, fc 1000.
  const Cnn c = zoo("alexnet", 1);
  const HybridModel m = split_model(c, {});
  const HybridJob job{.degrees = {}, .micro_batches = 1};
  const MemoryReport r = cnn_memory(m, job, workloads::find_device("v100"), false);
  ASSERT_EQ(r.stages.size(), 1u);
  const StageMemory& s = r.stages[0];
  EXPECT_EQ(s.parameters_bytes, 61'100'840u * 4);
  EXPECT_EQ(s.gradients_bytes, 61'100'840u * 4);
  EXPECT_EQ(s.optimizer_bytes, 61'100'840u * 4);
  const std::uint64_t kept = 2 * 193'600 + 46'656 + 2 * 139'968 + 32'448 + 2 * 64'896 + 4 * 43'264 +
                             9'216 + 4 * 4'096 + 1'000;
  EXPECT_EQ(s.activations_bytes, kept * 4);
  EXPECT_EQ(s.communication_buffers_bytes, 0u);  // one rank: no communicator
  EXPECT_EQ(s.framework_reserve_bytes, kCudaContextBytes);
  EXPECT_FALSE(r.oom);
}

TEST(CnnMemory, SplitsAndPipelinesChangeWhatARankHolds) {
  const Cnn c = zoo("vgg16", 2);
  const HybridJob one{.micro_batches = 1};
  const StageMemory whole =
      cnn_memory(split_model(c, {}), one, workloads::find_device("v100"), false).stages[0];
  // filter=4: a quarter of most weights (those of the three fc layers and all convs but none
  // replicated: every layer has >= 4 filters), and the gathered inputs kept beside the shares.
  HybridJob filter{.degrees = {.tp = 4}, .micro_batches = 1};
  const HybridModel f = split_model(c, {.filter = 4});
  const StageMemory fs = cnn_memory(f, filter, workloads::find_device("v100"), false).stages[0];
  EXPECT_NEAR(1.0 * fs.parameters_bytes, whole.parameters_bytes / 4.0,
              1e-3 * whole.parameters_bytes);
  EXPECT_GT(fs.activations_bytes, whole.activations_bytes / 4);
  // 1F1B on 2 stages with 4 micro-batches: stage 0 holds 2 at once, GPipe all 4.
  HybridJob pipe{.degrees = {.pp = 2}, .micro_batches = 4};
  const HybridModel m = split_model(c, {});
  EXPECT_EQ(
      cnn_memory(m, pipe, workloads::find_device("v100"), false).stages[0].micro_batches_in_flight,
      2);
  pipe.schedule.kind = PipelineScheduleKind::kGpipe;
  EXPECT_EQ(
      cnn_memory(m, pipe, workloads::find_device("v100"), false).stages[0].micro_batches_in_flight,
      4);
}

}  // namespace
}  // namespace dtsim::sim
