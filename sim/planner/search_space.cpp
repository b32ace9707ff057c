#include "sim/planner/search_space.h"

#include <vector>

namespace dtsim::sim {

namespace {

bool tp_allowed(const SearchSpace& s, int tp) {
  const workloads::TransformerArch& a = s.arch;
  if (tp > 1 && !s.strategies.tp) {
    return false;
  }
  const bool kv = a.kv_heads % tp == 0 || tp % a.kv_heads == 0;
  return a.heads % tp == 0 && a.ffn_hidden % tp == 0 && kv &&
         (s.tp_across_nodes || tp <= s.gpus_per_node);
}

bool cp_allowed(const SearchSpace& s, int cp) {
  return cp == 1 || (s.strategies.cp && s.seq_len % (2 * cp) == 0);
}

bool pp_allowed(const SearchSpace& s, int pp) {
  return pp == 1 || (s.strategies.pp && s.arch.layers % pp == 0);
}

std::vector<PipelineSchedule> schedules(const SearchSpace& s, int pp, int micro_batches) {
  if (pp == 1) {
    return {{}};
  }
  std::vector<PipelineSchedule> out{{.kind = PipelineScheduleKind::kGpipe}, {}};
  for (int v : divisors(s.arch.layers / pp)) {
    const PipelineSchedule interleaved{.kind = PipelineScheduleKind::kInterleaved,
                                       .virtual_stages = v};
    if (v >= 2 && check_pipeline(interleaved, pp, micro_batches).empty()) {
      out.push_back(interleaved);
    }
  }
  return out;
}

// Every job knob for one set of degrees and micro-batch size, appended to `out`.
void add_knobs(const SearchSpace& s, const ParallelDegrees& d, int micro_batch,
               std::vector<PlanCandidate>& out) {
  const int micro_batches = s.global_batch / (micro_batch * d.dp);
  const int zero_max = !s.strategies.zero || d.dp * d.cp == 1 ? 0 : s.arch.experts > 1 ? 2 : 3;
  std::vector<workloads::Recompute> recomputes{workloads::Recompute::kNone};
  if (s.strategies.recompute) {
    recomputes.push_back(workloads::Recompute::kSelective);
    if (workloads::has_selective_op(s.arch)) {  // torchtitan's op-level policy, Llama blocks
      recomputes.push_back(workloads::Recompute::kSelectiveOp);
    }
    recomputes.push_back(workloads::Recompute::kFull);
  }
  const bool sp_choice = s.strategies.sp && d.tp > 1;
  // 0: no sequence parallelism, 1: with it, 2: with it and overlapped TP.
  const int sp_last = !sp_choice ? 0 : s.strategies.tp_overlap ? 2 : 1;
  for (const PipelineSchedule& schedule : schedules(s, d.pp, micro_batches)) {
    for (int zero = 0; zero <= zero_max; ++zero) {
      for (const workloads::Recompute recompute : recomputes) {
        for (int sp = 0; sp <= sp_last; ++sp) {
          out.push_back({.degrees = d,
                         .micro_batch = micro_batch,
                         .micro_batches = micro_batches,
                         .schedule = schedule,
                         .zero_stage = zero,
                         .recompute = recompute,
                         .checkpoint_early_stop =
                             s.checkpoint_early_stop && recompute == workloads::Recompute::kFull,
                         .sequence_parallel = sp >= 1,
                         .tp_overlap = sp == 2});
        }
      }
    }
  }
}

}  // namespace

std::vector<int> divisors(int n) {
  std::vector<int> out;
  for (int d = 1; d <= n; ++d) {
    if (n % d == 0) {
      out.push_back(d);
    }
  }
  return out;
}

std::optional<StrategySet> parse_strategies(std::string_view text, std::string* why) {
  StrategySet set{.tp = false,
                  .pp = false,
                  .cp = false,
                  .zero = false,
                  .recompute = false,
                  .sp = false,
                  .tp_overlap = false,
                  .spatial = false,
                  .filter = false,
                  .channel = false};
  bool dp = false;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(',', start), text.size());
    const std::string_view name = text.substr(start, end - start);
    bool* flag = name == "tp"           ? &set.tp
                 : name == "pp"         ? &set.pp
                 : name == "cp"         ? &set.cp
                 : name == "zero"       ? &set.zero
                 : name == "recompute"  ? &set.recompute
                 : name == "sp"         ? &set.sp
                 : name == "tp-overlap" ? &set.tp_overlap
                 : name == "spatial"    ? &set.spatial
                 : name == "filter"     ? &set.filter
                 : name == "channel"    ? &set.channel
                 : name == "dp"         ? &dp
                                        : nullptr;
    if (flag == nullptr) {
      *why = "unknown strategy \"" + std::string(name) +
             "\" (expected tp, pp, dp, cp, zero, recompute, sp, tp-overlap; for a CNN dp, pp, "
             "spatial, filter, channel)";
      return std::nullopt;
    }
    if (*flag) {
      *why = "strategy \"" + std::string(name) + "\" given twice";
      return std::nullopt;
    }
    *flag = true;
    start = end + 1;
  }
  return set;
}

std::vector<PlanCandidate> enumerate_candidates(const SearchSpace& s) {
  std::vector<PlanCandidate> out;
  for (int tp : divisors(s.gpus)) {
    if (!tp_allowed(s, tp)) {
      continue;
    }
    for (int cp : divisors(s.gpus / tp)) {
      if (!cp_allowed(s, cp)) {
        continue;
      }
      for (int pp : divisors(s.gpus / (tp * cp))) {
        const int dp = s.gpus / (tp * cp * pp);
        if (!pp_allowed(s, pp) || s.global_batch % dp != 0) {
          continue;
        }
        const ParallelDegrees d{.tp = tp, .cp = cp, .dp = dp, .pp = pp};
        for (int micro_batch : divisors(s.global_batch / dp)) {
          add_knobs(s, d, micro_batch, out);
        }
      }
    }
  }
  return out;
}

}  // namespace dtsim::sim
