// Analytical model zoo: the layers of well-known networks with their FLOPs, memory traffic and
// parameters, computed from the architecture alone (no framework). The generator
// (generator.h) turns them into a workload trace with a roofline.
#ifndef DTSIM_WORKLOADS_MODEL_ZOO_H_
#define DTSIM_WORKLOADS_MODEL_ZOO_H_

#include <cstdint>
#include <string>
#include <vector>

namespace dtsim::workloads {

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

  bool operator==(const LayerCost&) const = default;
};

struct ModelShape {
  std::string model;     // one of model_names()
  int batch = 1;         // samples per device
  int image_size = 224;  // CNNs: input height = width
  int seq_len = 128;     // transformers: tokens per sample
};

// "resnet18", "resnet34", "resnet50", "resnet101", "resnet152", "resnext50_32x4d",
// "resnext101_32x8d", "wide_resnet50_2", "vgg16", "bert_large", "gpt2".
[[nodiscard]] const std::vector<std::string>& model_names();

// The model's layers in forward order. Throws GeneratorError naming the field at fault (model,
// batch, image_size, seq_len; workloads/generator_error.h) for an unknown model
// or a shape it cannot take (batch < 1, image smaller than 32, seq_len < 1 or above the model's
// position table).
//  - ResNets are torchvision's v1.5 (stride in the 3x3 conv), VGG-16 torchvision's (no BN).
//  - bert_large: BERT-large pre-training (24 layers, hidden 1024, 16 heads, FFN 4096, vocab
//    30522, 512 positions) with its heads; as NVIDIA's BERT pre-training, the masked-LM head
//    runs on the masked 15% of tokens only; the decoder weight is tied to the word embeddings.
//  - gpt2: GPT-2 small (12 layers, hidden 768, 12 heads, vocab 50257, 1024 positions), lm_head
//    tied to the token embeddings.
[[nodiscard]] std::vector<LayerCost> model_layers(const ModelShape& shape);

}  // namespace dtsim::workloads

#endif  // DTSIM_WORKLOADS_MODEL_ZOO_H_
