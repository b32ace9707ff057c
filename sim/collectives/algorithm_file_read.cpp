// Reading and validating algorithm files (algorithm_file.h).
#include <algorithm>
#include <numeric>

#include "sim/collectives/algorithm_file.h"
#include "sim/collectives/algorithm_file_internal.h"
#include "sim/collectives/schedule_check.h"
#include "sim/config_error.h"
#include "workloads/parsing/input_file.h"
#include "workloads/parsing/json_fields.h"

namespace dtsim::sim {

namespace {

using json = nlohmann::json;
using parsing::JsonFields;

std::optional<Buffer> parse_buffer(JsonFields& f, const char* key, Buffer otherwise) {
  const auto name = f.string(key, /*required=*/false);
  if (!name) {
    return f.has(key) ? std::nullopt : std::optional(otherwise);
  }
  for (Buffer b : {Buffer::kInput, Buffer::kOutput, Buffer::kScratch}) {
    if (*name == buffer_name(b)) {
      return b;
    }
  }
  f.problem(key, "\"" + parsing::printable(*name) + "\": expected input, output or scratch");
  return std::nullopt;
}

class Reader {
 public:
  Reader(AlgorithmFile& file, std::vector<std::string>& problems)
      : file_(file), problems_(problems) {}

  void read(JsonFields& doc) {
    doc.reject_unknown({"format", "version", "name", "operation", "ranks", "root", "in_place",
                        "chunks", "chunk_bytes", "steps", "ops"});
    if (const auto format = doc.string("format"); format && *format != kAlgorithmFormat) {
      doc.problem("format", "expected \"" + std::string(kAlgorithmFormat) + "\"");
    }
    if (const auto version = doc.integer("version"); version && *version != kAlgorithmVersion) {
      doc.problem("version", "expected " + std::to_string(kAlgorithmVersion));
    }
    file_.name = doc.string("name", /*required=*/false).value_or("");
    if (const auto op = doc.string("operation")) {
      if (const auto parsed = parse_op(*op)) {
        file_.op = *parsed;
      } else {
        doc.problem("operation", "\"" + parsing::printable(*op) +
                                     "\": expected all-reduce, reduce-scatter, all-gather, "
                                     "broadcast, reduce, all-to-all or send-recv");
      }
    }
    read_sizes(doc);
    if (const json* in_place = doc.value("in_place", /*required=*/false)) {
      if (in_place->is_boolean()) {
        file_.in_place = in_place->get<bool>();
      } else {
        doc.problem("in_place", "expected true or false");
      }
    }
    if (file_.op == CollectiveOp::kAllToAll && file_.in_place) {
      doc.problem("in_place", "an all-to-all is never in place (set \"in_place\": false)");
    }
    if (doc.has("steps") == doc.has("ops")) {
      doc.problem("",
                  "expected either \"steps\" (dependencies implied by the data) or \"ops\" "
                  "(dependencies given), not " +
                      std::string(doc.has("steps") ? "both" : "neither"));
      return;
    }
    file_.explicit_deps = doc.has("ops");
    file_.explicit_deps ? read_ops(doc) : read_steps(doc);
  }

 private:
  void read_sizes(JsonFields& doc) {
    if (const auto ranks = doc.integer("ranks")) {
      if (*ranks < 1 || *ranks > kMaxFileRanks) {
        doc.problem("ranks", "expected an integer in [1, " + std::to_string(kMaxFileRanks) + "]");
      } else {
        file_.ranks = static_cast<int>(*ranks);
      }
    }
    if (const auto root = doc.integer("root", /*required=*/false)) {
      if (*root < 0 || *root >= file_.ranks) {
        doc.problem("root", "expected a rank in [0, " + std::to_string(file_.ranks) + ")");
      } else {
        file_.root = static_cast<int>(*root);
      }
    }
    if (doc.has("chunks") == doc.has("chunk_bytes")) {
      doc.problem("",
                  "expected either \"chunks\" (near-equal pieces of any size) or "
                  "\"chunk_bytes\" (pieces of these sizes)");
      return;
    }
    if (doc.has("chunks")) {
      const auto chunks = doc.unsigned_integer("chunks");
      if (chunks && (*chunks < 1 || *chunks > kMaxFileChunks)) {
        doc.problem("chunks", "expected an integer in [1, " + std::to_string(kMaxFileChunks) + "]");
      } else if (chunks) {
        file_.chunks = *chunks;
      }
      return;
    }
    if (auto sizes = doc.unsigned_array("chunk_bytes")) {
      if (sizes->empty() || sizes->size() > kMaxFileChunks) {
        doc.problem("chunk_bytes", "expected 1 to " + std::to_string(kMaxFileChunks) + " sizes");
        return;
      }
      file_.chunks = sizes->size();
      file_.chunk_bytes = std::move(*sizes);
    }
  }

  // A rank field of `f`, in range.
  std::optional<int> rank(JsonFields& f, const char* key) {
    const auto r = f.integer(key);
    if (r && (*r < 0 || *r >= file_.ranks)) {
      f.problem(key, std::to_string(*r) + " is not a rank (the algorithm has " +
                         std::to_string(file_.ranks) + ")");
      return std::nullopt;
    }
    return r ? std::optional(static_cast<int>(*r)) : std::nullopt;
  }

  // A chunk range [first, first + count) of `buffer` in range: within the chunks, or for
  // scratch with near-equal chunks, any (scratch is unbounded; its chunks continue the pattern).
  void check_chunks(JsonFields& f, const char* key, Buffer buffer, std::uint64_t first,
                    std::uint64_t count) {
    const std::uint64_t limit =
        buffer == Buffer::kScratch && file_.chunk_bytes.empty() ? kMaxFileChunks : file_.chunks;
    if (first > limit || count > limit - first) {
      f.problem(key, "chunks [" + std::to_string(first) + ", " + std::to_string(first + count) +
                         ") are not within the " + std::to_string(file_.chunks) + " chunks");
    }
  }

  std::optional<FileTransfer> transfer(JsonFields& f) {
    FileTransfer t;
    const bool local = f.has("rank");
    const auto src = rank(f, local ? "rank" : "src");
    const auto dst = local ? src : rank(f, "dst");
    const auto chunk = f.unsigned_integer("chunk");
    const auto count = f.unsigned_integer("count", /*required=*/false);
    const auto to_chunk = f.unsigned_integer("to_chunk", /*required=*/false);
    const auto buffer = parse_buffer(f, "buffer", Buffer::kInput);
    const auto to_buffer = parse_buffer(f, "to_buffer", buffer.value_or(Buffer::kInput));
    const auto channel = f.integer("channel", /*required=*/false);
    const json* reduce = f.value("reduce", /*required=*/false);
    if (reduce && !reduce->is_boolean()) {
      f.problem("reduce", "expected true (add to what the receiver holds) or false (copy)");
    }
    if (channel && (*channel < 0 || *channel > kMaxFileChannel)) {
      f.problem("channel", "expected an integer in [0, " + std::to_string(kMaxFileChannel) + "]");
    }
    if (!src || !dst || !chunk || !buffer || !to_buffer) {
      return std::nullopt;
    }
    if (!local && *src == *dst) {
      f.problem("dst",
                "a transfer joins two distinct ranks (src is also " + std::to_string(*src) + ")");
      return std::nullopt;
    }
    for (auto [key, b] : {std::pair{"buffer", *buffer}, std::pair{"to_buffer", *to_buffer}}) {
      if (file_.in_place && b == Buffer::kOutput) {
        f.problem(key, "an in-place algorithm has no separate output buffer (name input)");
      }
    }
    if (local && channel) {
      f.problem("channel", "a local copy uses no channel");
    }
    t = {.src = *src,
         .dst = *dst,
         .local = local,
         .chunk = *chunk,
         .count = count.value_or(1),
         .to_chunk = to_chunk.value_or(*chunk),
         .buffer = *buffer,
         .to_buffer = *to_buffer,
         .reduce = reduce && reduce->is_boolean() && reduce->get<bool>(),
         .channel = static_cast<int>(channel.value_or(0))};
    check_chunks(f, "chunk", t.buffer, t.chunk, t.count);
    check_chunks(f, "to_chunk", t.to_buffer, t.to_chunk, t.count);
    return t;
  }

  void read_steps(JsonFields& doc) {
    const json* steps = doc.value("steps");
    if (!steps || !steps->is_array()) {
      doc.problem("steps", "expected an array of steps, each an array of transfers");
      return;
    }
    for (std::size_t s = 0; s < steps->size(); ++s) {
      const json& step = (*steps)[s];
      const std::string where = "/steps/" + std::to_string(s);
      if (!step.is_array()) {
        problems_.push_back(where + ": expected an array of transfers");
        continue;
      }
      for (std::size_t k = 0; k < step.size(); ++k) {
        JsonFields f(step[k], where + "/" + std::to_string(k), problems_);
        if (!f.is_object()) {
          problems_.push_back(f.pointer() + ": expected a transfer object");
          continue;
        }
        f.reject_unknown({"src", "dst", "rank", "chunk", "count", "to_chunk", "buffer", "to_buffer",
                          "reduce", "channel"});
        if (auto t = transfer(f)) {
          file_.ops.push_back({.transfer = t, .step = static_cast<int>(s), .where = f.pointer()});
        }
      }
    }
  }

  void read_ops(JsonFields& doc) {
    const json* ops = doc.value("ops");
    if (!ops || !ops->is_array()) {
      doc.problem("ops", "expected an array of operations");
      return;
    }
    for (std::size_t i = 0; i < ops->size(); ++i) {
      JsonFields f((*ops)[i], "/ops/" + std::to_string(i), problems_);
      if (!f.is_object()) {
        problems_.push_back(f.pointer() + ": expected an operation object");
        continue;
      }
      FileOp op{.where = f.pointer()};
      if (f.has("wait_sec")) {
        f.reject_unknown({"wait_sec", "ranks", "deps"});
        const auto sec = f.number("wait_sec");
        if (sec && !(*sec >= 0)) {
          f.problem("wait_sec", "expected a duration >= 0");
        }
        op.wait_sec = sec.value_or(0);
        for (std::uint64_t r : f.unsigned_array("ranks").value_or(std::vector<std::uint64_t>{})) {
          if (r >= static_cast<std::uint64_t>(file_.ranks)) {
            f.problem("ranks", std::to_string(r) + " is not a rank");
          } else {
            op.ranks.push_back(static_cast<int>(r));
          }
        }
      } else {
        f.reject_unknown({"src", "dst", "rank", "chunk", "count", "to_chunk", "buffer", "to_buffer",
                          "reduce", "channel", "deps"});
        op.transfer = transfer(f);
      }
      for (std::uint64_t d :
           f.unsigned_array("deps", /*required=*/false).value_or(std::vector<std::uint64_t>{})) {
        if (d >= i) {
          f.problem("deps", std::to_string(d) + " is not an earlier operation");
        } else {
          op.deps.push_back(static_cast<int>(d));
        }
      }
      file_.ops.push_back(std::move(op));
    }
  }

  AlgorithmFile& file_;
  std::vector<std::string>& problems_;
};

[[noreturn]] void throw_problems(const std::string& path,
                                 const std::vector<std::string>& problems) {
  std::string message;
  for (const std::string& p : problems) {
    message += (message.empty() ? "" : "\n") + path + ": " + p;
  }
  throw ConfigError(message);
}

}  // namespace

void check_algorithm_file(const AlgorithmFile& file) {
  // A size that every chunk and every rank's block divide, so that both cut at whole bytes.
  const std::uint64_t bytes =
      file.chunk_bytes.empty()
          ? file.chunks * static_cast<std::uint64_t>(file.ranks) * 64
          : std::accumulate(file.chunk_bytes.begin(), file.chunk_bytes.end(), std::uint64_t{0});
  const Schedule schedule = file_schedule(file, bytes);
  const auto fault = check_schedule(
      schedule, {.op = file.op, .ranks = file.ranks, .bytes = bytes, .root = file.root});
  if (!fault) {
    return;
  }
  const std::string where = fault->op < 0 ? "after the last operation"
                                          : file.ops[static_cast<std::size_t>(fault->op)].where;
  const std::uint64_t chunk = chunk_at(file, bytes, fault->offset);
  throw ConfigError(file.path + ": " + where + ": not a correct " + std::string(op_name(file.op)) +
                    ": rank " + std::to_string(fault->rank) + ", " + buffer_name(fault->buffer) +
                    " chunk " + std::to_string(chunk) + ": " + fault->what);
}

AlgorithmFile parse_algorithm_file(const json& doc, const std::string& path) {
  AlgorithmFile file{.path = path};
  std::vector<std::string> problems;
  JsonFields root(doc, "", problems);
  if (!root.is_object()) {
    throw ConfigError(path + ": expected a JSON object (a collective algorithm, ALGORITHMS.md)");
  }
  Reader(file, problems).read(root);
  if (!problems.empty()) {
    throw_problems(path, problems);
  }
  check_algorithm_file(file);
  return file;
}

AlgorithmFile read_algorithm_file(const std::string& path) {
  json doc;
  try {
    doc = parsing::read_json_file(path, "collective algorithm");
  } catch (const parsing::InputFileError& e) {
    throw ConfigError(e.what());
  }
  return parse_algorithm_file(doc, path);
}

}  // namespace dtsim::sim
