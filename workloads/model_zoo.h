// Analytical model zoo: the layers of well-known networks with their FLOPs, memory traffic and
// parameters, computed from the architecture alone (no framework). The generator
// (generator.h) turns them into a workload trace with a roofline.
#ifndef DTSIM_WORKLOADS_MODEL_ZOO_H_
#define DTSIM_WORKLOADS_MODEL_ZOO_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace dtsim::workloads {

// What a model-parallel split of a CNN (sim/strategies/CNN.md) needs to know about a layer: its
// kind and the shapes of its input and output. Transformer layers leave op kNone.
enum class CnnOp : std::uint8_t {
  kNone,
  kConv,         // convolution (kernel, stride, pad, groups)
  kPool,         // max pooling with a window (kernel, stride, pad)
  kAvgPool,      // average pooling with a window
  kNorm,         // batch normalization: per-channel statistics over batch and space
  kElementwise,  // ReLU, a residual add: no neighbours, no statistics
  kGlobalPool,   // average over all of space: one value per channel
  kLinear,       // fully connected on the flattened input map (in_channels x in_extent)
};

struct CnnGeometry {
  CnnOp op = CnnOp::kNone;
  int batch = 0;
  int in_channels = 0;
  int out_channels = 0;
  std::array<int, 3> in_extent{1, 1, 1};  // height, width, depth (1 for a 2-D input)
  std::array<int, 3> out_extent{1, 1, 1};
  int kernel = 1;  // conv and pool: the window's side, in every spatial dimension the input has
  int stride = 1;
  int pad = 0;
  int groups = 1;
  int dims = 2;  // spatial dimensions of the input: 2 (images) or 3 (volumes)
  // A rectangular window (Inception's 1x7): the width's side and padding; kernel and pad are
  // then the height's. kernel_width 0: a square (cubic) window.
  int kernel_width = 0;
  int pad_width = 0;

  // The window's side and padding along spatial dimension d (0 height, 1 width, 2 depth).
  [[nodiscard]] int kernel_along(std::size_t d) const {
    return d == 1 && kernel_width > 0 ? kernel_width : kernel;
  }
  [[nodiscard]] int pad_along(std::size_t d) const {
    return d == 1 && kernel_width > 0 ? pad_width : pad;
  }

  bool operator==(const CnnGeometry&) const = default;
};

// One matrix multiply C[m x n] = A[m x k] B[k x n] of a layer's forward pass, `count` times
// (the heads of a batched attention product). The op-class compute model (compute_model.h)
// times it by its shape; CNN layers describe theirs with CnnGeometry instead.
struct Gemm {
  double m = 0;
  double n = 0;
  double k = 0;
  double count = 1;

  bool operator==(const Gemm&) const = default;
};

// One layer's forward pass. Memory traffic and the output are counted in elements so that the
// precision can be applied later: activations read and written, and the weights read.
struct LayerCost {
  std::string name;                // torchvision / Hugging Face style module path
  double forward_flops = 0;        // multiply-add = 2 FLOPs
  double activation_elements = 0;  // elements of inputs read + outputs written
  std::uint64_t params = 0;        // trainable parameters owned by this layer
  // FLOPs of the backward pass / forward FLOPs: 2 (input and weight gradients), 1 where no input
  // gradient is needed (the first layer) or the layer has no weights (elementwise ops).
  double backward_factor = 2;
  // Elements of the activation the layer outputs (what a pipeline stage ending after it sends):
  // a conv's N*C_out*H_out*W_out, a linear's rows*out, attention's tokens*hidden; the heads
  // output their logits (the loss folded into them is not an output). Timing does not use it.
  double output_elements = 0;
  CnnGeometry cnn;  // CNN layers: the shapes model parallelism splits
  // Transformer layers: their matrix multiplies, and the elements the rest of the layer
  // (normalization, activation, softmax, residual adds) reads and writes. Their sum of FLOPs and
  // the GEMMs' operands are within forward_flops and activation_elements, which the roofline
  // uses; the op-class model uses these instead.
  std::vector<Gemm> gemms;
  double elementwise_elements = 0;

  bool operator==(const LayerCost&) const = default;
};

struct ModelShape {
  std::string model;   // one of model_names()
  int batch = 1;       // samples per device
  int image_size = 0;  // CNNs: input height = width (= depth for a volume); 0: the model's default
  int seq_len = 128;   // transformers: tokens per sample
};

// A Transformer-XL's hyperparameters (NVIDIA DeepLearningExamples' names in comments).
struct TransformerXlShape {
  int layers = 16;     // n_layer
  int d_model = 512;   // d_model = d_embed
  int heads = 8;       // n_head
  int d_head = 64;     // d_head
  int d_inner = 2048;  // d_inner
  int div_val = 1;     // adaptive embedding: cluster i has d_model / div_val^i dimensions
  double dropatt = 0;  // dropout on the attention probabilities (0: no pass over them)
};
// DLE's WikiText-103 base and large models (wt103_base.yaml, wt103_large.yaml).
inline constexpr TransformerXlShape kTransformerXlBase{16, 512, 8, 64, 2048, 1, 0.0};
inline constexpr TransformerXlShape kTransformerXlLarge{18, 1024, 16, 64, 4096, 4, 0.2};

// "resnet18", "resnet34", "resnet50", "resnet101", "resnet152", "resnext50_32x4d",
// "resnext101_32x8d", "wide_resnet50_2", "vgg11" ... "vgg19_bn", "alexnet", "inception_v3",
// "cosmoflow", "bert_base", "bert_large", "gpt2", "transformer_xl_base", "transformer_xl_large".
[[nodiscard]] const std::vector<std::string>& model_names();

// The input a CNN takes when none is given: 299 for inception_v3, 128 (voxels) for cosmoflow,
// else 224.
[[nodiscard]] int default_image_size(const std::string& model);

// The model's layers in forward order. Throws GeneratorError naming the field at fault (model,
// batch, image_size, seq_len; workloads/generator_error.h) for an unknown model
// or a shape it cannot take (batch < 1, image smaller than 32, seq_len < 1 or above the model's
// position table, a cosmoflow side that 32 does not divide).
//  - ResNets are torchvision's v1.5 (stride in the 3x3 conv), VGG-16 and AlexNet torchvision's
//    (no BN; AlexNet's adaptive pooling is the identity at 224x224, the only size it takes).
//  - cosmoflow: the MLPerf HPC CosmoFlow reference, a 3-D CNN on a cube of image_size^3 voxels
//    with 4 channels (128 in the benchmark; any multiple of 32): five blocks of 3x3x3 conv
//    (32, 64, 128, 256, 512 filters, bias) + LeakyReLU + 2x2x2 max pooling, then fully connected
//    layers to 128, 64 and 4 outputs. Its first dense layer grows with the volume.
//  - bert_large: BERT-large pre-training (24 layers, hidden 1024, 16 heads, FFN 4096, vocab
//    30522, 512 positions) with its heads; as NVIDIA's BERT pre-training, the masked-LM head
//    runs on the masked 15% of tokens only; the decoder weight is tied to the word embeddings.
//  - gpt2: GPT-2 small (12 layers, hidden 768, 12 heads, vocab 50257, 1024 positions), lm_head
//    tied to the token embeddings.
//  - transformer_xl_base, transformer_xl_large: NVIDIA DeepLearningExamples' Transformer-XL on
//    WikiText-103 (transformer_xl below); seq_len is the segment (tgt_len = mem_len; DLE trains
//    base at 192, large at 384).
[[nodiscard]] std::vector<LayerCost> model_layers(const ModelShape& shape);

// A Transformer-XL of any hyperparameters on WikiText-103's 267,735 words: the adaptive
// embedding and softmax (cutoffs 19,997 / 39,997 / 199,997; the words' token shares by Zipf's
// law, workloads/GENERATOR.md), relative-position attention over seq_len tokens and as many of
// memory. Layers: word_emb, then per layer dec_attn.mem, dec_attn, pos_ff, then crit.
[[nodiscard]] std::vector<LayerCost> transformer_xl(const ModelShape& shape,
                                                    const TransformerXlShape& hyper);

// Whether `model` is one of the zoo's CNNs (its layers carry CnnGeometry).
[[nodiscard]] bool is_cnn(const std::string& model);

}  // namespace dtsim::workloads

#endif  // DTSIM_WORKLOADS_MODEL_ZOO_H_
