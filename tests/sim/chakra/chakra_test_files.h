// What the Chakra tests share: a fresh directory per test, and per-rank files written from
// protobuf messages (so that a test can build any trace, malformed ones included).
#ifndef DTSIM_TESTS_SIM_CHAKRA_CHAKRA_TEST_FILES_H_
#define DTSIM_TESTS_SIM_CHAKRA_CHAKRA_TEST_FILES_H_

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sim/chakra/chakra_file.h"

namespace dtsim::sim::chakra_test {

namespace fs = std::filesystem;
namespace et = chakra_et;

inline std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void spit(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

inline et::AttributeProto* attr(et::Node& n, const std::string& name) {
  et::AttributeProto* a = n.add_attr();
  a->set_name(name);
  return a;
}

inline et::Node node(std::uint64_t id, et::NodeType type,
                     std::vector<std::uint64_t> data_deps = {}) {
  et::Node n;
  n.set_id(id);
  n.set_name("n" + std::to_string(id));
  n.set_type(type);
  for (const std::uint64_t d : data_deps) {
    n.add_data_deps(d);
  }
  return n;
}

inline et::Node collective(std::uint64_t id, int comm_type, std::int64_t bytes) {
  et::Node n = node(id, et::COMM_COLL_NODE);
  attr(n, "comm_type")->set_int64_val(comm_type);
  attr(n, "comm_size")->set_int64_val(bytes);
  return n;
}

// One rank's file: `metadata` (version 0.0.4 if none given), then `nodes`.
inline std::string file_bytes(const std::vector<et::Node>& nodes,
                              et::GlobalMetadata metadata = {}) {
  std::string out;
  if (metadata.version().empty()) {
    metadata.set_version("0.0.4");
  }
  append_delimited(metadata, out);
  for (const et::Node& n : nodes) {
    append_delimited(n, out);
  }
  return out;
}

// A test with its own directory dir_ (removed afterwards) and prefix_ = dir_/"t".
class ChakraTest : public testing::Test {
 protected:
  void SetUp() override {
    const auto* info = testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("dtsim_chakra_" + std::string(info->test_suite_name()) + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    prefix_ = (dir_ / "t").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  void write_rank(int rank, const std::vector<et::Node>& nodes,
                  const et::GlobalMetadata& metadata = {}) const {
    spit(prefix_ + "." + std::to_string(rank) + ".et", file_bytes(nodes, metadata));
  }
  [[nodiscard]] std::string file(int rank) const {
    return prefix_ + "." + std::to_string(rank) + ".et";
  }

  fs::path dir_;
  std::string prefix_;
};

}  // namespace dtsim::sim::chakra_test

#endif  // DTSIM_TESTS_SIM_CHAKRA_CHAKRA_TEST_FILES_H_
