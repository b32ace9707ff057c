#include "sim/cli/slurm_sweep.h"

#include <chrono>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <thread>

#include "sim/cli/output_flags.h"
#include "sim/cli/slurm_client.h"
#include "sim/cli/stop_signals.h"
#include "sim/cli/sweep_csv.h"
#include "sim/cli/sweep_results.h"
#include "sim/config_error.h"

namespace dtsim::sim {

namespace fs = std::filesystem;

namespace {

constexpr auto kPollInterval = std::chrono::milliseconds(500);

std::string shell_quote(const std::string& word) {
  std::string quoted = "'";
  for (char c : word) {
    quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  }
  return quoted + "'";
}

std::string self_path() {
  std::error_code ec;
  const fs::path path = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("dtsim") : path.string();
}

std::string stem(const fs::path& dir, const char* sub, int point) {
  return (dir / sub / ("point-" + std::to_string(point))).string();
}

// The job array script: task I runs point I (line I+1 of points.txt) and, once it ended,
// writes its exit status to status/point-I (through a rename: the file is whole or absent).
std::string sbatch_script(const fs::path& dir, const SweepSpec& spec, std::size_t points,
                          const std::string& array) {
  const std::string d = dir.string();
  const std::string status = shell_quote(d + "/status/") + "point-$point";
  std::ostringstream s;
  s << "#!/bin/bash\n"
    << "# dtsim sweep " << spec.file << ": " << points
    << " points as a Slurm job array. Submit with: sbatch " << shell_quote(d + "/sweep.sbatch")
    << "\n# Point I runs `dtsim simulate` with line I+1 of points.txt; its report goes to\n"
    << "# reports/point-I.json, its stderr to logs/point-I.err, its exit status to "
       "status/point-I.\n"
    << "# Gather the results with: dtsim sweep --merge " << shell_quote(d) << " --out R.csv\n"
    << "#SBATCH --job-name=dtsim-sweep\n"
    << "#SBATCH --array=" << array << "\n"
    << "#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=1\n"
    << "#SBATCH --output=" << d << "/logs/point-%a.out\n"
    << "set -euo pipefail\n"
    << "cd " << shell_quote(fs::current_path().string()) << "\n"
    << "point=$SLURM_ARRAY_TASK_ID\n"
    << "args=$(sed -n \"$((point + 1))p\" " << shell_quote(d + "/points.txt") << ")\n"
    << "rc=0\n"
    << "eval \"" << shell_quote(self_path()) << " simulate $args --report "
    << shell_quote(d + "/reports/") << "point-$point.json\" 2>" << shell_quote(d + "/logs/")
    << "point-$point.err || rc=$?\n"
    << "echo $rc >" << status << ".tmp && mv " << status << ".tmp " << status << "\n"
    << "exit $rc\n";
  return s.str();
}

// Writes the folder for `points` (all of the sweep) with an array of the `todo` ones, whose
// earlier results, if any, are removed.
void write_slurm_dir(const fs::path& dir, const std::string& flag, const SweepSpec& spec,
                     const std::vector<SweepPoint>& points, const std::vector<int>& todo,
                     int max_parallel) {
  for (const char* sub : {"reports", "logs", "status"}) {
    std::error_code ec;
    fs::create_directories(dir / sub, ec);
    if (ec) {
      throw ConfigError(flag + ": cannot create " + (dir / sub).string() + " (" + ec.message() +
                        ")");
    }
  }
  for (int i : todo) {
    std::error_code ignored;
    fs::remove(stem(dir, "status", i), ignored);
    fs::remove(stem(dir, "reports", i) + ".json", ignored);
  }
  std::string list;
  for (const SweepPoint& p : points) {
    std::string line;
    for (const std::string& a : p.args) {
      line += (line.empty() ? "" : " ") + shell_quote(a);
    }
    list += line + "\n";
  }
  const std::string array =
      slurm_array_list(todo) + (max_parallel > 0 ? "%" + std::to_string(max_parallel) : "");
  write_text(flag.substr(2), (dir / "sweep.json").string(), read_whole_file(spec.file));
  write_text(flag.substr(2), (dir / "points.txt").string(), list);
  write_text(flag.substr(2), (dir / "sweep.sbatch").string(),
             sbatch_script(dir, spec, points.size(), array));
}

// The exit status a task wrote, as a PointEnd (bash gives 128 + N for signal N); false if the
// task wrote none.
bool task_end(const fs::path& dir, int point, PointEnd& end) {
  std::istringstream in(read_whole_file(stem(dir, "status", point)));
  int rc = 0;
  if (!(in >> rc)) {
    return false;
  }
  end = rc > 128 ? PointEnd{.exited = false, .code = rc - 128} : PointEnd{.code = rc};
  return true;
}

struct Gathered {
  std::vector<int> missing;  // points whose task wrote no status
  std::size_t failed = 0;    // points whose line is a failure
};

// Appends the line of every point of `todo` whose task ended.
Gathered gather(const fs::path& dir, const std::vector<SweepPoint>& points,
                const std::vector<int>& todo, const ResultsFile& results) {
  Gathered g;
  for (int i : todo) {
    PointEnd end;
    if (!task_end(dir, i, end)) {
      g.missing.push_back(i);
      continue;
    }
    const PointRow row =
        point_row(points[static_cast<std::size_t>(i)], end, stem(dir, "reports", i) + ".json",
                  stem(dir, "logs", i) + ".err");
    results.append(row.line);
    g.failed += row.ok ? 0 : 1;
  }
  return g;
}

std::vector<int> points_without_line(const std::vector<SweepPoint>& points,
                                     const ResultsFile& results) {
  std::vector<int> todo;
  for (const SweepPoint& p : points) {
    if (!results.done().contains(p.index)) {
      todo.push_back(p.index);
    }
  }
  return todo;
}

std::string join(const std::vector<int>& indices) {
  std::string s;
  for (int i : indices) {
    s += (s.empty() ? "" : ", ") + std::to_string(i);
  }
  return s;
}

// The summary line and exit code once `results` has what could be gathered.
int finish(const ResultsFile& results, const std::string& out, std::size_t points,
           const Gathered& g, const std::string& missing_why) {
  results.sort();
  const std::size_t failed = results.failed().size() + g.failed;
  std::cout << "dtsim sweep: " << points - g.missing.size() << " of " << points << " points -> "
            << out << "\n";
  if (!g.missing.empty()) {
    std::cerr << "dtsim sweep: no result for point" << (g.missing.size() > 1 ? "s " : " ")
              << join(g.missing) << " " << missing_why << "\n";
  }
  if (failed > 0) {
    std::cerr << "dtsim sweep: " << failed << " of " << points << " points failed (their lines in "
              << out << " say why)\n";
  }
  return g.missing.empty() && failed == 0 ? 0 : 1;
}

}  // namespace

std::string slurm_array_list(const std::vector<int>& indices) {
  std::string list;
  for (std::size_t i = 0; i < indices.size();) {
    std::size_t j = i;
    while (j + 1 < indices.size() && indices[j + 1] == indices[j] + 1) {
      ++j;
    }
    list += (list.empty() ? "" : ",") + std::to_string(indices[i]) +
            (j > i ? "-" + std::to_string(indices[j]) : "");
    i = j + 1;
  }
  return list;
}

void emit_slurm(const std::string& dir_flag, const SweepSpec& spec,
                const std::vector<SweepPoint>& points) {
  const fs::path dir = fs::absolute(dir_flag);
  std::vector<int> all;
  for (const SweepPoint& p : points) {
    all.push_back(p.index);
  }
  write_slurm_dir(dir, "--emit-slurm " + dir_flag, spec, points, all, 0);
  std::cout << "dtsim sweep: " << points.size() << " points -> " << dir.string()
            << "/sweep.sbatch (sbatch it) and " << dir.string() << "/points.txt\n";
}

int merge_slurm(const MergeFlags& flags, const std::vector<std::string>& simulate_flags) {
  const fs::path dir = fs::absolute(flags.dir);
  if (!fs::exists(dir / "sweep.json")) {
    throw ConfigError("--merge " + flags.dir + ": no sweep.json there (not a folder that " +
                      "--emit-slurm or --slurm wrote)");
  }
  const SweepSpec spec = read_sweep((dir / "sweep.json").string(), simulate_flags);
  const std::vector<SweepPoint> points = sweep_points(spec);
  const ResultsFile results(flags.out, sweep_csv_header(spec), points, flags.resume);
  const Gathered g = gather(dir, points, points_without_line(points, results), results);
  return finish(results, flags.out, points.size(), g,
                "(its task has not ended, was cancelled or never ran: see " +
                    (dir / "logs").string() + "; --resume adds it later)");
}

int run_sweep_on_slurm(const SlurmFlags& flags, const SweepSpec& spec,
                       const std::vector<SweepPoint>& points) {
  const bool new_file = !fs::exists(flags.out);
  const ResultsFile results(flags.out, sweep_csv_header(spec), points, flags.resume);
  const std::vector<int> todo = points_without_line(points, results);
  const fs::path dir = fs::absolute(flags.out + ".slurm");
  if (todo.empty()) {
    return finish(results, flags.out, points.size(), {}, "");
  }
  write_slurm_dir(dir, "--slurm", spec, points, todo, flags.max_parallel);
  const SlurmClient slurm((dir / "logs").string());
  std::string job;
  try {
    job = slurm.submit((dir / "sweep.sbatch").string(), flags.partition);
  } catch (const ConfigError&) {
    if (new_file) {  // nothing ran: leave no results file that would need --resume
      std::error_code ignored;
      fs::remove(flags.out, ignored);
    }
    throw;
  }
  std::cerr << "dtsim sweep: Slurm job " << job << ": " << todo.size() << " tasks (" << dir.string()
            << ")\n";
  const StopSignals stop;
  SlurmClient::ArrayState last{-1, -1};
  for (;;) {
    if (stop.received() != 0) {
      slurm.cancel(job);
      break;
    }
    SlurmClient::ArrayState now;
    try {
      now = slurm.array_state(job);
    } catch (const ConfigError&) {
      if (stop.received() == 0) {
        throw;
      }
      continue;  // Ctrl-C reached squeue too
    }
    if (now.pending + now.running == 0) {
      break;
    }
    if (now.pending != last.pending || now.running != last.running) {
      std::cerr << "dtsim sweep: Slurm job " << job << ": "
                << todo.size() - static_cast<std::size_t>(now.pending + now.running) << "/"
                << todo.size() << " tasks ended, " << now.running << " running, " << now.pending
                << " pending\n";
      last = now;
    }
    std::this_thread::sleep_for(kPollInterval);
  }
  const Gathered g = gather(dir, points, todo, results);
  const int code =
      finish(results, flags.out, points.size(), g,
             "(its Slurm task of job " + job + " ended without one: cancelled or killed; see " +
                 (dir / "logs").string() + "; --resume resubmits it)");
  if (stop.received() != 0) {
    std::cerr << "dtsim sweep: " << stop_signal_name(stop.received()) << ": cancelled Slurm job "
              << job << " (--resume resubmits the points without a line)\n";
    return 128 + stop.received();
  }
  return code;
}

}  // namespace dtsim::sim
