#include "sim/cli/collective_sweep.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "sim/cli/child_runs.h"
#include "sim/cli/output_flags.h"
#include "sim/cli/run_flags.h"
#include "sim/cli/sweep_results.h"
#include "sim/config_error.h"
#include "workloads/parsing/units.h"

#include <stdlib.h>

namespace dtsim::sim {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr std::size_t kMaxSweepPoints = 1000;

// Removes every `--flag V` and `--flag=V` from `args`; returns the values, in order.
std::vector<std::string> take(std::vector<std::string>& args, const std::string& flag) {
  std::vector<std::string> values, rest;
  const std::string dashed = "--" + flag;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == dashed) {
      if (i + 1 >= args.size()) {
        throw ConfigError(dashed + ": expected a value");
      }
      values.push_back(args[++i]);
    } else if (args[i].starts_with(dashed + "=")) {
      values.push_back(args[i].substr(dashed.size() + 1));
    } else {
      rest.push_back(args[i]);
    }
  }
  args = std::move(rest);
  return values;
}

// The one value of --flag, or `otherwise`.
std::string single(std::vector<std::string>& args, const std::string& flag,
                   const std::string& otherwise) {
  const auto values = take(args, flag);
  if (values.size() > 1) {
    throw ConfigError("--" + flag + ": given " + std::to_string(values.size()) + " times");
  }
  return values.empty() ? otherwise : values.front();
}

// MIN..MAX by `factor` (nccl-tests' -b, -e, -f), each size at least one more than the last.
std::vector<std::uint64_t> sizes(const std::string& bytes, double factor) {
  const std::size_t dots = bytes.find("..");
  const std::uint64_t min_bytes = parse_size_flag("bytes", bytes.substr(0, dots));
  const std::uint64_t max_bytes =
      dots == std::string::npos ? min_bytes : parse_size_flag("bytes", bytes.substr(dots + 2));
  if (max_bytes < min_bytes) {
    throw ConfigError("--bytes " + bytes + ": the largest size is below the smallest");
  }
  std::vector<std::uint64_t> out;
  for (double s = static_cast<double>(min_bytes); s <= static_cast<double>(max_bytes);) {
    out.push_back(static_cast<std::uint64_t>(s));
    if (out.size() > kMaxSweepPoints) {
      throw ConfigError("--bytes " + bytes + ": more than " + std::to_string(kMaxSweepPoints) +
                        " sizes (use a larger --step-factor)");
    }
    s = std::max(std::floor(s * factor), s + 1);
  }
  return out;
}

struct Point {
  std::uint64_t bytes;
  std::string algorithm;
  json report;
};

std::string column(const std::string& text, int width) {
  return text.size() >= static_cast<std::size_t>(width)
             ? text + " "
             : std::string(static_cast<std::size_t>(width) - text.size(), ' ') + text;
}

// nccl-tests' columns, one row per size, each algorithm's time and bandwidths side by side.
std::string table(const std::vector<Point>& points, const std::vector<std::string>& algorithms) {
  std::ostringstream out;
  out << "#" << column("", 34);
  for (const std::string& a : algorithms) {
    out << column(a, 36);
  }
  out << "\n#" << column("size(B)", 14) << column("count", 12) << column("type", 8);
  for (std::size_t i = 0; i < algorithms.size(); ++i) {
    out << column("time(us)", 12) << column("algbw(GB/s)", 12) << column("busbw(GB/s)", 12);
  }
  out << "\n";
  for (std::size_t i = 0; i < points.size(); i += algorithms.size()) {
    out << " " << column(std::to_string(points[i].bytes), 14)
        << column(std::to_string(points[i].bytes / 4), 12) << column("float", 8);
    for (std::size_t k = 0; k < algorithms.size(); ++k) {
      const json& r = points[i + k].report;
      out << column(parsing::format_number("%.2f", r["time_sec"].get<double>() * 1e6), 12)
          << column(parsing::format_number(
                        "%.2f", r["algorithm_bandwidth_bytes_per_sec"].get<double>() / 1e9),
                    12)
          << column(parsing::format_number("%.2f",
                                           r["bus_bandwidth_bytes_per_sec"].get<double>() / 1e9),
                    12);
    }
    out << "\n";
  }
  return out.str();
}

std::string csv(const std::vector<Point>& points) {
  std::string out =
      "bytes,count,type,algorithm,chosen,time_sec,algorithm_bandwidth_bytes_per_sec,"
      "bus_bandwidth_bytes_per_sec,transfers\n";
  for (const Point& p : points) {
    const json& r = p.report;
    const std::string chosen =
        r.contains("auto") ? r["auto"]["chosen"].get<std::string>() : p.algorithm;
    out += std::to_string(p.bytes) + "," + std::to_string(p.bytes / 4) + ",float," + p.algorithm +
           "," + chosen + "," + parsing::format_number("%.9g", r["time_sec"].get<double>()) + "," +
           parsing::format_number("%.9g", r["algorithm_bandwidth_bytes_per_sec"].get<double>()) +
           "," + parsing::format_number("%.9g", r["bus_bandwidth_bytes_per_sec"].get<double>()) +
           "," + std::to_string(r["transfers"].get<std::uint64_t>()) + "\n";
  }
  return out;
}

}  // namespace

bool is_collective_sweep(const std::vector<std::string>& args) {
  int algorithms = 0;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--algorithm" || a.starts_with("--algorithm=")) {
      ++algorithms;
    }
    for (const char* flag : {"--step-factor", "--csv", "--jobs"}) {
      if (a == flag || a.starts_with(std::string(flag) + "=")) {
        return true;
      }
    }
    const bool bytes_flag = a == "--bytes" && i + 1 < args.size();
    const std::string value = bytes_flag                  ? args[i + 1]
                              : a.starts_with("--bytes=") ? a.substr(8)
                                                          : "";
    if (value.find("..") != std::string::npos) {
      return true;
    }
  }
  return algorithms > 1;
}

namespace {

// A sweep's own flags, taken out of the arguments its points repeat.
struct SweepFlags {
  std::vector<std::uint64_t> sizes;
  std::vector<std::string> algorithms;
  std::string csv_path;
  std::string report_path;
  int jobs = 1;
};

// Takes the sweep's flags out of `args` and checks them (and that no one-run output is asked).
SweepFlags take_sweep_flags(std::vector<std::string>& args) {
  const std::string bytes = single(args, "bytes", "");
  if (bytes.empty()) {
    throw ConfigError("--bytes: expected a size or a range MIN..MAX");
  }
  const std::string factor_text = single(args, "step-factor", "2");
  char* end = nullptr;
  const double factor = std::strtod(factor_text.c_str(), &end);
  if (end != factor_text.c_str() + factor_text.size() || !(factor > 1) || !std::isfinite(factor)) {
    throw ConfigError("--step-factor " + factor_text + ": expected a number > 1");
  }
  SweepFlags f;
  f.algorithms = take(args, "algorithm");
  if (f.algorithms.empty()) {
    f.algorithms.push_back("ring");
  }
  f.csv_path = single(args, "csv", "");
  f.report_path = single(args, "report", "");
  const std::string jobs_text = single(args, "jobs", "0");
  const long jobs_flag = std::strtol(jobs_text.c_str(), nullptr, 10);
  if (jobs_flag < 0 || jobs_flag > 256 ||
      jobs_text.find_first_not_of("0123456789") != std::string::npos) {
    throw ConfigError("--jobs " + jobs_text + ": expected an integer in [1, 256] (0: every core)");
  }
  for (const char* one_run_output :
       {"dump-algorithm", "timeline", "link-report", "dump-graph", "dump-chakra"}) {
    if (!take(args, one_run_output).empty()) {
      throw ConfigError("--" + std::string(one_run_output) +
                        ": writes one run's output; not with a sweep (--csv, --report)");
    }
  }
  check_output_path("csv", f.csv_path);
  check_output_path("report", f.report_path);
  f.sizes = sizes(bytes, factor);
  f.jobs = jobs_flag > 0 ? static_cast<int>(jobs_flag)
                         : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return f;
}

// Runs every (size, algorithm) point as a child `dtsim collective` with `args`, and reads their
// reports into the returned points; none if a point failed (its error is printed).
std::optional<std::vector<Point>> run_points(const std::vector<std::string>& args,
                                             const SweepFlags& f) {
  std::string dir_template = (fs::temp_directory_path() / "dtsim-sweep-XXXXXX").string();
  if (mkdtemp(dir_template.data()) == nullptr) {
    throw std::runtime_error("cannot create a temporary directory for the sweep's points");
  }
  const fs::path dir = dir_template;
  std::vector<Point> points;
  std::vector<ChildRun> children;
  for (std::uint64_t size : f.sizes) {
    for (const std::string& algorithm : f.algorithms) {
      const std::string name = std::to_string(points.size());
      std::vector<std::string> child{"collective"};
      child.insert(child.end(), args.begin(), args.end());
      child.insert(child.end(), {"--bytes", std::to_string(size), "--algorithm", algorithm,
                                 "--report", (dir / (name + ".json")).string()});
      children.push_back({.args = std::move(child), .stderr_path = dir / (name + ".err")});
      points.push_back({.bytes = size, .algorithm = algorithm});
    }
  }
  const std::vector<ChildStatus> status = run_children(children, f.jobs);
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (status[i] != ChildStatus::kOk) {
      std::cerr << "dtsim collective: the sweep's point --bytes " << points[i].bytes
                << " --algorithm " << points[i].algorithm << " failed:\n"
                << read_whole_file(children[i].stderr_path);
      fs::remove_all(dir);
      return std::nullopt;
    }
    points[i].report = json::parse(read_whole_file(dir / (std::to_string(i) + ".json")));
  }
  fs::remove_all(dir);
  return points;
}

}  // namespace

int run_collective_sweep(const std::vector<std::string>& original) {
  std::vector<std::string> args = original;
  const SweepFlags f = take_sweep_flags(args);
  const std::optional<std::vector<Point>> points = run_points(args, f);
  if (!points) {
    return 2;
  }
  std::cout << table(*points, f.algorithms);
  if (!f.csv_path.empty()) {
    write_text("csv", f.csv_path, csv(*points));
  }
  if (!f.report_path.empty()) {
    json all = json::array();
    for (const Point& p : *points) {
      all.push_back(p.report);
    }
    write_text("report", f.report_path, json{{"points", all}}.dump(2) + "\n");
  }
  return 0;
}

}  // namespace dtsim::sim
