// Reports: the JSON documents dtsim writes (--report) and the short text it prints.
// Deterministic: the same inputs give byte-identical output (ordered keys, no clocks).
#ifndef DTSIM_SIM_REPORT_H_
#define DTSIM_SIM_REPORT_H_

#include <string>

#include <nlohmann/json.hpp>

#include "sim/data_parallel.h"
#include "sim/replay.h"
#include "workloads/trace.h"

namespace dtsim::sim {

// Timing of the steady-state (last simulated) iteration of a data-parallel run. Times of day are
// relative to the iteration's start: the moment every rank finished the previous optimizer step.
struct DataParallelTimes {
  double iteration_time_sec = 0;          // last iteration end - previous iteration end
  double backward_end_sec = 0;            // last rank's backward pass done
  std::vector<double> iteration_end_sec;  // absolute simulated time at which each iteration ended
  struct BucketTimes {
    double ready_sec = 0;  // last rank's gradients of the bucket computed
    double start_sec = 0;  // first task of its all-reduce started
    double end_sec = 0;    // last task of its all-reduce ended
  };
  std::vector<BucketTimes> buckets;
};

// Reads the times of `dp`'s tasks from `times`.
[[nodiscard]] DataParallelTimes measure_data_parallel(const DataParallelGraph& dp,
                                                      const ReplayTimes& times);

// The "result" part of the simulate report: iteration_time_sec, compute_sec, exposed_comm_sec,
// scaling_efficiency, the compute breakdown and one entry per bucket.
[[nodiscard]] nlohmann::ordered_json data_parallel_result(const workloads::Workload& workload,
                                                          const DataParallelGraph& dp,
                                                          const DataParallelTimes& t);

// A few lines for people, from a report made by simulate_data_parallel.
[[nodiscard]] std::string simulate_summary(const nlohmann::ordered_json& report);

// One line for people, from a report made by simulate_collective.
[[nodiscard]] std::string collective_summary(const nlohmann::ordered_json& report);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_REPORT_H_
