#include "workloads/validate.h"

#include <cmath>
#include <map>
#include <sstream>
#include <utility>

#include "workloads/parsing/json_fields.h"
#include "workloads/parsing/units.h"

namespace dtsim::workloads {

namespace {

std::string number_text(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

void check_non_negative(double v, const std::string& pointer, std::vector<std::string>& problems) {
  if (!std::isfinite(v) || v < 0) {
    problems.push_back(pointer + ": expected a finite number >= 0, got " + number_text(v));
  }
}

// A time in seconds: finite, from 0 to parsing::kMaxDurationSec.
void check_duration(double v, const std::string& pointer, std::vector<std::string>& problems) {
  if (std::isfinite(v) && v > parsing::kMaxDurationSec) {
    problems.push_back(pointer + ": expected at most 1e9 s, got " + number_text(v));
    return;
  }
  check_non_negative(v, pointer, problems);
}

// The trace's own fields: format, measurement, model, batch, optimizer.
void check_header(const Workload& w, std::vector<std::string>& problems) {
  if (w.format_version < kOldestFormatVersion || w.format_version > kFormatVersion) {
    problems.push_back("/format_version: unsupported version " + std::to_string(w.format_version));
  }
  if (w.measurement) {
    if (w.format_version == 1) {
      problems.push_back("/measurement: needs format_version 2");
    }
    const Measurement& m = *w.measurement;
    if (m.clock != "cuda_events" && m.clock != "thread_cpu" && m.clock != "wall") {
      problems.push_back("/measurement/clock: expected cuda_events, thread_cpu or wall, got \"" +
                         m.clock + "\"");
    }
    if (m.timed_iterations < 1) {
      problems.push_back("/measurement/timed_iterations: expected an integer >= 1, got " +
                         std::to_string(m.timed_iterations));
    }
  }
  if (w.model.empty()) {
    problems.push_back("/model: must not be empty");
  }
  if (w.batch_per_device <= 0) {
    problems.push_back("/batch_per_device: expected an integer > 0, got " +
                       std::to_string(w.batch_per_device));
  }
  check_duration(w.optimizer_sec, "/optimizer_sec", problems);
  if (w.layers.empty()) {
    problems.push_back("/layers: a trace needs at least one layer");
  }
}

// Layer `i` of a trace of `format_version`; `first_index`: the layers named so far.
void check_layer(const Layer& layer, std::size_t i, int format_version,
                 std::map<std::string, std::size_t>& first_index,
                 std::vector<std::string>& problems) {
  const std::string pointer = "/layers/" + std::to_string(i);
  if (layer.param_bytes > kMaxBytes) {
    problems.push_back(pointer + "/param_bytes: expected at most 2^50 (1 PiB), got " +
                       std::to_string(layer.param_bytes));
  }
  if (layer.name.empty()) {
    problems.push_back(pointer + "/name: must not be empty");
  } else if (auto [it, inserted] = first_index.emplace(layer.name, i); !inserted) {
    problems.push_back(pointer + "/name: \"" + parsing::printable(layer.name) +
                       "\" already names /layers/" + std::to_string(it->second));
  }
  check_duration(layer.forward_sec, pointer + "/forward_sec", problems);
  check_duration(layer.backward_sec, pointer + "/backward_sec", problems);
  if (layer.forward_flops) {
    check_non_negative(*layer.forward_flops, pointer + "/forward_flops", problems);
  }
  for (const auto& [key, value] : {std::pair{"forward_iqr_sec", layer.forward_iqr_sec},
                                   std::pair{"backward_iqr_sec", layer.backward_iqr_sec}}) {
    if (!value) {
      continue;
    }
    check_duration(*value, pointer + "/" + key, problems);
    if (format_version == 1) {
      problems.push_back(pointer + "/" + key + ": needs format_version 2");
    }
  }
  if (layer.activation_bytes) {
    if (*layer.activation_bytes > kMaxBytes) {
      problems.push_back(pointer + "/activation_bytes: expected at most 2^50 (1 PiB), got " +
                         std::to_string(*layer.activation_bytes));
    }
    if (format_version < 3) {
      problems.push_back(pointer + "/activation_bytes: needs format_version 3");
    }
  }
}

}  // namespace

std::vector<std::string> validate(const Workload& w) {
  std::vector<std::string> problems;
  check_header(w, problems);
  std::map<std::string, std::size_t> first_index;
  double total_param_bytes = 0;
  bool layer_too_large = false;
  for (std::size_t i = 0; i < w.layers.size(); ++i) {
    total_param_bytes += static_cast<double>(w.layers[i].param_bytes);
    layer_too_large = layer_too_large || w.layers[i].param_bytes > kMaxBytes;
    check_layer(w.layers[i], i, w.format_version, first_index, problems);
  }
  // Checked once every layer is within bounds, so that one huge layer gives one problem.
  if (!layer_too_large && total_param_bytes > static_cast<double>(kMaxBytes)) {
    problems.push_back("/layers: the layers' param_bytes add up to more than 2^50 (1 PiB)");
  }
  return problems;
}

}  // namespace dtsim::workloads
