#include "sim/chakra/chakra_file.h"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>

#include "sim/chakra/chakra_error.h"
#include "sim/chakra/chakra_reader.h"
#include "workloads/parsing/output_file.h"

namespace dtsim::sim {
namespace {

// The largest message dtsim accepts: protobuf's own limit for one message (2 GiB - 1).
constexpr std::uint64_t kMaxMessageBytes = std::numeric_limits<int>::max();

[[noreturn]] void fail(const std::string& path, std::uint64_t offset, const std::string& what) {
  throw ChakraError(path + ": byte " + std::to_string(offset) + ": " + what);
}

// Reads the varint at data[pos...] into `value`; returns the bytes it took, or 0 if it is
// truncated or longer than 10 bytes (not a varint).
std::size_t read_varint(const std::string& data, std::size_t pos, std::uint64_t& value) {
  value = 0;
  for (std::size_t i = 0; i < 10 && pos + i < data.size(); ++i) {
    const auto byte = static_cast<std::uint8_t>(data[pos + i]);
    value |= static_cast<std::uint64_t>(byte & 0x7f) << (7 * i);
    if ((byte & 0x80) == 0) {
      return i + 1;
    }
  }
  return 0;
}

// Parses the length-delimited message at `pos` into `message` and advances `pos` past it.
void read_message(const std::string& path, const std::string& data, std::size_t& pos,
                  google::protobuf::MessageLite& message, const char* what) {
  std::uint64_t length = 0;
  const std::size_t prefix = read_varint(data, pos, length);
  if (prefix == 0) {
    fail(path, pos, std::string("the length of a ") + what + " message is not a varint");
  }
  const std::size_t left = data.size() - pos - prefix;
  if (length > kMaxMessageBytes || length > left) {
    fail(path, pos,
         std::string("truncated ") + what + " message (length " + std::to_string(length) + ", " +
             std::to_string(left) + " bytes left)");
  }
  if (!message.ParseFromArray(data.data() + pos + prefix, static_cast<int>(length))) {
    fail(path, pos, std::string("not a Chakra ") + what + " message");
  }
  pos += prefix + length;
}

}  // namespace

ChakraFile read_chakra_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw ChakraError(path + ": a directory, not a Chakra execution trace");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw ChakraError(path + ": cannot open Chakra execution trace");
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  const std::string data = buffer.str();
  if (data.empty()) {
    fail(path, 0, "empty file: expected a GlobalMetadata message");
  }
  ChakraFile file{.path = path};
  std::size_t pos = 0;
  read_message(path, data, pos, file.metadata, "GlobalMetadata");
  while (pos < data.size()) {
    file.offsets.push_back(pos);
    read_message(path, data, pos, file.nodes.emplace_back(), "Node");
  }
  return file;
}

void append_delimited(const google::protobuf::MessageLite& message, std::string& out) {
  const std::string bytes = message.SerializeAsString();
  std::uint64_t length = bytes.size();
  do {
    const auto low = static_cast<char>(length & 0x7f);
    length >>= 7;
    out.push_back(length == 0 ? low : static_cast<char>(low | 0x80));
  } while (length != 0);
  out += bytes;
}

void write_rank_files(const std::string& prefix, int ranks,
                      const std::function<std::string(int rank)>& bytes_of) {
  for (int r = 0; r < ranks; ++r) {
    const std::string path = chakra_rank_path(prefix, r);
    try {
      parsing::write_output_file(path, bytes_of(r));
    } catch (const parsing::OutputError& e) {
      throw ChakraError(path + ": cannot write Chakra execution trace (" + e.what() + ")");
    }
  }
}

}  // namespace dtsim::sim
