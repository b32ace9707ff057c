#include "sim/cli/sweep_csv.h"

#include <algorithm>
#include <sstream>
#include <utility>

#include "sim/config_error.h"

namespace dtsim::sim {

namespace {

constexpr const char* kResultColumns[] = {"iteration_time_sec", "compute_sec", "exposed_comm_sec",
                                          "scaling_efficiency", "samples_per_sec_per_device"};

std::string field(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) {
    return text;
  }
  std::string quoted = "\"";
  for (char c : text) {
    quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  }
  return quoted + "\"";
}

// "point,<vary values>," of a point's line.
std::string row_prefix(const SweepPoint& point) {
  std::string row = std::to_string(point.index) + ",";
  for (const std::string& v : point.vary) {
    row += field(v) + ",";
  }
  return row;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    lines.push_back(line + "\n");
  }
  return lines;
}

// The point index a line starts with, or -1.
int index_of(const std::string& line) {
  int index = 0;
  std::size_t i = 0;
  for (; i < line.size() && line[i] >= '0' && line[i] <= '9'; ++i) {
    index = index * 10 + (line[i] - '0');
  }
  return i > 0 && i < line.size() && line[i] == ',' ? index : -1;
}

}  // namespace

std::string sweep_csv_header(const SweepSpec& spec) {
  std::string header = "point,";
  for (const auto& [name, values] : spec.vary) {
    header += field(name) + ",";
  }
  header += "status";
  for (const char* c : kResultColumns) {
    header += std::string(",") + c;
  }
  return header + ",limiter,limiter_level,error\n";
}

std::string sweep_csv_ok_row(const SweepPoint& point, const nlohmann::ordered_json& report) {
  const auto& result = report.at("result");
  std::string row = row_prefix(point) + "ok";
  for (const char* c : kResultColumns) {  // a --graph report has no efficiency, samples/s
    row += "," + (result.contains(c) ? result.at(c).dump() : std::string());
  }
  const nlohmann::ordered_json limiter = result.value("limiter", nlohmann::ordered_json::object());
  row += "," + field(limiter.value("kind", std::string())) + "," +
         field(limiter.value("level", std::string()));
  return row + ",\n";
}

std::string sweep_csv_failed_row(const SweepPoint& point, const std::string& status,
                                 const std::string& error) {
  std::string joined;
  std::istringstream lines(error);
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty()) {
      joined += (joined.empty() ? "" : "; ") + line;
    }
  }
  std::string row = row_prefix(point) + field(status);
  for (std::size_t i = 0; i < std::size(kResultColumns) + 2; ++i) {
    row += ",";
  }
  return row + "," + field(joined) + "\n";
}

ExistingResults read_sweep_csv(const std::string& text, const std::string& path,
                               const std::string& header, const std::vector<SweepPoint>& points) {
  ExistingResults r;
  r.complete_length = text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1;
  const std::vector<std::string> lines = lines_of(text.substr(0, r.complete_length));
  if (lines.empty() || lines[0] != header) {
    throw ConfigError("--resume: " + path +
                      " does not start with this sweep's header (the results of another sweep?)");
  }
  for (std::size_t n = 1; n < lines.size(); ++n) {
    const int index = index_of(lines[n]);
    const std::string prefix = index < 0 || index >= static_cast<int>(points.size())
                                   ? std::string()
                                   : row_prefix(points[static_cast<std::size_t>(index)]);
    if (prefix.empty() || lines[n].rfind(prefix, 0) != 0) {
      throw ConfigError("--resume: " + path + " line " + std::to_string(n + 1) +
                        " is not a point of this sweep");
    }
    r.done.insert(index);
    if (lines[n].compare(prefix.size(), 3, "ok,") != 0) {
      r.failed.insert(index);
    }
  }
  return r;
}

std::string sort_sweep_csv(const std::string& text) {
  std::vector<std::string> lines = lines_of(text);
  if (lines.empty()) {
    return text;
  }
  std::stable_sort(lines.begin() + 1, lines.end(), [](const std::string& a, const std::string& b) {
    return index_of(a) < index_of(b);
  });
  std::string sorted;
  for (const std::string& l : lines) {
    sorted += l;
  }
  return sorted;
}

}  // namespace dtsim::sim
