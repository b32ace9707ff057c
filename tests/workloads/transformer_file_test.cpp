// Transformer architecture files (workloads/transformer_file.h): dtsim's own keys and Hugging
// Face's config.json read into the architecture the catalogue would hold, checked against the
// published parameter counts, and every bad file a located error.
#include "workloads/transformer_file.h"

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "workloads/trace_error.h"

namespace dtsim::workloads {
namespace {

namespace fs = std::filesystem;

class TransformerFile : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("dtsim_transformer_file_" +
            std::string(testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Writes `text` to <dir>/<name> and returns the path.
  std::string write(const std::string& name, const std::string& text) const {
    const fs::path path = dir_ / name;
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text;
    return path.string();
  }

  // The message read_transformer_file throws for `text`, or "" if it reads.
  std::string error_of(const std::string& text) const {
    const std::string path = write("bad.json", text);
    try {
      (void)read_transformer_file(path);
    } catch (const TraceError& e) {
      return e.what();
    }
    return "";
  }

  fs::path dir_;
};

// What the costs depend on: every field but the name, the source and the published count.
void expect_same_shape(const TransformerArch& got, const TransformerArch& want) {
  TransformerArch a = got;
  a.name = want.name;
  a.source = want.source;
  a.published_params = want.published_params;
  EXPECT_EQ(a, want) << got.name << " against " << want.name;
}

// Llama 3 8B in dtsim's keys, as TRANSFORMER.md's example writes it (Meta's model card).
const char* kLlama3In8bKeys = R"({
  "name": "my-llama", "layers": 32, "hidden": 4096, "heads": 32, "kv_heads": 8,
  "ffn_hidden": 14336, "vocab": 128256, "max_seq_len": 8192,
  "mlp": "swiglu", "norm": "rmsnorm", "positions": "rope"})";

TEST_F(TransformerFile, OwnKeysDescribeWhatTheCatalogueHolds) {
  const TransformerArch a = read_transformer_file(write("llama.json", kLlama3In8bKeys));
  EXPECT_EQ(a.name, "my-llama");
  expect_same_shape(a, *find_transformer("llama3-8b"));
  // Meta's published count for Llama 3 8B.
  EXPECT_EQ(parameter_count(a), 8'030'261'248u);
}

TEST_F(TransformerFile, OptionalKeysTakeTheirDefaults) {
  // No kv_heads (as many as the heads), no ties, no biases, dense.
  const TransformerArch a = read_transformer_file(write("gpt.json", R"({
    "name": "g", "layers": 2, "hidden": 64, "heads": 4, "ffn_hidden": 256, "vocab": 100,
    "max_seq_len": 32, "mlp": "gelu", "norm": "layernorm", "positions": "learned",
    "source": "a test"})"));
  EXPECT_EQ(a.kv_heads, 4);
  EXPECT_FALSE(a.tied_embeddings);
  EXPECT_FALSE(a.linear_biases);
  EXPECT_TRUE(a.learned_positions);
  EXPECT_EQ(a.experts, 1);
  EXPECT_EQ(a.experts_per_token, 1);
  EXPECT_EQ(a.source, "a test");
  // By hand: embedding 100*64 + positions 32*64; per block 2 LayerNorms (2*2*64), attention
  // 4*64*64, MLP 2*64*256; final norm 2*64; untied head 64*100.
  EXPECT_EQ(parameter_count(a),
            100u * 64 + 32 * 64 + 2 * (4 * 64 + 4 * 64 * 64 + 2 * 64 * 256) + 2 * 64 + 64 * 100);
}

// Hugging Face's config.json of meta-llama/Meta-Llama-3-8B (the keys dtsim does not read kept,
// as a downloaded file has them).
const char* kLlama3In8bHuggingFace = R"({
  "architectures": ["LlamaForCausalLM"], "attention_bias": false, "bos_token_id": 128000,
  "eos_token_id": 128001, "hidden_act": "silu", "hidden_size": 4096, "initializer_range": 0.02,
  "intermediate_size": 14336, "max_position_embeddings": 8192, "model_type": "llama",
  "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8,
  "pretraining_tp": 1, "rms_norm_eps": 1e-05, "rope_scaling": null, "rope_theta": 500000.0,
  "tie_word_embeddings": false, "torch_dtype": "bfloat16", "use_cache": true,
  "vocab_size": 128256})";

TEST_F(TransformerFile, HuggingFaceLlamaConfigIsTheCataloguesLlama) {
  const TransformerArch a =
      read_transformer_file(write("Meta-Llama-3-8B/config.json", kLlama3In8bHuggingFace));
  EXPECT_EQ(a.name, "Meta-Llama-3-8B");  // the downloaded folder's name
  EXPECT_EQ(read_transformer_file((dir_ / "Meta-Llama-3-8B/./config.json").string()).name,
            "Meta-Llama-3-8B");
  expect_same_shape(a, *find_transformer("llama3-8b"));
  EXPECT_EQ(parameter_count(a), 8'030'261'248u);
}

TEST_F(TransformerFile, HuggingFaceTiesAsTheConfigSays) {
  // A tied Llama 3 8B has no head of its own: 128256 x 4096 = 525,336,576 parameters fewer.
  std::string tied = kLlama3In8bHuggingFace;
  tied.replace(tied.find("\"tie_word_embeddings\": false"), 28, "\"tie_word_embeddings\": true ");
  EXPECT_EQ(parameter_count(read_transformer_file(write("tied.json", tied))),
            8'030'261'248u - 128'256u * 4096);
  // An untied GPT-2 small gains one: 124,439,808 + 50257 x 768.
  const TransformerArch gpt = read_transformer_file(write("untied.json", R"({
    "model_type": "gpt2", "n_embd": 768, "n_head": 12, "n_layer": 12, "n_positions": 1024,
    "vocab_size": 50257, "tie_word_embeddings": false})"));
  EXPECT_EQ(parameter_count(gpt), 124'439'808u + 50'257u * 768);
}

TEST_F(TransformerFile, HuggingFaceMistralConfigIsMistral7B) {
  // mistralai/Mistral-7B-v0.1's config.json, the keys dtsim reads (its sliding window is left
  // out: the whole causal window is computed).
  const TransformerArch a = read_transformer_file(write("mistral.json", R"({
    "model_type": "mistral", "hidden_size": 4096, "intermediate_size": 14336,
    "max_position_embeddings": 32768, "num_attention_heads": 32, "num_hidden_layers": 32,
    "num_key_value_heads": 8, "sliding_window": 4096, "tie_word_embeddings": false,
    "vocab_size": 32000})"));
  EXPECT_EQ(a.mlp, MlpKind::kSwiGlu);
  EXPECT_EQ(a.kv_heads, 8);
  EXPECT_EQ(parameter_count(a), 7'241'732'096u);  // Mistral AI's published count
}

TEST_F(TransformerFile, HuggingFaceMixtralConfigHasItsExperts) {
  // mistralai/Mixtral-8x7B-v0.1's config.json, the keys dtsim reads.
  const TransformerArch a = read_transformer_file(write("mixtral.json", R"({
    "model_type": "mixtral", "_name_or_path": "mixtral-8x7b", "hidden_size": 4096,
    "intermediate_size": 14336, "max_position_embeddings": 32768, "num_attention_heads": 32,
    "num_experts_per_tok": 2, "num_hidden_layers": 32, "num_key_value_heads": 8,
    "num_local_experts": 8, "tie_word_embeddings": false, "vocab_size": 32000})"));
  EXPECT_EQ(a.name, "mixtral-8x7b");
  expect_same_shape(a, *find_transformer("mixtral-8x7b"));
  EXPECT_EQ(parameter_count(a), 46'702'792'704u);  // Mistral AI's published count
}

TEST_F(TransformerFile, HuggingFaceNemotronConfigIsTheCataloguesNemotron) {
  // nvidia/Nemotron-4-340B's dimensions as a Hugging Face NemotronConfig writes them.
  const TransformerArch a = read_transformer_file(write("nemotron.json", R"({
    "model_type": "nemotron", "hidden_act": "relu2", "hidden_size": 18432,
    "intermediate_size": 73728, "max_position_embeddings": 4096, "num_attention_heads": 96,
    "num_hidden_layers": 96, "num_key_value_heads": 8, "partial_rotary_factor": 0.5,
    "tie_word_embeddings": false, "vocab_size": 256000})"));
  expect_same_shape(a, *find_transformer("nemotron-340b"));
}

TEST_F(TransformerFile, HuggingFaceGpt2ConfigIsGpt2Small) {
  // openai-community/gpt2's config.json: n_inner null is 4 x n_embd.
  const TransformerArch a = read_transformer_file(write("gpt2.json", R"({
    "model_type": "gpt2", "activation_function": "gelu_new", "n_ctx": 1024, "n_embd": 768,
    "n_head": 12, "n_inner": null, "n_layer": 12, "n_positions": 1024, "vocab_size": 50257})"));
  EXPECT_EQ(a.name, "gpt2");  // the file's name
  EXPECT_EQ(a.ffn_hidden, 3072);
  EXPECT_TRUE(a.tied_embeddings);
  EXPECT_TRUE(a.linear_biases);
  EXPECT_TRUE(a.dropout);  // resid_pdrop absent: GPT2Config's 0.1
  // By hand: token 50257*768 + positions 1024*768; per block two LayerNorms 4*768, attention
  // 4*768*768 + 4*768 biases, MLP 2*768*3072 + 3072 + 768 biases; final LayerNorm 2*768; the head
  // tied. 124,439,808 is GPT-2 small's count as Hugging Face reports it.
  const std::uint64_t block = 4 * 768 + (4 * 768 * 768 + 4 * 768) + (2 * 768 * 3072 + 3072 + 768);
  EXPECT_EQ(50257u * 768 + 1024 * 768 + 12 * block + 2 * 768, 124'439'808u);
  EXPECT_EQ(parameter_count(a), 124'439'808u);
}

TEST_F(TransformerFile, DropoutIsReadWhereTheFileSaysIt) {
  // dtsim's keys: "dropout", false when absent; GPT-2: resid_pdrop > 0 (0.1 when absent); the
  // Llama family's blocks have no residual dropout.
  const std::string own = R"({"name": "m", "layers": 2, "hidden": 64, "heads": 4,
      "ffn_hidden": 256, "vocab": 128, "max_seq_len": 32, "mlp": "gelu", "norm": "layernorm",
      "positions": "learned")";
  EXPECT_FALSE(read_transformer_file(write("a.json", own + "}")).dropout);
  EXPECT_TRUE(read_transformer_file(write("b.json", own + R"(, "dropout": true})")).dropout);
  const std::string gpt2 = R"({"model_type": "gpt2", "n_embd": 64, "n_head": 4, "n_layer": 2,
      "n_positions": 32, "vocab_size": 128)";
  EXPECT_FALSE(read_transformer_file(write("c.json", gpt2 + R"(, "resid_pdrop": 0.0})")).dropout);
  EXPECT_TRUE(read_transformer_file(write("d.json", gpt2 + R"(, "resid_pdrop": 0.2})")).dropout);
  const std::string p = (dir_ / "bad.json").string() + ": ";
  EXPECT_EQ(error_of(gpt2 + R"(, "resid_pdrop": 1.5})"),
            p + "/resid_pdrop: 1.5: expected a probability from 0 up to 1");
  EXPECT_EQ(error_of(own + R"(, "dropout": 0.1})"),
            p + "/dropout: expected true or false, got number 0.1");
}

TEST_F(TransformerFile, EveryProblemIsLocated) {
  const std::string p = (dir_ / "bad.json").string() + ": ";
  // Several at once, each with its JSON pointer.
  EXPECT_EQ(error_of(R"({"name": "", "layers": 0, "hidden": 64, "heads": 4, "ffn_hidden": 1.5,
      "vocab": -3, "max_seq_len": 8, "mlp": "relu", "norm": "rmsnorm", "positions": "rope",
      "tied_embeddings": "yes", "hiden": 3})"),
            p +
                "/hiden: unknown key (expected one of name, layers, hidden, heads, kv_heads, "
                "ffn_hidden, vocab, max_seq_len, mlp, norm, positions, tied_embeddings, "
                "linear_biases, dropout, experts, experts_per_token, source)\n" +
                p +
                "/name: string \"\": expected 1 to 64 bytes of printable text without quotes "
                "or backslashes\n" +
                p + "/layers: expected an integer from 1 to 10000, got number 0\n" + p +
                "/ffn_hidden: expected an integer from 1 to 2147483647, got number 1.5\n" + p +
                "/vocab: expected an integer from 1 to 2147483647, got number -3\n" + p +
                "/mlp: expected \"gelu\" or \"swiglu\", got string \"relu\"\n" + p +
                "/tied_embeddings: expected true or false, got string \"yes\"");
  const std::string shape = R"("layers": 2, "ffn_hidden": 256, "vocab": 100, "max_seq_len": 32,
      "mlp": "gelu", "norm": "layernorm", "positions": "rope")";
  // The catalogue's checks, on the file's key.
  EXPECT_EQ(error_of(R"({"name": "x", "hidden": 64, "heads": 6, )" + shape + "}"),
            p + "/heads: 6: does not divide hidden 64");
  EXPECT_EQ(error_of(R"({"name": "x", "hidden": 64, "heads": 4, "experts": 4, )" + shape + "}"),
            p + "/experts_per_token: missing");
  EXPECT_EQ(error_of(R"({"name": "x", "hidden": 64, "heads": 4, "experts": 2,
      "experts_per_token": 3, )" +
                     shape + "}"),
            p + "/experts_per_token: 3: above experts 2");
  // Too large for 64-bit byte counts: 2 x 2e9 x (4 x 2e9) parameters.
  EXPECT_EQ(error_of(R"({"name": "x", "hidden": 2000000000, "heads": 1, )" + shape + "}"),
            p + "about 3.2e+19 parameters; dtsim models up to 1e+14");
  // Deeper than any published model by far (128 layers): building its graph would take minutes.
  EXPECT_EQ(error_of(R"({"name": "x", "hidden": 64, "heads": 4, )" + shape + "}"), "");  // 2
  EXPECT_EQ(error_of(R"({"name": "x", "layers": 10001, "hidden": 64, "heads": 4,
      "ffn_hidden": 256, "vocab": 100, "max_seq_len": 32, "mlp": "gelu", "norm": "layernorm",
      "positions": "rope"})"),
            p + "/layers: expected an integer from 1 to 10000, got number 10001");
  EXPECT_EQ(error_of("[1, 2]"), p + "expected a JSON object (workloads/TRANSFORMER.md, \"Your "
                                    "own model\"), got array [1,2]");
}

TEST_F(TransformerFile, HuggingFaceProblemsNameItsKeys) {
  const std::string p = (dir_ / "bad.json").string() + ": ";
  EXPECT_EQ(
      error_of(R"({"model_type": "gemma", "hidden_size": 3072})"),
      p + "/model_type: string \"gemma\": dtsim reads Hugging Face configs of llama, "
          "mistral, mixtral, qwen2, nemotron and gpt2; describe another model in dtsim's own keys "
          "(workloads/TRANSFORMER.md, \"Your own model\")");
  // Mistral NeMo's heads are 128 wide, not 5120 / 32: dtsim's attention cannot say so.
  EXPECT_EQ(error_of(R"({"model_type": "mistral", "hidden_size": 5120,
      "num_attention_heads": 32, "head_dim": 128, "num_hidden_layers": 40,
      "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 131072,
      "max_position_embeddings": 1024000})"),
            p + "/head_dim: 128: dtsim's attention has hidden_size / num_attention_heads = 160 "
                "per head");
  EXPECT_EQ(error_of(R"({"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32,
      "num_hidden_layers": 2, "num_key_value_heads": 5, "intermediate_size": 256,
      "vocab_size": 100, "max_position_embeddings": 64})"),
            p + "/num_key_value_heads: 5: does not divide heads 32");
  // Mistral's default is 8 KV heads, not the heads: its file must say.
  EXPECT_EQ(error_of(R"({"model_type": "mistral", "hidden_size": 4096,
      "num_attention_heads": 32, "num_hidden_layers": 2, "intermediate_size": 256,
      "vocab_size": 100, "max_position_embeddings": 64})"),
            p + "/num_key_value_heads: missing");
  EXPECT_EQ(error_of(R"({"model_type": "llama", "attention_bias": true, "hidden_size": 4096,
      "num_attention_heads": 32, "num_hidden_layers": 2, "intermediate_size": 256,
      "vocab_size": 100, "max_position_embeddings": 64})"),
            p + "/attention_bias: true: dtsim's llama block has no biases; describe the model in "
                "dtsim's own keys with \"linear_biases\": true");
  EXPECT_EQ(error_of(R"({"model_type": null})"), p + "/model_type: expected a string, got null");
  EXPECT_EQ(error_of(R"({"model_type": "llama"})"),
            p + "/num_hidden_layers: missing\n" + p + "/hidden_size: missing\n" + p +
                "/num_attention_heads: missing\n" + p + "/intermediate_size: missing\n" + p +
                "/vocab_size: missing\n" + p + "/max_position_embeddings: missing");
}

TEST_F(TransformerFile, UnreadableFilesAreErrorsNamingThem) {
  const std::string missing = (dir_ / "missing.json").string();
  try {
    (void)read_transformer_file(missing);
    ADD_FAILURE() << "read a missing file";
  } catch (const TraceError& e) {
    EXPECT_EQ(std::string(e.what()), missing + ": cannot open transformer architecture");
  }
  EXPECT_NE(error_of("{\"name\": ").find("bad.json: [json.exception.parse_error.101]"),
            std::string::npos);
}

TEST_F(TransformerFile, ModelNamesAFileByItsSuffix) {
  EXPECT_TRUE(is_transformer_file("models/mine.json"));
  EXPECT_FALSE(is_transformer_file("llama3-8b"));
  EXPECT_EQ(find_or_read_transformer("LLAMA3-8B")->name, "llama3-8b");
  EXPECT_FALSE(find_or_read_transformer("llama9-1t").has_value());
  EXPECT_EQ(find_or_read_transformer(write("m.json", kLlama3In8bKeys))->name, "my-llama");
}

}  // namespace
}  // namespace dtsim::workloads
