#include "workloads/model_zoo.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "workloads/cnn_builder.h"
#include "workloads/cnn_zoo.h"
#include "workloads/generator_error.h"

namespace dtsim::workloads {

namespace {

// FLOPs per element of the elementwise ops (documented in workloads/GENERATOR.md).
using zoo::kNormFlopsPerElement;               // batch/layer norm: statistics, normalise, affine
constexpr double kGeluFlopsPerElement = 8;     // GELU / tanh
constexpr double kSoftmaxFlopsPerElement = 5;  // max, subtract, exp, sum, divide
constexpr double kLossFlopsPerLogit = 5;       // softmax cross-entropy

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

// BERT pre-training (Devlin et al. 2019) of `layers` layers, `hidden` wide, `heads` heads.
std::vector<LayerCost> bert(const ModelShape& shape, int layers, double hidden, double heads) {
  constexpr int kPositions = 512, kVocab = 30522;
  const TransformerDims d{.tokens = 1.0 * shape.batch * shape.seq_len,
                          .seq = 1.0 * shape.seq_len,
                          .hidden = hidden,
                          .heads = heads,
                          .ffn = 4 * hidden};
  if (shape.seq_len > kPositions) {
    throw GeneratorError("seq_len",
                         std::to_string(shape.seq_len) + ": " + shape.model + " has 512 positions");
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
  for (int i = 0; i < layers; ++i) {
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
  static const std::vector<std::string> kNames = [] {
    std::vector<std::string> names = zoo::cnn_names();
    names.insert(names.end(), {"bert_base", "bert_large", "gpt2"});
    return names;
  }();
  return kNames;
}

bool is_cnn(const std::string& m) {
  const std::vector<std::string>& cnns = zoo::cnn_names();
  return std::find(cnns.begin(), cnns.end(), m) != cnns.end();
}

int default_image_size(const std::string& model) {
  return model == "cosmoflow" ? 128 : model == "inception_v3" ? 299 : 224;
}

std::vector<LayerCost> model_layers(const ModelShape& given) {
  ModelShape shape = given;
  if (shape.image_size == 0) {
    shape.image_size = default_image_size(shape.model);
  }
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
  if (std::optional<std::vector<LayerCost>> layers = zoo::cnn_layers(shape)) {
    return *std::move(layers);
  }
  if (m == "bert_base")
    return bert(shape, 12, 768, 12);
  if (m == "bert_large")
    return bert(shape, 24, 1024, 16);
  if (m == "gpt2")
    return gpt2(shape);
  std::string names;
  for (const std::string& name : model_names()) {
    names += (names.empty() ? "" : ", ") + name;
  }
  throw GeneratorError("model", m + ": unknown model (expected one of " + names + ")");
}

}  // namespace dtsim::workloads
