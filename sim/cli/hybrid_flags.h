// The hybrid-parallelism flags of `dtsim simulate` (--model, --parallel, --schedule, --zero, ...)
// and their translation into a HybridConfig. Part of the dtsim command line.
#ifndef DTSIM_SIM_CLI_HYBRID_FLAGS_H_
#define DTSIM_SIM_CLI_HYBRID_FLAGS_H_

#include <string>

#include <boost/program_options.hpp>

#include "sim/run/hybrid_run.h"

namespace dtsim::sim {

struct HybridFlags {
  std::string model, device, precision, parallel, rank_order, schedule, recompute, stage_layers;
  std::string cross_entropy, fsdp_unshard, attention, fp8_recipe;
  int micro_batch = 1;
  int global_batch = 0;
  int seq_len = 0;
  int image_size = 0;
  int zero = 0;
  int dp_shard = 0;
  int cp = 0;  // 0: not given (--parallel's, else 1)
  int ep = 0;
  bool sequence_parallel = false;
  bool tp_overlap = false;
  bool checkpoint_early_stop = false;
};

// The "Hybrid parallelism" flags, bound to `flags`.
[[nodiscard]] boost::program_options::options_description hybrid_flags(HybridFlags& flags);

// The kernel `--attention NAME` names. Throws ConfigError naming the flag for another name.
[[nodiscard]] workloads::AttentionKernel attention_flag(const std::string& name);

// The recipe `--fp8-recipe NAME` names. Throws ConfigError naming the flag for another name.
[[nodiscard]] workloads::Fp8Recipe fp8_recipe_flag(const std::string& name);

// Whether the flags ask for a hybrid-parallel run (--model or --parallel given).
[[nodiscard]] bool wants_hybrid(const HybridFlags& flags);

// The config of `flags` with `run`, a trace at `workload_path` if no --model, and the shared
// job flags. Throws ConfigError naming the flag for bad text.
[[nodiscard]] HybridConfig hybrid_config(const HybridFlags& flags, const RunOptions& run,
                                         const std::string& workload_path,
                                         std::uint64_t bucket_cap_bytes, int iterations);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_CLI_HYBRID_FLAGS_H_
