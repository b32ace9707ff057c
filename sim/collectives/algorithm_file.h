// Collective algorithms written as files (ALGORITHMS.md, algorithm.schema.json): read, checked,
// written. A file states a schedule for one operation on a fixed number of ranks over a buffer
// cut into chunks; `--algorithm file:PATH` runs it wherever a built-in could run, and every
// step-level built-in can write itself in the format (`--dump-algorithm`).
#ifndef DTSIM_SIM_COLLECTIVES_ALGORITHM_FILE_H_
#define DTSIM_SIM_COLLECTIVES_ALGORITHM_FILE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/collectives/collective_algorithm.h"

namespace dtsim::sim {

// One transfer of a file: chunks [chunk, chunk + count) of the sender's `buffer` to chunks
// [to_chunk, ...) of the receiver's `to_buffer`, copied or added. Count 0: an empty message
// (it pays latency only). A local one moves them within one rank, in no time.
struct FileTransfer {
  int src = 0;
  int dst = 0;  // = src for a local copy or reduction between a rank's own buffers
  bool local = false;
  std::uint64_t chunk = 0;
  std::uint64_t count = 1;
  std::uint64_t to_chunk = 0;
  Buffer buffer = Buffer::kInput;
  Buffer to_buffer = Buffer::kInput;
  bool reduce = false;
  int channel = 0;
};

// One operation of a file: a transfer, or (explicit dependencies only) a wait of `wait_sec`
// counted as an operation of `ranks`.
struct FileOp {
  std::optional<FileTransfer> transfer;
  double wait_sec = 0;
  std::vector<int> ranks;
  std::vector<int> deps;  // explicit dependencies only: indices of earlier operations
  int step = 0;           // implied dependencies only: its step
  std::string where;      // its JSON pointer, for messages: "/steps/3/1"
};

struct AlgorithmFile {
  std::string path;  // for messages
  std::string name;
  CollectiveOp op = CollectiveOp::kAllReduce;
  int ranks = 1;
  int root = 0;
  bool in_place = true;
  // The buffer is cut into `chunks` near-equal pieces (piece_bytes) of any size, or, when
  // chunk_bytes is set, into exactly those pieces (then the size is their sum).
  std::uint64_t chunks = 1;
  std::vector<std::uint64_t> chunk_bytes;
  // Dependencies implied by the data (a transfer waits for the last writer of what it reads
  // and overwrites, and for the readers of what it overwrites), or given with each operation.
  bool explicit_deps = false;
  std::vector<FileOp> ops;  // implied: in step order
};

// The file at `path`, validated: every field, rank, chunk and dependency in range, and the
// schedule checked against its operation (schedule_check.h). Throws ConfigError naming the file
// and JSON pointer of every problem, or the first rank, chunk and operation of a wrong schedule.
[[nodiscard]] AlgorithmFile read_algorithm_file(const std::string& path);
// The same from a parsed document (tests).
[[nodiscard]] AlgorithmFile parse_algorithm_file(const nlohmann::json& doc,
                                                 const std::string& path);

// The schedule of `file` for a buffer of `bytes`. REQUIRES: bytes is the sum of chunk_bytes if
// that is set.
[[nodiscard]] Schedule file_schedule(const AlgorithmFile& file, std::uint64_t bytes);

// `schedule` (of `request`) as an algorithm file with explicit dependencies; reading it back
// gives the same schedule. Throws ConfigError if a transfer does not say what it moves.
[[nodiscard]] nlohmann::ordered_json algorithm_file_json(const Schedule& schedule,
                                                         const CollectiveRequest& request,
                                                         const std::string& name);

// An algorithm file as a CollectiveAlgorithm, named "file:PATH": PATH is read as MSCCL XML if it
// ends with ".xml" (msccl_xml.h), else as this project's JSON format.
[[nodiscard]] std::unique_ptr<CollectiveAlgorithm> make_file_algorithm(const std::string& path);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_COLLECTIVES_ALGORITHM_FILE_H_
