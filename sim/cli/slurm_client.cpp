#include "sim/cli/slurm_client.h"

#include <cerrno>
#include <cstring>
#include <sstream>
#include <vector>

#include "sim/cli/child_runs.h"
#include "sim/cli/sweep_results.h"
#include "sim/config_error.h"

#include <sys/wait.h>

namespace dtsim::sim {

namespace {

std::string first_line(const std::string& text) {
  return text.substr(0, text.find('\n'));
}

}  // namespace

SlurmClient::Output SlurmClient::run(const std::vector<std::string>& args) const {
  const std::string out_path = scratch_dir_ + "/" + args[0] + ".out";
  const std::string err_path = scratch_dir_ + "/" + args[0] + ".err";
  int error = 0;
  const pid_t pid = spawn_process(args, out_path, err_path, error);
  if (pid < 0) {
    return {.err = "cannot run " + args[0] + " (" + std::strerror(error) + ")"};
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_whole_file(out_path),
          read_whole_file(err_path)};
}

std::string SlurmClient::submit(const std::string& script, const std::string& partition) const {
  std::vector<std::string> args{"sbatch", "--parsable"};
  if (!partition.empty()) {
    args.insert(args.end(), {"--partition", partition});
  }
  args.push_back(script);
  const Output o = run(args);
  const std::string id = first_line(o.out).substr(0, first_line(o.out).find(';'));  // id;cluster
  if (o.exit_code != 0 || id.empty()) {
    throw ConfigError("--slurm: sbatch " + script + " failed: " + first_line(o.err));
  }
  return id;
}

SlurmClient::ArrayState SlurmClient::array_state(const std::string& job_id) const {
  const Output o = run({"squeue", "--noheader", "--array", "--jobs", job_id, "--format", "%T"});
  ArrayState state;
  if (o.exit_code != 0) {
    if (o.err.find("Invalid job id") != std::string::npos) {
      return state;  // ended long enough ago to be purged
    }
    throw ConfigError("--slurm: squeue failed for job " + job_id + ": " + first_line(o.err));
  }
  std::istringstream lines(o.out);
  for (std::string line; std::getline(lines, line);) {
    if (line == "PENDING") {
      ++state.pending;
    } else if (!line.empty()) {
      ++state.running;
    }
  }
  return state;
}

void SlurmClient::cancel(const std::string& job_id) const {
  [[maybe_unused]] const Output ignored = run({"scancel", job_id});
}

}  // namespace dtsim::sim
