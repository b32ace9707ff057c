#include "sim/cli/output_flags.h"

#include <filesystem>

#include "sim/chakra/chakra_writer.h"
#include "sim/cli/verb.h"
#include "sim/config_error.h"
#include "sim/graph/graph_writer.h"
#include "sim/report/link_report.h"
#include "sim/report/timeline.h"
#include "workloads/parsing/json_fields.h"
#include "workloads/parsing/output_file.h"

namespace dtsim::sim {

namespace po = boost::program_options;

namespace {

constexpr std::size_t kMaxFileNameBytes = 255;  // NAME_MAX of Linux file systems

// Whether `a` and `b` name one file. Paths that cannot be resolved (a name too long) are told
// apart as written; opening them fails later with the reason.
bool same_file(const std::string& a, const std::string& b) {
  std::error_code error_a, error_b;
  const auto canonical_a = std::filesystem::weakly_canonical(a, error_a);
  const auto canonical_b = std::filesystem::weakly_canonical(b, error_b);
  return error_a || error_b ? a == b : canonical_a == canonical_b;
}

}  // namespace

void write_text(const std::string& flag, const std::string& path, const std::string& text) {
  try {
    parsing::write_output_file(path, text);
  } catch (const parsing::OutputError& e) {
    throw ConfigError("--" + flag + " " + path + ": cannot write (" + e.what() + ")");
  }
}

void check_output_path(const std::string& flag, const std::string& path) {
  namespace fs = std::filesystem;
  const auto parent = fs::path(path).parent_path();
  std::error_code error;
  if (!path.empty() && !parent.empty() && !fs::is_directory(parent, error)) {
    throw ConfigError("--" + flag + " " + path + ": no such directory " + parent.string() +
                      (error && error != std::errc::no_such_file_or_directory
                           ? " (" + error.message() + ")"
                           : ""));
  }
  for (const auto& component : fs::path(path)) {
    if (component.native().size() > kMaxFileNameBytes) {
      throw ConfigError("--" + flag + " " + parsing::printable(path) +
                        ": a file name longer than " + std::to_string(kMaxFileNameBytes) +
                        " bytes");
    }
  }
}

void check_distinct_outputs(const std::vector<std::pair<std::string, std::string>>& files) {
  for (std::size_t i = 0; i < files.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      const auto& [flag, path] = files[i];
      const auto& [other_flag, other_path] = files[j];
      if (!path.empty() && !other_path.empty() && same_file(path, other_path)) {
        throw ConfigError("--" + flag + " " + path + ": the same file as --" + other_flag);
      }
    }
  }
}

po::options_description output_flags(OutputFlags& flags) {
  po::options_description d("Outputs", kHelpColumns, kHelpColumns / 2);
  auto add = d.add_options();
  add("timeline", po::value(&flags.timeline)->value_name("T.json"),
      ("write the simulated timeline as a Chrome/Perfetto trace (ui.perfetto.dev): per rank a "
       "compute track (each layer's forward and backward, the optimizer) and a communication "
       "track (each bucket's all-reduce), times in microseconds; with more than " +
       std::to_string(kTimelineMaxRanks) + " ranks, " + std::to_string(kTimelineMaxRanks) +
       " evenly spaced ranks from the first to the last")
          .c_str());
  add("link-report", po::value(&flags.link_report)->value_name("L.csv"),
      "write every link's load in one steady-state iteration as CSV: link (SimGrid's name, one "
      "direction), level, bandwidth_bytes_per_sec, bytes carried, utilization = bytes / "
      "(bandwidth x iteration time); links no transfer crosses are left out. The summary names "
      "the busiest link of each level either way");
  add("dump-graph", po::value(&flags.dump_graph)->value_name("G.json"),
      "write the execution graph the run replayed (sim/graph/GRAPH.md): what every rank "
      "computes and communicates, for --graph, other tools or what-if edits");
  add("dump-chakra", po::value(&flags.dump_chakra)->value_name("PREFIX"),
      "write the same graph as a Chakra execution trace, PREFIX.<rank>.et per rank "
      "(workloads/CHAKRA.md), for --chakra or ASTRA-sim");
  return d;
}

SimulateOutputs requested_outputs(const OutputFlags& flags) {
  SimulateOutputs outputs;
  if (!flags.timeline.empty()) {
    check_output_path("timeline", flags.timeline);
    outputs.want_timeline = true;
  }
  if (!flags.link_report.empty()) {
    check_output_path("link-report", flags.link_report);
  }
  if (!flags.dump_graph.empty()) {
    check_output_path("dump-graph", flags.dump_graph);
    outputs.want_graph = true;
  }
  if (!flags.dump_chakra.empty()) {
    check_output_path("dump-chakra", flags.dump_chakra);
    outputs.want_graph = true;
  }
  return outputs;
}

void write_outputs(const OutputFlags& flags, const SimulateOutputs& outputs) {
  if (!flags.timeline.empty()) {
    write_text("timeline", flags.timeline, outputs.timeline.dump() + "\n");
  }
  if (!flags.link_report.empty()) {
    write_text("link-report", flags.link_report, link_report_csv(outputs.links));
  }
  if (!flags.dump_graph.empty()) {
    write_text("dump-graph", flags.dump_graph, execution_graph_text(outputs.graph));
  }
  if (!flags.dump_chakra.empty()) {
    write_chakra_trace(outputs.graph, flags.dump_chakra);
  }
}

}  // namespace dtsim::sim
