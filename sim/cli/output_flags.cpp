#include "sim/cli/output_flags.h"

#include <filesystem>
#include <fstream>

#include "sim/config_error.h"
#include "sim/graph/graph_writer.h"
#include "sim/report/link_report.h"
#include "sim/report/timeline.h"

namespace dtsim::sim {

namespace po = boost::program_options;

namespace {

constexpr unsigned kHelpColumns = 100;

void check_directory(const std::string& flag, const std::string& path) {
  const auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty() && !std::filesystem::is_directory(parent)) {
    throw ConfigError("--" + flag + " " + path + ": no such directory " + parent.string());
  }
}

void write_text(const std::string& flag, const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) {
    throw ConfigError("--" + flag + " " + path + ": cannot write");
  }
}

}  // namespace

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
  return d;
}

SimulateOutputs requested_outputs(const OutputFlags& flags) {
  SimulateOutputs outputs;
  if (!flags.timeline.empty()) {
    check_directory("timeline", flags.timeline);
    outputs.want_timeline = true;
  }
  if (!flags.link_report.empty()) {
    check_directory("link-report", flags.link_report);
  }
  if (!flags.dump_graph.empty()) {
    check_directory("dump-graph", flags.dump_graph);
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
}

}  // namespace dtsim::sim
