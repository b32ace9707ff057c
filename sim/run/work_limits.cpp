#include "sim/run/work_limits.h"

#include <cmath>

#include "sim/config_error.h"
#include "workloads/parsing/units.h"

namespace dtsim::sim {

using parsing::format_number;

namespace {

// `x` rounded up to two significant digits: a limit that allows x, short to type.
double round_up_2(double x) {
  const double step = std::pow(10.0, std::floor(std::log10(x)) - 1);
  return std::ceil(x / step) * step;
}

}  // namespace

void check_host_limit(const platforms::PlatformSpec& spec, double max_hosts) {
  const double hosts = spec.host_count();
  if (hosts > max_hosts) {
    throw ConfigError(spec.file + ": " + format_number("%.0f", hosts) +
                      " hosts, more than --max-hosts " + format_number("%.0f", max_hosts) +
                      " (building them takes about " + format_number("%.2g", hosts * 2.4e3 / 1e9) +
                      " GB and " + format_number("%.2g", hosts * 30e-6) + " s; --max-hosts " +
                      format_number("%.0f", hosts) + " allows it)");
  }
}

void check_background_limit(const platforms::PlatformSpec& spec, double run_sec,
                            const std::string& why, double max_events) {
  for (const platforms::BackgroundFlow& flow : spec.perturbations.background) {
    if (flow.period_sec <= 0) {
      continue;  // a rate-capped flow: one transfer for the whole run
    }
    const double transfers = run_sec / flow.period_sec;
    if (transfers > max_events) {
      throw ConfigError(spec.file + ": " + flow.where + ": a transfer every " +
                        format_number("%g", flow.period_sec) + " s for at least " +
                        format_number("%g", run_sec) + " s (" + why + "): about " +
                        format_number("%.2g", transfers) + " transfers, more than --max-events " +
                        format_number("%g", max_events) + " (--max-events " +
                        format_number("%.2g", round_up_2(transfers)) + " allows it)");
    }
  }
}

}  // namespace dtsim::sim
