#include "sim/cli/sweep.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <thread>

#include <boost/program_options.hpp>

#include "sim/cli/child_runs.h"
#include "sim/cli/slurm_sweep.h"
#include "sim/cli/stop_signals.h"
#include "sim/cli/sweep_csv.h"
#include "sim/cli/sweep_results.h"
#include "sim/cli/sweep_spec.h"
#include "sim/cli/verb.h"
#include "sim/config_error.h"

#include <sys/wait.h>
#include <unistd.h>

namespace dtsim::sim {

namespace fs = std::filesystem;
namespace po = boost::program_options;

namespace {

constexpr auto kPollInterval = std::chrono::milliseconds(10);

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

// The CSV line of a point whose process ended with wait status `status`.
PointRow finished(const SweepPoint& point, int status, const fs::path& dir) {
  const std::string stem = (dir / ("point-" + std::to_string(point.index))).string();
  const PointEnd end = WIFEXITED(status) ? PointEnd{.code = WEXITSTATUS(status)}
                                         : PointEnd{.exited = false, .code = WTERMSIG(status)};
  return point_row(point, end, stem + ".json", stem + ".err");
}

struct LocalRun {
  std::size_t failed = 0;  // points run now whose line is a failure
  int stop_signal = 0;     // the signal that stopped the sweep, or 0
};

// Runs the points not in `results` yet, `jobs` at a time. On SIGINT or SIGTERM, stops the
// running points (SIGTERM, then waits for them) and returns: their points get no line.
LocalRun run_points(const std::vector<SweepPoint>& points, const ResultsFile& results, int jobs) {
  std::vector<const SweepPoint*> todo;
  for (const SweepPoint& p : points) {
    if (!results.done().contains(p.index)) {
      todo.push_back(&p);
    }
  }
  const TempDir dir;
  const StopSignals stop;
  LocalRun run;
  Progress progress(points.size(), points.size() - todo.size());
  std::map<pid_t, const SweepPoint*> running;
  std::size_t next = 0;
  while ((next < todo.size() || !running.empty()) && stop.received() == 0) {
    while (next < todo.size() && running.size() < static_cast<std::size_t>(jobs)) {
      running.emplace(spawn(*todo[next], dir.path()), todo[next]);
      ++next;
    }
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid < 0 && errno != EINTR) {
      throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
    }
    const auto it = running.find(pid);
    if (pid <= 0 || it == running.end()) {
      std::this_thread::sleep_for(kPollInterval);
      continue;  // none ended, or not one of ours
    }
    if (stop.received() != 0) {
      running.erase(it);  // perhaps killed by the same Ctrl-C: rerun by --resume
      break;
    }
    const PointRow row = finished(*it->second, status, dir.path());
    results.append(row.line);
    progress.point_done(!row.ok);
    run.failed += row.ok ? 0 : 1;
    running.erase(it);
  }
  for (const auto& [pid, point] : running) {
    ::kill(pid, SIGTERM);
  }
  for (const auto& [pid, point] : running) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  run.stop_signal = stop.received();
  return run;
}

}  // namespace

namespace {

struct SweepFlags {
  std::string sweep_file, out, slurm_dir, merge_dir, partition;
  int jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  int max_parallel = 0;
  bool resume = false, slurm = false;
};

po::options_description sweep_flags(SweepFlags& f) {
  po::options_description flags("Sweep", kHelpColumns, kHelpColumns / 2);
  auto add = flags.add_options();
  add("sweep", po::value(&f.sweep_file)->value_name("SWEEP.json"),
      "the sweep: flags fixed for every point and lists of values to combine (sim/SWEEP.md)");
  add("out", po::value(&f.out)->value_name("R.csv"),
      "results, one line per point (appended as points finish, sorted by point at the end)");
  add("jobs", po::value(&f.jobs)->value_name("N"),
      "points run at once, each a `dtsim simulate` process (default: the hardware threads)");
  add("resume", po::bool_switch(&f.resume),
      "continue an interrupted sweep: run only the points --out has no line for");
  add("emit-slurm", po::value(&f.slurm_dir)->value_name("DIR"),
      "write DIR/sweep.sbatch (a Slurm job array, one task per point) and DIR/points.txt "
      "instead of running");
  add("merge", po::value(&f.merge_dir)->value_name("DIR"),
      "gather the results of an --emit-slurm DIR job array into --out (no SWEEP.json)");
  add("slurm", po::bool_switch(&f.slurm),
      "run the points as one Slurm job array (sbatch), wait for it and gather into --out; "
      "its folder is R.csv.slurm");
  add("partition", po::value(&f.partition)->value_name("P"),
      "with --slurm: the partition to submit to (default: the cluster's)");
  add("max-parallel", po::value(&f.max_parallel)->value_name("N"),
      "with --slurm: at most N tasks of the array run at once (default: no limit)");
  add("help", "explain the flags");
  return flags;
}

// Throws ConfigError for flags that do not go together.
void check_flags(const SweepFlags& f) {
  if (!f.merge_dir.empty()) {
    if (!f.sweep_file.empty() || f.slurm || !f.slurm_dir.empty()) {
      throw ConfigError("--merge " + f.merge_dir +
                        ": takes no SWEEP.json, --slurm or --emit-slurm (DIR has the sweep)");
    }
  } else if (f.sweep_file.empty()) {
    throw ConfigError("SWEEP.json: required (the sweep to run), unless --merge");
  }
  if (!f.slurm_dir.empty() && !f.out.empty()) {
    throw ConfigError("--out " + f.out +
                      ": not with --emit-slurm (the Slurm jobs write the results; see their "
                      "script)");
  }
  if (!f.slurm_dir.empty() && f.slurm) {
    throw ConfigError("--slurm: not with --emit-slurm (one submits, the other writes a script)");
  }
  if (f.slurm_dir.empty() && f.out.empty()) {
    throw ConfigError("--out: required (where to write the results), unless --emit-slurm");
  }
  if (f.jobs < 1) {
    throw ConfigError("--jobs " + std::to_string(f.jobs) + ": expected an integer >= 1");
  }
  if (f.max_parallel < 0) {
    throw ConfigError("--max-parallel " + std::to_string(f.max_parallel) +
                      ": expected an integer >= 1");
  }
  if (!f.slurm && (!f.partition.empty() || f.max_parallel != 0)) {
    throw ConfigError(std::string(f.partition.empty() ? "--max-parallel" : "--partition") +
                      ": only with --slurm");
  }
}

// The local run's summary and exit code: 0 if every point has an "ok" line, 1 if one failed,
// 128 + N if signal N stopped it.
int run_locally(const SweepFlags& f, const SweepSpec& spec, const std::vector<SweepPoint>& points) {
  const ResultsFile results(f.out, sweep_csv_header(spec), points, f.resume);
  const LocalRun run = run_points(points, results, f.jobs);
  if (run.stop_signal != 0) {
    std::cerr << "dtsim sweep: " << stop_signal_name(run.stop_signal)
              << ": stopped; the points that ended are in " << f.out
              << " (--resume runs the others)\n";
    return 128 + run.stop_signal;
  }
  results.sort();
  std::cout << "dtsim sweep: " << points.size() << " points -> " << f.out << "\n";
  const std::size_t failed = results.failed().size() + run.failed;
  if (failed > 0) {
    std::cerr << "dtsim sweep: " << failed << " of " << points.size()
              << " points failed (their lines in " << f.out << " say why)\n";
    return 1;
  }
  return 0;
}

}  // namespace

int run_sweep(const std::vector<std::string>& args,
              const std::vector<std::string>& simulate_flags) {
  SweepFlags f;
  const po::options_description flags = sweep_flags(f);
  po::positional_options_description positional;
  positional.add("sweep", 1);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(flags).positional(positional).run(), vm);
  if (vm.count("help")) {
    std::cout << "Usage: dtsim sweep SWEEP.json --out R.csv [--jobs N] [--resume]\n"
                 "       dtsim sweep SWEEP.json --slurm [--partition P] [--max-parallel N] "
                 "--out R.csv [--resume]\n"
                 "       dtsim sweep SWEEP.json --emit-slurm DIR\n"
                 "       dtsim sweep --merge DIR --out R.csv [--resume]\n"
                 "Runs `dtsim simulate` on every combination of the sweep's flag values, each\n"
                 "in its own process, and writes one CSV line per point (sim/SWEEP.md). Exits 1\n"
                 "if a point failed or has no result.\n\n"
              << flags;
    return 0;
  }
  po::notify(vm);
  check_flags(f);
  if (!f.merge_dir.empty()) {
    return merge_slurm({.dir = f.merge_dir, .out = f.out, .resume = f.resume}, simulate_flags);
  }
  const SweepSpec spec = read_sweep(f.sweep_file, simulate_flags);
  const std::vector<SweepPoint> points = sweep_points(spec);
  if (!f.slurm_dir.empty()) {
    emit_slurm(f.slurm_dir, spec, points);
    return 0;
  }
  if (f.slurm) {
    return run_sweep_on_slurm({.out = f.out,
                               .partition = f.partition,
                               .max_parallel = f.max_parallel,
                               .resume = f.resume},
                              spec, points);
  }
  return run_locally(f, spec, points);
}

}  // namespace dtsim::sim
