#include "sim/report/limiter.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "sim/collectives/schedule_cost.h"

namespace dtsim::sim {

namespace {

std::string format(const char* fmt, double a, double b = 0) {
  char text[160];
  std::snprintf(text, sizeof text, fmt, a, b);
  return text;
}

// The most utilized link (ties: the lower level, then the name) and the most utilized of level 0.
struct Busiest {
  const LinkLoad* link = nullptr;
  double level0_utilization = 0;
};

Busiest busiest(const std::vector<LinkLoad>& loads) {  // loads are in (level, name) order
  Busiest b;
  for (const LinkLoad& l : loads) {
    if (b.link == nullptr || l.utilization > b.link->utilization) {
      b.link = &l;
    }
    if (l.level == 0) {
      b.level0_utilization = std::max(b.level0_utilization, l.utilization);
    }
  }
  return b;
}

}  // namespace

CommCost comm_cost(const Schedule& schedule, const TopologyHints& hints) {
  const ScheduleShape s = schedule_shape(schedule, hints);
  return {.latency_sec = s.steps * s.max_latency_sec + s.waits_sec,
          .bandwidth_sec = s.busiest_link_sec};
}

Limiter find_limiter(double iteration_sec, double compute_sec, const CommCost& cost,
                     const std::vector<LinkLoad>& loads, Straggler straggler,
                     const std::vector<double>& level_oversubscription) {
  Limiter l;
  const double exposed_sec = std::max(0.0, iteration_sec - compute_sec);
  l.exposed_fraction = iteration_sec > 0 ? exposed_sec / iteration_sec : 0.0;
  const std::string exposed =
      format("%.3g ms of communication is not hidden behind compute (%.1f %% of the iteration)",
             exposed_sec * 1e3, 100 * l.exposed_fraction);
  // The part of the exposed time that is waiting for the slowest rank's compute.
  const double wait_sec = std::clamp(straggler.compute_sec - compute_sec, 0.0, exposed_sec);
  if (l.exposed_fraction >= kComputeBoundExposedFraction && wait_sec >= exposed_sec - wait_sec) {
    l.kind = "straggler-bound";
    l.explanation = "straggler-bound: rank " + std::to_string(straggler.rank) +
                    format(
                        " computes %.3g ms longer than a healthy rank (%.1f %% of the "
                        "iteration), and every other rank waits for it at the all-reduces; ",
                        wait_sec * 1e3, 100 * wait_sec / iteration_sec) +
                    format(
                        "communication itself exposes %.3g ms: a faster network would gain "
                        "at most that.",
                        (exposed_sec - wait_sec) * 1e3);
    return l;
  }
  const std::string terms = format(
      "the all-reduces' latency terms (alpha) add up to %.3g ms, their bandwidth terms (beta) to "
      "%.3g ms",
      cost.latency_sec * 1e3, cost.bandwidth_sec * 1e3);
  if (l.exposed_fraction < kComputeBoundExposedFraction) {
    l.kind = "compute-bound";
    l.explanation = "compute-bound: " + exposed + "; faster links would gain little.";
    return l;
  }
  if (cost.latency_sec > cost.bandwidth_sec) {
    l.kind = "latency-bound";
    l.explanation = "latency-bound: " + exposed + ", and " + terms +
                    ": fewer, larger buckets or an algorithm with fewer steps would help more "
                    "than bandwidth.";
    return l;
  }
  const Busiest b = busiest(loads);
  if (b.link != nullptr && b.link->level > 0 && b.link->utilization > b.level0_utilization) {
    const auto level = static_cast<std::size_t>(b.link->level);
    const double ratio =
        level < level_oversubscription.size() ? level_oversubscription[level] : std::nan("");
    const bool non_blocking = ratio <= 1.0;  // false for NaN: unknown
    l.kind = non_blocking ? "routing-hot-spot" : "oversubscribed-level";
    l.level = b.link->level_name;
    const std::string busiest_text =
        "its busiest link " + b.link->name +
        format(" is %.1f %% utilized, more than any host link (%.1f %%)", 100 * b.link->utilization,
               100 * b.level0_utilization);
    if (non_blocking) {
      l.explanation = "bandwidth-bound at a routing hot spot of the \"" + l.level +
                      "\" level: " + exposed + ", and " + terms + "; " + busiest_text +
                      format(
                          ", though the level's switches have %.3g:1 capacity down:up (not "
                          "oversubscribed): the fabric's static routes put several flows on "
                          "this link while others of the level carry less. Another placement "
                          "or algorithm would spread them.",
                          ratio);
    } else {
      l.explanation = "bandwidth-bound at the \"" + l.level + "\" level: " + exposed + ", and " +
                      terms + "; " + busiest_text +
                      (std::isnan(ratio) ? std::string(".")
                                         : format(" (its switches: %.3g:1 down:up).", ratio));
    }
    return l;
  }
  l.kind = "bandwidth-bound";
  l.explanation =
      "bandwidth-bound: " + exposed + ", and " + terms + "; the hosts' own links are the busiest.";
  return l;
}

nlohmann::ordered_json limiter_json(const Limiter& limiter, const CommCost& cost) {
  nlohmann::ordered_json j{{"kind", limiter.kind}};
  if (!limiter.level.empty()) {
    j["level"] = limiter.level;
  }
  j["exposed_fraction"] = limiter.exposed_fraction;
  j["collective_latency_sec"] = cost.latency_sec;
  j["collective_bandwidth_sec"] = cost.bandwidth_sec;
  j["explanation"] = limiter.explanation;
  return j;
}

}  // namespace dtsim::sim
