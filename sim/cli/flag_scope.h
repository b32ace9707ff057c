// Which of `dtsim simulate`'s flags each kind of run uses, so that a flag given to a run that
// would not read it is an error naming it rather than silently ignored. Part of the dtsim command
// line.
//
//   dtsim simulate --workload resnet50.json --ranks 8 --zero 3      # refused: --zero is hybrid
//   dtsim simulate --model gpt3-1.3b --parallel tp=2 --overlap none  # refused: data-parallel only
#ifndef DTSIM_SIM_CLI_FLAG_SCOPE_H_
#define DTSIM_SIM_CLI_FLAG_SCOPE_H_

#include <boost/program_options.hpp>

namespace dtsim::sim {

enum class RunKind {
  kDataParallel,  // --workload W.json alone: DDP replay (sim/run/simulation.h)
  kHybrid,        // --model or --parallel (sim/strategies/HYBRID.md)
  kReplay,        // --graph or --chakra: a graph replayed as it is
};

// Throws ConfigError "--<flag> <value>: ..." for the first flag of `vm` given (on the command line
// or by a job file, not defaulted) that a run of `kind` does not use: the hybrid flags of
// `hybrid` (hybrid_flags(), but --model and --parallel, which choose the kind) outside kHybrid;
// --accumulation-steps, --overlap, --nccl-channels and --bucket-kernels outside kDataParallel (a
// hybrid run accumulates by --global-batch); --bucket-mb and --iterations for kReplay.
void reject_unused_flags(const boost::program_options::variables_map& vm,
                         const boost::program_options::options_description& hybrid, RunKind kind);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_CLI_FLAG_SCOPE_H_
