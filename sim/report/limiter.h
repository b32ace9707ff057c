// What limits scaling in a data-parallel iteration, in plain words (the summary's "limited by"
// line and the report's result.limiter):
//   - "straggler-bound": exposed communication is at least kComputeBoundExposedFraction of the
//     iteration, and most of it is the other ranks waiting for the slowest rank's compute (a
//     slow GPU, platform perturbations) rather than communication itself;
//   - "compute-bound": exposed communication is under kComputeBoundExposedFraction of the
//     iteration; faster links would gain little;
//   - "latency-bound": otherwise, if the all-reduces' latency terms (alpha: steps on the critical
//     path times the longest route latency, plus collapsed steps' waits) exceed their bandwidth
//     terms (beta: the busiest link's bytes / its bandwidth), summed over the iteration's buckets
//     (schedule_cost.h's schedule_shape);
//   - "oversubscribed-level": otherwise, if the most utilized link of the iteration (link
//     report) lies above the hosts' own links and is busier than every one of them: that level
//     (named as link_report.h names levels) is the bottleneck;
//   - "routing-hot-spot": the same, where the level is known not to be oversubscribed (its
//     switches have as much capacity up as down: a non-blocking fat-tree level): the level has
//     the capacity, and the fabric's static routes put several flows on its busiest link;
//   - "bandwidth-bound": otherwise.
#ifndef DTSIM_SIM_REPORT_LIMITER_H_
#define DTSIM_SIM_REPORT_LIMITER_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/collectives/collective_algorithm.h"
#include "sim/report/link_report.h"

namespace dtsim::sim {

inline constexpr double kComputeBoundExposedFraction = 0.10;

// The alpha and beta parts of collectives' cost, in seconds.
struct CommCost {
  double latency_sec = 0;
  double bandwidth_sec = 0;
  CommCost& operator+=(const CommCost& o) {
    latency_sec += o.latency_sec;
    bandwidth_sec += o.bandwidth_sec;
    return *this;
  }
};

// The alpha and beta parts of one schedule on the topology of `hints`.
[[nodiscard]] CommCost comm_cost(const Schedule& schedule, const TopologyHints& hints);

struct Limiter {
  std::string kind;             // "straggler-bound", "compute-bound", "latency-bound",
                                // "bandwidth-bound", "oversubscribed-level", "routing-hot-spot"
  std::string level;            // oversubscribed-level, routing-hot-spot: the level's name
  double exposed_fraction = 0;  // exposed communication / iteration time
  std::string explanation;      // one or two sentences for people
};

// What a rank slower than the others costs: its compute and who it is.
struct Straggler {
  double compute_sec = 0;  // 0: no rank computes longer than compute_sec
  int rank = 0;
};

// `compute_sec`: a healthy rank's compute; `level_oversubscription[L]`: the down:up capacity
// ratio of the switches below link level L (NaN or absent where unknown; link_report.h).
// REQUIRES: iteration_sec > 0.
[[nodiscard]] Limiter find_limiter(double iteration_sec, double compute_sec, const CommCost& cost,
                                   const std::vector<LinkLoad>& loads, Straggler straggler = {},
                                   const std::vector<double>& level_oversubscription = {});

// {"kind", ["level",] "exposed_fraction", "collective_latency_sec",
// "collective_bandwidth_sec", "explanation"}
[[nodiscard]] nlohmann::ordered_json limiter_json(const Limiter& limiter, const CommCost& cost);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_REPORT_LIMITER_H_
