// Pieces shared by the graph reader's files (graph_reader*.cpp). Not an interface.
#ifndef DTSIM_SIM_GRAPH_GRAPH_READER_INTERNAL_H_
#define DTSIM_SIM_GRAPH_GRAPH_READER_INTERNAL_H_

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/graph/execution_graph.h"
#include "workloads/parsing/json_fields.h"

namespace dtsim::sim::graph_internal {

// A name table of the graph (layers, op_classes, labels, algorithms): the file's, or collected from
// the nodes in order of first appearance when the file has none.
class NameTable {
 public:
  NameTable(const char* key, std::vector<std::string>& names) : key_(key), names_(names) {}
  // Reads the table from `doc`'s member key, if present.
  void read(parsing::JsonFields& doc);
  // The index of `name` (read from `field` of `node`), or -1 with a problem recorded.
  std::int32_t index(const std::string& name, parsing::JsonFields& node, const char* field);

 private:
  const char* key_;
  std::vector<std::string>& names_;
  std::unordered_map<std::string, std::int32_t> index_;
  bool given_ = false;
};

struct NameTables {
  NameTable layers;
  NameTable op_classes;
  NameTable labels;
  NameTable algorithms;
};

// A program as read: nodes in a topological order, and where each came from in the file.
struct ProgramRead {
  Program program;
  std::vector<std::int32_t> file_position;  // per node of `program`
};

// Reads the program `value` found at "/programs/<index>".
[[nodiscard]] ProgramRead read_program(const nlohmann::json& value, int index, NameTables& tables,
                                       std::vector<std::string>& problems);

// `key` escaped for a JSON pointer (RFC 6901: "~" -> "~0", "/" -> "~1").
[[nodiscard]] std::string pointer_token(const std::string& key);

}  // namespace dtsim::sim::graph_internal

#endif  // DTSIM_SIM_GRAPH_GRAPH_READER_INTERNAL_H_
