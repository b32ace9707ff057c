#include "sim/planner/candidate.h"

namespace dtsim::sim {

namespace {

std::string short_recompute(workloads::Recompute r) {
  switch (r) {
    case workloads::Recompute::kNone:
      return "none";
    case workloads::Recompute::kSelective:
      return "sel";
    case workloads::Recompute::kFull:
      return "full";
  }
  return "none";
}

}  // namespace

std::string candidate_name(const PlanCandidate& c) {
  const ParallelDegrees& d = c.degrees;
  std::string name = "tp" + std::to_string(d.tp) + " pp" + std::to_string(d.pp) + " dp" +
                     std::to_string(d.dp) + " cp" + std::to_string(d.cp) + " mb" +
                     std::to_string(c.micro_batch) + " " + pipeline_schedule_name(c.schedule) +
                     " z" + std::to_string(c.zero_stage) + " " + short_recompute(c.recompute);
  return c.sequence_parallel ? name + " sp" : name;
}

std::vector<std::string> candidate_flags(const PlanCandidate& c) {
  const ParallelDegrees& d = c.degrees;
  std::vector<std::string> flags{"--parallel",
                                 "tp=" + std::to_string(d.tp) + ",pp=" + std::to_string(d.pp) +
                                     ",dp=" + std::to_string(d.dp) + ",cp=" + std::to_string(d.cp),
                                 "--micro-batch",
                                 std::to_string(c.micro_batch),
                                 "--schedule",
                                 pipeline_schedule_name(c.schedule),
                                 "--zero",
                                 std::to_string(c.zero_stage),
                                 "--recompute",
                                 std::string(workloads::recompute_name(c.recompute))};
  if (c.sequence_parallel) {
    flags.emplace_back("--sequence-parallel");
  }
  return flags;
}

}  // namespace dtsim::sim
