// What limits scaling in a data-parallel iteration, in plain words (the summary's "limited by"
// line and the report's result.limiter):
//   - "compute-bound": exposed communication is under kComputeBoundExposedFraction of the
//     iteration; faster links would gain little;
//   - "latency-bound": otherwise, if the all-reduces' latency terms (alpha: steps on the critical
//     path times the longest route latency, plus collapsed steps' waits) exceed their bandwidth
//     terms (beta: the busiest link's bytes / its bandwidth), summed over the iteration's buckets
//     (schedule_cost.h's schedule_shape);
//   - "oversubscribed-level": otherwise, if the most utilized link of the iteration (link
//     report) lies above the hosts' own links and is busier than every one of them: that level
//     (named as link_report.h names levels) is the bottleneck;
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
  std::string kind;             // "compute-bound", "latency-bound", "bandwidth-bound",
                                // "oversubscribed-level"
  std::string level;            // oversubscribed-level: the level's name
  double exposed_fraction = 0;  // exposed communication / iteration time
  std::string explanation;      // one or two sentences for people
};

// REQUIRES: iteration_sec > 0.
[[nodiscard]] Limiter find_limiter(double iteration_sec, double compute_sec, const CommCost& cost,
                                   const std::vector<LinkLoad>& loads);

// {"kind", ["level",] "exposed_fraction", "collective_latency_sec",
// "collective_bandwidth_sec", "explanation"}
[[nodiscard]] nlohmann::ordered_json limiter_json(const Limiter& limiter, const CommCost& cost);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_REPORT_LIMITER_H_
