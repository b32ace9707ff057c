#include "sim/collectives/msccl_xml.h"

#include <algorithm>
#include <deque>
#include <map>
#include <sstream>
#include <tuple>

#include <boost/property_tree/ptree.hpp>
#include <boost/property_tree/xml_parser.hpp>

#include "sim/collectives/algorithm_file_internal.h"
#include "sim/config_error.h"
#include "workloads/parsing/input_file.h"

namespace dtsim::sim {

namespace {

namespace pt = boost::property_tree;

struct Step {
  std::string type;
  char srcbuf = 'i', dstbuf = 'i';
  std::uint64_t srcoff = 0, dstoff = 0, cnt = 1;
  int depid = -1, deps = -1;
};

struct ThreadBlock {
  int id = 0;
  int send = -1, recv = -1, chan = 0;
  std::vector<Step> steps;
};

struct Gpu {
  std::vector<ThreadBlock> tbs;  // by id
};

// The XML's attributes, with the place they came from for messages.
class Attributes {
 public:
  Attributes(const pt::ptree& node, std::string where, const std::string& path)
      : node_(node), where_(std::move(where)), path_(path) {}

  [[nodiscard]] std::string text(const char* name) const {
    const auto value = node_.get_optional<std::string>(std::string("<xmlattr>.") + name);
    if (!value) {
      fail(std::string("missing attribute ") + name);
    }
    return *value;
  }
  [[nodiscard]] long long integer(const char* name, long long min, long long max) const {
    const std::string t = text(name);
    std::size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(t, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != t.size() || t.empty() || v < min || v > max) {
      fail(std::string(name) + "=\"" + t + "\": expected an integer in [" + std::to_string(min) +
           ", " + std::to_string(max) + "]");
    }
    return v;
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw ConfigError(path_ + ": " + where_ + ": " + what);
  }
  [[nodiscard]] const std::string& where() const { return where_; }

 private:
  const pt::ptree& node_;
  std::string where_;
  const std::string& path_;
};

std::optional<CollectiveOp> msccl_op(const std::string& coll) {
  static const std::map<std::string, CollectiveOp> kOps{
      {"allreduce", CollectiveOp::kAllReduce},
      {"allgather", CollectiveOp::kAllGather},
      {"reducescatter", CollectiveOp::kReduceScatter},
      {"alltoall", CollectiveOp::kAllToAll}};
  const auto it = kOps.find(coll);
  return it == kOps.end() ? std::nullopt : std::optional(it->second);
}

bool sends(const std::string& type) {
  return type == "s" || type == "rcs" || type == "rrs" || type == "rrcs";
}
bool receives(const std::string& type) {
  return type == "r" || type == "rcs" || type == "rrs" || type == "rrc" || type == "rrcs";
}

// Builds the algorithm file's operations from the thread blocks' steps, in an order where every
// dependency comes first: a step runs once its thread block's previous step, its cross-block
// dependency and (when it receives) the message it receives are there.
class Converter {
 public:
  Converter(AlgorithmFile& file, std::vector<Gpu>& gpus, std::uint64_t chunks_per_gpu_input,
            std::uint64_t chunks_per_gpu_output, std::uint64_t scratch_chunks)
      : file_(file),
        gpus_(gpus),
        in_chunks_(chunks_per_gpu_input),
        out_chunks_(chunks_per_gpu_output),
        next_temp_(gpus.size(), scratch_chunks) {}

  void run() {
    std::map<std::pair<int, int>, std::size_t> next;  // (gpu, tb) -> next step
    for (bool progress = true; progress;) {
      progress = false;
      for (std::size_t g = 0; g < gpus_.size(); ++g) {
        for (std::size_t t = 0; t < gpus_[g].tbs.size(); ++t) {
          std::size_t& i = next[{static_cast<int>(g), static_cast<int>(t)}];
          while (i < gpus_[g].tbs[t].steps.size() &&
                 try_step(static_cast<int>(g), static_cast<int>(t), i)) {
            ++i;
            progress = true;
          }
        }
      }
    }
    for (std::size_t g = 0; g < gpus_.size(); ++g) {
      for (std::size_t t = 0; t < gpus_[g].tbs.size(); ++t) {
        const std::size_t i = next[{static_cast<int>(g), static_cast<int>(t)}];
        if (i < gpus_[g].tbs[t].steps.size()) {
          throw ConfigError(file_.path + ": " + where(static_cast<int>(g), static_cast<int>(t), i) +
                            ": never runs: it waits for a step or a message that never comes "
                            "(a cycle, or a send missing on the peer)");
        }
      }
    }
    for (const auto& [connection, queue] : in_flight_) {
      if (!queue.empty()) {
        throw ConfigError(file_.path + ": gpu " + std::to_string(std::get<0>(connection)) +
                          " sends to gpu " + std::to_string(std::get<1>(connection)) +
                          " on channel " + std::to_string(std::get<2>(connection)) + " " +
                          std::to_string(queue.size()) + " message(s) that no step receives");
      }
    }
  }

 private:
  struct Message {
    int op;
    std::uint64_t temp;  // scratch chunk at the receiver
    std::uint64_t cnt;
  };
  struct Place {
    Buffer buffer;
    std::uint64_t chunk;
    bool operator==(const Place&) const = default;
  };

  std::string where(int g, int t, std::size_t i) const {
    return "gpu " + std::to_string(g) + " tb " +
           std::to_string(gpus_[static_cast<std::size_t>(g)].tbs[static_cast<std::size_t>(t)].id) +
           " step " + std::to_string(i);
  }

  // Where chunk `off` of MSCCL buffer `buf` lies on gpu `g` (in place, i/o alias; an in-place
  // all-gather's input is its block of the output, a reduce-scatter's output its block of the
  // input).
  Place place(int g, char buf, std::uint64_t off) const {
    const auto rank = static_cast<std::uint64_t>(g);
    if (buf == 's') {
      return {Buffer::kScratch, off};
    }
    if (!file_.in_place) {
      return {buf == 'i' ? Buffer::kInput : Buffer::kOutput, off};
    }
    if (buf == 'i' && file_.op == CollectiveOp::kAllGather) {
      return {Buffer::kInput, rank * in_chunks_ + off};
    }
    if (buf == 'o' && file_.op == CollectiveOp::kReduceScatter) {
      return {Buffer::kInput, rank * out_chunks_ + off};
    }
    return {Buffer::kInput, off};
  }

  int add(FileOp op) {
    file_.ops.push_back(std::move(op));
    return static_cast<int>(file_.ops.size()) - 1;
  }
  int local(int g, Place from, Place to, std::uint64_t cnt, bool reduce, std::vector<int> deps,
            const std::string& at) {
    return add({.transfer = FileTransfer{.src = g,
                                         .dst = g,
                                         .local = true,
                                         .chunk = from.chunk,
                                         .count = cnt,
                                         .to_chunk = to.chunk,
                                         .buffer = from.buffer,
                                         .to_buffer = to.buffer,
                                         .reduce = reduce},
                .deps = std::move(deps),
                .where = at});
  }
  // A message of `cnt` chunks at `from` to the thread block's send peer, into a fresh scratch
  // slot there.
  int send(int g, const ThreadBlock& tb, Place from, std::uint64_t cnt, std::vector<int> deps,
           const std::string& at) {
    const std::uint64_t temp = next_temp_[static_cast<std::size_t>(tb.send)];
    next_temp_[static_cast<std::size_t>(tb.send)] += cnt;
    const int op = add({.transfer = FileTransfer{.src = g,
                                                 .dst = tb.send,
                                                 .chunk = from.chunk,
                                                 .count = cnt,
                                                 .to_chunk = temp,
                                                 .buffer = from.buffer,
                                                 .to_buffer = Buffer::kScratch,
                                                 .channel = tb.chan},
                        .deps = std::move(deps),
                        .where = at});
    in_flight_[{g, tb.send, tb.chan}].push_back({op, temp, cnt});
    return op;
  }

  bool try_step(int g, int t, std::size_t i) {
    const ThreadBlock& tb = gpus_[static_cast<std::size_t>(g)].tbs[static_cast<std::size_t>(t)];
    const Step& s = tb.steps[i];
    const std::string at = where(g, t, i);
    std::vector<int> deps;
    if (i > 0) {
      deps.push_back(done_.at({g, t, i - 1}));
    }
    if (s.depid >= 0) {
      const auto it = done_.find({g, s.depid, static_cast<std::size_t>(s.deps)});
      if (it == done_.end()) {
        return false;
      }
      deps.push_back(it->second);
    }
    std::optional<Message> in;
    if (receives(s.type)) {
      auto& queue = in_flight_[{tb.recv, g, tb.chan}];
      if (queue.empty()) {
        return false;
      }
      in = queue.front();
      queue.pop_front();
      if (in->cnt != s.cnt) {
        throw ConfigError(file_.path + ": " + at + ": receives " + std::to_string(s.cnt) +
                          " chunks, and the matching send sends " + std::to_string(in->cnt));
      }
    }
    const Place src = place(g, s.srcbuf, s.srcoff);
    const Place dst = place(g, s.dstbuf, s.dstoff);
    const Place arrived{Buffer::kScratch, in ? in->temp : 0};
    auto with_message = [&](std::vector<int> d) {
      d.push_back(in->op);
      return d;
    };
    int last = -1;
    if (s.type == "s") {
      last = send(g, tb, src, s.cnt, deps, at);
    } else if (s.type == "r" || s.type == "rcs") {
      last = local(g, arrived, dst, s.cnt, false, with_message(deps), at);
      if (s.type == "rcs") {
        last = send(g, tb, dst, s.cnt, {last}, at);
      }
    } else if (s.type == "rrc" || s.type == "rrcs") {
      std::vector<int> before = deps;
      if (!(src == dst)) {  // dst = src + message
        before = {local(g, src, dst, s.cnt, false, deps, at)};
      }
      last = local(g, arrived, dst, s.cnt, true, with_message(before), at);
      if (s.type == "rrcs") {
        last = send(g, tb, dst, s.cnt, {last}, at);
      }
    } else if (s.type == "rrs") {  // message + src, sent on without being kept
      const Place sum{Buffer::kScratch, next_temp_[static_cast<std::size_t>(g)]};
      next_temp_[static_cast<std::size_t>(g)] += s.cnt;
      const int copy = local(g, src, sum, s.cnt, false, deps, at);
      const int add_in = local(g, arrived, sum, s.cnt, true, with_message({copy}), at);
      last = send(g, tb, sum, s.cnt, {add_in}, at);
    } else if (s.type == "cpy" || s.type == "re") {
      last = local(g, src, dst, s.cnt, s.type == "re", deps, at);
    } else {  // nop
      last = add({.wait_sec = 0, .ranks = {g}, .deps = deps, .where = at});
    }
    done_[{g, t, i}] = last;
    return true;
  }

  AlgorithmFile& file_;
  std::vector<Gpu>& gpus_;
  std::uint64_t in_chunks_, out_chunks_;
  std::vector<std::uint64_t> next_temp_;                   // per gpu: its next free scratch chunk
  std::map<std::tuple<int, int, std::size_t>, int> done_;  // (gpu, tb index, step) -> last op
  std::map<std::tuple<int, int, int>, std::deque<Message>> in_flight_;  // (src, dst, chan)
};

// An MSCCL algorithm nests 4 elements deep (algo, gpu, tb, step); Boost's parser recurses once
// per level, so a file nesting 100,000 deep would overflow the stack.
constexpr int kMaxXmlDepth = 64;

// The line of the first element nested deeper than kMaxXmlDepth, or 0. Skips comments,
// declarations and quoted attribute values (which may hold '>').
int too_deep_line(const std::string& text) {
  int depth = 0, line = 1;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
    }
    if (text[i] != '<' || i + 1 >= text.size()) {
      continue;
    }
    const char next = text[i + 1];
    if (next == '!' || next == '?') {  // a comment, CDATA or declaration: no element
      continue;
    }
    if (next == '/') {
      --depth;
      continue;
    }
    char quote = 0;
    std::size_t end = i + 1;
    for (; end < text.size() && (quote != 0 || text[end] != '>'); ++end) {
      if (quote == 0 && (text[end] == '"' || text[end] == '\'')) {
        quote = text[end];
      } else if (text[end] == quote) {
        quote = 0;
      }
    }
    if (end >= text.size() || text[end - 1] != '/') {  // not self-closing
      if (++depth > kMaxXmlDepth) {
        return line;
      }
    }
  }
  return 0;
}

// The XML tree of `text`; throws ConfigError at the line of an element nested too deep or of
// malformed XML.
pt::ptree read_tree(const std::string& text, const std::string& path) {
  if (const int line = too_deep_line(text); line > 0) {
    throw ConfigError(path + ":" + std::to_string(line) + ": elements nested more than " +
                      std::to_string(kMaxXmlDepth) +
                      " deep (an MSCCL algorithm nests algo, gpu, tb and step)");
  }
  pt::ptree tree;
  try {
    std::istringstream in(text);
    pt::read_xml(in, tree);
  } catch (const pt::xml_parser_error& e) {
    throw ConfigError(path + ":" + std::to_string(e.line()) + ": " + e.message());
  }
  return tree;
}

// One <step> of thread block `tb`, checked against the block's peers.
Step read_step(const Attributes& st, const ThreadBlock& tb) {
  Step s{.type = st.text("type")};
  static const std::vector<std::string> kTypes{"s",    "r",   "rcs", "rrs", "rrc",
                                               "rrcs", "cpy", "re",  "nop"};
  if (std::find(kTypes.begin(), kTypes.end(), s.type) == kTypes.end()) {
    st.fail("type=\"" + s.type + "\": expected s, r, rcs, rrs, rrc, rrcs, cpy, re or nop");
  }
  for (auto [name, buf] : {std::pair{"srcbuf", &s.srcbuf}, std::pair{"dstbuf", &s.dstbuf}}) {
    const std::string b = st.text(name);
    if (b != "i" && b != "o" && b != "s") {
      st.fail(std::string(name) + "=\"" + b + "\": expected i, o or s");
    }
    *buf = b[0];
  }
  // -1: no buffer (a nop's)
  s.srcoff = static_cast<std::uint64_t>(std::max(0LL, st.integer("srcoff", -1, 1 << 20)));
  s.dstoff = static_cast<std::uint64_t>(std::max(0LL, st.integer("dstoff", -1, 1 << 20)));
  s.cnt = static_cast<std::uint64_t>(st.integer("cnt", 1, 1 << 20));
  s.depid = static_cast<int>(st.integer("depid", -1, 1 << 16));
  s.deps = static_cast<int>(st.integer("deps", -1, 1 << 16));
  if ((s.depid >= 0) != (s.deps >= 0)) {
    st.fail("depid and deps name a thread block and its step together (both -1: none)");
  }
  if (sends(s.type) && tb.send < 0) {
    st.fail("a sending step in a thread block without a send peer");
  }
  if (receives(s.type) && tb.recv < 0) {
    st.fail("a receiving step in a thread block without a recv peer");
  }
  return s;
}

// One <tb> of GPU `gpu` of an algorithm on `ranks` GPUs, with its steps.
ThreadBlock read_thread_block(const pt::ptree& tb_node, std::size_t gpu, int ranks,
                              const std::string& path) {
  const Attributes attr(tb_node, "gpu " + std::to_string(gpu) + " <tb>", path);
  ThreadBlock tb{.id = static_cast<int>(attr.integer("id", 0, 1 << 16)),
                 .send = static_cast<int>(attr.integer("send", -1, ranks - 1)),
                 .recv = static_cast<int>(attr.integer("recv", -1, ranks - 1)),
                 .chan = static_cast<int>(attr.integer("chan", 0, kMaxFileChannel))};
  for (const auto& [tag, step_node] : tb_node) {
    if (tag == "step") {
      const Attributes st(step_node,
                          "gpu " + std::to_string(gpu) + " tb " + std::to_string(tb.id) + " step " +
                              std::to_string(tb.steps.size()),
                          path);
      tb.steps.push_back(read_step(st, tb));
    }
  }
  return tb;
}

// The buffer sizes, in chunks, that the <gpu> elements state: the input and output buffers'
// of the last GPU read, the largest scratch buffer.
struct BufferChunks {
  std::uint64_t in = 0, out = 0, scratch = 0;
};

// Every <gpu> of `algo_node`, by id (each exactly once), and their buffers.
std::vector<Gpu> read_gpus(const pt::ptree& algo_node, const Attributes& algo, int ranks,
                           const std::string& path, BufferChunks& chunks) {
  std::vector<Gpu> gpus(static_cast<std::size_t>(ranks));
  std::vector<bool> seen(gpus.size(), false);
  for (const auto& [tag, gpu_node] : algo_node) {
    if (tag != "gpu") {
      continue;
    }
    const Attributes gpu(gpu_node, "<gpu>", path);
    const auto id = static_cast<std::size_t>(gpu.integer("id", 0, ranks - 1));
    if (seen[id]) {
      gpu.fail("gpu " + std::to_string(id) + " appears twice");
    }
    seen[id] = true;
    chunks.in = static_cast<std::uint64_t>(gpu.integer("i_chunks", 0, 1 << 20));
    chunks.out = static_cast<std::uint64_t>(gpu.integer("o_chunks", 0, 1 << 20));
    chunks.scratch =
        std::max(chunks.scratch, static_cast<std::uint64_t>(gpu.integer("s_chunks", 0, 1 << 20)));
    for (const auto& [tb_tag, tb_node] : gpu_node) {
      if (tb_tag == "tb") {
        gpus[id].tbs.push_back(read_thread_block(tb_node, id, ranks, path));
      }
    }
  }
  for (std::size_t g = 0; g < seen.size(); ++g) {
    if (!seen[g]) {
      algo.fail("no <gpu id=\"" + std::to_string(g) + "\">");
    }
  }
  return gpus;
}

// Cross-block dependencies name thread blocks by id: each becomes the block's index in its GPU.
void index_dependencies(std::vector<Gpu>& gpus, const std::string& path) {
  for (Gpu& gpu : gpus) {
    std::map<int, int> index;
    for (std::size_t t = 0; t < gpu.tbs.size(); ++t) {
      index[gpu.tbs[t].id] = static_cast<int>(t);
    }
    for (ThreadBlock& tb : gpu.tbs) {
      for (Step& s : tb.steps) {
        if (s.depid >= 0) {
          const auto it = index.find(s.depid);
          if (it == index.end()) {
            throw ConfigError(path + ": a step depends on thread block " + std::to_string(s.depid) +
                              ", which its GPU does not have");
          }
          s.depid = it->second;
        }
      }
    }
  }
}

}  // namespace

AlgorithmFile parse_msccl_xml(const std::string& text, const std::string& path) {
  const pt::ptree tree = read_tree(text, path);
  const auto algo_node = tree.get_child_optional("algo");
  if (!algo_node) {
    throw ConfigError(path + ": expected an <algo> element (an MSCCL algorithm)");
  }
  const Attributes algo(*algo_node, "<algo>", path);
  AlgorithmFile file{.path = path, .name = algo.text("name"), .explicit_deps = true};
  const auto op = msccl_op(algo.text("coll"));
  if (!op) {
    algo.fail("coll=\"" + algo.text("coll") +
              "\": expected allreduce, allgather, reducescatter or alltoall");
  }
  file.op = *op;
  file.ranks = static_cast<int>(algo.integer("ngpus", 1, kMaxFileRanks));
  file.chunks = static_cast<std::uint64_t>(algo.integer("nchunksperloop", 1, 1 << 20));
  file.in_place = algo.integer("inplace", 0, 1) == 1;
  if (file.op == CollectiveOp::kAllToAll && file.in_place) {
    algo.fail("inplace=\"1\": an all-to-all is never in place here");
  }
  BufferChunks chunks;
  std::vector<Gpu> gpus = read_gpus(*algo_node, algo, file.ranks, path, chunks);
  index_dependencies(gpus, path);
  Converter(file, gpus, chunks.in, chunks.out, chunks.scratch).run();
  check_algorithm_file(file);
  return file;
}

AlgorithmFile read_msccl_xml(const std::string& path) {
  try {
    return parse_msccl_xml(parsing::read_input_file(path, "MSCCL algorithm"), path);
  } catch (const parsing::InputFileError& e) {
    throw ConfigError(e.what());
  }
}

}  // namespace dtsim::sim
