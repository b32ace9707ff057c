#include "sim/cli/chakra_cli.h"

#include <iostream>

#include <boost/program_options.hpp>

#include "sim/chakra/chakra_writer.h"
#include "sim/cli/run_flags.h"
#include "sim/config_error.h"

namespace dtsim::sim {

namespace po = boost::program_options;

ChakraImport read_chakra_for_simulate(const std::string& prefix, int ranks) {
  ChakraImport trace = read_chakra_trace(prefix, ranks);
  for (const std::string& line : trace.warnings) {
    std::cerr << "dtsim simulate: warning: " << line << "\n";
  }
  return trace;
}

std::string chakra_summary(const ChakraImport& trace) {
  const ChakraStats& s = trace.stats;
  return "chakra: " + std::to_string(s.ranks) + " ranks, " + std::to_string(s.nodes) + " nodes (" +
         std::to_string(s.compute_nodes) + " compute, " + std::to_string(s.collective_nodes) +
         " collectives, " + std::to_string(s.send_nodes) + " sends, " +
         std::to_string(s.recv_nodes) + " receives, " +
         std::to_string(s.memory_nodes + s.metadata_nodes) + " memory/metadata no-ops), " +
         std::to_string(s.unknown_type_nodes) + " of unknown type, " +
         std::to_string(s.unknown_attributes) + " attributes and " +
         std::to_string(s.unknown_fields) + " fields not used\n";
}

int run_chakra(const std::vector<std::string>& args) {
  if (args.empty() || args[0] != "microbenchmark") {
    throw ConfigError("expected \"dtsim chakra microbenchmark\" (see dtsim --help)");
  }
  std::string op = "all-reduce", bytes = "1MiB", output;
  int ranks = 0;
  bool help = false;
  po::options_description flags("dtsim chakra microbenchmark", 100, 50);
  flags.add_options()("help,h", po::bool_switch(&help), "this text")(
      "op", po::value(&op)->default_value("all-reduce")->value_name("OP"),
      "all-reduce, reduce-scatter, all-gather, broadcast, reduce or all-to-all")(
      "ranks", po::value(&ranks)->required()->value_name("N"), "ranks (NPUs): files written")(
      "bytes", po::value(&bytes)->default_value("1MiB")->value_name("SIZE"),
      "comm_size, nccl-tests' size (all-gather: the gathered result; reduce-scatter and "
      "all-to-all: each rank's input)")("output,o",
                                        po::value(&output)->required()->value_name("PREFIX"),
                                        "writes PREFIX.0.et ... PREFIX.<N-1>.et");
  po::variables_map vm;
  po::store(po::command_line_parser(std::vector<std::string>(args.begin() + 1, args.end()))
                .options(flags)
                .run(),
            vm);
  if (vm["help"].as<bool>()) {
    std::cout << "Writes one collective per rank as a Chakra execution trace, in the shape of\n"
                 "ASTRA-sim's microbenchmarks (workloads/CHAKRA.md).\n\n"
              << flags;
    return 0;
  }
  po::notify(vm);
  const auto parsed = parse_op(op);
  if (!parsed || *parsed == CollectiveOp::kSendRecv) {
    throw ConfigError("op", op + ": expected all-reduce, reduce-scatter, all-gather, broadcast, "
                                 "reduce or all-to-all");
  }
  if (ranks < 1) {
    throw ConfigError("ranks", std::to_string(ranks) + ": expected at least 1");
  }
  const ChakraMicrobenchmark benchmark{
      .op = *parsed, .ranks = ranks, .bytes = parse_size_flag("bytes", bytes)};
  write_chakra_microbenchmark(benchmark, output);
  std::cout << microbenchmark_name(benchmark) << ": " << ranks << " files " << output
            << ".0.et ... " << output << "." << ranks - 1 << ".et\n";
  return 0;
}

}  // namespace dtsim::sim
