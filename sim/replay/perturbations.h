// The run-time side of a platform spec's "perturbations" (platforms/FORMAT.md): slow GPUs
// stretch their rank's compute tasks; background flows load the network while the job runs.
// (Slow links are applied when the platform is built: platforms/build_platform.cpp.)
#ifndef DTSIM_SIM_REPLAY_PERTURBATIONS_H_
#define DTSIM_SIM_REPLAY_PERTURBATIONS_H_

#include <string>
#include <vector>

#include <simgrid/forward.h>

#include "platforms/build_platform.h"
#include "platforms/platform_spec.h"

namespace dtsim::sim {

// Compute factor of each rank (1: healthy): the product of the factors of the "slow_gpus"
// entries naming the rank or the host it runs on. Throws ConfigError naming the spec file and
// the entry's JSON pointer for a rank >= rank_hosts.size() or a host the platform lacks.
[[nodiscard]] std::vector<double> rank_compute_factors(
    const platforms::PlatformSpec& spec, const platforms::Platform& platform,
    const std::vector<simgrid::s4u::Host*>& rank_hosts);

// Starts daemon actors per "background" flow: one mailbox transfer from host `from` to `to`,
// capped at the flow's rate (Comm::set_rate) and large enough to outlast the run, so it takes
// min(rate, its max-min share) from t = its route latency until the job ends; or, for a
// repeated transfer, `bytes` from `from` to `to` started at t = k x period (or when the previous
// one ends, if later).
// A repeated flow's senders stop once the flows of the run have started `max_transfers`
// transfers between them (--max-events; the pre-run estimate can miss a run whose length comes
// from communication): check_background_budget then refuses the run.
// Throws ConfigError as rank_compute_factors. REQUIRES: the engine has not run yet.
void start_background_traffic(const platforms::PlatformSpec& spec,
                              const platforms::Platform& platform, double max_transfers);

// Throws ConfigError, naming the spec file, the flow and the flag that allows more, if the
// periodic flows of the last start_background_traffic ran out of transfers before the job
// ended (its result would be wrong: the network was unloaded after that).
void check_background_budget();

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_REPLAY_PERTURBATIONS_H_
