// Reading the "perturbations" section of a platform spec (platforms/FORMAT.md, "Perturbations").
#include <string>

#include "platforms/spec_fields.h"
#include "workloads/parsing/json_fields.h"
#include "workloads/parsing/units.h"

namespace dtsim::platforms {

using parsing::format_number;
using parsing::parse_size;

using nlohmann::json;
using parsing::JsonFields;

namespace {

// The array member `key` of `f` (nullptr if absent or not an array; the latter is a problem).
const json* array_member(JsonFields& f, const char* key) {
  const json* v = f.value(key, /*required=*/false);
  if (v != nullptr && !v->is_array()) {
    f.problem(key, "expected an array, got " + parsing::describe_json(*v));
    return nullptr;
  }
  return v;
}

// A number > 0 at `key`; 1 (and a problem) otherwise.
// A speed factor: 1e-6 (a million times slower) to 1e6 is more than any cluster shows, and the
// bound keeps products of several entries and the durations they scale finite.
double read_factor(JsonFields& f, const char* key) {
  auto v = f.number(key);
  const bool ok = v && *v >= 1e-6 && *v <= 1e6;
  if (v && !ok) {
    f.problem(key, "expected a number between 1e-06 and 1e+06, got " + format_number("%g", *v));
  }
  return ok ? *v : 1;
}

// A host index < hosts (hosts = 0: unknown before SimGrid loads an XML file).
std::optional<unsigned> read_host(JsonFields& f, const char* key, unsigned hosts) {
  auto v = f.unsigned_integer(key);
  if (v && hosts != 0 && *v >= hosts) {
    f.problem(key, "expected a host index below " + std::to_string(hosts) + ", got " +
                       std::to_string(*v));
    return std::nullopt;
  }
  return v ? std::optional<unsigned>(static_cast<unsigned>(*v)) : std::nullopt;
}

SlowLinks read_slow_links(JsonFields& f, const Topology& topology, unsigned hosts) {
  f.reject_unknown({"level", "link", "host", "bandwidth_factor"});
  SlowLinks s{.where = f.pointer()};
  if (int{f.has("level")} + int{f.has("link")} + int{f.has("host")} != 1) {
    f.problem("",
              "expected one of \"level\" (a fat-tree level), \"link\" (a SimGrid link name) "
              "or \"host\" (a host's own links)");
  } else if (f.has("host")) {
    if (std::holds_alternative<XmlSpec>(topology)) {
      f.problem("host", "not for an XML platform (name the links with \"link\")");
    } else {
      s.host = read_host(f, "host", hosts);
    }
  } else if (f.has("level")) {
    const auto* tree = std::get_if<FatTreeSpec>(&topology);
    auto level = f.unsigned_integer("level");
    if (tree == nullptr) {
      f.problem("level", "only a fat-tree has levels (name the links with \"link\")");
    } else if (level && *level >= tree->levels) {
      f.problem("level", "expected a level between 0 (the hosts' links) and " +
                             std::to_string(tree->levels - 1) + ", got " + std::to_string(*level));
    } else if (level) {
      s.level = static_cast<unsigned>(*level);
    }
  } else {
    s.link = f.string("link").value_or("");
  }
  s.bandwidth_factor = read_factor(f, "bandwidth_factor");
  return s;
}

// An integer key in [0, limit); 0 and a problem otherwise ("what": the kind of index).
unsigned read_index(JsonFields& f, const char* key, std::uint64_t limit, const std::string& what) {
  auto v = f.unsigned_integer(key, /*required=*/std::string(key) != "parallel");
  if (v && *v >= limit) {
    f.problem(key, "expected " + what + " below " + std::to_string(limit) + ", got " +
                       std::to_string(*v));
    return static_cast<unsigned>(limit);  // out of range: callers stop there
  }
  return static_cast<unsigned>(v.value_or(0));
}

FailedLink read_failed_link(JsonFields& f, const Topology& topology) {
  f.reject_unknown({"level", "lower", "parent", "parallel"});
  FailedLink l{.where = f.pointer()};
  const auto* tree = std::get_if<FatTreeSpec>(&topology);
  if (tree == nullptr || tree->node) {
    f.problem("",
              "only a fat-tree without \"node\" can route around a failed link (SimGrid "
              "3.32's other zones route statically: torus dimension order, dragonfly "
              "minimal, XML as written); use \"slow_links\" with a small "
              "\"bandwidth_factor\"");
    return l;
  }
  l.level = read_index(f, "level", tree->levels, "a level (0: the hosts' links)");
  if (l.level >= tree->levels) {
    return l;
  }
  // Nodes at level L: prod(up[0..L-1]) x prod(down[L..h-1]).
  double nodes = 1;
  for (std::size_t i = 0; i < tree->levels; ++i) {
    nodes *= i < l.level ? tree->up[i] : tree->down[i];
  }
  l.lower = read_index(f, "lower", static_cast<std::uint64_t>(nodes), "a node index of the level");
  l.parent = read_index(f, "parent", tree->up[l.level], "a parent index (up[level])");
  l.parallel = read_index(f, "parallel", tree->parallel[l.level], "a link index (parallel[level])");
  return l;
}

SlowGpu read_slow_gpu(JsonFields& f, unsigned hosts) {
  f.reject_unknown({"host", "rank", "compute_factor"});
  SlowGpu s{.where = f.pointer()};
  if (f.has("host") == f.has("rank")) {
    f.problem("", "expected one of \"host\" (a host index) or \"rank\"");
  } else if (f.has("host")) {
    s.host = read_host(f, "host", hosts);
  } else if (auto rank = f.unsigned_integer("rank")) {
    s.rank = static_cast<unsigned>(std::min<std::uint64_t>(*rank, 1u << 30));
  }
  s.compute_factor = read_factor(f, "compute_factor");
  return s;
}

BackgroundFlow read_background(JsonFields& f, unsigned hosts) {
  f.reject_unknown({"from", "to", "rate", "bytes", "period"});
  BackgroundFlow b{.where = f.pointer()};
  b.from = read_host(f, "from", hosts).value_or(0);
  b.to = read_host(f, "to", hosts).value_or(0);
  if (f.has("from") && f.has("to") && b.from == b.to) {
    f.problem("to", "expected a host other than \"from\" (" + std::to_string(b.from) + ")");
  }
  if (f.has("rate") == (f.has("bytes") || f.has("period"))) {
    f.problem("",
              "expected \"rate\" (a constant flow) or \"bytes\" and \"period\" (a "
              "repeated transfer)");
  } else if (f.has("rate")) {
    b.bytes_per_sec = read_bandwidth(f, "rate");
  } else {
    if (auto text = f.string("bytes")) {
      auto bytes = parse_size(*text);
      if (!bytes || *bytes == 0) {
        f.problem("bytes", "expected a size > 0 such as \"1MB\" or \"4MiB\", got \"" +
                               parsing::printable(*text) + "\"");
      }
      b.bytes = bytes.value_or(0);
    }
    b.period_sec = read_latency(f, "period");
    if (f.has("period") && !(b.period_sec > 0) && f.value("period")->is_string()) {
      f.problem("period", "expected a duration > 0 such as \"10ms\"");
    }
  }
  return b;
}

// Calls read(child fields) for each object of the array member `key`.
template <typename Read>
void for_each_entry(JsonFields& f, const char* key, Read read) {
  const json* entries = array_member(f, key);
  if (entries == nullptr) {
    return;
  }
  for (std::size_t i = 0; i < entries->size(); ++i) {
    JsonFields entry = f.child((*entries)[i], std::string(key) + "/" + std::to_string(i));
    if (entry.is_object()) {
      read(entry);
    }
  }
}

}  // namespace

Perturbations read_perturbations(JsonFields& parent, const Topology& topology, unsigned hosts) {
  Perturbations p;
  const json* doc = parent.value("perturbations", /*required=*/false);
  if (doc == nullptr) {
    return p;
  }
  JsonFields f = parent.child(*doc, "perturbations");
  f.reject_unknown({"slow_links", "failed_links", "slow_gpus", "background"});
  for_each_entry(f, "slow_links", [&](JsonFields& e) {
    p.slow_links.push_back(read_slow_links(e, topology, hosts));
  });
  for_each_entry(f, "failed_links",
                 [&](JsonFields& e) { p.failed_links.push_back(read_failed_link(e, topology)); });
  for_each_entry(f, "slow_gpus",
                 [&](JsonFields& e) { p.slow_gpus.push_back(read_slow_gpu(e, hosts)); });
  for_each_entry(f, "background",
                 [&](JsonFields& e) { p.background.push_back(read_background(e, hosts)); });
  return p;
}

}  // namespace dtsim::platforms
