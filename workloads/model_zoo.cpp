#include "workloads/model_zoo.h"

#include <algorithm>
#include <array>
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

// `first` and then `second` as one layer named as `first` (a transformer's MLP: two GEMMs).
LayerCost followed_by(LayerCost first, const LayerCost& second) {
  first.forward_flops += second.forward_flops;
  first.activation_elements += second.activation_elements;
  first.params += second.params;
  first.output_elements = second.output_elements;
  first.gemms.insert(first.gemms.end(), second.gemms.begin(), second.gemms.end());
  first.elementwise_elements += second.elementwise_elements;
  return first;
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
    out.push_back(followed_by(dense(p + "mlp", t, h, f, kGeluFlopsPerElement * t * f, t * f, 0),
                              dense("", t, f, h, t * h, 2 * t * h, 0)));  // c_proj + residual
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

// The share of a corpus's tokens whose word has frequency rank first+1 .. end (of `vocab`
// words), by Zipf's law with exponent 1: a word's frequency is proportional to 1 / rank.
double zipf_share(int first, int end, int vocab) {
  double part = 0, all = 0;
  for (int rank = 1; rank <= vocab; ++rank) {
    all += 1.0 / rank;
    if (rank > first && rank <= end) {
      part += 1.0 / rank;
    }
  }
  return part / all;
}

}  // namespace

namespace {

constexpr int kXlVocab = 267735;
constexpr std::array<int, 5> kXlBounds{0, 19997, 39997, 199997, kXlVocab};  // the cutoffs

// Transformer-XL's sizes, shared by its parts: the segment of T = seq_len tokens per sample and
// a memory of M = T earlier tokens; per cluster of the adaptive embedding and softmax its width,
// the tokens whose word it holds (Zipf) and its words.
struct XlSizes {
  double b, seq, mem, t;  // batch, T, M, tokens of the batch
  double d, hd, f;        // d_model, heads x d_head, d_inner
  double scores;          // T x (M+T) per sample and head
  std::array<double, 4> width{}, tokens{}, words{};
};

XlSizes xl_sizes(const ModelShape& shape, const TransformerXlShape& x) {
  XlSizes z{.b = 1.0 * shape.batch,
            .seq = 1.0 * shape.seq_len,
            .mem = 1.0 * shape.seq_len,
            .t = 1.0 * shape.batch * shape.seq_len,
            .d = 1.0 * x.d_model,
            .hd = 1.0 * x.heads * x.d_head,
            .f = 1.0 * x.d_inner,
            .scores = 0};
  z.scores = z.b * x.heads * z.seq * (z.mem + z.seq);
  for (std::size_t i = 0; i < 4; ++i) {
    z.width[i] = z.d / std::pow(x.div_val, static_cast<double>(i));
    z.tokens[i] = z.t * zipf_share(kXlBounds[i], kXlBounds[i + 1], kXlVocab);
    z.words[i] = kXlBounds[i + 1] - kXlBounds[i];
  }
  return z;
}

// Adaptive embedding: a lookup per cluster, scaled by sqrt(d_model), dropout; with div_val > 1
// each cluster's rows are then projected to d_model (word_emb.proj, whose input gradient reaches
// the table). The two relative-position biases, shared by every layer, are counted here.
void add_xl_embedding(std::vector<LayerCost>& out, const XlSizes& z, const TransformerXlShape& x) {
  const double t = z.t, d = z.d;
  LayerCost emb{.name = "word_emb",
                .forward_flops = t * d,
                .activation_elements = 3 * t * d,
                .params = static_cast<std::uint64_t>(2 * z.hd),
                .backward_factor = 1,
                .output_elements = t * d,
                .elementwise_elements = 4 * t * d};
  LayerCost proj{.name = "word_emb.proj", .output_elements = t * d};
  for (std::size_t i = 0; i < 4; ++i) {
    emb.params += static_cast<std::uint64_t>(z.words[i] * z.width[i]);
    proj.params += static_cast<std::uint64_t>(d * z.width[i]);
    proj.forward_flops += 2 * z.tokens[i] * d * z.width[i];
    proj.activation_elements += z.tokens[i] * (d + z.width[i]);
    proj.gemms.push_back({.m = z.tokens[i], .n = d, .k = z.width[i]});
  }
  out.push_back(emb);
  if (x.div_val > 1) {
    out.push_back(proj);
  }
}

// One decoder layer, its names prefixed by `p`: relative-position attention, then the
// position-wise feed-forward, post-layer-norm.
void add_xl_layer(std::vector<LayerCost>& out, const std::string& p, const XlSizes& z,
                  const TransformerXlShape& x) {
  const double b = z.b, seq = z.seq, mem = z.mem, t = z.t, d = z.d, hd = z.hd, f = z.f;
  const double scores = z.scores;
  // The memory's and the positions' projections (qkv_net over the M memory rows, r_net over
  // the M+T positions): neither input needs a gradient, only the weights do.
  out.push_back({.name = p + "dec_attn.mem",
                 .forward_flops = 2 * mem * b * 3 * hd * d + 2 * (mem + seq) * hd * d,
                 .activation_elements = mem * b * (d + 3 * hd) + (mem + seq) * (d + hd),
                 .backward_factor = 1,
                 .output_elements = t * d,
                 .gemms = {{.m = mem * b, .n = 3 * hd, .k = d}, {.m = mem + seq, .n = hd, .k = d}},
                 .elementwise_elements = (mem + seq) * d});
  // qkv over the segment, the content (AC) and position (BD) scores, their shift, mask and
  // softmax, the weighted values, o_net, dropout, residual add and LayerNorm.
  const double per = b * x.heads;
  const double score_passes = 9 + (x.dropatt > 0 ? 2 : 0);
  out.push_back(
      {.name = p + "dec_attn",
       .forward_flops = 2 * t * 3 * hd * d + 6 * scores * x.d_head + 2 * t * d * hd +
                        kSoftmaxFlopsPerElement * scores + (1 + kNormFlopsPerElement) * t * d,
       .activation_elements = t * d + 3 * t * hd + 2 * mem * b * hd + 6 * scores + 5 * t * d,
       .params = static_cast<std::uint64_t>(5 * hd * d + 2 * d),  // qkv, o, r nets; LN
       .output_elements = t * d,
       .gemms = {{.m = t, .n = 3 * hd, .k = d},
                 {.m = seq, .n = mem + seq, .k = 1.0 * x.d_head, .count = per},
                 {.m = seq, .n = mem + seq, .k = 1.0 * x.d_head, .count = per},
                 {.m = seq, .n = 1.0 * x.d_head, .k = mem + seq, .count = per},
                 {.m = t, .n = d, .k = hd}},
       .elementwise_elements = score_passes * scores + 4 * t * hd + 7 * t * d});
  out.push_back(
      followed_by(dense(p + "pos_ff", t, d, f, t * f, 4 * t * f, 0),  // ReLU, dropout
                  dense("", t, f, d, (2 + kNormFlopsPerElement) * t * d, 7 * t * d,
                        static_cast<std::uint64_t>(2 * d))));  // dropout, residual add, LayerNorm
}

// Adaptive log-softmax: every token through the head (the 19,997 most frequent words and 3
// cluster logits), the others' tokens through their cluster too. Word weights are tied to
// the embedding; with div_val > 1 the head has its own projection, the tails share the
// embedding's. Own parameters: the word biases, the cluster logits, the head projection.
LayerCost xl_softmax(const XlSizes& z, const TransformerXlShape& x) {
  const double t = z.t, d = z.d;
  LayerCost crit{
      .name = "crit",
      .params = static_cast<std::uint64_t>(kXlVocab + 3 * d + 3 + (x.div_val > 1 ? d * d : 0)),
      .output_elements = t * (z.words[0] + 3)};
  double logits = 0;
  for (std::size_t i = 0; i < 4; ++i) {
    const double rows = i == 0 ? t : z.tokens[i];
    const double cols = i == 0 ? z.words[0] + 3 : z.words[i];
    if (x.div_val > 1) {
      crit.gemms.push_back({.m = rows, .n = z.width[i], .k = d});
    }
    crit.gemms.push_back({.m = rows, .n = cols, .k = z.width[i]});
    logits += rows * cols;
  }
  for (const Gemm& g : crit.gemms) {
    crit.forward_flops += 2 * g.m * g.n * g.k;
    crit.activation_elements += g.m * (g.k + g.n);
  }
  crit.forward_flops += kLossFlopsPerLogit * logits;
  crit.activation_elements += 2 * logits;
  crit.elementwise_elements = 2 * logits;  // log-softmax reads and writes the logits
  return crit;
}

}  // namespace

// NVIDIA DeepLearningExamples' Transformer-XL (PyTorch, WikiText-103; mem_transformer.py):
// an adaptive embedding and softmax over 267,735 words in four clusters, and `layers` decoder
// layers of relative-position attention over the segment of T = seq_len tokens and a memory of
// M = T earlier tokens (DLE trains with mem_len = tgt_len), post-layer-norm.
std::vector<LayerCost> transformer_xl(const ModelShape& shape, const TransformerXlShape& x) {
  const XlSizes z = xl_sizes(shape, x);
  std::vector<LayerCost> out;
  add_xl_embedding(out, z, x);
  for (int i = 0; i < x.layers; ++i) {
    add_xl_layer(out, "layers." + std::to_string(i) + ".", z, x);
  }
  out.push_back(xl_softmax(z, x));
  return out;
}

const std::vector<std::string>& model_names() {
  static const std::vector<std::string> kNames = [] {
    std::vector<std::string> names = zoo::cnn_names();
    names.insert(names.end(), {"bert_base", "bert_large", "gpt2", "transformer_xl_base",
                               "transformer_xl_large"});
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
  if (m == "transformer_xl_base")
    return transformer_xl(shape, kTransformerXlBase);
  if (m == "transformer_xl_large")
    return transformer_xl(shape, kTransformerXlLarge);
  std::string names;
  for (const std::string& name : model_names()) {
    names += (names.empty() ? "" : ", ") + name;
  }
  throw GeneratorError("model", m + ": unknown model (expected one of " + names + ")");
}

}  // namespace dtsim::workloads
