#include "sim/cli/run_flags.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "platforms/platform_spec.h"
#include "sim/cli/error_messages.h"
#include "sim/cli/verb.h"
#include "sim/config_error.h"
#include "sim/run/simulation.h"
#include "workloads/parsing/json_fields.h"
#include "workloads/parsing/units.h"
#include "workloads/trace.h"

namespace po = boost::program_options;

namespace dtsim::sim {

po::options_description run_flags(RunFlags& f, bool ranks_required, bool platform_required) {
  po::options_description d("Platform and algorithm", kHelpColumns, kHelpColumns / 2);
  auto add = d.add_options();
  auto* platform = po::value(&f.platform)->value_name("P.json|P.xml");
  add("platform", platform_required ? platform->required() : platform,
      "cluster network: a platform spec (platforms/FORMAT.md: star, fat-tree or its k-ary n-tree "
      "shorthand with per-level links, torus, dragonfly, xml; multi-GPU nodes with a shared NIC "
      "or a NIC per GPU (rails); perturbations: slow links, slow GPUs, background flows) or a "
      "SimGrid XML file");
  auto* ranks = po::value(&f.ranks)->value_name("N");
  add("ranks", ranks_required ? ranks->required() : ranks,
      "number of ranks (GPUs), placed on the platform's hosts by --placement");
  add("placement", po::value(&f.placement)->default_value("linear")->value_name("POLICY"),
      "which host runs which rank (platforms/FORMAT.md, \"Rank placement\"): linear (rank r on "
      "the r-th host: consecutive ranks share a node and a leaf switch), round-robin (rank r on "
      "node r mod N of the N nodes, so consecutive ranks are on different nodes), random[:SEED] "
      "(a shuffle of all hosts seeded by SEED, default 0; the same seed gives the same order "
      "everywhere), topology-aware (ring neighbours one hop apart: a snake order on a torus; "
      "linear elsewhere, where it already is)");
  add("algorithm", po::value(&f.algorithm)->default_value("ring")->value_name("NAME|auto"),
      "collective algorithm: ring, tree (NCCL's binary tree, pipelined), double-tree (NCCL's "
      "two trees), halving-doubling (Rabenseifner), recursive-doubling, direct, hierarchical "
      "(rings inside then across nodes), torus-2d (rings along x then y), nvls (NVLink SHARP: "
      "the node's NVSwitch reduces; nodes with \"nvlink_sharp\", ranks on one node, "
      "all-reduce), nvls-tree (NCCL's NVLS_TREE: NVLS inside nodes, a tree between them; not "
      "weighed by auto), or auto (the lowest estimated time on this platform, per collective; the "
      "report lists every candidate), or "
      "auto:NAME,NAME... (the same among the algorithms named, e.g. auto:ring,double-tree for "
      "NCCL's own)");
  add("replay", po::value(&f.replay)->default_value("collapsed")->value_name("collapsed|fast|step"),
      "collapsed: identical ring steps as one transfer per edge, and with a ring in simulate, "
      "ranks folded onto one compute stream and repeated all-reduces replayed once (fast, same "
      "answer when no other traffic interleaves); fast: collapsed, and tree and double-tree "
      "all-reduces also as one transfer per tree edge plus their pipeline's fill (an "
      "approximation of the chunked replay, for thousands of ranks; auto then weighs trees by "
      "that schedule); step: every step's "
      "transfers of every rank (slow, exact interleaving)");
  add("fold", po::value(&f.fold)->default_value("verified")->value_name("verified|node|exact"),
      "with collapsed or fast replay of a hybrid job or a graph: verified folds the ranks of each "
      "pipeline stage onto one compute stream, replays every rank's communication, and checks "
      "after the run that every rank's ended when its stage's first rank's did (if one did not, "
      "dtsim says so and simulates again with node); node does the same for a stage's ranks on "
      "one node (if that does not hold either: exact); exact folds only ranks whose collectives "
      "span exactly them (sim/lowering/fold.h)");
  add("chunk", po::value(&f.chunk)->default_value("512KiB")->value_name("SIZE"),
      "pipelining chunk of trees and chains, in bytes (suffixes allowed; NCCL's step: 512KiB)");
  add("collective-latency",
      po::value(&f.collective_latency)->default_value("0us")->value_name("DURATION"),
      "software latency every rank pays once per collective before its first transfer (kernel "
      "launch, library setup); NCCL's own model uses 8.4us (its Simple-protocol base latency)");
  add("ranks-per-node", po::value(&f.ranks_per_node)->default_value(0)->value_name("G"),
      "consecutive ranks that share a node, for the hierarchical algorithm, and the most ranks "
      "nvls accepts (0: the platform's GPUs per node, right for linear and topology-aware "
      "placement)");
  add("grid", po::value(&f.grid)->value_name("XxY"),
      "rank grid of the torus-2d algorithm (default: the dimensions of a 2-D torus platform)");
  add("network-model",
      po::value(&f.network_model)->default_value("exact")->value_name("exact|lv08"),
      "exact: flow-level alpha-beta with max-min sharing (SimGrid CM02, no cross-traffic, no "
      "TCP window); lv08: SimGrid's default TCP model with its latency/bandwidth factors");
  add("cfg", po::value(&f.cfg)->composing()->value_name("KEY:VALUE"),
      "extra SimGrid setting, repeatable (e.g. --cfg network/maxmin-selective-update:yes)");
  add("max-hosts", po::value(&f.max_hosts)->default_value(f.max_hosts)->value_name("N"),
      "work limit: the most hosts a platform may build (each costs about 2.4 KB and 30 us); a "
      "bigger one is refused before anything runs, with the flag that allows it");
  add("max-events", po::value(&f.max_events)->default_value(f.max_events)->value_name("N"),
      "work limit: the most transfers periodic background flows may start during the run "
      "(each costs about 5-20 us), estimated from the run's compute and collective latencies "
      "before it runs, and enforced while it runs");
  add("max-tasks", po::value(&f.max_tasks)->default_value(f.max_tasks)->value_name("N"),
      "work limit: the most tasks a replay may have (each costs about 2.6 us and 150 bytes), "
      "counted once the graph is lowered, before any is built or replayed");
  add("max-concurrent",
      po::value(&f.max_concurrent)->default_value(f.max_concurrent)->value_name("N"),
      "work limit: the most transfers of one collective a named --algorithm may start at once "
      "(each holds about 40 KB in the replay), counted on its schedule before it runs");
  add("report", po::value(&f.report)->value_name("R.json"),
      "write the full JSON report there (nothing is written if the run fails)");
  add("help", "explain the flags");
  return d;
}

std::uint64_t parse_size_flag(const std::string& flag, const std::string& text) {
  auto bytes = dtsim::parsing::parse_size(text);
  if (!bytes) {
    throw ConfigError("--" + flag + " " + text +
                      ": expected a size such as 1048576, 100MB or 1GiB");
  }
  if (*bytes > dtsim::workloads::kMaxBytes) {
    throw ConfigError("--" + flag + " " + text + ": expected at most 2^50 bytes (1 PiB)");
  }
  return *bytes;
}

namespace {

// --replay into `run`.
void set_replay(const RunFlags& f, dtsim::sim::RunOptions& run) {
  if (f.replay != "collapsed" && f.replay != "fast" && f.replay != "step") {
    throw ConfigError("--replay " + f.replay + ": expected collapsed, fast or step");
  }
  run.collapse = f.replay != "step";
  run.collapse_pipelines = f.replay == "fast";
}

// --fold into `run`.
void set_fold(const RunFlags& f, dtsim::sim::RunOptions& run) {
  if (f.fold != "verified" && f.fold != "node" && f.fold != "exact") {
    throw ConfigError("--fold " + f.fold + ": expected verified, node or exact");
  }
  run.fold = f.fold == "verified" ? dtsim::sim::FoldMode::kVerified
             : f.fold == "node"   ? dtsim::sim::FoldMode::kNode
                                  : dtsim::sim::FoldMode::kExact;
}

double collective_latency_sec(const std::string& text) {
  const auto latency_sec = dtsim::parsing::parse_duration(text);
  if (!latency_sec || *latency_sec < 0) {
    throw ConfigError("--collective-latency " + dtsim::parsing::printable(text) +
                      ": expected a duration >= 0 such as 8.4us");
  }
  if (*latency_sec > dtsim::parsing::kMaxDurationSec) {
    throw ConfigError("--collective-latency " + dtsim::parsing::printable(text) +
                      ": expected at most 1e9 s");
  }
  return *latency_sec;
}

// --grid XxY.
std::vector<int> parse_grid(const std::string& text) {
  int x = 0, y = 0;
  char sep = 0;
  std::istringstream in(text);
  if (!(in >> x >> sep >> y) || sep != 'x' || !in.eof() || x < 1 || y < 1) {
    throw ConfigError("--grid " + text + ": expected XxY with X, Y >= 1, e.g. 8x16");
  }
  return {x, y};
}

// The work limits --max-hosts, --max-events, --max-tasks and --max-concurrent into `run`.
void set_limits(const RunFlags& f, dtsim::sim::RunOptions& run) {
  for (const auto& [flag, value] :
       {std::pair{"max-hosts", f.max_hosts}, std::pair{"max-events", f.max_events},
        std::pair{"max-tasks", f.max_tasks}, std::pair{"max-concurrent", f.max_concurrent}}) {
    if (!(value >= 1) || !std::isfinite(value)) {
      throw ConfigError(std::string("--") + flag + " " +
                        dtsim::parsing::format_number("%g", value) + ": expected a number >= 1");
    }
  }
  run.max_hosts = f.max_hosts;
  run.max_events = f.max_events;
  run.max_tasks = f.max_tasks;
  run.max_concurrent = f.max_concurrent;
}

}  // namespace

dtsim::sim::RunOptions run_options(const RunFlags& f) {
  dtsim::sim::RunOptions run{.platform_path = f.platform,
                             .ranks = f.ranks,
                             .algorithm = f.algorithm,
                             .ranks_per_node = f.ranks_per_node};
  set_replay(f, run);
  for (const std::string& text : f.apply) {
    run.what_if.push_back(dtsim::sim::parse_what_if(text));
  }
  set_fold(f, run);
  auto placement = dtsim::sim::parse_placement(f.placement);
  if (!placement) {
    throw ConfigError("--placement " + f.placement +
                      ": expected linear, round-robin, random, random:SEED (an integer >= 0) or "
                      "topology-aware");
  }
  run.placement = *placement;
  run.chunk_bytes = parse_size_flag("chunk", f.chunk);
  run.collective_latency_sec = collective_latency_sec(f.collective_latency);
  if (!f.grid.empty()) {
    run.grid = parse_grid(f.grid);
  }
  auto model = dtsim::sim::parse_network_model(f.network_model);
  if (!model) {
    throw ConfigError("--network-model " + f.network_model + ": expected exact or lv08");
  }
  run.network_model = *model;
  for (const std::string& c : f.cfg) {
    dtsim::sim::check_simgrid_cfg(c);
  }
  run.simgrid_cfg = f.cfg;
  set_limits(f, run);
  return run;
}

}  // namespace dtsim::sim
