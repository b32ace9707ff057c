#include "workloads/transformer_file.h"

#include <filesystem>
#include <limits>
#include <map>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "workloads/generator_error.h"
#include "workloads/parsing/input_file.h"
#include "workloads/parsing/json_fields.h"
#include "workloads/parsing/units.h"
#include "workloads/trace_error.h"

namespace dtsim::workloads {

using nlohmann::json;
using parsing::describe_json;
using parsing::JsonFields;

namespace {

// A bound on parameters (about): at 2.8e14 an fp32 gradient all-reduce passes what one collective
// of dtsim's graph may move (2^50 bytes), and 1e14 leaves room; the largest published models
// have under 2e12.
constexpr double kMaxParameters = 1e14;
// Past this many layers, building the graph takes minutes; the deepest published model has 128.
constexpr int kMaxLayers = 10'000;

// Which JSON key holds each TransformerArch field that transformer.cpp checks, so that its
// GeneratorError ("heads", "30: does not divide hidden 4096") lands on the file's key.
using KeyOf = std::map<std::string, std::string>;

// An integer field from 1 to `max`; JSON null counts as absent (Hugging Face writes
// "num_key_value_heads": null for "as many as the heads").
std::optional<int> count(JsonFields& f, const char* key, bool required = true,
                         int max = std::numeric_limits<int>::max()) {
  const json* v = f.value(key, required);
  if (v == nullptr || (v->is_null() && !required)) {
    return std::nullopt;
  }
  const std::int64_t kMax = max;
  // An unsigned integer past kMax reads as 0 here: refused like any other.
  const std::int64_t n =
      !v->is_number_integer() || (v->is_number_unsigned() &&
                                  v->get<std::uint64_t>() > static_cast<std::uint64_t>(kMax))
          ? 0
          : v->get<std::int64_t>();
  if (n < 1 || n > kMax) {
    f.problem(key, "expected an integer from 1 to " + std::to_string(kMax) + ", got " +
                       describe_json(*v));
    return std::nullopt;
  }
  return static_cast<int>(n);
}

std::optional<bool> flag(JsonFields& f, const char* key) {
  const json* v = f.value(key, /*required=*/false);
  if (v == nullptr || v->is_null()) {
    return std::nullopt;
  }
  if (!v->is_boolean()) {
    f.problem(key, "expected true or false, got " + describe_json(*v));
    return std::nullopt;
  }
  return v->get<bool>();
}

// One of `names`' values, by its name.
template <class T>
std::optional<T> choice(JsonFields& f, const char* key,
                        std::initializer_list<std::pair<const char*, T>> names) {
  const std::optional<std::string> name = f.string(key);
  if (!name) {
    return std::nullopt;
  }
  std::string expected;
  for (const auto& [text, value] : names) {
    if (*name == text) {
      return value;
    }
    expected += std::string(expected.empty() ? "" : " or ") + "\"" + text + "\"";
  }
  f.problem(key, "expected " + expected + ", got " + describe_json(json(*name)));
  return std::nullopt;
}

TransformerArch own_keys(JsonFields& f, KeyOf& key_of) {
  f.reject_unknown({"name", "layers", "hidden", "heads", "kv_heads", "ffn_hidden", "vocab",
                    "max_seq_len", "mlp", "norm", "positions", "tied_embeddings", "linear_biases",
                    "dropout", "experts", "experts_per_token", "source"});
  TransformerArch a;
  a.name = f.string("name").value_or("?");
  if (a.name.empty() || parsing::printable(a.name) != a.name) {
    f.problem("name", describe_json(json(a.name)) +
                          ": expected 1 to 64 bytes of printable text without quotes or "
                          "backslashes");
  }
  a.layers = count(f, "layers", true, kMaxLayers).value_or(1);
  a.hidden = count(f, "hidden").value_or(1);
  a.heads = count(f, "heads").value_or(1);
  a.kv_heads = count(f, "kv_heads", false).value_or(a.heads);
  a.ffn_hidden = count(f, "ffn_hidden").value_or(1);
  a.vocab = count(f, "vocab").value_or(1);
  a.max_seq_len = count(f, "max_seq_len").value_or(1);
  a.mlp = choice(f, "mlp", {std::pair{"gelu", MlpKind::kGelu}, {"swiglu", MlpKind::kSwiGlu}})
              .value_or(MlpKind::kGelu);
  a.norm = choice(f, "norm",
                  {std::pair{"layernorm", NormKind::kLayerNorm}, {"rmsnorm", NormKind::kRmsNorm}})
               .value_or(NormKind::kLayerNorm);
  a.learned_positions =
      choice(f, "positions", {std::pair{"learned", true}, {"rope", false}}).value_or(false);
  a.tied_embeddings = flag(f, "tied_embeddings").value_or(false);
  a.linear_biases = flag(f, "linear_biases").value_or(false);
  a.dropout = flag(f, "dropout").value_or(false);
  a.experts = count(f, "experts", false).value_or(1);
  a.experts_per_token = count(f, "experts_per_token", a.experts > 1).value_or(1);
  a.source = f.string("source", false).value_or("");
  for (const char* field : {"layers", "hidden", "heads", "kv_heads", "ffn_hidden", "vocab",
                            "max_seq_len", "experts", "experts_per_token"}) {
    key_of[field] = field;
  }
  return a;
}

// Llama's block as Hugging Face's LlamaForCausalLM and its kin build it: RMSNorm, a gated MLP
// (SiLU(gate) x up), rotary positions, no biases, an untied head unless the config ties it.
TransformerArch llama_config(JsonFields& f, const std::string& type, KeyOf& key_of) {
  TransformerArch a;
  a.layers = count(f, "num_hidden_layers", true, kMaxLayers).value_or(1);
  a.hidden = count(f, "hidden_size").value_or(1);
  a.heads = count(f, "num_attention_heads").value_or(1);
  // Absent, LlamaConfig and NemotronConfig take the heads; Mistral's, Mixtral's and Qwen2's
  // defaults differ (8, 8, 32), so their files must say. null is the heads in all of them.
  const json* kv = f.value("num_key_value_heads", type != "llama" && type != "nemotron");
  a.kv_heads =
      kv != nullptr && !kv->is_null() ? count(f, "num_key_value_heads").value_or(a.heads) : a.heads;
  a.ffn_hidden = count(f, "intermediate_size").value_or(1);
  a.vocab = count(f, "vocab_size").value_or(1);
  a.max_seq_len = count(f, "max_position_embeddings").value_or(1);
  a.mlp = MlpKind::kSwiGlu;
  a.norm = NormKind::kRmsNorm;
  a.tied_embeddings = flag(f, "tie_word_embeddings").value_or(false);
  for (const char* bias : {"attention_bias", "mlp_bias"}) {
    if (flag(f, bias).value_or(false)) {
      f.problem(bias, "true: dtsim's " + type +
                          " block has no biases; describe the model in dtsim's own keys with "
                          "\"linear_biases\": true");
    }
  }
  if (const std::optional<int> head_dim = count(f, "head_dim", false);
      head_dim && a.hidden % a.heads == 0 && *head_dim != a.hidden / a.heads) {
    f.problem("head_dim", std::to_string(*head_dim) +
                              ": dtsim's attention has hidden_size / num_attention_heads = " +
                              std::to_string(a.hidden / a.heads) + " per head");
  }
  key_of = {{"layers", "num_hidden_layers"},           {"hidden", "hidden_size"},
            {"heads", "num_attention_heads"},          {"kv_heads", "num_key_value_heads"},
            {"ffn_hidden", "intermediate_size"},       {"vocab", "vocab_size"},
            {"max_seq_len", "max_position_embeddings"}};
  if (type == "mixtral") {
    a.experts = count(f, "num_local_experts").value_or(1);
    a.experts_per_token = count(f, "num_experts_per_tok").value_or(1);
    key_of["experts"] = "num_local_experts";
    key_of["experts_per_token"] = "num_experts_per_tok";
  }
  return a;
}

// GPT-2 as Hugging Face's GPT2LMHeadModel builds it: LayerNorm, GeLU MLP of n_inner (4 x n_embd
// when null), learned positions, biases on every linear, the head tied unless the config unties.
TransformerArch gpt2_config(JsonFields& f, KeyOf& key_of) {
  TransformerArch a;
  a.layers = count(f, "n_layer", true, kMaxLayers).value_or(1);
  a.hidden = count(f, "n_embd").value_or(1);
  a.heads = count(f, "n_head").value_or(1);
  a.kv_heads = a.heads;
  // n_inner null or absent: 4 x n_embd (an n_embd that large is refused by its size).
  constexpr int kMaxInt = std::numeric_limits<int>::max();
  a.ffn_hidden =
      count(f, "n_inner", false).value_or(a.hidden <= kMaxInt / 4 ? 4 * a.hidden : kMaxInt);
  a.vocab = count(f, "vocab_size").value_or(1);
  a.max_seq_len = count(f, "n_positions").value_or(1);
  a.learned_positions = true;
  a.tied_embeddings = flag(f, "tie_word_embeddings").value_or(true);
  a.linear_biases = true;
  // Residual dropout: resid_pdrop, 0.1 when absent (GPT2Config's default).
  constexpr double kGpt2ResidPdrop = 0.1;
  if (const std::optional<double> p = f.number("resid_pdrop", false); p && (*p < 0 || *p >= 1)) {
    f.problem("resid_pdrop", parsing::format_number("%g", *p) +
                                 ": expected a probability from 0 "
                                 "up to 1");
  } else {
    a.dropout = p.value_or(kGpt2ResidPdrop) > 0;
  }
  key_of = {{"layers", "n_layer"},         {"hidden", "n_embd"},      {"heads", "n_head"},
            {"kv_heads", "n_head"},        {"ffn_hidden", "n_inner"}, {"vocab", "vocab_size"},
            {"max_seq_len", "n_positions"}};
  return a;
}

TransformerArch hugging_face(JsonFields& f, const std::string& path, KeyOf& key_of) {
  const std::optional<std::string> read_type = f.string("model_type");
  const std::string type = read_type.value_or("");
  TransformerArch a;
  if (!read_type) {
    // f.string recorded the problem
  } else if (type == "llama" || type == "mistral" || type == "mixtral" || type == "qwen2") {
    a = llama_config(f, type, key_of);
  } else if (type == "nemotron") {
    // NemotronForCausalLM: Llama's keys, a LayerNorm with a bias, a squared-ReLU MLP that is
    // not gated (up, activation, down: costed as GeLU's).
    a = llama_config(f, type, key_of);
    a.mlp = MlpKind::kGelu;
    a.norm = NormKind::kLayerNorm;
  } else if (type == "gpt2") {
    a = gpt2_config(f, key_of);
  } else {
    f.problem("model_type",
              describe_json(json(type)) +
                  ": dtsim reads Hugging Face configs of llama, mistral, mixtral, "
                  "qwen2, nemotron and gpt2; describe another model in dtsim's own keys "
                  "(workloads/TRANSFORMER.md, \"Your own model\")");
  }
  const std::optional<std::string> name = f.string("_name_or_path", false);
  // The Hub's files are all called config.json: a downloaded model's folder names it.
  const std::filesystem::path file = std::filesystem::absolute(path).lexically_normal();
  const std::string folder = file.parent_path().filename().string();
  a.name = name && !name->empty()                       ? parsing::printable(*name)
           : file.stem() == "config" && !folder.empty() ? folder
                                                        : file.stem().string();
  a.source = "Hugging Face config " + path;
  return a;
}

// Checks `a` as the catalogue's are checked (transformer.cpp), and its size.
void check(const TransformerArch& a, const KeyOf& key_of, std::vector<std::string>& problems) {
  const double params =
      1.0 * a.layers * a.hidden * (4.0 * a.hidden + 3.0 * a.ffn_hidden * a.experts) +
      2.0 * a.vocab * a.hidden + (a.learned_positions ? 1.0 * a.max_seq_len * a.hidden : 0.0);
  if (params > kMaxParameters) {
    problems.push_back(": about " + parsing::format_number("%.3g", params) +
                       " parameters; dtsim models up to 1e+14");
    return;
  }
  try {
    (void)parameter_count(a);
  } catch (const GeneratorError& e) {
    const auto key = key_of.find(e.field());
    problems.push_back("/" + (key == key_of.end() ? e.field() : key->second) + ": " + e.detail());
  }
}

[[noreturn]] void throw_problems(const std::string& path,
                                 const std::vector<std::string>& problems) {
  std::string message;
  for (const std::string& p : problems) {
    message += (message.empty() ? "" : "\n") + path + (p.starts_with(":") ? "" : ": ") + p;
  }
  throw TraceError(message);
}

}  // namespace

bool is_transformer_file(std::string_view model) {
  return model.ends_with(".json");
}

TransformerArch read_transformer_file(const std::string& path) {
  json doc;
  try {
    doc = parsing::read_json_file(path, "transformer architecture");
  } catch (const parsing::InputFileError& e) {
    throw TraceError(e.what());
  }
  std::vector<std::string> problems;
  if (!doc.is_object()) {
    throw_problems(path, {"expected a JSON object (workloads/TRANSFORMER.md, \"Your own model\"), "
                          "got " +
                          describe_json(doc)});
  }
  JsonFields f(doc, "", problems);
  KeyOf key_of;
  const TransformerArch a =
      f.has("model_type") ? hugging_face(f, path, key_of) : own_keys(f, key_of);
  if (problems.empty()) {
    check(a, key_of, problems);
  }
  if (!problems.empty()) {
    throw_problems(path, problems);
  }
  return a;
}

std::optional<TransformerArch> find_or_read_transformer(const std::string& model) {
  if (is_transformer_file(model)) {
    return read_transformer_file(model);
  }
  if (const TransformerArch* arch = find_transformer(model)) {
    return *arch;
  }
  return std::nullopt;
}

}  // namespace dtsim::workloads
