#include "platforms/describe.h"

#include <cstdio>

#include <simgrid/s4u.hpp>

#include "platforms/build_platform.h"
#include "platforms/platform_spec.h"
#include "sim/run/simulation.h"

namespace dtsim::sim {

namespace sg4 = simgrid::s4u;
using nlohmann::ordered_json;

ordered_json describe_platform(const std::string& path) {
  const platforms::PlatformSpec spec = platforms::read_platform_spec(path);
  int argc = 1;
  std::string name = "dtsim";
  char* argv[] = {name.data(), nullptr};
  sg4::Engine engine(&argc, argv);
  const platforms::Platform platform = platforms::build_platform(spec);
  ordered_json d{{"file", spec.file},
                 {"topology", spec.topology_name()},
                 {"hosts", platform.hosts.size()},
                 {"simgrid_links", engine.get_link_count()}};
  if (!std::holds_alternative<platforms::XmlSpec>(spec.topology)) {
    const platforms::PlatformSummary s = platforms::summarize(spec);
    d["gpus_per_node"] = s.gpus_per_node;
    d["fabric_endpoints"] = s.endpoints;
    d["nvlink_sharp"] = spec.nvlink_sharp();
    ordered_json levels = ordered_json::array();
    for (const auto& level : s.levels) {
      levels.push_back({{"between", level.name},
                        {"links", level.links},
                        {"bandwidth_bytes_per_sec", level.bandwidth_bytes_per_sec},
                        {"oversubscription", level.oversubscription}});
    }
    d["levels"] = std::move(levels);
    d["bisection_bytes_per_sec"] = s.bisection_bytes_per_sec;
  }
  const platforms::Perturbations& p = spec.perturbations;
  if (p != platforms::Perturbations{}) {
    d["perturbations"] = {{"slow_links", p.slow_links.size()},
                          {"failed_links", p.failed_links.size()},
                          {"slow_gpus", p.slow_gpus.size()},
                          {"background", p.background.size()}};
  }
  return d;
}

namespace {

// "  perturbations ...: 1 slow-link entries, ..." for a description that has them, else "".
std::string perturbations_line(const ordered_json& d) {
  if (!d.contains("perturbations")) {
    return "";
  }
  const auto& p = d["perturbations"];
  return "  perturbations (not counted above): " +
         std::to_string(p["slow_links"].get<std::size_t>()) + " slow-link entries, " +
         std::to_string(p["failed_links"].get<std::size_t>()) + " failed links, " +
         std::to_string(p["slow_gpus"].get<std::size_t>()) + " slow GPUs, " +
         std::to_string(p["background"].get<std::size_t>()) + " background flows\n";
}

}  // namespace

std::string platform_summary(const ordered_json& d) {
  std::string s = "platform " + d["file"].get<std::string>() + ": " +
                  d["topology"].get<std::string>() + ", " +
                  std::to_string(d["hosts"].get<std::size_t>()) + " hosts, " +
                  std::to_string(d["simgrid_links"].get<std::size_t>()) + " SimGrid links\n";
  if (!d.contains("levels")) {
    return s + "  (an XML platform: levels and bisection are not derived)\n" +
           perturbations_line(d);
  }
  if (d["gpus_per_node"].get<unsigned>() > 1) {
    s += "  " + std::to_string(d["fabric_endpoints"].get<unsigned long>()) + " nodes of " +
         std::to_string(d["gpus_per_node"].get<unsigned>()) + " GPUs" +
         (d["nvlink_sharp"].get<bool>() ? ", NVSwitch reducing in the network (nvls)" : "") + "\n";
  }
  for (const auto& level : d["levels"]) {
    char bandwidth[48];
    std::snprintf(bandwidth, sizeof bandwidth, " of %.4g GB/s",
                  level["bandwidth_bytes_per_sec"].get<double>() / 1e9);
    s += "  " + level["between"].get<std::string>() + ": " +
         std::to_string(level["links"].get<unsigned long>()) + " links" + bandwidth;
    if (const double ratio = level["oversubscription"].get<double>(); ratio > 0) {
      char text[48];
      std::snprintf(text, sizeof text, ", switches above %.3g:1 (down:up)", ratio);
      s += text;
    }
    s += "\n";
  }
  char bisection[64];
  std::snprintf(bisection, sizeof bisection, "%.4g GB/s",
                d["bisection_bytes_per_sec"].get<double>() / 1e9);
  return s + "  bisection bandwidth " + bisection + " per direction\n" + perturbations_line(d);
}

}  // namespace dtsim::sim
