#include "platforms/spec_fields.h"

#include <algorithm>
#include <tuple>

#include "workloads/parsing/units.h"

namespace dtsim::platforms {

using parsing::format_number;
using parsing::parse_bandwidth;
using parsing::parse_duration;

using nlohmann::json;
using parsing::JsonFields;

double product(const std::vector<unsigned>& values) {
  double p = 1;
  for (unsigned v : values) {
    p *= v;
  }
  return p;
}

double bandwidth_of(JsonFields& f, const std::string& key, const json& value) {
  if (!value.is_string()) {
    f.problem(key, "expected a string, got " + parsing::describe_json(value));
    return 0;
  }
  const auto text = value.get<std::string>();
  auto bw = parse_bandwidth(text);
  if (!bw || *bw <= 0) {
    f.problem(key,
              "expected a bandwidth > 0 such as \"25GBps\" (bytes/s) or \"200Gbps\" "
              "(bits/s), got \"" +
                  parsing::printable(text) + "\"");
    return 0;
  }
  return *bw;
}

double latency_of(JsonFields& f, const std::string& key, const json& value) {
  if (!value.is_string()) {
    f.problem(key, "expected a string, got " + parsing::describe_json(value));
    return 0;
  }
  const auto text = value.get<std::string>();
  auto lat = parse_duration(text);
  if (!lat) {
    f.problem(key, "expected a latency >= 0 such as \"1us\" (s, ms, us, ns, ps), got \"" +
                       parsing::printable(text) + "\"");
    return 0;
  }
  if (*lat > parsing::kMaxDurationSec) {
    f.problem(key, "expected a latency of at most 1e9 s, got \"" + parsing::printable(text) + "\"");
    return 0;
  }
  return *lat;
}

double read_bandwidth(JsonFields& f, const char* key) {
  const json* v = f.value(key);
  return v == nullptr ? 0 : bandwidth_of(f, key, *v);
}

double read_latency(JsonFields& f, const char* key) {
  const json* v = f.value(key);
  return v == nullptr ? 0 : latency_of(f, key, *v);
}

std::vector<unsigned> read_positive_list(JsonFields& f, const char* key, std::size_t length) {
  std::vector<unsigned> out;
  auto values = f.unsigned_array(key);
  if (!values) {
    return out;
  }
  if (length != 0 && values->size() != length) {
    f.problem(key, "expected " + std::to_string(length) + " entries (one per level), got " +
                       std::to_string(values->size()));
  } else if (values->empty()) {
    f.problem(key, "expected at least one entry");
  }
  for (std::size_t i = 0; i < values->size(); ++i) {
    if ((*values)[i] == 0 || (*values)[i] > kMaxHosts) {
      f.problem(std::string(key) + "/" + std::to_string(i),
                "expected an integer between 1 and 16777216, got " + std::to_string((*values)[i]));
    }
    out.push_back(static_cast<unsigned>(std::min<std::uint64_t>((*values)[i], kMaxHosts)));
  }
  return out;
}

void check_host_total(JsonFields& f, const char* key, const std::vector<unsigned>& factors) {
  if (product(factors) > kMaxHosts) {
    f.problem(key, "describes more than 16777216 hosts");
  }
}

namespace {

// Records a problem at `switches_key` or `links_key` if SimGrid would build more than kMaxHosts
// switches or links for `tree` (it would run out of memory first). With levels 1..L, level l holds
// down[l+1] ... down[L] x up[1] ... up[l] nodes (level 0: the hosts), and each node of level l-1
// has up[l] x parallel[l] links to level l.
void check_fat_tree_size(JsonFields& f, const char* switches_key, const char* links_key,
                         const FatTreeSpec& tree) {
  const std::size_t levels = tree.down.size();
  if (tree.up.size() != levels || tree.parallel.size() != levels) {
    return;  // a list that did not read is reported already
  }
  double switches = 0;
  double links = 0;
  for (std::size_t l = 1; l <= levels; ++l) {
    double below = 1;  // nodes of level l-1
    double at = 1;     // nodes of level l
    for (std::size_t i = 0; i < levels; ++i) {
      below *= i >= l - 1 ? tree.down[i] : tree.up[i];
      at *= i >= l ? tree.down[i] : tree.up[i];
    }
    switches += at;
    links += below * tree.up[l - 1] * tree.parallel[l - 1];
  }
  if (switches > kMaxHosts) {
    f.problem(switches_key,
              "describes " + format_number("%.4g", switches) + " switches (at most 16777216)");
  }
  if (links > kMaxHosts) {
    f.problem(links_key, "describes " + format_number("%.4g", links) + " links (at most 16777216)");
  }
}

// An integer key in [low, high]; nothing (and a problem) otherwise or if missing.
std::optional<unsigned> read_bounded(JsonFields& f, const char* key, unsigned low, unsigned high) {
  auto v = f.unsigned_integer(key);
  if (v && (*v < low || *v > high)) {
    f.problem(key, "expected an integer between " + std::to_string(low) + " and " +
                       std::to_string(high) + ", got " + std::to_string(*v));
    return std::nullopt;
  }
  return v ? std::optional<unsigned>(static_cast<unsigned>(*v)) : std::nullopt;
}

// levels, down, up, parallel as SimGrid's FatTreeParams.
void read_explicit_tree(JsonFields& f, FatTreeSpec& tree) {
  if (f.has("taper")) {
    f.problem("taper",
              "only with \"k\" and \"n\" (with explicit lists, taper through \"up\" and "
              "\"parallel\")");
  }
  const std::size_t n = read_bounded(f, "levels", 1, 8).value_or(0);
  tree.levels = static_cast<unsigned>(n);
  tree.down = read_positive_list(f, "down", n);
  tree.up = read_positive_list(f, "up", n);
  tree.parallel = read_positive_list(f, "parallel", n);
  check_host_total(f, "down", tree.down);
  check_fat_tree_size(f, "up", "parallel", tree);
}

// The k-ary n-tree: n switch levels of k-port-down, k-port-up switches (k^n hosts, k^(n-1)
// switches per level) is PGFT(n; k..k; 1,k..k; 1..1). "taper"[l-1] = t divides the up links of
// level-l switches by t (up[l] = k / t): a t:1 oversubscription there.
void read_k_ary_tree(JsonFields& f, FatTreeSpec& tree) {
  for (const char* key : {"levels", "down", "up", "parallel"}) {
    if (f.has(key)) {
      f.problem(key,
                "not allowed with \"k\" and \"n\" (a k-ary n-tree sets levels, down, up "
                "and parallel)");
    }
  }
  const auto k = read_bounded(f, "k", 1, 4096);
  const auto n = read_bounded(f, "n", 1, 8);
  if (!k || !n) {
    tree.levels = 0;
    return;
  }
  tree.levels = *n;
  tree.down.assign(*n, *k);
  tree.up.assign(*n, *k);
  tree.up[0] = 1;
  tree.parallel.assign(*n, 1);
  check_host_total(f, "k", tree.down);
  if (!f.has("taper")) {
    return;
  }
  const auto taper = f.unsigned_array("taper");
  if (!taper) {
    return;
  }
  if (taper->size() != *n - 1) {
    f.problem("taper", "expected " + std::to_string(*n - 1) +
                           " entries (one per switch level below the top), got " +
                           std::to_string(taper->size()));
    return;
  }
  for (std::size_t l = 0; l < taper->size(); ++l) {
    const std::uint64_t t = (*taper)[l];
    if (t == 0 || *k % t != 0) {
      f.problem("taper/" + std::to_string(l), "expected a divisor of k = " + std::to_string(*k) +
                                                  " (SimGrid needs a whole number of up links), "
                                                  "got " +
                                                  std::to_string(t));
      continue;
    }
    tree.up[l + 1] = static_cast<unsigned>(*k / t);
  }
}

// "link_bandwidth" and "link_latency": one string for every level, or an array of one per level
// (entry i: the links between level i and i+1; entry 0: the hosts' links).
void read_tree_links(JsonFields& f, FatTreeSpec& tree) {
  const json* bw = f.value("link_bandwidth");
  const json* lat = f.value("link_latency");
  auto one = [&f](const std::string& key, const json& v, bool bandwidth) {
    return bandwidth ? bandwidth_of(f, key, v) : latency_of(f, key, v);
  };
  if (!(bw != nullptr && bw->is_array()) && !(lat != nullptr && lat->is_array())) {
    tree.link = {.bandwidth_bytes_per_sec = bw != nullptr ? one("link_bandwidth", *bw, true) : 0,
                 .latency_sec = lat != nullptr ? one("link_latency", *lat, false) : 0};
    return;
  }
  const std::size_t levels = tree.levels;
  auto per_level = [&](const std::string& key, const json* v, bool bandwidth) {
    std::vector<double> out(levels, 0);
    if (v == nullptr) {
      return out;
    }
    if (!v->is_array()) {
      std::fill(out.begin(), out.end(), one(key, *v, bandwidth));
    } else if (v->size() != levels) {
      if (levels != 0) {
        f.problem(key, "expected " + std::to_string(levels) + " entries (one per level), got " +
                           std::to_string(v->size()));
      }
    } else {
      for (std::size_t i = 0; i < levels; ++i) {
        out[i] = one(key + "/" + std::to_string(i), (*v)[i], bandwidth);
      }
    }
    return out;
  };
  const std::vector<double> bws = per_level("link_bandwidth", bw, true);
  const std::vector<double> lats = per_level("link_latency", lat, false);
  for (std::size_t i = 0; i < levels; ++i) {
    tree.level_links.push_back({.bandwidth_bytes_per_sec = bws[i], .latency_sec = lats[i]});
  }
  tree.link = tree.level_links.empty() ? LinkSpec{} : tree.level_links[0];
}

}  // namespace

FatTreeSpec read_fat_tree(JsonFields& f) {
  f.reject_unknown({"topology", "levels", "down", "up", "parallel", "k", "n", "taper",
                    "link_bandwidth", "link_latency", "node", "sharp", "perturbations"});
  FatTreeSpec tree;
  if (f.has("k") || f.has("n")) {
    read_k_ary_tree(f, tree);
    check_fat_tree_size(f, "k", "k", tree);
  } else {
    read_explicit_tree(f, tree);
  }
  read_tree_links(f, tree);
  return tree;
}

namespace {

// "link_bandwidth" / "link_latency": a string for every link, or an object with one string per
// kind of link (kDragonflyLinkKinds).
void read_dragonfly_links(JsonFields& f, DragonflySpec& d) {
  const json* bw = f.value("link_bandwidth");
  const json* lat = f.value("link_latency");
  auto one = [&f](const std::string& key, const json& v, bool bandwidth) {
    return bandwidth ? bandwidth_of(f, key, v) : latency_of(f, key, v);
  };
  const bool per_kind = (bw != nullptr && bw->is_object()) || (lat != nullptr && lat->is_object());
  if (!per_kind) {
    d.link = {.bandwidth_bytes_per_sec = bw != nullptr ? one("link_bandwidth", *bw, true) : 0,
              .latency_sec = lat != nullptr ? one("link_latency", *lat, false) : 0};
    return;
  }
  auto per_kind_values = [&](const char* key, const json* v, bool bandwidth) {
    std::vector<double> out(std::size(kDragonflyLinkKinds), 0);
    if (v == nullptr) {
      return out;
    }
    if (!v->is_object()) {
      std::fill(out.begin(), out.end(), one(key, *v, bandwidth));
      return out;
    }
    JsonFields kinds = f.child(*v, key);
    kinds.reject_unknown({"local", "green", "black", "blue"});
    for (std::size_t i = 0; i < out.size(); ++i) {
      if (const json* item = kinds.value(kDragonflyLinkKinds[i])) {
        out[i] = one(std::string(key) + "/" + kDragonflyLinkKinds[i], *item, bandwidth);
      }
    }
    return out;
  };
  const std::vector<double> bws = per_kind_values("link_bandwidth", bw, true);
  const std::vector<double> lats = per_kind_values("link_latency", lat, false);
  for (std::size_t i = 0; i < bws.size(); ++i) {
    d.level_links.push_back({.bandwidth_bytes_per_sec = bws[i], .latency_sec = lats[i]});
  }
  d.link = d.level_links[0];
}

}  // namespace

DragonflySpec read_dragonfly(JsonFields& f) {
  f.reject_unknown({"topology", "groups", "chassis", "routers", "nodes", "blue_links",
                    "black_links", "green_links", "link_bandwidth", "link_latency", "node",
                    "perturbations"});
  DragonflySpec d;
  const unsigned max = 1 << 24;
  d.groups = read_bounded(f, "groups", 1, max).value_or(1);
  d.chassis = read_bounded(f, "chassis", 1, max).value_or(1);
  d.routers = read_bounded(f, "routers", 1, max).value_or(1);
  d.nodes = read_bounded(f, "nodes", 1, max).value_or(1);
  auto optional_count = [&f](const char* key) {
    return f.has(key) ? read_bounded(f, key, 1, 1024).value_or(1) : 1u;
  };
  d.blue_links = optional_count("blue_links");
  d.black_links = optional_count("black_links");
  d.green_links = optional_count("green_links");
  check_host_total(f, "nodes", {d.groups, d.chassis, d.routers, d.nodes});
  if (d.groups > d.routers) {
    // SimGrid attaches group g's link to group h at router h of g's first chassis, and routes
    // through it: more groups than routers per chassis would index past them.
    f.problem("groups", "expected at most \"routers\" (" + std::to_string(d.routers) +
                            ") groups: SimGrid's dragonfly attaches a group's link to group h at "
                            "its router h, got " +
                            std::to_string(d.groups));
  }
  // Routers of a chassis are all joined (green), routers at the same position of a group's
  // chassis too (black), and every pair of groups (blue); SimGrid builds each such link.
  const double groups = d.groups, chassis = d.chassis, routers = d.routers;
  const std::tuple<const char*, double, const char*> links[] = {
      {"routers", groups * chassis * routers * (routers - 1) / 2, "within chassis (green)"},
      {"chassis", groups * routers * chassis * (chassis - 1) / 2, "across chassis (black)"},
      {"groups", groups * (groups - 1) / 2, "between groups (blue)"}};
  for (const auto& [key, count, kind] : links) {
    if (count > kMaxHosts) {
      f.problem(key, "describes " + format_number("%.4g", count) + " links " + kind +
                         " (at most 16777216)");
    }
  }
  read_dragonfly_links(f, d);
  return d;
}

}  // namespace dtsim::platforms
