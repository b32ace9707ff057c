#include "sim/cli/sweep_results.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "sim/cli/output_flags.h"
#include "sim/cli/sweep_csv.h"
#include "sim/config_error.h"

#include <fcntl.h>
#include <unistd.h>

namespace dtsim::sim {

namespace fs = std::filesystem;

std::string read_whole_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

PointRow point_row(const SweepPoint& point, PointEnd end, const std::string& report_path,
                   const std::string& stderr_path) {
  if (end.exited && end.code == 0) {
    try {
      const auto report = nlohmann::ordered_json::parse(read_whole_file(report_path));
      return {sweep_csv_ok_row(point, report), true};
    } catch (const std::exception& e) {
      return {sweep_csv_failed_row(point, "failed (bad report)", e.what())};
    }
  }
  const std::string how = (end.exited ? "exit " : "signal ") + std::to_string(end.code);
  return {sweep_csv_failed_row(point, "failed (" + how + ")", read_whole_file(stderr_path))};
}

ResultsFile::ResultsFile(const std::string& path, const std::string& header,
                         const std::vector<SweepPoint>& points, bool resume)
    : path_(path) {
  const bool exists = fs::exists(path);
  if (exists && !resume) {
    throw ConfigError("--out " + path + ": the file exists (--resume continues it)");
  }
  if (exists) {
    const std::string text = read_whole_file(path);
    const ExistingResults existing = read_sweep_csv(text, path, header, points);
    done_ = existing.done;
    failed_ = existing.failed;
    if (existing.complete_length < text.size()) {  // a torn last line
      fs::resize_file(path, existing.complete_length);
    }
  }
  fd_ = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    throw ConfigError("--out " + path + ": cannot open for writing (" + std::strerror(errno) + ")");
  }
  if (!exists) {
    append(header);
  }
}

ResultsFile::~ResultsFile() {
  ::close(fd_);
}

void ResultsFile::append(const std::string& line) const {
  const ssize_t written = ::write(fd_, line.data(), line.size());
  if (written != static_cast<ssize_t>(line.size())) {
    const int error = written < 0 ? errno : ENOSPC;
    if (written > 0) {  // a torn line: --resume cuts it
      std::error_code ignored;
      fs::resize_file(path_, fs::file_size(path_, ignored) - static_cast<std::uintmax_t>(written),
                      ignored);
    }
    throw ConfigError("--out " + path_ + ": cannot write (" + std::strerror(error) + ")");
  }
}

void ResultsFile::sort() const {
  write_text("out", path_, sort_sweep_csv(read_whole_file(path_)));
}

}  // namespace dtsim::sim
