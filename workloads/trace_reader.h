// Reads workload traces (format in workloads/FORMAT.md) and checks them completely.
#ifndef DTSIM_WORKLOADS_TRACE_READER_H_
#define DTSIM_WORKLOADS_TRACE_READER_H_

#include <string>

#include <nlohmann/json.hpp>

#include "workloads/trace.h"

namespace dtsim::workloads {

// Reads and validates the trace at `path`.
// Throws TraceError naming `path` and the JSON pointer of every problem found (all at once):
// missing file, malformed JSON, wrong types, unknown keys, negative times, duplicate names.
[[nodiscard]] Workload read_workload(const std::string& path);

// As read_workload, from an already parsed document; `file` only labels the messages.
[[nodiscard]] Workload workload_from_json(const nlohmann::json& doc, const std::string& file);

}  // namespace dtsim::workloads

#endif  // DTSIM_WORKLOADS_TRACE_READER_H_
