// What the reader, writer and schedule of algorithm files share (algorithm_file.h).
#ifndef DTSIM_SIM_COLLECTIVES_ALGORITHM_FILE_INTERNAL_H_
#define DTSIM_SIM_COLLECTIVES_ALGORITHM_FILE_INTERNAL_H_

#include <cstdint>

#include "sim/collectives/algorithm_file.h"

namespace dtsim::sim {

inline constexpr const char* kAlgorithmFormat = "dtsim-collective-algorithm";
inline constexpr int kAlgorithmVersion = 1;
// Bounds that keep a file's check and schedule within memory.
inline constexpr int kMaxFileRanks = 65536;
inline constexpr std::uint64_t kMaxFileChunks = std::uint64_t{1} << 24;
inline constexpr int kMaxFileChannel = 1024;

// The offset of chunk k (k <= file.chunks) in a buffer of `bytes`.
[[nodiscard]] std::uint64_t chunk_offset(const AlgorithmFile& file, std::uint64_t bytes,
                                         std::uint64_t k);
// The chunk holding byte `offset` (file.chunks past the end).
[[nodiscard]] std::uint64_t chunk_at(const AlgorithmFile& file, std::uint64_t bytes,
                                     std::uint64_t offset);

// Throws ConfigError with the first fault of `file`'s schedule (schedule_check.h) in the file's
// terms: its operation's `where`, the rank, buffer and chunk.
void check_algorithm_file(const AlgorithmFile& file);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_COLLECTIVES_ALGORITHM_FILE_INTERNAL_H_
