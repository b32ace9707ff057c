// Writes workload traces in the format of workloads/FORMAT.md (used by generators and tests).
#ifndef DTSIM_WORKLOADS_TRACE_WRITER_H_
#define DTSIM_WORKLOADS_TRACE_WRITER_H_

#include <string>

#include <nlohmann/json.hpp>

#include "workloads/trace.h"

namespace dtsim::workloads {

// The JSON document for `workload`; keys in the order FORMAT.md lists them.
[[nodiscard]] nlohmann::ordered_json workload_to_json(const Workload& workload);

// Writes `workload` to `path` (2-space indented, trailing newline). Throws TraceError if the file
// cannot be written. read_workload(path) then returns an equal Workload.
void write_workload(const Workload& workload, const std::string& path);

}  // namespace dtsim::workloads

#endif  // DTSIM_WORKLOADS_TRACE_WRITER_H_
