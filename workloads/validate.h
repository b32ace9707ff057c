// Semantic checks of a Workload value, beyond what the JSON types enforce.
#ifndef DTSIM_WORKLOADS_VALIDATE_H_
#define DTSIM_WORKLOADS_VALIDATE_H_

#include <string>
#include <vector>

#include "workloads/trace.h"

namespace dtsim::workloads {

// Every problem of `workload`, each as "<json pointer>: <what is wrong>", in document order.
// Empty when the workload is usable. Checks: format version, non-empty names and layers,
// unique layer names, finite non-negative times and FLOPs, positive batch.
[[nodiscard]] std::vector<std::string> validate(const Workload& workload);

}  // namespace dtsim::workloads

#endif  // DTSIM_WORKLOADS_VALIDATE_H_
