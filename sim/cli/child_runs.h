// Runs this program (/proc/self/exe) again as child processes, a few at a time, each with its
// own arguments and its stdout and stderr in files: how the command line runs several
// simulations (SimGrid allows one engine per process). Part of the dtsim command line.
#ifndef DTSIM_SIM_CLI_CHILD_RUNS_H_
#define DTSIM_SIM_CLI_CHILD_RUNS_H_

#include <string>
#include <vector>

#include <sys/types.h>

namespace dtsim::sim {

struct ChildRun {
  std::vector<std::string> args;  // after the program name, e.g. {"simulate", "--model", ...}
  std::string stderr_path;        // created or truncated; stdout goes to /dev/null
};

// Starts a process running `argv` (argv[0]: its name, looked up on PATH unless `program` names
// the file to run) with stdout and stderr in the files given (created or truncated). Returns
// its pid, or -1 with the reason's errno in `error`; the caller waits for it.
[[nodiscard]] pid_t spawn_process(std::vector<std::string> argv, const std::string& stdout_path,
                                  const std::string& stderr_path, int& error,
                                  const char* program = nullptr);

// Starts `child` (this program again) and returns its pid; the caller waits for it. Throws
// std::runtime_error if it cannot start.
[[nodiscard]] pid_t spawn_child(const ChildRun& child);

enum class ChildStatus { kOk, kFailed, kTimedOut };

// Runs every child, at most `jobs` at once, and waits for all of them; a child still running
// `timeout_sec` of wall time after it started is killed (SIGKILL; 0: no limit). Returns each
// child's status, in order: kOk when it exited with status 0. Throws std::runtime_error if one
// cannot start. REQUIRES: jobs >= 1, timeout_sec >= 0.
[[nodiscard]] std::vector<ChildStatus> run_children(const std::vector<ChildRun>& children, int jobs,
                                                    double timeout_sec = 0);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_CLI_CHILD_RUNS_H_
