#include "workloads/model_zoo.h"

#include <cmath>
#include <set>

#include <gtest/gtest.h>

#include "workloads/generator_error.h"

namespace dtsim::workloads {
namespace {

std::uint64_t total_params(const std::vector<LayerCost>& layers) {
  std::uint64_t total = 0;
  for (const LayerCost& l : layers) {
    total += l.params;
  }
  return total;
}

// Multiply-accumulates of the convolutions and fully connected layers, per sample: what
// torchvision's model table calls "GFLOPS".
double conv_fc_macs_per_sample(const std::vector<LayerCost>& layers, int batch) {
  double macs = 0;
  for (const LayerCost& l : layers) {
    if (l.cnn.op == CnnOp::kConv || l.cnn.op == CnnOp::kLinear) {
      macs += l.forward_flops / 2;
    }
  }
  return macs / batch;
}

// The layer of `layers` named `name` (a failed expectation and a blank cost if there is none).
LayerCost layer_named(const std::vector<LayerCost>& layers, const std::string& name) {
  for (const LayerCost& l : layers) {
    if (l.name == name) {
      return l;
    }
  }
  ADD_FAILURE() << "no layer " << name;
  return {};
}

TEST(ModelZoo, CnnParameterCountsEqualTorchvision) {
  // torchvision weights meta "num_params" (experiments/validation/data/published.csv rows
  // PARAM-01..09).
  const std::vector<std::pair<std::string, std::uint64_t>> expected{
      {"resnet18", 11'689'512},         {"resnet34", 21'797'672},
      {"resnet50", 25'557'032},         {"resnet101", 44'549'160},
      {"resnet152", 60'192'808},        {"resnext50_32x4d", 25'028'904},
      {"resnext101_32x8d", 88'791'336}, {"wide_resnet50_2", 68'883'240},
      {"vgg16", 138'357'544},           {"alexnet", 61'100'840},
      {"vgg11", 132'863'336},           {"vgg11_bn", 132'868'840},
      {"vgg13", 133'047'848},           {"vgg13_bn", 133'053'736},
      {"vgg16_bn", 138'365'992},        {"vgg19", 143'667'240},
      {"vgg19_bn", 143'678'248}};
  for (const auto& [model, params] : expected) {
    EXPECT_EQ(total_params(model_layers({.model = model, .batch = 1})), params) << model;
  }
  // inception_v3 with its auxiliary classifier (published.csv PARAM-10, "incl. aux head").
  EXPECT_EQ(total_params(model_layers({.model = "inception_v3", .batch = 1, .image_size = 299})),
            27'161'264u);
}

TEST(ModelZoo, InceptionBlocksBranchAndConcatenate) {
  const auto layers = model_layers({.model = "inception_v3", .batch = 2, .image_size = 299});
  const auto find = [&layers](const std::string& name) {
    for (const LayerCost& l : layers) {
      if (l.name == name) {
        return l;
      }
    }
    ADD_FAILURE() << name;
    return LayerCost{};
  };
  // The stem takes 299 to 35 (3x3 s2 valid: 149; 3x3 valid: 147; max pool 3 s2: 73; 3x3 valid:
  // 71; max pool: 35); Mixed_5b concatenates 64 + 64 + 96 + 32 channels.
  const LayerCost cat = find("Mixed_5b.cat");
  EXPECT_EQ(cat.cnn.out_channels, 256);
  EXPECT_EQ(cat.cnn.out_extent, (std::array<int, 3>{35, 35, 1}));
  // By hand, MACs per pixel of Mixed_5b's convolutions from 192 channels: 192*64 + 192*48 +
  // 25*48*64 + 192*64 + 9*64*96 + 9*96*96 + 192*32 = 254,976, on 35 x 35 pixels.
  double macs = 0;
  for (const LayerCost& l : layers) {
    if (l.name.starts_with("Mixed_5b.") && l.cnn.op == CnnOp::kConv) {
      macs += l.forward_flops / 2 / 2;  // batch 2
    }
  }
  EXPECT_DOUBLE_EQ(macs, 254'976.0 * 35 * 35);
  // A 1x7 convolution padded (0, 3) keeps 17 x 17: 7 * 128 * 128 MACs per pixel.
  const LayerCost rect = find("Mixed_6b.branch7x7_2.conv");
  EXPECT_EQ(rect.cnn.kernel, 1);
  EXPECT_EQ(rect.cnn.kernel_width, 7);
  EXPECT_EQ(rect.cnn.kernel_along(1), 7);
  EXPECT_EQ(rect.cnn.pad_along(0), 0);
  EXPECT_EQ(rect.cnn.pad_along(1), 3);
  EXPECT_EQ(rect.cnn.out_extent, (std::array<int, 3>{17, 17, 1}));
  EXPECT_DOUBLE_EQ(rect.forward_flops, 2.0 * 2 * 7 * 128 * 128 * 17 * 17);
  EXPECT_EQ(find("Mixed_6b.avg_pool").cnn.op, CnnOp::kAvgPool);
  EXPECT_EQ(find("Mixed_7c.cat").cnn.out_channels, 2048);
  EXPECT_EQ(find("Mixed_7c.cat").cnn.out_extent, (std::array<int, 3>{8, 8, 1}));
  // The auxiliary head pools 17 -> 5 (5x5, stride 3), then a 5x5 conv leaves 1 x 1.
  EXPECT_EQ(find("AuxLogits.conv1.conv").cnn.out_extent, (std::array<int, 3>{1, 1, 1}));
  EXPECT_EQ(default_image_size("inception_v3"), 299);
  EXPECT_THROW((void)model_layers({.model = "inception_v3", .batch = 1, .image_size = 224}),
               GeneratorError);
}

TEST(ModelZoo, CosmoflowMatchesTheMlperfReferenceByHand) {
  // The MLPerf HPC reference's layers, counted by hand: conv i has 3^3 * c_in * c_out weights
  // + c_out biases, c = 4, 32, 64, 128, 256, 512; after five 2x2x2 poolings a 128^3 cube is
  // 4^3 x 512 = 32768 features into dense layers 128, 64, 4.
  const std::uint64_t convs = (27 * 4 + 1) * 32 + (27 * 32 + 1) * 64 + (27 * 64 + 1) * 128 +
                              (27 * 128 + 1) * 256 + (27 * 256 + 1) * 512;
  const std::uint64_t dense = (32768 + 1) * 128 + (128 + 1) * 64 + (64 + 1) * 4;
  const auto layers = model_layers({.model = "cosmoflow", .batch = 2, .image_size = 128});
  EXPECT_EQ(total_params(layers), convs + dense);
  EXPECT_EQ(convs + dense, 8'907'556u);
  // The first conv: 27 * 4 * 32 MACs per output voxel, 128^3 voxels (padding 1 keeps the size).
  EXPECT_DOUBLE_EQ(layers[0].forward_flops, 2.0 * 2 * 27 * 4 * 32 * 128.0 * 128 * 128);
  EXPECT_EQ(layers[0].cnn.dims, 3);
  EXPECT_EQ(layers[0].cnn.in_extent, (std::array<int, 3>{128, 128, 128}));
  EXPECT_EQ(layers[2].cnn.out_extent, (std::array<int, 3>{64, 64, 64}));  // the first pooling
  // On 512^3 only the first dense layer grows: 16^3 x 512 features.
  const auto big = model_layers({.model = "cosmoflow", .batch = 1, .image_size = 512});
  EXPECT_EQ(total_params(big), convs + dense + (16 * 16 * 16 - 4 * 4 * 4) * 512ULL * 128);
  EXPECT_THROW((void)model_layers({.model = "cosmoflow", .batch = 1, .image_size = 100}),
               GeneratorError);
}

TEST(ModelZoo, CnnLayersCarryTheirShapes) {
  // torchvision's resnet50: conv1 7x7 stride 2 pad 3 from 3x224x224 to 64x112x112; the fc sees
  // 2048 channels of a 1x1 map.
  const auto layers = model_layers({.model = "resnet50", .batch = 8});
  const CnnGeometry& conv1 = layers[0].cnn;
  EXPECT_EQ(conv1.op, CnnOp::kConv);
  EXPECT_EQ(conv1.batch, 8);
  EXPECT_EQ(conv1.in_channels, 3);
  EXPECT_EQ(conv1.out_channels, 64);
  EXPECT_EQ(conv1.in_extent, (std::array<int, 3>{224, 224, 1}));
  EXPECT_EQ(conv1.out_extent, (std::array<int, 3>{112, 112, 1}));
  EXPECT_EQ(conv1.kernel, 7);
  EXPECT_EQ(conv1.stride, 2);
  EXPECT_EQ(conv1.pad, 3);
  EXPECT_EQ(layers[1].cnn.op, CnnOp::kNorm);
  EXPECT_EQ(layers.back().cnn.op, CnnOp::kLinear);
  EXPECT_EQ(layers.back().cnn.in_channels, 2048);
  EXPECT_EQ(layers.back().cnn.out_channels, 1000);
  EXPECT_EQ(layers.back().cnn.out_extent, (std::array<int, 3>{1, 1, 1}));
  // The output of every layer is what its geometry says (batch x channels x extent).
  for (const LayerCost& l : layers) {
    const CnnGeometry& g = l.cnn;
    EXPECT_EQ(l.output_elements,
              1.0 * g.batch * g.out_channels * g.out_extent[0] * g.out_extent[1] * g.out_extent[2])
        << l.name;
  }
  // Transformers carry none.
  EXPECT_EQ(model_layers({.model = "gpt2", .batch = 1, .seq_len = 8})[0].cnn.op, CnnOp::kNone);
  EXPECT_TRUE(is_cnn("alexnet"));
  EXPECT_FALSE(is_cnn("gpt2"));
}

TEST(ModelZoo, TransformerParameterCountsEqualTheReferenceModels) {
  // GPT-2 small: 124,439,808 parameters (Hugging Face GPT2LMHeadModel, lm_head tied).
  EXPECT_EQ(total_params(model_layers({.model = "gpt2", .batch = 1, .seq_len = 1024})),
            124'439'808u);
  // BERT-large: BertModel 335,141,888 (Hugging Face bert-large-uncased) + pre-training heads:
  // MLM transform 1024*1024+1024 + LayerNorm 2048 + decoder bias 30522, NSP 1024*2+2.
  EXPECT_EQ(total_params(model_layers({.model = "bert_large", .batch = 1, .seq_len = 128})),
            335'141'888u + 1'049'600u + 2'048u + 30'522u + 2'050u);
  // BERT-base: BertModel 109,482,240 (bert-base-uncased) + heads 768*768+768 + 1536 + 30522 +
  // 768*2+2 = 110,106,428, BertForPreTraining's count.
  EXPECT_EQ(total_params(model_layers({.model = "bert_base", .batch = 1, .seq_len = 128})),
            109'482'240u + 590'592u + 1'536u + 30'522u + 1'538u);
  EXPECT_EQ(109'482'240u + 590'592u + 1'536u + 30'522u + 1'538u, 110'106'428u);
}

TEST(ModelZoo, TransformerXlParameterCountsFollowItsModules) {
  // NVIDIA DeepLearningExamples' mem_transformer.py, module by module. Per layer: qkv_net
  // 3*H*Dh x D, r_net and o_net H*Dh x D (no biases), two LayerNorms 2D each, the FFN D x F + F
  // and F x D + D. Base (div_val 1): one 267,735 x 512 embedding, tied to the softmax; the
  // softmax's word biases 267,735, cluster logits 3 x 512 + 3; r_w_bias and r_r_bias 8 x 64
  // each, shared by all layers.
  const std::uint64_t base_layer =
      3 * 512 * 512 + 2 * 512 * 512 + 2 * 1024 + 512 * 2048 + 2048 + 2048 * 512 + 512;
  EXPECT_EQ(base_layer, 3'412'480u);  // train.py logs 16 x this as "#non emb params"
  const std::uint64_t base = 16 * base_layer + 267'735ull * 512 + 267'735 + 3 * 512 + 3 + 1024;
  EXPECT_EQ(base, 191'950'298u);
  EXPECT_EQ(
      total_params(model_layers({.model = "transformer_xl_base", .batch = 1, .seq_len = 192})),
      base);
  // The same modules with the paper's base hyperparameters (D 410, 10 heads of 41, F 2100,
  // 16 layers) give 151,107,538: Dai et al. 2019, Table 1, "Transformer-XL Standard: 151M".
  EXPECT_EQ(total_params(transformer_xl({.model = "x", .batch = 1, .seq_len = 150},
                                        {16, 410, 10, 41, 2100, 1, 0.0})),
            151'107'538u);
  // Large (div_val 4): clusters of 19,997 x 1024, 20,000 x 256, 160,000 x 64 and 67,738 x 16,
  // each projected to 1024 (1024 x d_i, shared with the softmax's tails); the softmax head's
  // own 1024 x 1024 projection; biases and cluster logits as above; 18 layers of D 1024,
  // 16 heads of 64, F 4096. (The paper's large, 257M, has the same layers; the difference is
  // not explained by the code: 16 layers would give 257.9M.)
  const std::uint64_t large_layer =
      5ull * 1024 * 1024 + 2 * 2048 + 1024ull * 4096 + 4096 + 4096ull * 1024 + 1024;
  const std::uint64_t clusters = 19'997ull * 1024 + 20'000 * 256 + 160'000 * 64 + 67'738 * 16;
  const std::uint64_t projections = 1024ull * (1024 + 256 + 64 + 16);
  const std::uint64_t large = 18 * large_layer + clusters + projections + 1024ull * 1024 + 267'735 +
                              3 * 1024 + 3 + 2 * 1024;
  EXPECT_EQ(large, 285'167'482u);
  EXPECT_EQ(
      total_params(model_layers({.model = "transformer_xl_large", .batch = 1, .seq_len = 384})),
      large);
}

TEST(ModelZoo, TransformerXlAttendsOverTheMemoryToo) {
  // Base, batch 2, segment 192 and a memory of 192: per layer the scores are 2 x 8 heads of
  // 192 x 384; the segment's qkv is 384 rows, the memory's 384 rows more, r_net 384 positions.
  const auto layers = model_layers({.model = "transformer_xl_base", .batch = 2, .seq_len = 192});
  const LayerCost attn = layer_named(layers, "layers.3.dec_attn");
  ASSERT_EQ(attn.gemms.size(), 5u);
  EXPECT_EQ(attn.gemms[0], (Gemm{.m = 384, .n = 1536, .k = 512}));
  EXPECT_EQ(attn.gemms[1], (Gemm{.m = 192, .n = 384, .k = 64, .count = 16}));
  EXPECT_EQ(attn.gemms[3], (Gemm{.m = 192, .n = 64, .k = 384, .count = 16}));
  const LayerCost mem = layer_named(layers, "layers.3.dec_attn.mem");
  EXPECT_EQ(mem.backward_factor, 1);  // detached memory, fixed positions: weight gradients only
  EXPECT_EQ(mem.gemms[0], (Gemm{.m = 384, .n = 1536, .k = 512}));
  EXPECT_EQ(mem.gemms[1], (Gemm{.m = 384, .n = 512, .k = 512}));
  // The softmax: every token through the head (19,997 words + 3 clusters); the tails take the
  // tokens Zipf's law gives their words (ranks 19,998-39,997: H(39997) - H(19997) over
  // H(267735) = 0.6931 / 13.0754 = 5.30 %).
  const LayerCost crit = layer_named(layers, "crit");
  ASSERT_EQ(crit.gemms.size(), 4u);
  EXPECT_EQ(crit.gemms[0], (Gemm{.m = 384, .n = 20000, .k = 512}));
  EXPECT_NEAR(crit.gemms[1].m / 384, 0.0530, 0.0002);
  EXPECT_EQ(crit.gemms[1].n, 20000);
  // The three tails together: the words past rank 19,997, 1 - H(19997) / H(267735) =
  // 1 - 10.4806 / 13.0750 = 19.84 % of the tokens (H(n) = ln n + 0.5772 + 1/2n).
  double tails = 0;
  for (std::size_t i = 1; i < crit.gemms.size(); ++i) {
    tails += crit.gemms[i].m / 384;
  }
  EXPECT_NEAR(tails, 0.1984, 0.0002);
}

TEST(ModelZoo, ConvolutionMacsMatchTorchvisionsTable) {
  // torchvision's model table (GFLOPS = multiply-accumulates of one 224x224 image):
  // resnet18 1.81, resnet34 3.66, resnet50 4.09, resnet101 7.80, resnet152 11.51,
  // resnext50_32x4d 4.23, resnext101_32x8d 16.41, wide_resnet50_2 11.40, vgg16 15.47,
  // alexnet 0.71; vgg11 7.61, vgg13 11.31, vgg19 19.63 (the _bn variants have the same).
  const std::vector<std::pair<std::string, double>> expected{{"resnet18", 1.81e9},
                                                             {"resnet34", 3.66e9},
                                                             {"resnet50", 4.09e9},
                                                             {"resnet101", 7.80e9},
                                                             {"resnet152", 11.51e9},
                                                             {"resnext50_32x4d", 4.23e9},
                                                             {"resnext101_32x8d", 16.41e9},
                                                             {"wide_resnet50_2", 11.40e9},
                                                             {"vgg16", 15.47e9},
                                                             {"alexnet", 0.71e9},
                                                             {"vgg11", 7.61e9},
                                                             {"vgg11_bn", 7.61e9},
                                                             {"vgg13", 11.31e9},
                                                             {"vgg19_bn", 19.63e9}};
  for (const auto& [model, macs] : expected) {
    const int batch = 4;
    const double got =
        conv_fc_macs_per_sample(model_layers({.model = model, .batch = batch}), batch);
    EXPECT_NEAR(got, macs, 0.01 * macs) << model;
  }
}

TEST(ModelZoo, TransformerFlopsFollowTheSixNdRule) {
  // Forward FLOPs of a transformer ~ 2 * parameters-in-matmuls * tokens plus attention
  // 4 * layers * seq * hidden per token (Kaplan et al. 2020). GPT-2 small, seq 1024:
  // non-embedding parameters 85,054,464 + lm_head 768*50257 (tied, but still a matmul).
  const int seq = 1024;
  const auto layers = model_layers({.model = "gpt2", .batch = 1, .seq_len = seq});
  double flops = 0;
  for (const LayerCost& l : layers) {
    flops += l.forward_flops;
  }
  const double matmul_params = 12 * (768.0 * 2304 + 768.0 * 768 + 2 * 768.0 * 3072) + 768.0 * 50257;
  const double expected = 2 * matmul_params * seq + 12 * 4.0 * seq * 768 * seq;
  // The model also counts norms, softmax, GELU, biases and the loss: a few percent more.
  EXPECT_GT(flops, expected);
  EXPECT_LT(flops, 1.05 * expected);
}

TEST(ModelZoo, FlopsScaleLinearlyWithBatch) {
  const auto one = model_layers({.model = "resnet50", .batch = 1});
  const auto eight = model_layers({.model = "resnet50", .batch = 8});
  ASSERT_EQ(one.size(), eight.size());
  for (std::size_t i = 0; i < one.size(); ++i) {
    EXPECT_DOUBLE_EQ(eight[i].forward_flops, 8 * one[i].forward_flops) << one[i].name;
    EXPECT_EQ(eight[i].params, one[i].params);
  }
}

TEST(ModelZoo, LayerNamesAreUniqueAndFirstLayerNeedsNoInputGradient) {
  for (const std::string& model : model_names()) {
    const auto layers = model_layers({.model = model, .batch = 2});
    std::set<std::string> names;
    for (const LayerCost& l : layers) {
      EXPECT_TRUE(names.insert(l.name).second) << model << " " << l.name;
    }
    EXPECT_EQ(layers.front().backward_factor, 1) << model;
  }
}

TEST(ModelZoo, CnnOutputElementsFollowTheShapesByHand) {
  const auto r = model_layers({.model = "resnet50", .batch = 32});
  // conv1: 64 channels, 7x7 stride 2 on 224x224 -> 112x112; bn1 keeps the shape.
  EXPECT_EQ(layer_named(r, "conv1").output_elements, 32.0 * 64 * 112 * 112);
  EXPECT_EQ(layer_named(r, "bn1").output_elements, 32.0 * 64 * 112 * 112);
  // maxpool 3x3 stride 2 -> 56x56.
  EXPECT_EQ(layer_named(r, "maxpool").output_elements, 32.0 * 64 * 56 * 56);
  // layer1.0: bottleneck 64 -> 64 -> 256 channels at 56x56, the downsample and the add 256.
  EXPECT_EQ(layer_named(r, "layer1.0.conv1").output_elements, 32.0 * 64 * 56 * 56);
  EXPECT_EQ(layer_named(r, "layer1.0.conv3").output_elements, 32.0 * 256 * 56 * 56);
  EXPECT_EQ(layer_named(r, "layer1.0.downsample.0").output_elements, 32.0 * 256 * 56 * 56);
  EXPECT_EQ(layer_named(r, "layer1.0.add").output_elements, 32.0 * 256 * 56 * 56);
  // layer2.0.conv2 has the stride: 128 channels at 28x28; layer4 ends at 2048 x 7x7.
  EXPECT_EQ(layer_named(r, "layer2.0.conv2").output_elements, 32.0 * 128 * 28 * 28);
  EXPECT_EQ(layer_named(r, "layer4.2.relu3").output_elements, 32.0 * 2048 * 7 * 7);
  EXPECT_EQ(layer_named(r, "avgpool").output_elements, 32.0 * 2048);
  EXPECT_EQ(layer_named(r, "fc").output_elements, 32.0 * 1000);

  const auto v = model_layers({.model = "vgg16", .batch = 4});
  EXPECT_EQ(layer_named(v, "features.0").output_elements, 4.0 * 64 * 224 * 224);
  EXPECT_EQ(layer_named(v, "features.30").output_elements, 4.0 * 512 * 7 * 7);  // last pool
  EXPECT_EQ(layer_named(v, "classifier.0").output_elements, 4.0 * 4096);
  EXPECT_EQ(layer_named(v, "classifier.1").output_elements, 4.0 * 4096);
  EXPECT_EQ(layer_named(v, "classifier.3").output_elements, 4.0 * 4096);
  EXPECT_EQ(layer_named(v, "classifier.6").output_elements, 4.0 * 1000);
}

TEST(ModelZoo, TransformerOutputElementsAreTokensTimesWidthAndLogits) {
  // BERT-large, batch 8 x seq 128 = 1024 tokens, hidden 1024, FFN 4096.
  const auto b = model_layers({.model = "bert_large", .batch = 8, .seq_len = 128});
  EXPECT_EQ(layer_named(b, "bert.embeddings").output_elements, 8.0 * 128 * 1024);
  EXPECT_EQ(layer_named(b, "bert.encoder.layer.0.attention.self").output_elements,
            8.0 * 128 * 1024);
  EXPECT_EQ(layer_named(b, "bert.encoder.layer.23.intermediate").output_elements, 8.0 * 128 * 4096);
  // An encoder layer's output: batch * seq * hidden.
  EXPECT_EQ(layer_named(b, "bert.encoder.layer.23.output").output_elements, 8.0 * 128 * 1024);
  EXPECT_EQ(layer_named(b, "bert.pooler").output_elements, 8.0 * 1024);
  // The heads: MLM logits over the vocabulary for the ceil(0.15 * 128) = 20 masked tokens of
  // each sequence; NSP's two logits per sequence.
  EXPECT_EQ(layer_named(b, "cls.predictions").output_elements, 8.0 * 20 * 30522);
  EXPECT_EQ(layer_named(b, "cls.seq_relationship").output_elements, 8.0 * 2);

  // GPT-2 small, batch 2 x seq 1024, hidden 768, vocabulary 50257.
  const auto g = model_layers({.model = "gpt2", .batch = 2, .seq_len = 1024});
  EXPECT_EQ(layer_named(g, "transformer.embeddings").output_elements, 2.0 * 1024 * 768);
  EXPECT_EQ(layer_named(g, "transformer.h.0.attn").output_elements, 2.0 * 1024 * 768);
  EXPECT_EQ(layer_named(g, "transformer.h.11.mlp").output_elements, 2.0 * 1024 * 768);
  EXPECT_EQ(layer_named(g, "lm_head").output_elements, 2.0 * 1024 * 50257);
}

TEST(ModelZoo, EveryLayerOutputsAWholeNumberOfElementsProportionalToTheBatch) {
  for (const std::string& model : model_names()) {
    const auto one = model_layers({.model = model, .batch = 1});
    const auto three = model_layers({.model = model, .batch = 3});
    ASSERT_EQ(one.size(), three.size()) << model;
    for (std::size_t i = 0; i < one.size(); ++i) {
      EXPECT_GT(one[i].output_elements, 0) << model << " " << one[i].name;
      EXPECT_EQ(one[i].output_elements, std::floor(one[i].output_elements)) << one[i].name;
      EXPECT_EQ(three[i].output_elements, 3 * one[i].output_elements) << model << one[i].name;
    }
  }
}

TEST(ModelZoo, RejectsUnknownModelsAndShapes) {
  EXPECT_THROW((void)model_layers({.model = "googlenet"}), std::invalid_argument);
  EXPECT_THROW((void)model_layers({.model = "resnet50", .batch = 0}), std::invalid_argument);
  EXPECT_THROW((void)model_layers({.model = "gpt2", .seq_len = 2048}), std::invalid_argument);
  EXPECT_THROW((void)model_layers({.model = "vgg16", .image_size = 256}), std::invalid_argument);
}

}  // namespace
}  // namespace dtsim::workloads
