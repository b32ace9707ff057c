// The pieces hybrid parallelism shards (hybrid.h) from a workload trace, measured or generated:
// one device runs the whole model, so only data parallelism and ZeRO apply. (The transformer
// description gives pieces under TP, CP and EP: transformer_model.h.)
#ifndef DTSIM_SIM_STRATEGIES_MODEL_PIECES_H_
#define DTSIM_SIM_STRATEGIES_MODEL_PIECES_H_

#include "sim/strategies/hybrid.h"
#include "workloads/trace.h"

namespace dtsim::sim {

// One piece per layer, one unit each; weights gathered in the trace's precision (2 bytes per
// fp32 gradient byte pair for fp16 and bf16), gradients as the trace gives them, and the
// layer's activation_bytes (trace format 3) as its output: a pipeline stage can end after a
// layer whose trace gives them. No tensor parallelism: a trace is one device's whole model.
[[nodiscard]] HybridModel model_from_trace(const workloads::Workload& workload);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_STRATEGIES_MODEL_PIECES_H_
