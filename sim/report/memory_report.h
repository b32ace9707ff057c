// The memory model's result (sim/strategies/memory.h) as the reports print it: a JSON object
// (the "memory" of `dtsim simulate`'s and `dtsim memory`'s reports) and text for people, in GiB
// (2^30 bytes, as torch.cuda and nvidia-smi count).
#ifndef DTSIM_SIM_REPORT_MEMORY_REPORT_H_
#define DTSIM_SIM_REPORT_MEMORY_REPORT_H_

#include <string>

#include <nlohmann/json.hpp>

#include "sim/strategies/memory.h"

namespace dtsim::sim {

// {"device", "capacity_bytes", "worst_stage", "peak_bytes" (the worst stage's), "oom",
//  "stages": [{"stage", "micro_batches_in_flight", "parameters_bytes", ..., "peak_bytes"}]}:
// every size in bytes. REQUIRES: memory.stages is not empty.
[[nodiscard]] nlohmann::ordered_json memory_json(const MemoryReport& memory);

// "61.23 GiB on stage 0 (of 80.00 GiB, NVIDIA H100-SXM5-80GB): fits" or "...: OOM".
// REQUIRES: memory.stages is not empty.
[[nodiscard]] std::string memory_verdict(const MemoryReport& memory);

// One line per stage, the breakdown in GiB, then the worst stage's verdict; every line starts
// with two spaces. REQUIRES: memory.stages is not empty.
[[nodiscard]] std::string memory_table(const MemoryReport& memory);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_REPORT_MEMORY_REPORT_H_
