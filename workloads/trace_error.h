// The one exception type of the workloads layer: a trace, or a transformer architecture file
// (transformer_file.h), that cannot be used.
#ifndef DTSIM_WORKLOADS_TRACE_ERROR_H_
#define DTSIM_WORKLOADS_TRACE_ERROR_H_

#include <stdexcept>

namespace dtsim::workloads {

// what() starts with the file name, then the JSON pointer of each problem, e.g.
// "resnet.json: /layers/3/forward_sec: expected a number >= 0, got -1".
class TraceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace dtsim::workloads

#endif  // DTSIM_WORKLOADS_TRACE_ERROR_H_
