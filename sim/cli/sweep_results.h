// Where a sweep's point lines come from and go to, whoever ran the points (local child
// processes, Slurm array tasks): the line of a point from its report and stderr files, and the
// results file (`--out R.csv`, format in sim/cli/sweep_csv.h) that lines are appended to whole.
// Part of the dtsim command line.
#ifndef DTSIM_SIM_CLI_SWEEP_RESULTS_H_
#define DTSIM_SIM_CLI_SWEEP_RESULTS_H_

#include <set>
#include <string>
#include <vector>

#include "sim/cli/sweep_spec.h"

namespace dtsim::sim {

// How a point's `dtsim simulate` process ended.
struct PointEnd {
  bool exited = true;  // true: it exited with `code`; false: signal `code` killed it
  int code = 0;
};

struct PointRow {
  std::string line;  // the CSV line, ending in '\n'
  bool ok = false;
};

// The line of `point`, whose process ended as `end` after writing its report to `report_path`
// and its stderr to `stderr_path`: "ok" and the report's values if it exited 0 with a readable
// report, else "failed (...)" and its stderr.
[[nodiscard]] PointRow point_row(const SweepPoint& point, PointEnd end,
                                 const std::string& report_path, const std::string& stderr_path);

// The results file: created with its header, or resumed (`resume`, the lines already there kept
// and a torn last line cut); lines appended whole, each with one write() on an O_APPEND
// descriptor, so that whatever kills the sweep the file holds whole lines only.
class ResultsFile {
 public:
  // Throws ConfigError if the file exists and `resume` is false, if it holds another sweep's
  // lines, or if it cannot be opened.
  ResultsFile(const std::string& path, const std::string& header,
              const std::vector<SweepPoint>& points, bool resume);
  ResultsFile(const ResultsFile&) = delete;
  ResultsFile& operator=(const ResultsFile&) = delete;
  ~ResultsFile();

  // The points with a line when the file was opened, and those of them that failed.
  [[nodiscard]] const std::set<int>& done() const { return done_; }
  [[nodiscard]] const std::set<int>& failed() const { return failed_; }

  // Throws ConfigError if the line cannot be written whole (a partial write is cut off again).
  void append(const std::string& line) const;

  // Rewrites the file sorted by point: a temporary file renamed over it.
  void sort() const;

 private:
  std::string path_;
  int fd_ = -1;
  std::set<int> done_, failed_;
};

// The contents of the file at `path` ("" if it cannot be read).
[[nodiscard]] std::string read_whole_file(const std::string& path);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_CLI_SWEEP_RESULTS_H_
