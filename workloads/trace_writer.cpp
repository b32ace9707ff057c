#include "workloads/trace_writer.h"

#include "workloads/parsing/output_file.h"
#include "workloads/trace_error.h"

namespace dtsim::workloads {

nlohmann::ordered_json workload_to_json(const Workload& w) {
  nlohmann::ordered_json doc;
  doc["format_version"] = w.format_version;
  doc["model"] = w.model;
  doc["device"] = w.device;
  doc["precision"] = w.precision;
  doc["batch_per_device"] = w.batch_per_device;
  doc["source"] = w.source;
  doc["optimizer_sec"] = w.optimizer_sec;
  doc["layers"] = nlohmann::ordered_json::array();
  for (const Layer& layer : w.layers) {
    nlohmann::ordered_json j;
    j["name"] = layer.name;
    j["forward_sec"] = layer.forward_sec;
    j["backward_sec"] = layer.backward_sec;
    j["param_bytes"] = layer.param_bytes;
    if (layer.forward_flops) {
      j["forward_flops"] = *layer.forward_flops;
    }
    if (layer.forward_iqr_sec) {
      j["forward_iqr_sec"] = *layer.forward_iqr_sec;
    }
    if (layer.backward_iqr_sec) {
      j["backward_iqr_sec"] = *layer.backward_iqr_sec;
    }
    if (layer.activation_bytes) {
      j["activation_bytes"] = *layer.activation_bytes;
    }
    doc["layers"].push_back(std::move(j));
  }
  if (w.measurement) {
    const Measurement& m = *w.measurement;
    doc["measurement"] = {{"tool", m.tool},
                          {"framework", m.framework},
                          {"clock", m.clock},
                          {"warmup_iterations", m.warmup_iterations},
                          {"timed_iterations", m.timed_iterations},
                          {"date", m.date},
                          {"host", m.host}};
  }
  return doc;
}

void write_workload(const Workload& w, const std::string& path) {
  try {
    parsing::write_output_file(path, workload_to_json(w).dump(2) + "\n");
  } catch (const parsing::OutputError& e) {
    throw TraceError(path + ": cannot write workload trace (" + e.what() + ")");
  }
}

}  // namespace dtsim::workloads
