// ASTRA-sim's collective microbenchmarks (examples/workload/microbenchmarks): one collective node
// per rank. The layout reproduces the shipped files byte for byte (tests/sim/chakra).
#include <algorithm>
#include <string>

#include "sim/chakra/chakra_error.h"
#include "sim/chakra/chakra_file.h"
#include "sim/chakra/chakra_nodes.h"
#include "sim/chakra/chakra_reader.h"
#include "sim/chakra/chakra_writer.h"
#include "sim/graph/graph_validate.h"

namespace dtsim::sim {

std::string microbenchmark_name(const ChakraMicrobenchmark& benchmark) {
  std::string op(op_name(benchmark.op));
  std::replace(op.begin(), op.end(), '-', '_');
  std::string size = std::to_string(benchmark.bytes) + "B";
  for (const auto& [unit, bytes] :
       {std::pair{"KB", 1ull << 10}, {"MB", 1ull << 20}, {"GB", 1ull << 30}}) {
    if (benchmark.bytes != 0 && benchmark.bytes % bytes == 0) {
      size = std::to_string(benchmark.bytes / bytes) + unit;
    }
  }
  return op + "_" + std::to_string(benchmark.ranks) + "npus_" + size;
}

std::string microbenchmark_rank_file(const ChakraMicrobenchmark& benchmark, int rank) {
  std::string out;
  chakra_et::GlobalMetadata metadata;
  metadata.set_version("0.0.4");
  append_delimited(metadata, out);
  chakra_et::Node node;
  node.set_id(static_cast<std::uint64_t>(rank));
  node.set_name(microbenchmark_name(benchmark));
  node.set_type(chakra_et::COMM_COLL_NODE);
  auto* cpu = node.add_attr();
  cpu->set_name("is_cpu_op");
  cpu->set_bool_val(false);
  auto* type = node.add_attr();
  type->set_name("comm_type");
  type->set_int64_val(chakra_comm_type(benchmark.op));
  auto* size = node.add_attr();
  size->set_name("comm_size");
  size->set_int64_val(static_cast<std::int64_t>(benchmark.bytes));
  append_delimited(node, out);
  return out;
}

void write_chakra_microbenchmark(const ChakraMicrobenchmark& benchmark, const std::string& prefix) {
  if (chakra_comm_type(benchmark.op) < 0) {
    throw ChakraError(std::string(op_name(benchmark.op)) + ": Chakra has no such collective");
  }
  if (benchmark.ranks < 1 || benchmark.ranks > kMaxGraphRanks) {
    throw ChakraError(std::to_string(benchmark.ranks) + " ranks: expected 1 to " +
                      std::to_string(kMaxGraphRanks));
  }
  write_rank_files(prefix, benchmark.ranks,
                   [&](int rank) { return microbenchmark_rank_file(benchmark, rank); });
}

}  // namespace dtsim::sim
