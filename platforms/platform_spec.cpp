#include "platforms/platform_spec.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "platforms/presets.h"
#include "platforms/spec_fields.h"
#include "workloads/parsing/input_file.h"
#include "workloads/parsing/json_fields.h"
#include "workloads/parsing/units.h"

namespace dtsim::platforms {

using nlohmann::json;
using parsing::JsonFields;

namespace {

LinkSpec read_link(JsonFields& f) {
  return {.bandwidth_bytes_per_sec = read_bandwidth(f, "link_bandwidth"),
          .latency_sec = read_latency(f, "link_latency")};
}

// An optional boolean `key` of `f` into `flag`.
void read_flag(JsonFields& f, const char* key, bool& flag) {
  if (const json* value = f.value(key, /*required=*/false)) {
    if (value->is_boolean()) {
      flag = value->get<bool>();
    } else {
      f.problem(key, "expected true or false, got " + parsing::describe_json(*value));
    }
  }
}

// The optional "node" section: multi-GPU nodes.
std::optional<NodeSpec> read_node(JsonFields& parent) {
  const json* doc = parent.value("node", /*required=*/false);
  if (doc == nullptr) {
    return std::nullopt;
  }
  JsonFields f = parent.child(*doc, "node");
  f.reject_unknown({"gpus", "gpu_link_bandwidth", "gpu_link_latency", "nics", "nic_bandwidth",
                    "nic_latency", "rails", "nvlink", "nvlink_sharp"});
  NodeSpec node;
  auto gpus = f.unsigned_integer("gpus");
  if (gpus && (*gpus < 1 || *gpus > 1024)) {
    f.problem("gpus", "expected an integer between 1 and 1024, got " + std::to_string(*gpus));
  }
  node.gpus = static_cast<unsigned>(std::min<std::uint64_t>(gpus.value_or(1), 1024));
  node.gpu_link_bandwidth_bytes_per_sec = read_bandwidth(f, "gpu_link_bandwidth");
  node.gpu_link_latency_sec = read_latency(f, "gpu_link_latency");
  read_flag(f, "rails", node.rails);
  read_flag(f, "nvlink", node.nvlink);
  read_flag(f, "nvlink_sharp", node.nvlink_sharp);
  auto nics = f.unsigned_integer("nics", /*required=*/false).value_or(node.rails ? node.gpus : 1);
  if (f.has("nics") && (nics < 1 || nics > 64)) {
    f.problem("nics", "expected an integer between 1 and 64, got " + std::to_string(nics));
    nics = 1;
  } else if (node.rails && nics != node.gpus) {
    f.problem("nics", "with \"rails\" every GPU has its own NIC: expected " +
                          std::to_string(node.gpus) + " (the GPUs) or no \"nics\", got " +
                          std::to_string(nics));
  }
  // A rail is one NIC; otherwise the node's NICs are one link of their summed bandwidth.
  node.nic_bandwidth_bytes_per_sec =
      static_cast<double>(node.rails ? 1 : nics) * read_bandwidth(f, "nic_bandwidth");
  node.nic_latency_sec = read_latency(f, "nic_latency");
  return node;
}

// A preset's "nic_bandwidth": the node's NICs, summed, in place of the datasheet's, and the
// fabric's links with them (the presets' fabrics are sized to their nodes: non-blocking).
void set_node_nics(JsonFields& f, Topology& topology, const std::string& name) {
  const double bytes_per_sec = read_bandwidth(f, "nic_bandwidth");
  const auto set = [bytes_per_sec](LinkSpec& link, std::optional<NodeSpec>& node) {
    if (!node || node->rails) {
      return false;
    }
    node->nic_bandwidth_bytes_per_sec = bytes_per_sec;
    link.bandwidth_bytes_per_sec = bytes_per_sec;
    return true;
  };
  bool done = false;
  if (auto* tree = std::get_if<FatTreeSpec>(&topology)) {
    done = tree->level_links.empty() && set(tree->link, tree->node);
  } else if (auto* star = std::get_if<StarSpec>(&topology)) {
    done = set(star->link, star->node);
  }
  if (!done) {
    f.problem("nic_bandwidth", "preset \"" + name +
                                   "\" has no multi-GPU nodes whose NICs it "
                                   "could change");
  }
}

Topology read_preset(JsonFields& f) {
  f.reject_unknown({"preset", "nodes", "sharp", "nic_bandwidth", "perturbations"});
  const std::string name = f.string("preset").value_or("");
  auto nodes = f.unsigned_integer("nodes");
  if (nodes && (*nodes < 1 || *nodes > 65536)) {
    f.problem("nodes", "expected an integer between 1 and 65536, got " + std::to_string(*nodes));
    nodes.reset();
  }
  auto topology = make_preset(name, static_cast<unsigned>(nodes.value_or(1)));
  if (!topology) {
    std::string names;
    for (const PresetInfo& p : preset_catalog()) {
      names += (names.empty() ? "" : ", ") + p.name;
    }
    if (f.has("preset") && f.value("preset")->is_string()) {
      f.problem("preset", "unknown preset \"" + parsing::printable(name) + "\" (expected one of " +
                              names + ")");
    }
    return StarSpec{};
  }
  if (f.has("nic_bandwidth")) {
    set_node_nics(f, *topology, name);
  }
  if (auto* tree = std::get_if<FatTreeSpec>(&*topology)) {
    read_flag(f, "sharp", tree->sharp);
  } else if (f.has("sharp")) {
    f.problem("sharp", "in-network reduction needs a fat-tree fabric, and preset \"" + name +
                           "\" is not one");
  }
  return *topology;
}

Topology read_topology(JsonFields& f, const std::string& spec_path) {
  if (f.has("preset")) {
    return read_preset(f);
  }
  std::string name = f.string("topology").value_or("");
  if (name == "star") {
    f.reject_unknown(
        {"topology", "hosts", "link_bandwidth", "link_latency", "node", "perturbations"});
    StarSpec star;
    auto hosts = f.unsigned_integer("hosts");
    if (hosts && (*hosts == 0 || *hosts > kMaxHosts)) {
      f.problem("hosts",
                "expected an integer between 1 and 16777216, got " + std::to_string(*hosts));
    }
    star.hosts = static_cast<unsigned>(std::min<std::uint64_t>(hosts.value_or(1), kMaxHosts));
    star.link = read_link(f);
    star.node = read_node(f);
    return star;
  }
  if (name == "fat-tree") {
    FatTreeSpec tree = read_fat_tree(f);
    tree.node = read_node(f);
    read_flag(f, "sharp", tree.sharp);
    return tree;
  }
  if (name == "torus") {
    f.reject_unknown(
        {"topology", "dims", "link_bandwidth", "link_latency", "node", "perturbations"});
    TorusSpec torus;
    torus.dims = read_positive_list(f, "dims", 0);
    check_host_total(f, "dims", torus.dims);
    torus.link = read_link(f);
    torus.node = read_node(f);
    return torus;
  }
  if (name == "dragonfly") {
    DragonflySpec dragonfly = read_dragonfly(f);
    dragonfly.node = read_node(f);
    return dragonfly;
  }
  if (name == "xml") {
    f.reject_unknown({"topology", "file", "perturbations"});
    XmlSpec xml;
    if (auto file = f.string("file")) {
      std::filesystem::path p(*file);
      xml.path = p.is_absolute() ? p.string()
                                 : (std::filesystem::path(spec_path).parent_path() / p).string();
      std::error_code error;
      const auto status = std::filesystem::status(xml.path, error);
      if (!std::filesystem::exists(status)) {
        f.problem("file", "no such file \"" + xml.path + "\"" +
                              (error && error != std::errc::no_such_file_or_directory
                                   ? " (" + error.message() + ")"
                                   : ""));
      } else if (std::filesystem::is_directory(status)) {
        f.problem("file", "\"" + xml.path + "\" is a directory, not a SimGrid XML platform");
      }
    }
    return xml;
  }
  if (f.has("topology") && f.value("topology")->is_string()) {
    f.problem("topology", "unknown topology \"" + parsing::printable(name) +
                              "\" (expected one of star, fat-tree, torus, dragonfly, xml)");
  }
  return StarSpec{};
}

// The topology's node section, if it can have one.
const std::optional<NodeSpec>* node_of(const Topology& topology) {
  return std::visit(
      [](const auto& t) -> const std::optional<NodeSpec>* {
        if constexpr (requires { t.node; }) {
          return &t.node;
        } else {
          return nullptr;
        }
      },
      topology);
}

}  // namespace

unsigned PlatformSpec::gpus_per_node() const {
  const auto* node = node_of(topology);
  return node != nullptr && node->has_value() ? (*node)->gpus : 1;
}

bool PlatformSpec::nvlink_sharp() const {
  const auto* node = node_of(topology);
  return node != nullptr && node->has_value() && (*node)->nvlink_sharp;
}

bool PlatformSpec::network_sharp() const {
  const auto* tree = std::get_if<FatTreeSpec>(&topology);
  return tree != nullptr && tree->sharp;
}

unsigned PlatformSpec::host_count() const {
  struct Visitor {
    unsigned operator()(const StarSpec& s) const { return s.hosts; }
    unsigned operator()(const FatTreeSpec& s) const {
      return static_cast<unsigned>(product(s.down));
    }
    unsigned operator()(const TorusSpec& s) const { return static_cast<unsigned>(product(s.dims)); }
    unsigned operator()(const XmlSpec&) const { return 0; }
    unsigned operator()(const DragonflySpec& s) const {
      return s.groups * s.chassis * s.routers * s.nodes;
    }
  };
  return std::visit(Visitor{}, topology) * gpus_per_node();
}

std::string PlatformSpec::topology_name() const {
  constexpr const char* kNames[] = {"star", "fat-tree", "torus", "xml", "dragonfly"};
  return kNames[topology.index()];
}

PlatformSpec read_platform_spec(const std::string& path) {
  std::string lower = path;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::string text;
  try {
    text = parsing::read_input_file(path, "platform file");
  } catch (const parsing::InputFileError& e) {
    throw PlatformError(e.what());
  }
  if (lower.ends_with(".xml")) {
    return PlatformSpec{.file = path, .topology = XmlSpec{.path = path}};
  }
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {  // parse_error, or out_of_range for a number like 1e400
    throw PlatformError(path + ": " + e.what());
  }
  std::vector<std::string> problems;
  JsonFields f(doc, "", problems);
  PlatformSpec spec{.file = path, .topology = read_topology(f, path)};
  if (problems.empty()) {  // a topology that did not read leaves nothing to check against
    spec.perturbations = read_perturbations(f, spec.topology, spec.host_count());
  }
  if (!problems.empty()) {
    std::string message;
    for (const std::string& p : problems) {
      message += (message.empty() ? "" : "\n") + path + ": " + p;
    }
    throw PlatformError(message);
  }
  return spec;
}

}  // namespace dtsim::platforms
