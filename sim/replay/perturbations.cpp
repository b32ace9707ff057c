#include "sim/replay/perturbations.h"

#include <cmath>
#include <string>

#include <simgrid/s4u.hpp>

#include "sim/config_error.h"
#include "workloads/parsing/units.h"

namespace dtsim::sim {

namespace sg4 = simgrid::s4u;

namespace {

// Long enough to outlast any run: a flow at its rate for this long.
constexpr double kBackgroundSec = 1e6;
// Sends one capped transfer through `mailbox` for the rest of the run, as a daemon (killed when
// the job's actors are done). A mailbox comm: SimGrid 3.32 honours Comm::set_rate there, not on
// host-to-host comms.
struct BackgroundSender {
  sg4::Mailbox* mailbox;
  double bytes_per_sec;
  int payload = 0;  // SimGrid refuses a null payload; never read

  void operator()() {
    sg4::Actor::self()->daemonize();
    mailbox->put_init(&payload, static_cast<std::uint64_t>(bytes_per_sec * kBackgroundSec))
        ->set_rate(bytes_per_sec)
        ->wait();
  }
};

// The transfers the periodic flows of one run may still start, shared by their senders.
struct BackgroundBudget {
  double left = 0;
  bool exhausted = false;
  std::string where;  // the spec file and flow that ran out
  double at_sec = 0;  // when
  double max_transfers = 0;
};
BackgroundBudget budget;

// Starts a transfer of `bytes` at t = 0, period, 2 period, ... (a late one as soon as the
// previous one is done), for the rest of the run or until the budget is spent, as a daemon.
struct PeriodicSender {
  sg4::Host* from;
  sg4::Host* to;
  std::uint64_t bytes;
  double period_sec;
  std::string where;

  void operator()() const {
    sg4::Actor::self()->daemonize();
    for (double next = sg4::Engine::get_clock();; next += period_sec) {
      sg4::this_actor::sleep_until(next);
      if (budget.left < 1) {
        budget.exhausted = true;
        budget.where = where;
        budget.at_sec = sg4::Engine::get_clock();
        return;
      }
      budget.left -= 1;
      sg4::Comm::sendto(from, to, bytes);
    }
  }
};

struct BackgroundReceiver {
  sg4::Mailbox* mailbox;

  void operator()() const {
    sg4::Actor::self()->daemonize();
    (void)mailbox->get<int>();
  }
};

sg4::Host* host_at(const platforms::PlatformSpec& spec, const platforms::Platform& platform,
                   const std::string& where, unsigned index) {
  if (index >= platform.hosts.size()) {
    throw ConfigError(spec.file + ": " + where + ": host " + std::to_string(index) +
                      ", but the platform has " + std::to_string(platform.hosts.size()) + " hosts");
  }
  return platform.hosts[index];
}

}  // namespace

std::vector<double> rank_compute_factors(const platforms::PlatformSpec& spec,
                                         const platforms::Platform& platform,
                                         const std::vector<sg4::Host*>& rank_hosts) {
  std::vector<double> factors(rank_hosts.size(), 1.0);
  for (const platforms::SlowGpu& slow : spec.perturbations.slow_gpus) {
    if (slow.rank) {
      if (*slow.rank >= rank_hosts.size()) {
        throw ConfigError(spec.file + ": " + slow.where + "/rank: rank " +
                          std::to_string(*slow.rank) + ", but --ranks is " +
                          std::to_string(rank_hosts.size()));
      }
      factors[*slow.rank] *= slow.compute_factor;
      continue;
    }
    const sg4::Host* host = host_at(spec, platform, slow.where + "/host", *slow.host);
    for (std::size_t r = 0; r < rank_hosts.size(); ++r) {
      if (rank_hosts[r] == host) {
        factors[r] *= slow.compute_factor;
      }
    }
  }
  for (std::size_t r = 0; r < factors.size(); ++r) {
    if (!std::isfinite(factors[r]) || factors[r] <= 0) {
      throw ConfigError(spec.file + ": /perturbations/slow_gpus: the compute factors of rank " +
                        std::to_string(r) + " multiply to " +
                        parsing::format_number("%g", factors[r]) +
                        " (expected a finite number > 0)");
    }
  }
  return factors;
}

void start_background_traffic(const platforms::PlatformSpec& spec,
                              const platforms::Platform& platform, double max_transfers) {
  budget = {.left = max_transfers, .max_transfers = max_transfers};
  for (const platforms::BackgroundFlow& flow : spec.perturbations.background) {
    sg4::Host* from = host_at(spec, platform, flow.where + "/from", flow.from);
    sg4::Host* to = host_at(spec, platform, flow.where + "/to", flow.to);
    const std::string name =
        "background-" + std::to_string(flow.from) + "-" + std::to_string(flow.to);
    if (flow.bytes > 0) {
      sg4::Actor::create(
          name + "-send", from,
          PeriodicSender{from, to, flow.bytes, flow.period_sec, spec.file + ": " + flow.where});
      continue;
    }
    sg4::Mailbox* mailbox = sg4::Mailbox::by_name(name);
    sg4::Actor::create(name + "-send", from, BackgroundSender{mailbox, flow.bytes_per_sec});
    sg4::Actor::create(name + "-receive", to, BackgroundReceiver{mailbox});
  }
}

void check_background_budget() {
  if (!budget.exhausted) {
    return;
  }
  using parsing::format_number;
  throw ConfigError(budget.where + ": the periodic background flows reached --max-events " +
                    format_number("%g", budget.max_transfers) +
                    " transfers at t = " + format_number("%g", budget.at_sec) +
                    " s, before the job ended (its communication outlasts the estimate from "
                    "compute); a larger --max-events allows more, each costing about 5-20 us");
}

}  // namespace dtsim::sim
