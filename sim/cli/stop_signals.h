// SIGINT and SIGTERM turned into a flag that a long-running command polls, so that it can stop
// what it started (child processes, Slurm jobs) and remove its temporary files before it exits,
// instead of dying at once. Part of the dtsim command line.
#ifndef DTSIM_SIM_CLI_STOP_SIGNALS_H_
#define DTSIM_SIM_CLI_STOP_SIGNALS_H_

#include <csignal>

namespace dtsim::sim {

// While one lives, SIGINT and SIGTERM only record that they arrived; the previous handlers come
// back when it is destroyed. Not reentrant: one at a time per process.
//
//   const StopSignals stop;
//   while (working && stop.received() == 0) { ... }
//   if (stop.received() != 0) { clean up; return 128 + stop.received(); }
class StopSignals {
 public:
  StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
  ~StopSignals();

  // The first signal that arrived (SIGINT or SIGTERM), or 0.
  [[nodiscard]] int received() const;

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

// "SIGINT", "SIGTERM", else "a signal".
[[nodiscard]] const char* stop_signal_name(int signal);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_CLI_STOP_SIGNALS_H_
