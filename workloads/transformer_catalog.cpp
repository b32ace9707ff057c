// The catalogue of published transformer architectures (transformer.h). Each entry names its
// source; tests/workloads/transformer_test.cpp checks every parameter count against it.
#include <algorithm>
#include <cctype>
#include <utility>

#include "workloads/transformer.h"

namespace dtsim::workloads {

namespace {

constexpr std::uint64_t kMillion = 1'000'000;

// GPT-3 and Megatron-LM's GPTs: GPT-2's block (LayerNorm, GeLU MLP of 4h, biases everywhere),
// learned positions, the head tied to the token embedding; dropout 0.1 (GPT-3; Megatron-LM's
// --hidden-dropout and --attention-dropout defaults).
TransformerArch gpt(std::string name, int layers, int hidden, int heads, int vocab, int positions,
                    std::uint64_t published, std::string source) {
  return {.name = std::move(name),
          .layers = layers,
          .hidden = hidden,
          .heads = heads,
          .kv_heads = heads,
          .ffn_hidden = 4 * hidden,
          .vocab = vocab,
          .max_seq_len = positions,
          .mlp = MlpKind::kGelu,
          .norm = NormKind::kLayerNorm,
          .learned_positions = true,
          .tied_embeddings = true,
          .published_params = published,
          .source = std::move(source),
          .linear_biases = true,
          .dropout = true};
}

// Llama 2/3 and Mixtral: RMSNorm, SwiGLU, RoPE, no biases, untied head.
TransformerArch llama(std::string name, int layers, int hidden, int heads, int kv_heads, int ffn,
                      int vocab, int context, std::uint64_t published, std::string source) {
  return {.name = std::move(name),
          .layers = layers,
          .hidden = hidden,
          .heads = heads,
          .kv_heads = kv_heads,
          .ffn_hidden = ffn,
          .vocab = vocab,
          .max_seq_len = context,
          .mlp = MlpKind::kSwiGlu,
          .norm = NormKind::kRmsNorm,
          .published_params = published,
          .source = std::move(source)};
}

// MosaicML's MPT as llm-foundry's pretraining yamls configure it: GPT's block (the yamls set
// neither no_bias nor alibi, so llm-foundry's defaults: biases, learned positions), FFN 4d, vocab
// 50368, the head tied to the token embedding, a position table as long as the run's sequence;
// no dropout (nor do they set resid_pdrop, emb_pdrop or attn_pdrop, whose MPTConfig defaults are
// 0).
TransformerArch mpt(std::string name, int layers, int hidden, int heads, std::uint64_t published,
                    const char* source) {
  TransformerArch a = gpt(std::move(name), layers, hidden, heads, 50368, 2048, published, source);
  a.positions_per_run = true;
  a.dropout = false;
  return a;
}

// NVIDIA's Nemotron-3 and Nemotron-4 as NeMo configures them: LayerNorm (layernorm1p: a scale
// and a bias), a squared-ReLU MLP (not gated, so costed as GeLU's: one elementwise kernel
// between two linears), rotary positions, no biases, an untied head, the 256,000-token
// SentencePiece vocabulary; context 4096; no dropout (the yamls' hidden_dropout and
// attention_dropout are 0).
TransformerArch nemotron(std::string name, int layers, int hidden, int heads, int kv_heads, int ffn,
                         std::uint64_t published, const char* source) {
  TransformerArch a =
      llama(std::move(name), layers, hidden, heads, kv_heads, ffn, 256000, 4096, published, source);
  a.mlp = MlpKind::kGelu;
  a.norm = NormKind::kLayerNorm;
  return a;
}

TransformerArch mixtral(TransformerArch arch) {
  arch.experts = 8;
  arch.experts_per_token = 2;
  return arch;
}

const char* const kGpt3 =
    "Brown et al. 2020, Language Models are Few-Shot Learners, Table 2.1 (layers, d_model, "
    "heads, 2048 context, parameters as rounded there); vocab 50257 (GPT-2 BPE). 1.3B has 16 "
    "heads of 128 and 13B d_model 5120 = 40 x 128, as Megatron-DeepSpeed's gpt-sizes.sh and "
    "NeMo configure them (Table 2.1 gives 24 heads x 128 != 2048, and 5140)";
const char* const kNemoGpt3 =
    "NVIDIA NeMo-Framework-Launcher launcher_scripts/conf/training/gpt3/{5b,20b}.yaml "
    "(GPT-2 BPE vocab 50257, 2048 positions, FFN 4h); parameters as the config's name rounds them";
const char* const kMegatron2020 =
    "Megatron-LM README @52819194 (2020-09, images/tables.tex): GPT-2-style weak-scaling "
    "models, vocab 51200, seq 1024, parameters in billions to 3 digits";
const char* const kMegatron2021 =
    "Narayanan et al. 2021, Efficient Large-Scale Language Model Training on GPU Clusters Using "
    "Megatron-LM, Table 1 (vocab 51200, seq 2048, parameters in billions as stated there)";
const char* const kLlama2 =
    "Touvron et al. 2023, Llama 2, and meta-llama/Llama-2-*-hf config.json (4096 context, vocab "
    "32000, FFN 11008/13824/28672, 70B: 8 KV heads); parameters: the checkpoint's safetensors "
    "total on Hugging Face";
const char* const kLlama3 =
    "Dubey et al. 2024, The Llama 3 Herd of Models, Table 3 (layers, width, FFN, heads, 8 KV "
    "heads), tokenizer vocab 128256; context 8192 (Llama 3) or 131072 (Llama 3.1, config.json); "
    "parameters: the safetensors total on Hugging Face (405B: 405,853 M as torchtitan reports, "
    "experiments/validation/data/hybrid.csv rows TT)";
const char* const kMixtral =
    "Jiang et al. 2024, Mixtral of Experts, Table 1, and mistralai/Mixtral-8x7B-v0.1 / "
    "mistral-community/Mixtral-8x22B-v0.1 config.json (8 experts, top-2, vocab 32000); "
    "parameters: the safetensors total on Hugging Face";

const char* const kMpt =
    "mosaicml/llm-foundry scripts/train/yamls/pretrain/mpt-*.yaml (n_layers, d_model, n_heads, "
    "expansion_ratio 4, vocab 50368; llm-foundry's MPTConfig defaults: biases, learned "
    "positions of max_seq_len rows, tied embeddings); parameters at max_seq_len 2048 as "
    "llm-foundry's benchmarking README tables give them to 0.1 M "
    "(experiments/validation/data/hybrid.csv rows LLMF, column params_M)";

const char* const kNemotron =
    "NVIDIA NeMo nemo/collections/llm/gpt/model/nemotron.py (Nemotron3Config8B, 22B: layers, "
    "hidden, FFN, heads, query groups; NemotronConfig: LayerNorm, squared ReLU, RoPE, no biases, "
    "untied) and NeMo-Framework-Launcher conf/training/nemotron/nemotron_{8b,22b}.yaml (the "
    "same, seq 4096, a 256k tokenizer); parameters: the configs' names, nominal";
const char* const kNemotron4 =
    "NVIDIA NeMo nemo/collections/llm/gpt/model/nemotron.py (Nemotron4Config15B, 340B: layers, "
    "hidden, FFN, heads, 8 query groups; NemotronConfig: LayerNorm, squared ReLU, RoPE, no "
    "biases, untied) and NeMo-Framework-Launcher nemotron_340b.yaml (seq 4096, tokenizer "
    "nemotron_2_256k); parameters: the Nemotron-4 15B and 340B technical reports' embedding and "
    "other parameters (3.2 + 12.5 B, 9.4 + 331.6 B)";

std::vector<TransformerArch> make_catalog() {
  const std::uint64_t b = 1000 * kMillion;
  return {
      gpt("gpt3-1.3b", 24, 2048, 16, 50257, 2048, 1'300 * kMillion, kGpt3),
      gpt("gpt3-2.7b", 32, 2560, 32, 50257, 2048, 2'700 * kMillion, kGpt3),
      gpt("gpt3-6.7b", 32, 4096, 32, 50257, 2048, 6'700 * kMillion, kGpt3),
      gpt("gpt3-13b", 40, 5120, 40, 50257, 2048, 13'000 * kMillion, kGpt3),
      gpt("gpt3-175b", 96, 12288, 96, 50257, 2048, 175'000 * kMillion, kGpt3),
      gpt("gpt3-5b", 24, 4096, 32, 50257, 2048, 5 * b, kNemoGpt3),
      gpt("gpt3-20b", 44, 6144, 48, 50257, 2048, 20 * b, kNemoGpt3),
      gpt("megatron-gpt2-1b", 24, 1920, 15, 51200, 1024, 1'160 * kMillion, kMegatron2020),
      gpt("megatron-gpt2-2b", 30, 2304, 18, 51200, 1024, 2'030 * kMillion, kMegatron2020),
      gpt("megatron-gpt2-4b", 36, 3072, 24, 51200, 1024, 4'240 * kMillion, kMegatron2020),
      gpt("megatron-gpt2-8b", 42, 4096, 32, 51200, 1024, 8'670 * kMillion, kMegatron2020),
      gpt("megatron-gpt-1.7b", 24, 2304, 24, 51200, 2048, 1'700 * kMillion, kMegatron2021),
      gpt("megatron-gpt-3.6b", 30, 3072, 32, 51200, 2048, 3'600 * kMillion, kMegatron2021),
      gpt("megatron-gpt-7.5b", 36, 4096, 32, 51200, 2048, 7'500 * kMillion, kMegatron2021),
      gpt("megatron-gpt-18b", 40, 6144, 48, 51200, 2048, 18'400 * kMillion, kMegatron2021),
      gpt("megatron-gpt-39b", 48, 8192, 64, 51200, 2048, 39'100 * kMillion, kMegatron2021),
      gpt("megatron-gpt-76b", 60, 10240, 80, 51200, 2048, 76'100 * kMillion, kMegatron2021),
      gpt("megatron-gpt-145b", 80, 12288, 96, 51200, 2048, 145'600 * kMillion, kMegatron2021),
      gpt("megatron-gpt-291b", 90, 16384, 128, 51200, 2048, 290'800 * kMillion,
          "Megatron-LM README @152aab30 (images/cases_jan2021.png): vocab 51200, seq 2048, "
          "parameters in billions to 4 digits"),
      gpt("megatron-gpt-310b", 96, 16384, 128, 51200, 2048, 310'100 * kMillion, kMegatron2021),
      gpt("megatron-gpt-530b", 105, 20480, 128, 51200, 2048, 529'600 * kMillion, kMegatron2021),
      gpt("megatron-gpt-1t", 128, 25600, 160, 51200, 2048, 1'008'000 * kMillion, kMegatron2021),
      llama("llama2-7b", 32, 4096, 32, 32, 11008, 32000, 4096, 6'738'415'616, kLlama2),
      llama("llama2-13b", 40, 5120, 40, 40, 13824, 32000, 4096, 13'015'864'320, kLlama2),
      llama("llama2-70b", 80, 8192, 64, 8, 28672, 32000, 4096, 68'976'648'192, kLlama2),
      llama("llama3-8b", 32, 4096, 32, 8, 14336, 128256, 8192, 8'030'261'248, kLlama3),
      llama("llama3-70b", 80, 8192, 64, 8, 28672, 128256, 8192, 70'553'706'496, kLlama3),
      llama("llama3.1-8b", 32, 4096, 32, 8, 14336, 128256, 131072, 8'030'261'248, kLlama3),
      llama("llama3.1-70b", 80, 8192, 64, 8, 28672, 128256, 131072, 70'553'706'496, kLlama3),
      llama("llama3.1-405b", 126, 16384, 128, 8, 53248, 128256, 131072, 405'853 * kMillion,
            kLlama3),
      mpt("mpt-125m", 12, 768, 12, 125'300'000, kMpt),
      mpt("mpt-350m", 24, 1024, 16, 356'000'000, kMpt),
      mpt("mpt-760m", 24, 1536, 12, 760'500'000, kMpt),
      mpt("mpt-1b", 24, 2048, 16, 1'316'000'000, kMpt),
      mpt("mpt-3b", 32, 2560, 20, 2'651'800'000, kMpt),
      mpt("mpt-7b", 32, 4096, 32, 6'658'900'000, kMpt),
      mpt("mpt-13b", 40, 5120, 40, 12'854'000'000, kMpt),
      mpt("mpt-30b", 48, 7168, 56, 29'975'200'000, kMpt),
      mpt("mpt-70b", 80, 8192, 64, 64'862'400'000, kMpt),
      nemotron("nemotron-8b", 32, 4096, 32, 32, 16384, 8 * b, kNemotron),
      nemotron("nemotron-15b", 32, 6144, 48, 8, 24576, 15'700 * kMillion, kNemotron4),
      nemotron("nemotron-22b", 40, 6144, 48, 48, 24576, 22 * b, kNemotron),
      nemotron("nemotron-340b", 96, 18432, 96, 8, 73728, 341'000 * kMillion, kNemotron4),
      mixtral(
          llama("mixtral-8x7b", 32, 4096, 32, 8, 14336, 32000, 32768, 46'702'792'704, kMixtral)),
      mixtral(
          llama("mixtral-8x22b", 56, 6144, 48, 8, 16384, 32000, 65536, 140'620'634'112, kMixtral)),
  };
}

bool equal_ignoring_case(std::string_view a, std::string_view b) {
  return std::ranges::equal(a, b, [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) ==
           std::tolower(static_cast<unsigned char>(y));
  });
}

}  // namespace

TransformerArch for_sequence(const TransformerArch& arch, int seq_len) {
  TransformerArch a = arch;
  if (a.positions_per_run) {
    a.max_seq_len = seq_len;
  }
  return a;
}

const std::vector<TransformerArch>& transformer_catalog() {
  static const std::vector<TransformerArch> kCatalog = make_catalog();
  return kCatalog;
}

const TransformerArch* find_transformer(std::string_view name) {
  for (const TransformerArch& arch : transformer_catalog()) {
    if (equal_ignoring_case(arch.name, name)) {
      return &arch;
    }
  }
  return nullptr;
}

}  // namespace dtsim::workloads
