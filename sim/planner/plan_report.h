// What `dtsim plan` prints and writes (PLANNER.md, "Output"): the final ranking (the simulated
// configurations by simulated time, then the others by estimate), a table of the best, one
// sentence on why the winner beats the runner-up, and the whole plan as JSON and CSV.
#ifndef DTSIM_SIM_PLANNER_PLAN_REPORT_H_
#define DTSIM_SIM_PLANNER_PLAN_REPORT_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/planner/planner.h"

namespace dtsim::sim {

// One configuration simulated by `dtsim simulate` (SimGrid).
struct SimulatedRun {
  int rank = 0;  // its index in PlanResult::ranked
  bool ok = false;
  double iteration_sec = 0;
  double tokens_per_sec_per_gpu = 0;
  double mfu = 0;
  std::string error;  // !ok: the simulation's first error line
};

// The plan with what the command line adds: the question and the simulations.
struct PlanOutcome {
  std::string model;
  std::string device;
  std::string platform;
  int gpus = 0;
  int global_batch = 0;
  int seq_len = 0;
  bool checkpoint_early_stop = false;  // full recompute as PyTorch's non-reentrant checkpoint
  PlanResult result;
  std::vector<SimulatedRun> simulated;
};

// Indexes into result.ranked, best first: the simulations that succeeded by simulated time
// (ties by estimate), then every other configuration by estimate.
[[nodiscard]] std::vector<int> final_order(const PlanOutcome& plan);

// The summary: the counts (enumerated, dropped and why, estimated, simulated), a table of the
// first `top` of final_order (configuration, estimated and simulated step, tokens/s/GPU, MFU,
// peak memory, limiter) and the winner's sentence.
[[nodiscard]] std::string plan_summary(const PlanOutcome& plan, int top);

// Why final_order's first beats its second: the estimate's term where the runner-up loses
// most, or the memory it saves when their times are within 0.1 %. Empty with fewer than two
// configurations.
[[nodiscard]] std::string why_winner(const PlanOutcome& plan);

// Every configuration that fits, in final order, with its estimate's terms and any simulation;
// the dropped counts; the question.
[[nodiscard]] nlohmann::ordered_json plan_json(const PlanOutcome& plan);
// The same rows as CSV, with a header line.
[[nodiscard]] std::string plan_csv(const PlanOutcome& plan);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_PLANNER_PLAN_REPORT_H_
