#include "sim/cli/stop_signals.h"

namespace dtsim::sim {

namespace {

// A signal handler can only set a flag of this type: the one piece of global state here.
volatile std::sig_atomic_t g_stop_signal = 0;

extern "C" void record_stop_signal(int signal) {
  if (g_stop_signal == 0) {
    g_stop_signal = signal;
  }
}

}  // namespace

StopSignals::StopSignals() {
  g_stop_signal = 0;
  struct sigaction action {};
  action.sa_handler = record_stop_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;  // no SA_RESTART: a blocking call returns EINTR
  sigaction(SIGINT, &action, &old_int_);
  sigaction(SIGTERM, &action, &old_term_);
}

StopSignals::~StopSignals() {
  sigaction(SIGINT, &old_int_, nullptr);
  sigaction(SIGTERM, &old_term_, nullptr);
}

int StopSignals::received() const {
  return g_stop_signal;
}

const char* stop_signal_name(int signal) {
  return signal == SIGINT ? "SIGINT" : signal == SIGTERM ? "SIGTERM" : "a signal";
}

}  // namespace dtsim::sim
