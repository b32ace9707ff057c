#include "sim/cli/sweep.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include <boost/program_options.hpp>

#include "sim/cli/child_runs.h"
#include "sim/cli/output_flags.h"
#include "sim/cli/sweep_csv.h"
#include "sim/cli/sweep_spec.h"
#include "sim/config_error.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace dtsim::sim {

namespace fs = std::filesystem;
namespace po = boost::program_options;

namespace {

constexpr unsigned kHelpColumns = 100;
constexpr const char* kSelf = "/proc/self/exe";

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A private temporary directory, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "dtsim-sweep-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) {
      throw std::runtime_error("cannot create a temporary directory in " +
                               fs::temp_directory_path().string());
    }
    path_ = pattern;
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  [[nodiscard]] const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// The results file: created with its header, or resumed; lines appended whole.
class ResultsFile {
 public:
  ResultsFile(const std::string& path, const std::string& header,
              const std::vector<SweepPoint>& points, bool resume)
      : path_(path) {
    const bool exists = fs::exists(path);
    if (exists && !resume) {
      throw ConfigError("--out " + path + ": the file exists (--resume continues it)");
    }
    if (exists) {
      const std::string text = slurp(path);
      const ExistingResults existing = read_sweep_csv(text, path, header, points);
      done_ = existing.done;
      if (existing.complete_length < text.size()) {  // a torn last line
        fs::resize_file(path, existing.complete_length);
      }
    }
    fd_ = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) {
      throw ConfigError("--out " + path + ": cannot open for writing (" + std::strerror(errno) +
                        ")");
    }
    if (!exists) {
      append(header);
    }
  }
  ResultsFile(const ResultsFile&) = delete;
  ResultsFile& operator=(const ResultsFile&) = delete;
  ~ResultsFile() { ::close(fd_); }

  [[nodiscard]] const std::set<int>& done() const { return done_; }

  // One write(): a line is in the file whole or not at all.
  void append(const std::string& line) const {
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

  // Rewrites the file sorted by point: a temporary file renamed over it.
  void sort() const { write_text("out", path_, sort_sweep_csv(slurp(path_))); }

 private:
  std::string path_;
  int fd_ = -1;
  std::set<int> done_;
};

// Redraws a one-line progress bar with an ETA on stderr (a line per point if not a terminal).
class Progress {
 public:
  Progress(std::size_t total, std::size_t already)
      : total_(total),
        done_(already),
        tty_(::isatty(STDERR_FILENO) != 0),
        start_(std::chrono::steady_clock::now()) {}

  void point_done(bool failed) {
    ++done_;
    ++ran_;
    failed_ += failed ? 1 : 0;
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    const double eta = elapsed / static_cast<double>(ran_) * static_cast<double>(total_ - done_);
    constexpr int kWidth = 30;
    const auto filled = static_cast<int>(kWidth * done_ / total_);
    char line[160];
    std::snprintf(line, sizeof line, "dtsim sweep: [%s%s] %zu/%zu points, %zu failed, ETA %d:%02d",
                  std::string(static_cast<std::size_t>(filled), '#').c_str(),
                  std::string(static_cast<std::size_t>(kWidth - filled), '.').c_str(), done_,
                  total_, failed_, static_cast<int>(eta) / 60, static_cast<int>(eta) % 60);
    std::cerr << (tty_ ? "\r" : "") << line << (tty_ && done_ < total_ ? "" : "\n") << std::flush;
  }

 private:
  std::size_t total_, done_, ran_ = 0, failed_ = 0;
  bool tty_;
  std::chrono::steady_clock::time_point start_;
};

// Starts `dtsim simulate` for `point`: report to dir/point-I.json, stderr to dir/point-I.err.
pid_t spawn(const SweepPoint& point, const fs::path& dir) {
  const std::string stem = (dir / ("point-" + std::to_string(point.index))).string();
  ChildRun child{.args = {"simulate"}, .stderr_path = stem + ".err"};
  child.args.insert(child.args.end(), point.args.begin(), point.args.end());
  child.args.insert(child.args.end(), {"--report", stem + ".json"});
  return spawn_child(child);
}

struct Finished {
  std::string row;  // the CSV line
  bool ok = false;
};

// The CSV line of a point whose process ended with `status`.
Finished finished(const SweepPoint& point, int status, const fs::path& dir) {
  const std::string stem = (dir / ("point-" + std::to_string(point.index))).string();
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    try {
      return {sweep_csv_ok_row(point, nlohmann::ordered_json::parse(slurp(stem + ".json"))), true};
    } catch (const std::exception& e) {
      return {sweep_csv_failed_row(point, "failed (bad report)", e.what())};
    }
  }
  const std::string how = WIFEXITED(status) ? "exit " + std::to_string(WEXITSTATUS(status))
                                            : "signal " + std::to_string(WTERMSIG(status));
  return {sweep_csv_failed_row(point, "failed (" + how + ")", slurp(stem + ".err"))};
}

// Runs the points not in `results` yet, `jobs` at a time.
void run_points(const std::vector<SweepPoint>& points, const ResultsFile& results, int jobs) {
  std::vector<const SweepPoint*> todo;
  for (const SweepPoint& p : points) {
    if (!results.done().contains(p.index)) {
      todo.push_back(&p);
    }
  }
  const TempDir dir;
  Progress progress(points.size(), points.size() - todo.size());
  std::map<pid_t, const SweepPoint*> running;
  std::size_t next = 0;
  while (next < todo.size() || !running.empty()) {
    while (next < todo.size() && running.size() < static_cast<std::size_t>(jobs)) {
      running.emplace(spawn(*todo[next], dir.path()), todo[next]);
      ++next;
    }
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, 0);
    if (pid < 0 && errno != EINTR) {
      throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
    }
    const auto it = running.find(pid);
    if (it == running.end()) {
      continue;  // not one of ours
    }
    const Finished f = finished(*it->second, status, dir.path());
    results.append(f.row);
    progress.point_done(!f.ok);
    running.erase(it);
  }
}

std::string shell_quote(const std::string& word) {
  std::string quoted = "'";
  for (char c : word) {
    quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  }
  return quoted + "'";
}

std::string self_path() {
  std::error_code ec;
  const fs::path path = fs::read_symlink(kSelf, ec);
  return ec ? std::string("dtsim") : path.string();
}

// DIR/points.txt (line I+1: point I's simulate arguments, shell-quoted) and DIR/sweep.sbatch.
void emit_slurm(const std::string& dir_flag, const SweepSpec& spec,
                const std::vector<SweepPoint>& points) {
  const fs::path dir = fs::absolute(dir_flag);
  std::error_code reports, logs;
  fs::create_directories(dir / "reports", reports);
  fs::create_directories(dir / "logs", logs);
  if (reports || logs) {
    throw ConfigError("--emit-slurm " + dir_flag + ": cannot create " + dir.string());
  }
  std::string list;
  for (const SweepPoint& p : points) {
    std::string line;
    for (const std::string& a : p.args) {
      line += (line.empty() ? "" : " ") + shell_quote(a);
    }
    list += line + "\n";
  }
  std::ostringstream script;
  const std::string d = dir.string();
  script << "#!/bin/bash\n"
         << "# dtsim sweep " << spec.file << ": " << points.size()
         << " points as a Slurm job array. Submit with: sbatch " << shell_quote(d + "/sweep.sbatch")
         << "\n# Point I runs `dtsim simulate` with line I+1 of points.txt; its report goes to\n"
         << "# reports/point-I.json, its output to logs/point-I.out.\n"
         << "#SBATCH --job-name=dtsim-sweep\n"
         << "#SBATCH --array=0-" << points.size() - 1 << "\n"
         << "#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=1\n"
         << "#SBATCH --output=" << d << "/logs/point-%a.out\n"
         << "set -euo pipefail\n"
         << "cd " << shell_quote(fs::current_path().string()) << "\n"
         << "point=$SLURM_ARRAY_TASK_ID\n"
         << "args=$(sed -n \"$((point + 1))p\" " << shell_quote(d + "/points.txt") << ")\n"
         << "eval \"exec " << shell_quote(self_path()) << " simulate $args --report "
         << shell_quote(d + "/reports/") << "point-$point.json\"\n";
  write_text("emit-slurm", (dir / "points.txt").string(), list);
  write_text("emit-slurm", (dir / "sweep.sbatch").string(), script.str());
  std::error_code not_executable;  // sbatch reads the script; it need not be executable
  fs::permissions(dir / "sweep.sbatch", fs::perms::owner_exec, fs::perm_options::add,
                  not_executable);
  std::cout << "dtsim sweep: " << points.size() << " points -> " << d
            << "/sweep.sbatch (sbatch it) and " << d << "/points.txt\n";
}

}  // namespace

int run_sweep(const std::vector<std::string>& args,
              const std::vector<std::string>& simulate_flags) {
  std::string sweep_file, out, slurm_dir;
  int jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  bool resume = false;
  po::options_description flags("Sweep", kHelpColumns, kHelpColumns / 2);
  auto add = flags.add_options();
  add("sweep", po::value(&sweep_file)->required()->value_name("SWEEP.json"),
      "the sweep: flags fixed for every point and lists of values to combine (sim/SWEEP.md)");
  add("out", po::value(&out)->value_name("R.csv"),
      "results, one line per point (appended as points finish, sorted by point at the end)");
  add("jobs", po::value(&jobs)->value_name("N"),
      "points run at once, each a `dtsim simulate` process (default: the hardware threads)");
  add("resume", po::bool_switch(&resume),
      "continue an interrupted sweep: run only the points --out has no line for");
  add("emit-slurm", po::value(&slurm_dir)->value_name("DIR"),
      "write DIR/sweep.sbatch (a Slurm job array, one task per point) and DIR/points.txt "
      "instead of running");
  add("help", "explain the flags");
  po::positional_options_description positional;
  positional.add("sweep", 1);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(flags).positional(positional).run(), vm);
  if (vm.count("help")) {
    std::cout << "Usage: dtsim sweep SWEEP.json --out R.csv [--jobs N] [--resume]\n"
                 "       dtsim sweep SWEEP.json --emit-slurm DIR\n"
                 "Runs `dtsim simulate` on every combination of the sweep's flag values, each\n"
                 "in its own process, and writes one CSV line per point (sim/SWEEP.md).\n\n"
              << flags;
    return 0;
  }
  po::notify(vm);
  const SweepSpec spec = read_sweep(sweep_file, simulate_flags);
  const std::vector<SweepPoint> points = sweep_points(spec);
  if (!slurm_dir.empty()) {
    if (!out.empty()) {
      throw ConfigError("--out " + out +
                        ": not with --emit-slurm (the Slurm jobs write the results; see their "
                        "script)");
    }
    emit_slurm(slurm_dir, spec, points);
    return 0;
  }
  if (out.empty()) {
    throw ConfigError("--out: required (where to write the results), unless --emit-slurm");
  }
  if (jobs < 1) {
    throw ConfigError("--jobs " + std::to_string(jobs) + ": expected an integer >= 1");
  }
  const ResultsFile results(out, sweep_csv_header(spec), points, resume);
  run_points(points, results, jobs);
  results.sort();
  std::cout << "dtsim sweep: " << points.size() << " points -> " << out << "\n";
  return 0;
}

}  // namespace dtsim::sim
