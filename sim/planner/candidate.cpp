#include "sim/planner/candidate.h"

namespace dtsim::sim {

namespace {

std::string short_recompute(workloads::Recompute r) {
  switch (r) {
    case workloads::Recompute::kNone:
      return "none";
    case workloads::Recompute::kSelective:
      return "sel";
    case workloads::Recompute::kSelectiveOp:
      return "sel-op";
    case workloads::Recompute::kFull:
      return "full";
  }
  return "none";
}

// A CNN's split as --parallel writes it ("spatial=2x2", "filter=4"; empty: none).
std::string split_text(const CnnSplit& s, const char* equals) {
  if (s.filter > 1) {
    return "filter" + std::string(equals) + std::to_string(s.filter);
  }
  if (s.channel > 1) {
    return "channel" + std::string(equals) + std::to_string(s.channel);
  }
  if (s.spatial_ranks() == 1) {
    return "";
  }
  std::string grid = std::to_string(s.spatial[0]) + "x" + std::to_string(s.spatial[1]);
  if (s.spatial[2] > 1) {
    grid += "x" + std::to_string(s.spatial[2]);
  }
  return "spatial" + std::string(equals) + grid;
}

std::string cnn_name(const PlanCandidate& c) {
  const std::string split = split_text(c.split, "");
  return "dp" + std::to_string(c.degrees.dp) + " pp" + std::to_string(c.degrees.pp) + " " +
         (split.empty() ? "data" : split) + " mb" + std::to_string(c.micro_batch) + " " +
         pipeline_schedule_name(c.schedule);
}

std::vector<std::string> cnn_flags(const PlanCandidate& c) {
  const std::string split = split_text(c.split, "=");
  return {"--parallel",
          "dp=" + std::to_string(c.degrees.dp) + ",pp=" + std::to_string(c.degrees.pp) +
              (split.empty() ? "" : "," + split),
          "--micro-batch",
          std::to_string(c.micro_batch),
          "--schedule",
          pipeline_schedule_name(c.schedule)};
}

}  // namespace

std::string candidate_name(const PlanCandidate& c) {
  if (c.cnn) {
    return cnn_name(c);
  }
  const ParallelDegrees& d = c.degrees;
  std::string name = "tp" + std::to_string(d.tp) + " pp" + std::to_string(d.pp) + " dp" +
                     std::to_string(d.dp) + " cp" + std::to_string(d.cp) + " mb" +
                     std::to_string(c.micro_batch) + " " + pipeline_schedule_name(c.schedule) +
                     " z" + std::to_string(c.zero_stage) + " " + short_recompute(c.recompute);
  return name + (c.sequence_parallel ? " sp" : "") + (c.tp_overlap ? " ov" : "");
}

std::vector<std::string> candidate_flags(const PlanCandidate& c) {
  if (c.cnn) {
    return cnn_flags(c);
  }
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
  if (c.checkpoint_early_stop) {
    flags.emplace_back("--checkpoint-early-stop");
  }
  if (c.sequence_parallel) {
    flags.emplace_back("--sequence-parallel");
  }
  if (c.tp_overlap) {
    flags.emplace_back("--tp-overlap");
  }
  return flags;
}

}  // namespace dtsim::sim
