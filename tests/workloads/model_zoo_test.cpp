#include "workloads/model_zoo.h"

#include <set>

#include <gtest/gtest.h>

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
    const bool weighted = l.params > 0 && l.name.find("bn") == std::string::npos &&
                          l.name.find("downsample.1") == std::string::npos;
    if (weighted) {
      macs += l.forward_flops / 2;
    }
  }
  return macs / batch;
}

TEST(ModelZoo, CnnParameterCountsEqualTorchvision) {
  // torchvision weights meta "num_params" (experiments/validation/data/published.csv rows
  // PARAM-01..09).
  const std::vector<std::pair<std::string, std::uint64_t>> expected{
      {"resnet18", 11'689'512},
      {"resnet34", 21'797'672},
      {"resnet50", 25'557'032},
      {"resnet101", 44'549'160},
      {"resnet152", 60'192'808},
      {"resnext50_32x4d", 25'028'904},
      {"resnext101_32x8d", 88'791'336},
      {"wide_resnet50_2", 68'883'240},
      {"vgg16", 138'357'544}};
  for (const auto& [model, params] : expected) {
    EXPECT_EQ(total_params(model_layers({.model = model, .batch = 1})), params) << model;
  }
}

TEST(ModelZoo, TransformerParameterCountsEqualTheReferenceModels) {
  // GPT-2 small: 124,439,808 parameters (Hugging Face GPT2LMHeadModel, lm_head tied).
  EXPECT_EQ(total_params(model_layers({.model = "gpt2", .batch = 1, .seq_len = 1024})),
            124'439'808u);
  // BERT-large: BertModel 335,141,888 (Hugging Face bert-large-uncased) + pre-training heads:
  // MLM transform 1024*1024+1024 + LayerNorm 2048 + decoder bias 30522, NSP 1024*2+2.
  EXPECT_EQ(total_params(model_layers({.model = "bert_large", .batch = 1, .seq_len = 128})),
            335'141'888u + 1'049'600u + 2'048u + 30'522u + 2'050u);
}

TEST(ModelZoo, ConvolutionMacsMatchTorchvisionsTable) {
  // torchvision's model table (GFLOPS = multiply-accumulates of one 224x224 image):
  // resnet18 1.81, resnet34 3.66, resnet50 4.09, resnet101 7.80, resnet152 11.51,
  // resnext50_32x4d 4.23, resnext101_32x8d 16.41, wide_resnet50_2 11.40, vgg16 15.47.
  const std::vector<std::pair<std::string, double>> expected{
      {"resnet18", 1.81e9},          {"resnet34", 3.66e9},         {"resnet50", 4.09e9},
      {"resnet101", 7.80e9},         {"resnet152", 11.51e9},       {"resnext50_32x4d", 4.23e9},
      {"resnext101_32x8d", 16.41e9}, {"wide_resnet50_2", 11.40e9}, {"vgg16", 15.47e9}};
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

TEST(ModelZoo, RejectsUnknownModelsAndShapes) {
  EXPECT_THROW((void)model_layers({.model = "alexnet"}), std::invalid_argument);
  EXPECT_THROW((void)model_layers({.model = "resnet50", .batch = 0}), std::invalid_argument);
  EXPECT_THROW((void)model_layers({.model = "gpt2", .seq_len = 2048}), std::invalid_argument);
  EXPECT_THROW((void)model_layers({.model = "vgg16", .image_size = 256}), std::invalid_argument);
}

}  // namespace
}  // namespace dtsim::workloads
