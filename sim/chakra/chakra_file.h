// One Chakra execution-trace file at the protobuf level (internal to sim/chakra): the framing of
// workloads/CHAKRA.md, "The file". A file is a sequence of messages, each its length as a
// base-128 varint followed by that many bytes: first a GlobalMetadata, then Nodes.
//
//   const ChakraFile f = read_chakra_file("all_reduce.0.et");  // or throws ChakraError
#ifndef DTSIM_SIM_CHAKRA_CHAKRA_FILE_H_
#define DTSIM_SIM_CHAKRA_CHAKRA_FILE_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "et_def.pb.h"

namespace dtsim::sim {

struct ChakraFile {
  std::string path;
  chakra_et::GlobalMetadata metadata;
  std::vector<chakra_et::Node> nodes;  // in file order
  std::vector<std::uint64_t> offsets;  // byte offset of each node's length prefix
};

// Reads the file at `path`. Throws ChakraError "<path>: byte <offset>: <problem>" for a file
// that cannot be opened, an empty file, a length prefix that is not a varint or runs past the
// end, a message that runs past the end or does not parse as its type.
[[nodiscard]] ChakraFile read_chakra_file(const std::string& path);

// The bytes of one length-delimited message: its length varint, then `message` serialized.
void append_delimited(const google::protobuf::MessageLite& message, std::string& out);

// Writes bytes_of(r) to PREFIX.<r>.et for r = 0 .. ranks-1, each file whole or not at all.
// Throws ChakraError "<file>: cannot write Chakra execution trace (<reason>)".
void write_rank_files(const std::string& prefix, int ranks,
                      const std::function<std::string(int rank)>& bytes_of);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_CHAKRA_CHAKRA_FILE_H_
