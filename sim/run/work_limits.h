// Bounds on the work of a run, checked before SimGrid runs it (issue #21: accepted inputs whose
// cost grew without bound). A run over a bound is refused with its estimate and the flag that
// allows it. Measured here (2 cores): a platform host costs about 30 us and 2.4 KB to build; a
// replayed task or background transfer about 5-20 us. Internal to sim/run.
#ifndef DTSIM_SIM_RUN_WORK_LIMITS_H_
#define DTSIM_SIM_RUN_WORK_LIMITS_H_

#include <string>

#include "platforms/platform_spec.h"

namespace dtsim::sim {

// Throws ConfigError if `spec` builds more than `max_hosts` hosts (an XML platform's are known
// only once loaded: not checked).
void check_host_limit(const platforms::PlatformSpec& spec, double max_hosts);

// Throws ConfigError if `spec`'s periodic background flows would start more than `max_events`
// transfers in a run that lasts at least `run_sec` (`why`: where that comes from, for the
// message, e.g. "3 iterations of w.json").
void check_background_limit(const platforms::PlatformSpec& spec, double run_sec,
                            const std::string& why, double max_events);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_RUN_WORK_LIMITS_H_
