#include "sim/collectives/algorithm_file.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <tuple>

#include "sim/collectives/algorithm_file_internal.h"
#include "sim/collectives/msccl_xml.h"
#include "sim/collectives/schedule_builder.h"
#include "sim/collectives/schedule_check.h"
#include "sim/config_error.h"

namespace dtsim::sim {

std::uint64_t chunk_offset(const AlgorithmFile& file, std::uint64_t bytes, std::uint64_t k) {
  if (file.chunk_bytes.empty()) {
    return piece_offset(bytes, file.chunks, k);
  }
  return std::accumulate(file.chunk_bytes.begin(),
                         file.chunk_bytes.begin() + static_cast<std::ptrdiff_t>(k),
                         std::uint64_t{0});
}

std::uint64_t chunk_at(const AlgorithmFile& file, std::uint64_t bytes, std::uint64_t offset) {
  std::uint64_t lo = 0, hi = file.chunks;  // the last k with chunk_offset(k) <= offset
  while (lo < hi) {
    const std::uint64_t mid = lo + (hi - lo + 1) / 2;
    if (chunk_offset(file, bytes, mid) <= offset) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo;
}

namespace {

// The dependencies that a file's data imply, step by step: a transfer waits for the last writer
// of the chunks it sends and of those it overwrites or adds to, and for every earlier reader of
// the latter. Transfers of one step read before any of them writes, so none waits for another.
class ImpliedDeps {
 public:
  std::vector<int> of(const FileTransfer& t) const {
    std::set<int> deps;
    for (std::uint64_t k = 0; k < t.count; ++k) {
      if (const auto it = access_.find({t.src, t.buffer, t.chunk + k}); it != access_.end()) {
        if (it->second.writer >= 0) {
          deps.insert(it->second.writer);
        }
      }
      if (const auto it = access_.find({t.dst, t.to_buffer, t.to_chunk + k}); it != access_.end()) {
        if (it->second.writer >= 0) {
          deps.insert(it->second.writer);
        }
        deps.insert(it->second.readers.begin(), it->second.readers.end());
      }
    }
    return {deps.begin(), deps.end()};
  }

  // Records the accesses of a whole step: `ops[i]` is op index first + i.
  void record_step(const std::vector<FileOp>& ops, std::size_t first, std::size_t end) {
    std::map<Key, std::vector<int>> reads;
    for (std::size_t i = first; i < end; ++i) {
      const FileTransfer& t = *ops[i].transfer;
      for (std::uint64_t k = 0; k < t.count; ++k) {
        reads[{t.src, t.buffer, t.chunk + k}].push_back(static_cast<int>(i));
      }
    }
    for (std::size_t i = first; i < end; ++i) {
      const FileTransfer& t = *ops[i].transfer;
      for (std::uint64_t k = 0; k < t.count; ++k) {
        const Key key{t.dst, t.to_buffer, t.to_chunk + k};
        Access& a = access_[key];
        a.writer = static_cast<int>(i);
        a.readers.clear();  // this step's readers of it are added back below
      }
    }
    for (auto& [key, readers] : reads) {
      auto& list = access_[key].readers;
      list.insert(list.end(), readers.begin(), readers.end());
    }
  }

 private:
  using Key = std::tuple<int, Buffer, std::uint64_t>;  // rank, buffer, chunk
  struct Access {
    int writer = -1;
    std::vector<int> readers;  // since the last write
  };
  std::map<Key, Access> access_;
};

}  // namespace

Schedule file_schedule(const AlgorithmFile& file, std::uint64_t bytes) {
  ScheduleBuilder b(file.ranks);
  ImpliedDeps implied;
  std::size_t step_start = 0;
  for (std::size_t i = 0; i < file.ops.size(); ++i) {
    const FileOp& op = file.ops[i];
    if (!file.explicit_deps && op.step != file.ops[step_start].step) {
      implied.record_step(file.ops, step_start, i);
      step_start = i;
    }
    if (!op.transfer) {
      b.wait(op.wait_sec, op.deps, op.ranks);
      continue;
    }
    const FileTransfer& t = *op.transfer;
    const std::uint64_t from = chunk_offset(file, bytes, t.chunk);
    const std::uint64_t size = chunk_offset(file, bytes, t.chunk + t.count) - from;
    const DataMove data{.src_offset = from,
                        .dst_offset = chunk_offset(file, bytes, t.to_chunk),
                        .src_buffer = t.buffer,
                        .dst_buffer = t.to_buffer,
                        .reduce = t.reduce};
    std::vector<int> deps = file.explicit_deps ? op.deps : implied.of(t);
    if (t.local) {
      b.local(t.src, size, std::move(deps), data);
    } else {
      b.transfer(t.src, t.dst, size, std::move(deps), t.channel, data);
    }
  }
  Schedule schedule = std::move(b).finish();
  schedule.in_place = file.in_place;
  return schedule;
}

namespace {

// The chunk boundaries of `schedule`'s transfers: near-equal pieces if they are, else sizes.
// Scratch may reach past the buffer's size, where near-equal chunks continue the pattern.
struct Chunking {
  std::vector<std::uint64_t> bounds;  // 0 = bounds[0] < ... < bounds.back() = bytes
  bool near_equal = false;
  [[nodiscard]] std::uint64_t index(std::uint64_t offset) const {
    const std::uint64_t bytes = bounds.back();
    if (offset > bytes) {  // past the end: whole chunks of bytes / parts (piece_offset)
      return parts() + (offset - bytes) / (bytes / parts());
    }
    return static_cast<std::uint64_t>(std::lower_bound(bounds.begin(), bounds.end(), offset) -
                                      bounds.begin());
  }
  [[nodiscard]] std::uint64_t parts() const { return bounds.size() - 1; }
};

// Whether `offset`, past the end of a buffer of `bytes` cut into `parts` near-equal chunks, is
// a boundary of the chunks that continue them in scratch.
bool continues_chunks(std::uint64_t offset, std::uint64_t bytes, std::uint64_t parts) {
  const std::uint64_t size = bytes / parts;
  return size > 0 && (offset - bytes) % size == 0;
}

Chunking chunking(const Schedule& schedule, std::uint64_t bytes, const std::string& name) {
  std::set<std::uint64_t> bounds{0, bytes};
  std::vector<std::uint64_t> beyond;  // scratch offsets past the buffer
  for (const ScheduleOp& op : schedule.ops) {
    if (op.kind != ScheduleOp::Kind::kTransfer && !op.data) {
      continue;  // a wait
    }
    if (!op.data) {
      throw ConfigError("dump_algorithm",
                        name +
                            ": its transfers do not say which bytes of the vector they move "
                            "(a collapsed schedule, or nvls's traffic model of in-switch "
                            "reduction), so it cannot be written as an algorithm file");
    }
    const DataMove& d = *op.data;
    for (auto [o, buffer] :
         {std::pair{d.src_offset, d.src_buffer}, std::pair{d.src_offset + op.bytes, d.src_buffer},
          std::pair{d.dst_offset, d.dst_buffer},
          std::pair{d.dst_offset + op.bytes, d.dst_buffer}}) {
      if (o <= bytes) {
        bounds.insert(o);
      } else if (buffer == Buffer::kScratch) {
        beyond.push_back(o);
      } else {
        throw ConfigError("dump_algorithm", "a transfer reaches byte " + std::to_string(o) +
                                                " of a " + std::to_string(bytes) +
                                                "-byte buffer: it cannot be written as chunks");
      }
    }
  }
  Chunking c{.bounds = {bounds.begin(), bounds.end()}};
  c.near_equal = c.parts() >= 1;
  for (std::uint64_t k = 0; k <= c.parts() && c.near_equal; ++k) {
    c.near_equal = c.bounds[k] == piece_offset(bytes, c.parts(), k);
  }
  for (std::uint64_t o : beyond) {
    if (!c.near_equal || !continues_chunks(o, bytes, c.parts())) {
      throw ConfigError("dump_algorithm", "scratch byte " + std::to_string(o) +
                                              " is not a boundary of whole chunks past the "
                                              "buffer: it cannot be written as chunks");
    }
  }
  return c;
}

}  // namespace

nlohmann::ordered_json algorithm_file_json(const Schedule& schedule,
                                           const CollectiveRequest& request,
                                           const std::string& name) {
  const Chunking c = chunking(schedule, request.bytes, name);
  nlohmann::ordered_json doc{{"format", kAlgorithmFormat},
                             {"version", kAlgorithmVersion},
                             {"name", name},
                             {"operation", op_name(request.op)},
                             {"ranks", request.ranks}};
  if (request.op == CollectiveOp::kBroadcast || request.op == CollectiveOp::kReduce ||
      request.op == CollectiveOp::kSendRecv) {
    doc["root"] = request.root;
  }
  doc["in_place"] = schedule.in_place;
  if (c.near_equal) {
    doc["chunks"] = c.bounds.size() - 1;
  } else {
    std::vector<std::uint64_t> sizes;
    for (std::size_t k = 1; k < c.bounds.size(); ++k) {
      sizes.push_back(c.bounds[k] - c.bounds[k - 1]);
    }
    doc["chunk_bytes"] = sizes;
  }
  nlohmann::ordered_json ops = nlohmann::ordered_json::array();
  for (const ScheduleOp& op : schedule.ops) {
    nlohmann::ordered_json j;
    if (!op.data) {
      j = {{"wait_sec", op.wait_sec}, {"ranks", op.entry_ranks}};
    } else {
      const DataMove& d = *op.data;
      const std::uint64_t chunk = c.index(d.src_offset);
      if (op.kind == ScheduleOp::Kind::kTransfer) {
        j = {{"src", op.src}, {"dst", op.dst}};
      } else {
        j = {{"rank", op.src}};
      }
      j["chunk"] = chunk;
      j["count"] = c.index(d.src_offset + op.bytes) - chunk;
      if (c.index(d.dst_offset) != chunk) {
        j["to_chunk"] = c.index(d.dst_offset);
      }
      if (d.src_buffer != Buffer::kInput) {
        j["buffer"] = buffer_name(d.src_buffer);
      }
      if (d.dst_buffer != d.src_buffer) {
        j["to_buffer"] = buffer_name(d.dst_buffer);
      }
      j["reduce"] = d.reduce;
      if (op.channel != 0) {
        j["channel"] = op.channel;
      }
    }
    j["deps"] = op.deps;
    ops.push_back(std::move(j));
  }
  doc["ops"] = std::move(ops);
  return doc;
}

namespace {

class FileAlgorithm final : public CollectiveAlgorithm {
 public:
  explicit FileAlgorithm(AlgorithmFile file)
      : file_(std::move(file)), name_("file:" + file_.path) {}

  [[nodiscard]] std::string_view name() const override { return name_; }

  [[nodiscard]] std::string unsupported(const CollectiveRequest& request,
                                        const TopologyHints& /*hints*/) const override {
    if (request.op != file_.op) {
      return "the file's algorithm is " + std::string(op_name(file_.op)) + ", not " +
             std::string(op_name(request.op));
    }
    if (request.ranks != file_.ranks) {
      return "the file's algorithm is written for " + std::to_string(file_.ranks) + " ranks, not " +
             std::to_string(request.ranks);
    }
    const bool rooted = file_.op == CollectiveOp::kBroadcast || file_.op == CollectiveOp::kReduce ||
                        file_.op == CollectiveOp::kSendRecv;
    if (rooted && request.root != file_.root) {
      return "the file's algorithm has root " + std::to_string(file_.root) + ", not " +
             std::to_string(request.root);
    }
    if (!file_.chunk_bytes.empty()) {
      const std::uint64_t total = chunk_offset(file_, 0, file_.chunks);
      if (request.bytes != total) {
        return "the file gives its chunks' sizes, for " + std::to_string(total) + " bytes, not " +
               std::to_string(request.bytes);
      }
    }
    return "";
  }

  [[nodiscard]] Schedule build(const CollectiveRequest& request,
                               const TopologyHints& /*hints*/) const override {
    return file_schedule(file_, request.bytes);
  }

 private:
  AlgorithmFile file_;
  std::string name_;
};

}  // namespace

std::unique_ptr<CollectiveAlgorithm> make_file_algorithm(const std::string& path) {
  return std::make_unique<FileAlgorithm>(path.ends_with(".xml") ? read_msccl_xml(path)
                                                                : read_algorithm_file(path));
}

}  // namespace dtsim::sim
