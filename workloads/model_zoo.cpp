#include "workloads/model_zoo.h"

#include <cmath>
#include <stdexcept>

#include "workloads/generator_error.h"

namespace dtsim::workloads {

namespace {

// FLOPs per element of the elementwise ops (documented in workloads/GENERATOR.md).
constexpr double kNormFlopsPerElement = 8;     // batch/layer norm: statistics, normalise, affine
constexpr double kGeluFlopsPerElement = 8;     // GELU / tanh
constexpr double kSoftmaxFlopsPerElement = 5;  // max, subtract, exp, sum, divide
constexpr double kLossFlopsPerLogit = 5;       // softmax cross-entropy

// Builds a CNN layer by layer, tracking the activation shape: channels and the extent of each
// spatial dimension (height, width, and depth for a volume; a 2-D input has depth 1).
class CnnBuilder {
 public:
  CnnBuilder(int batch, int channels, int size, int dims = 2)
      : n_(batch), c_(channels), dims_(dims), e_{size, size, dims == 3 ? size : 1} {}

  // A convolution; with `groups` > 1, each output channel sees c_/groups input channels.
  void conv(const std::string& name, int out, int k, int stride, int pad, bool bias = false,
            int groups = 1) {
    CnnGeometry g = geometry(CnnOp::kConv, k, stride, pad);
    g.groups = groups;
    g.out_channels = out;
    g.out_extent = window_extent(k, stride, pad);
    const int in_per_group = c_ / groups;
    const double window = 1.0 * volume({k, k, dims_ == 3 ? k : 1});
    const double out_elements = 1.0 * n_ * out * volume(g.out_extent);
    const double macs = window * in_per_group * out_elements;
    const auto params = static_cast<std::uint64_t>(window) * in_per_group * out + (bias ? out : 0);
    add({.name = name,
         .forward_flops = 2 * macs,
         .activation_elements = elements() + out_elements,
         .params = params,
         .backward_factor = layers_.empty() ? 1.0 : 2.0,  // the input needs no gradient
         .output_elements = out_elements,
         .cnn = g});
    c_ = out;
    e_ = g.out_extent;
  }
  void batch_norm(const std::string& name) {
    add({.name = name,
         .forward_flops = kNormFlopsPerElement * elements(),
         .activation_elements = 2 * elements(),
         .params = 2 * static_cast<std::uint64_t>(c_),
         .output_elements = elements(),
         .cnn = same_shape(CnnOp::kNorm)});
  }
  void relu(const std::string& name) { elementwise(name, 1, 2); }
  // The residual add of two tensors of the current shape.
  void residual_add(const std::string& name) { elementwise(name, 1, 3); }
  void max_pool(const std::string& name, int k, int stride, int pad) {
    const double in = elements();
    CnnGeometry g = geometry(CnnOp::kPool, k, stride, pad);
    g.out_channels = c_;
    g.out_extent = window_extent(k, stride, pad);
    e_ = g.out_extent;
    add({.name = name,
         .forward_flops = 1.0 * volume({k, k, dims_ == 3 ? k : 1}) * elements(),
         .activation_elements = in + elements(),
         .backward_factor = 1,
         .output_elements = elements(),
         .cnn = g});
  }
  void global_avg_pool(const std::string& name) {
    const double in = elements();
    CnnGeometry g = geometry(CnnOp::kGlobalPool, 1, 1, 0);
    g.out_extent = {1, 1, 1};
    e_ = {1, 1, 1};
    add({.name = name,
         .forward_flops = in,
         .activation_elements = in + elements(),
         .backward_factor = 1,
         .output_elements = elements(),
         .cnn = g});
  }
  // Fully connected on the flattened map: c_ x extent inputs per sample.
  void linear(const std::string& name, int out) {
    const double in = 1.0 * c_ * volume(e_);
    CnnGeometry g = geometry(CnnOp::kLinear, 1, 1, 0);
    g.out_channels = out;
    g.out_extent = {1, 1, 1};
    add({.name = name,
         .forward_flops = 2.0 * n_ * in * out,
         .activation_elements = 1.0 * n_ * (in + out),
         .params = static_cast<std::uint64_t>(in) * out + out,
         .backward_factor = layers_.empty() ? 1.0 : 2.0,
         .output_elements = 1.0 * n_ * out,
         .cnn = g});
    c_ = out;
    e_ = {1, 1, 1};
  }

  [[nodiscard]] int channels() const { return c_; }
  [[nodiscard]] int size() const { return e_[0]; }
  void set_shape(int channels, int size) {
    c_ = channels;
    e_ = {size, size, dims_ == 3 ? size : 1};
  }
  [[nodiscard]] std::vector<LayerCost> take() { return std::move(layers_); }

 private:
  static long long volume(const std::array<int, 3>& e) { return 1LL * e[0] * e[1] * e[2]; }
  [[nodiscard]] double elements() const { return 1.0 * n_ * c_ * volume(e_); }
  // The output extent of a window of side k: depth too for a volume.
  [[nodiscard]] std::array<int, 3> window_extent(int k, int stride, int pad) const {
    std::array<int, 3> out = e_;
    for (int d = 0; d < dims_; ++d) {
      out[static_cast<std::size_t>(d)] =
          (e_[static_cast<std::size_t>(d)] + 2 * pad - k) / stride + 1;
    }
    return out;
  }
  [[nodiscard]] CnnGeometry geometry(CnnOp op, int k, int stride, int pad) const {
    return {.op = op,
            .batch = n_,
            .in_channels = c_,
            .out_channels = c_,
            .in_extent = e_,
            .out_extent = e_,
            .kernel = k,
            .stride = stride,
            .pad = pad,
            .dims = dims_};
  }
  [[nodiscard]] CnnGeometry same_shape(CnnOp op) const { return geometry(op, 1, 1, 0); }
  void elementwise(const std::string& name, double flops_per_element, double tensors) {
    add({.name = name,
         .forward_flops = flops_per_element * elements(),
         .activation_elements = tensors * elements(),
         .backward_factor = 1,
         .output_elements = elements(),
         .cnn = same_shape(CnnOp::kElementwise)});
  }
  void add(LayerCost layer) { layers_.push_back(std::move(layer)); }

  int n_, c_, dims_;
  std::array<int, 3> e_;
  std::vector<LayerCost> layers_;
};

// torchvision's ResNet family. Bottleneck blocks are `width` = planes * width_per_group / 64 *
// groups wide in their grouped 3x3 convolution: ResNet (1, 64), ResNeXt-50 32x4d (32, 4),
// ResNeXt-101 32x8d (32, 8), Wide ResNet-50-2 (1, 128).
struct ResNetShape {
  std::vector<int> blocks;
  bool bottleneck = true;
  int groups = 1;
  int width_per_group = 64;
};

std::vector<LayerCost> resnet(const ModelShape& shape, const ResNetShape& net) {
  const std::vector<int>& blocks = net.blocks;
  const bool bottleneck = net.bottleneck;
  CnnBuilder b(shape.batch, 3, shape.image_size);
  b.conv("conv1", 64, 7, 2, 3);
  b.batch_norm("bn1");
  b.relu("relu");
  b.max_pool("maxpool", 3, 2, 1);
  const int expansion = bottleneck ? 4 : 1;
  int inplanes = 64;
  for (std::size_t stage = 0; stage < blocks.size(); ++stage) {
    const int planes = 64 << stage;
    for (int i = 0; i < blocks[stage]; ++i) {
      const int stride = (i == 0 && stage > 0) ? 2 : 1;
      const std::string p = "layer" + std::to_string(stage + 1) + "." + std::to_string(i) + ".";
      const int in_channels = b.channels();
      const int in_size = b.size();
      if (bottleneck) {
        const int width = planes * net.width_per_group / 64 * net.groups;
        b.conv(p + "conv1", width, 1, 1, 0);
        b.batch_norm(p + "bn1");
        b.relu(p + "relu1");
        b.conv(p + "conv2", width, 3, stride, 1, false, net.groups);
        b.batch_norm(p + "bn2");
        b.relu(p + "relu2");
        b.conv(p + "conv3", planes * expansion, 1, 1, 0);
        b.batch_norm(p + "bn3");
      } else {
        b.conv(p + "conv1", planes, 3, stride, 1);
        b.batch_norm(p + "bn1");
        b.relu(p + "relu1");
        b.conv(p + "conv2", planes, 3, 1, 1);
        b.batch_norm(p + "bn2");
      }
      if (stride != 1 || inplanes != planes * expansion) {
        const int out_size = b.size();
        b.set_shape(in_channels, in_size);
        b.conv(p + "downsample.0", planes * expansion, 1, stride, 0);
        b.batch_norm(p + "downsample.1");
        b.set_shape(planes * expansion, out_size);
      }
      b.residual_add(p + "add");
      b.relu(p + "relu3");
      inplanes = planes * expansion;
    }
  }
  b.global_avg_pool("avgpool");
  b.linear("fc", 1000);
  return b.take();
}

std::vector<LayerCost> vgg16(const ModelShape& shape) {
  // torchvision cfg "D"; features.<index> follows torchvision's Sequential numbering.
  const int kPool = 0;
  const std::vector<int> cfg{64,    64,  kPool, 128, 128,   kPool, 256, 256, 256,
                             kPool, 512, 512,   512, kPool, 512,   512, 512, kPool};
  CnnBuilder b(shape.batch, 3, shape.image_size);
  int index = 0;
  for (int v : cfg) {
    const std::string p = "features." + std::to_string(index);
    if (v == kPool) {
      b.max_pool(p, 2, 2, 0);
      index += 1;
    } else {
      b.conv(p, v, 3, 1, 1, /*bias=*/true);
      b.relu("features." + std::to_string(index + 1));
      index += 2;
    }
  }
  if (b.size() != 7) {
    throw GeneratorError("image_size",
                         std::to_string(shape.image_size) +
                             ": dtsim models vgg16 on 224x224 inputs only (a 7x7 feature map)");
  }
  b.linear("classifier.0", 4096);
  b.relu("classifier.1");
  b.linear("classifier.3", 4096);
  b.relu("classifier.4");
  b.linear("classifier.6", 1000);
  return b.take();
}

// torchvision's AlexNet (the "one weird trick" variant torchvision ships: 64-192-384-256-256
// filters); its adaptive 6x6 average pooling is the identity at 224x224.
std::vector<LayerCost> alexnet(const ModelShape& shape) {
  if (shape.image_size != 224) {
    throw GeneratorError("image_size", std::to_string(shape.image_size) +
                                           ": dtsim models alexnet on 224x224 inputs only");
  }
  CnnBuilder b(shape.batch, 3, shape.image_size);
  b.conv("features.0", 64, 11, 4, 2, /*bias=*/true);
  b.relu("features.1");
  b.max_pool("features.2", 3, 2, 0);
  b.conv("features.3", 192, 5, 1, 2, true);
  b.relu("features.4");
  b.max_pool("features.5", 3, 2, 0);
  b.conv("features.6", 384, 3, 1, 1, true);
  b.relu("features.7");
  b.conv("features.8", 256, 3, 1, 1, true);
  b.relu("features.9");
  b.conv("features.10", 256, 3, 1, 1, true);
  b.relu("features.11");
  b.max_pool("features.12", 3, 2, 0);
  b.linear("classifier.1", 4096);
  b.relu("classifier.2");
  b.linear("classifier.4", 4096);
  b.relu("classifier.5");
  b.linear("classifier.6", 1000);
  return b.take();
}

// The MLPerf HPC CosmoFlow reference (model_zoo.h): 4 channels in, 4 parameters out.
std::vector<LayerCost> cosmoflow(const ModelShape& shape) {
  constexpr int kBlocks = 5;
  if (shape.image_size % (1 << kBlocks) != 0) {
    throw GeneratorError("image_size", std::to_string(shape.image_size) +
                                           ": cosmoflow's volume side must be a multiple of 32 "
                                           "(five 2x2x2 poolings; the benchmark uses 128)");
  }
  CnnBuilder b(shape.batch, 4, shape.image_size, /*dims=*/3);
  for (int i = 0; i < kBlocks; ++i) {
    const std::string p = "conv_blocks." + std::to_string(i) + ".";
    b.conv(p + "conv", 32 << i, 3, 1, 1, /*bias=*/true);
    b.relu(p + "act");
    b.max_pool(p + "pool", 2, 2, 0);
  }
  b.linear("l1", 128);
  b.relu("act1");
  b.linear("l2", 64);
  b.relu("act2");
  b.linear("lO", 4);
  return b.take();
}

struct TransformerDims {
  double tokens;  // batch * seq_len
  double seq;
  double hidden;
  double heads;
  double ffn;
};

// Self-attention with its QKV projection: scores and context over the full S x S matrix.
LayerCost self_attention(const std::string& name, const TransformerDims& d, bool with_output) {
  const double t = d.tokens, s = d.seq, h = d.hidden;
  double flops =
      2 * t * h * 3 * h + 2 * t * s * h + kSoftmaxFlopsPerElement * t * d.heads * s + 2 * t * s * h;
  double act = t * h + 3 * t * h + 4 * t * d.heads * s + t * h;
  auto params = static_cast<std::uint64_t>(3 * (h * h + h));
  // Per sample and head: scores S x S = Q (S x d) K^T, then context S x d = P (S x S) V.
  const double heads = (t / s) * d.heads, head_dim = h / d.heads;
  std::vector<Gemm> gemms{{.m = t, .n = 3 * h, .k = h},
                          {.m = s, .n = s, .k = head_dim, .count = heads},
                          {.m = s, .n = head_dim, .k = s, .count = heads}};
  double elementwise = 2 * t * d.heads * s;  // the softmax reads and writes the scores
  if (with_output) {                         // output projection and residual add
    flops += 2 * t * h * h + t * h;
    act += 3 * t * h;
    params += static_cast<std::uint64_t>(h * h + h);
    gemms.push_back({.m = t, .n = h, .k = h});
    elementwise += 3 * t * h;
  }
  return {.name = name,
          .forward_flops = flops,
          .activation_elements = act,
          .params = params,
          .output_elements = t * h,  // the context (with_output: after projection and add)
          .gemms = std::move(gemms),
          .elementwise_elements = elementwise};
}

LayerCost dense(const std::string& name, double rows, double in, double out, double extra_flops,
                double extra_act, std::uint64_t extra_params) {
  return {.name = name,
          .forward_flops = 2 * rows * in * out + extra_flops,
          .activation_elements = rows * (in + out) + extra_act,
          .params = static_cast<std::uint64_t>(in * out + out) + extra_params,
          .output_elements = rows * out,
          .gemms = {{.m = rows, .n = out, .k = in}},
          .elementwise_elements = extra_act};
}

LayerCost layer_norm(const std::string& name, double rows, double hidden) {
  return {.name = name,
          .forward_flops = kNormFlopsPerElement * rows * hidden,
          .activation_elements = 2 * rows * hidden,
          .params = static_cast<std::uint64_t>(2 * hidden),
          .output_elements = rows * hidden,
          .elementwise_elements = 2 * rows * hidden};
}

std::vector<LayerCost> bert_large(const ModelShape& shape) {
  constexpr int kLayers = 24, kPositions = 512, kVocab = 30522;
  const TransformerDims d{.tokens = 1.0 * shape.batch * shape.seq_len,
                          .seq = 1.0 * shape.seq_len,
                          .hidden = 1024,
                          .heads = 16,
                          .ffn = 4096};
  if (shape.seq_len > kPositions) {
    throw GeneratorError("seq_len",
                         std::to_string(shape.seq_len) + ": bert_large has 512 positions");
  }
  const double t = d.tokens, h = d.hidden, f = d.ffn;
  std::vector<LayerCost> out;
  // Word + position + token-type embeddings, summed, then LayerNorm.
  out.push_back({.name = "bert.embeddings",
                 .forward_flops = (2 + kNormFlopsPerElement) * t * h,
                 .activation_elements = 5 * t * h,
                 .params = static_cast<std::uint64_t>((kVocab + kPositions + 2) * h + 2 * h),
                 .backward_factor = 1,
                 .output_elements = t * h,
                 .elementwise_elements = 5 * t * h});
  for (int i = 0; i < kLayers; ++i) {
    const std::string p = "bert.encoder.layer." + std::to_string(i) + ".";
    out.push_back(self_attention(p + "attention.self", d, false));
    out.push_back(dense(p + "attention.output", t, h, h, (1 + kNormFlopsPerElement) * t * h,
                        3 * t * h, static_cast<std::uint64_t>(2 * h)));
    out.push_back(dense(p + "intermediate", t, h, f, kGeluFlopsPerElement * t * f, t * f, 0));
    out.push_back(dense(p + "output", t, f, h, (1 + kNormFlopsPerElement) * t * h, 3 * t * h,
                        static_cast<std::uint64_t>(2 * h)));
  }
  const double batch = shape.batch;
  out.push_back(dense("bert.pooler", batch, h, h, kGeluFlopsPerElement * batch * h, 0, 0));
  // Masked-LM head on the masked 15% of tokens; decoder weight tied to the word embeddings.
  const double masked = batch * std::ceil(0.15 * shape.seq_len);
  LayerCost mlm = dense("cls.predictions", masked, h, h,
                        (kGeluFlopsPerElement + kNormFlopsPerElement) * masked * h, 2 * masked * h,
                        static_cast<std::uint64_t>(2 * h));
  mlm.forward_flops += 2 * masked * h * kVocab + kLossFlopsPerLogit * masked * kVocab;
  mlm.activation_elements += masked * (h + 2 * kVocab);
  mlm.params += kVocab;                                     // decoder bias
  mlm.output_elements = masked * kVocab;                    // the logits
  mlm.gemms.push_back({.m = masked, .n = kVocab, .k = h});  // the tied decoder
  mlm.elementwise_elements += 2 * masked * kVocab;          // softmax cross-entropy
  out.push_back(mlm);
  out.push_back(dense("cls.seq_relationship", batch, h, 2, kLossFlopsPerLogit * batch * 2, 0, 0));
  return out;
}

std::vector<LayerCost> gpt2(const ModelShape& shape) {
  constexpr int kLayers = 12, kPositions = 1024, kVocab = 50257;
  const TransformerDims d{.tokens = 1.0 * shape.batch * shape.seq_len,
                          .seq = 1.0 * shape.seq_len,
                          .hidden = 768,
                          .heads = 12,
                          .ffn = 3072};
  if (shape.seq_len > kPositions) {
    throw GeneratorError("seq_len", std::to_string(shape.seq_len) + ": gpt2 has 1024 positions");
  }
  const double t = d.tokens, h = d.hidden, f = d.ffn;
  std::vector<LayerCost> out;
  out.push_back({.name = "transformer.embeddings",  // wte + wpe, summed
                 .forward_flops = t * h,
                 .activation_elements = 3 * t * h,
                 .params = static_cast<std::uint64_t>((kVocab + kPositions) * h),
                 .backward_factor = 1,
                 .output_elements = t * h,
                 .elementwise_elements = 3 * t * h});
  for (int i = 0; i < kLayers; ++i) {
    const std::string p = "transformer.h." + std::to_string(i) + ".";
    out.push_back(layer_norm(p + "ln_1", t, h));
    out.push_back(self_attention(p + "attn", d, true));
    out.push_back(layer_norm(p + "ln_2", t, h));
    LayerCost mlp = dense(p + "mlp", t, h, f, kGeluFlopsPerElement * t * f, t * f, 0);
    const LayerCost proj = dense("", t, f, h, t * h, 2 * t * h, 0);  // c_proj + residual add
    mlp.forward_flops += proj.forward_flops;
    mlp.activation_elements += proj.activation_elements;
    mlp.params += proj.params;
    mlp.output_elements = proj.output_elements;
    mlp.gemms.push_back(proj.gemms[0]);
    mlp.elementwise_elements += proj.elementwise_elements;
    out.push_back(mlp);
  }
  out.push_back(layer_norm("transformer.ln_f", t, h));
  // Tied to the token embeddings: no parameters of its own.
  out.push_back({.name = "lm_head",
                 .forward_flops = 2 * t * h * kVocab + kLossFlopsPerLogit * t * kVocab,
                 .activation_elements = t * h + 2 * t * kVocab,
                 .output_elements = t * kVocab,
                 .gemms = {{.m = t, .n = kVocab, .k = h}},
                 .elementwise_elements = 2 * t * kVocab});
  return out;
}

}  // namespace

const std::vector<std::string>& model_names() {
  static const std::vector<std::string> kNames{
      "resnet18",  "resnet34",        "resnet50",         "resnet101",
      "resnet152", "resnext50_32x4d", "resnext101_32x8d", "wide_resnet50_2",
      "vgg16",     "alexnet",         "cosmoflow",        "bert_large",
      "gpt2"};
  return kNames;
}

bool is_cnn(const std::string& m) {
  return m.starts_with("resnet") || m.starts_with("resnext") || m.starts_with("wide_resnet") ||
         m == "vgg16" || m == "alexnet" || m == "cosmoflow";
}

std::vector<LayerCost> model_layers(const ModelShape& shape) {
  if (shape.batch < 1) {
    throw GeneratorError("batch", std::to_string(shape.batch) + ": expected an integer >= 1");
  }
  const std::string& m = shape.model;
  const bool cnn = is_cnn(m);
  if (cnn && shape.image_size < 32) {
    throw GeneratorError("image_size",
                         std::to_string(shape.image_size) + ": " + m + " needs at least 32 pixels");
  }
  if (!cnn && shape.seq_len < 1) {
    throw GeneratorError("seq_len", std::to_string(shape.seq_len) + ": expected an integer >= 1");
  }
  if (m == "resnet18")
    return resnet(shape, {.blocks = {2, 2, 2, 2}, .bottleneck = false});
  if (m == "resnet34")
    return resnet(shape, {.blocks = {3, 4, 6, 3}, .bottleneck = false});
  if (m == "resnet50")
    return resnet(shape, {.blocks = {3, 4, 6, 3}});
  if (m == "resnet101")
    return resnet(shape, {.blocks = {3, 4, 23, 3}});
  if (m == "resnet152")
    return resnet(shape, {.blocks = {3, 8, 36, 3}});
  if (m == "resnext50_32x4d")
    return resnet(shape, {.blocks = {3, 4, 6, 3}, .groups = 32, .width_per_group = 4});
  if (m == "resnext101_32x8d")
    return resnet(shape, {.blocks = {3, 4, 23, 3}, .groups = 32, .width_per_group = 8});
  if (m == "wide_resnet50_2")
    return resnet(shape, {.blocks = {3, 4, 6, 3}, .width_per_group = 128});
  if (m == "vgg16")
    return vgg16(shape);
  if (m == "alexnet")
    return alexnet(shape);
  if (m == "cosmoflow")
    return cosmoflow(shape);
  if (m == "bert_large")
    return bert_large(shape);
  if (m == "gpt2")
    return gpt2(shape);
  std::string names;
  for (const std::string& name : model_names()) {
    names += (names.empty() ? "" : ", ") + name;
  }
  throw GeneratorError("model", m + ": unknown model (expected one of " + names + ")");
}

}  // namespace dtsim::workloads
