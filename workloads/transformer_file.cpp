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

// Past this many parameters (about), dtsim's 64-bit byte counts could overflow.
constexpr double kMaxParameters = 1e15;

// Which JSON key holds each TransformerArch field that transformer.cpp checks, so that its
// GeneratorError ("heads", "30: does not divide hidden 4096") lands on the file's key.
using KeyOf = std::map<std::string, std::string>;

// An integer field >= 1 that fits an int; JSON null counts as absent (Hugging Face writes
// "num_key_value_heads": null for "as many as the heads").
std::optional<int> count(JsonFields& f, const char* key, bool required = true) {
  const json* v = f.value(key, required);
  if (v == nullptr || (v->is_null() && !required)) {
    return std::nullopt;
  }
  constexpr std::int64_t kMax = std::numeric_limits<int>::max();
  // An unsigned integer past kMax reads as 0 here: refused like any other.
  const std::int64_t n =
      !v->is_number_integer() || (v->is_number_unsigned() && v->get<std::uint64_t>() > kMax)
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
                    "experts", "experts_per_token", "source"});
  TransformerArch a;
  a.name = f.string("name").value_or("?");
  if (a.name.empty()) {
    f.problem("name", "must not be empty");
  }
  a.layers = count(f, "layers").value_or(1);
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
  a.layers = count(f, "num_hidden_layers").value_or(1);
  a.hidden = count(f, "hidden_size").value_or(1);
  a.heads = count(f, "num_attention_heads").value_or(1);
  a.kv_heads = count(f, "num_key_value_heads", false).value_or(a.heads);
  a.ffn_hidden = count(f, "intermediate_size").value_or(1);
  a.vocab = count(f, "vocab_size").value_or(1);
  a.max_seq_len = count(f, "max_position_embeddings").value_or(1);
  a.mlp = MlpKind::kSwiGlu;
  a.norm = NormKind::kRmsNorm;
  a.tied_embeddings = flag(f, "tie_word_embeddings").value_or(false);
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
  a.layers = count(f, "n_layer").value_or(1);
  a.hidden = count(f, "n_embd").value_or(1);
  a.heads = count(f, "n_head").value_or(1);
  a.kv_heads = a.heads;
  a.ffn_hidden = count(f, "n_inner", false).value_or(4 * a.hidden);
  a.vocab = count(f, "vocab_size").value_or(1);
  a.max_seq_len = count(f, "n_positions").value_or(1);
  a.learned_positions = true;
  a.tied_embeddings = flag(f, "tie_word_embeddings").value_or(true);
  a.linear_biases = true;
  key_of = {{"layers", "n_layer"},         {"hidden", "n_embd"},      {"heads", "n_head"},
            {"kv_heads", "n_head"},        {"ffn_hidden", "n_inner"}, {"vocab", "vocab_size"},
            {"max_seq_len", "n_positions"}};
  return a;
}

TransformerArch hugging_face(JsonFields& f, const std::string& path, KeyOf& key_of) {
  const std::string type = f.string("model_type").value_or("");
  TransformerArch a;
  if (type == "llama" || type == "mistral" || type == "mixtral" || type == "qwen2") {
    a = llama_config(f, type, key_of);
  } else if (type == "gpt2") {
    a = gpt2_config(f, key_of);
  } else {
    f.problem("model_type", describe_json(json(type)) +
                                ": dtsim reads Hugging Face configs of llama, mistral, mixtral, "
                                "qwen2 and gpt2; describe another model in dtsim's own keys "
                                "(workloads/TRANSFORMER.md, \"Your own model\")");
  }
  const std::optional<std::string> name = f.string("_name_or_path", false);
  // The Hub's files are all called config.json: a downloaded model's folder names it.
  const std::filesystem::path file(path);
  const std::string folder = file.parent_path().filename().string();
  a.name = name && !name->empty()                       ? *name
           : file.stem() == "config" && !folder.empty() ? folder
                                                        : file.stem().string();
  a.source = "Hugging Face config " + path;
  return a;
}

// Checks `a` as the catalogue's are checked (transformer.cpp), and its size.
void check(const TransformerArch& a, const KeyOf& key_of, std::vector<std::string>& problems) {
  const double params =
      1.0 * a.layers * a.hidden * (4.0 * a.hidden + 3.0 * a.ffn_hidden * a.experts) +
      2.0 * a.vocab * a.hidden + 1.0 * a.max_seq_len * a.hidden;
  if (params > kMaxParameters) {
    problems.push_back(": about " + parsing::format_number("%.3g", params) +
                       " parameters; dtsim models up to 1e+15");
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
