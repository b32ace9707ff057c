// The Slurm commands a sweep needs (sbatch, squeue, scancel), run as child processes found on
// PATH; they read the cluster from their usual configuration ($SLURM_CONF or the system's).
// Part of the dtsim command line.
#ifndef DTSIM_SIM_CLI_SLURM_CLIENT_H_
#define DTSIM_SIM_CLI_SLURM_CLIENT_H_

#include <string>
#include <utility>
#include <vector>

namespace dtsim::sim {

class SlurmClient {
 public:
  // The commands' output goes to files in `scratch_dir` (which must exist).
  explicit SlurmClient(std::string scratch_dir) : scratch_dir_(std::move(scratch_dir)) {}

  // `sbatch --parsable [--partition P] SCRIPT`; returns the job id. Throws ConfigError with
  // sbatch's message if it fails or cannot start.
  [[nodiscard]] std::string submit(const std::string& script, const std::string& partition) const;

  struct ArrayState {
    int pending = 0;  // tasks not started yet (the array's pending remainder counts each)
    int running = 0;  // tasks running, completing, or in any other state squeue shows
  };
  // The tasks of job `job_id` that squeue still shows (none once the job ended). Throws
  // ConfigError if squeue fails for another reason than an unknown (ended, purged) job.
  [[nodiscard]] ArrayState array_state(const std::string& job_id) const;

  // `scancel JOB`: cancels every task of it; errors are ignored (it may have ended).
  void cancel(const std::string& job_id) const;

 private:
  struct Output {
    int exit_code = -1;  // -1: it could not start or was killed
    std::string out, err;
  };
  [[nodiscard]] Output run(const std::vector<std::string>& args) const;

  std::string scratch_dir_;
};

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_CLI_SLURM_CLIENT_H_
