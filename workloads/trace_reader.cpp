#include "workloads/trace_reader.h"

#include <filesystem>
#include <fstream>
#include <limits>

#include "workloads/parsing/input_file.h"
#include "workloads/parsing/json_fields.h"
#include "workloads/trace_error.h"
#include "workloads/validate.h"

namespace dtsim::workloads {

using parsing::describe_json;
using parsing::JsonFields;

using nlohmann::json;

namespace {

[[noreturn]] void throw_problems(const std::string& file,
                                 const std::vector<std::string>& problems) {
  std::string message;
  for (const std::string& p : problems) {
    message += (message.empty() ? "" : "\n") + file + ": " + p;
  }
  throw TraceError(message);
}

// "/layers/3/name" of "/layers/3/name: must not be empty".
std::string pointer_of(const std::string& problem) {
  return problem.substr(0, problem.find(": "));
}

Layer read_layer(const json& doc, const std::string& pointer, std::vector<std::string>& problems) {
  JsonFields f(doc, pointer, problems);
  f.reject_unknown({"name", "forward_sec", "backward_sec", "param_bytes", "forward_flops",
                    "forward_iqr_sec", "backward_iqr_sec", "activation_bytes"});
  Layer layer;
  layer.name = f.string("name").value_or("");
  layer.forward_sec = f.number("forward_sec").value_or(0);
  layer.backward_sec = f.number("backward_sec").value_or(0);
  layer.param_bytes = f.unsigned_integer("param_bytes").value_or(0);
  layer.forward_flops = f.number("forward_flops", /*required=*/false);
  layer.forward_iqr_sec = f.number("forward_iqr_sec", /*required=*/false);
  layer.backward_iqr_sec = f.number("backward_iqr_sec", /*required=*/false);
  layer.activation_bytes = f.unsigned_integer("activation_bytes", /*required=*/false);
  return layer;
}

int read_count(JsonFields& f, const char* key) {
  auto v = f.integer(key);
  if (v && (*v < 0 || *v > std::numeric_limits<int>::max())) {
    f.problem(key, "expected an integer between 0 and 2147483647, got " + std::to_string(*v));
    return 0;
  }
  return static_cast<int>(v.value_or(0));
}

Measurement read_measurement(const json& doc, std::vector<std::string>& problems) {
  JsonFields f(doc, "/measurement", problems);
  f.reject_unknown(
      {"tool", "framework", "clock", "warmup_iterations", "timed_iterations", "date", "host"});
  Measurement m;
  m.tool = f.string("tool").value_or("");
  m.framework = f.string("framework").value_or("");
  m.clock = f.string("clock").value_or("");
  m.warmup_iterations = read_count(f, "warmup_iterations");
  m.timed_iterations = read_count(f, "timed_iterations");
  m.date = f.string("date").value_or("");
  m.host = f.string("host").value_or("");
  return m;
}

}  // namespace

Workload workload_from_json(const json& doc, const std::string& file) {
  std::vector<std::string> problems;
  JsonFields f(doc, "", problems);
  f.reject_unknown({"format_version", "model", "device", "precision", "batch_per_device", "source",
                    "optimizer_sec", "layers", "measurement"});
  Workload w;
  if (auto version = f.integer("format_version")) {
    if (*version < kOldestFormatVersion || *version > kFormatVersion) {
      // Nothing else can be trusted in a file of another version.
      f.problem("format_version", "unsupported version " + std::to_string(*version) +
                                      " (this dtsim reads versions " +
                                      std::to_string(kOldestFormatVersion) + " to " +
                                      std::to_string(kFormatVersion) + ")");
      throw_problems(file, problems);
    }
    w.format_version = static_cast<int>(*version);
  }
  w.model = f.string("model").value_or("");
  w.device = f.string("device").value_or("");
  w.precision = f.string("precision").value_or("");
  const auto batch = f.integer("batch_per_device");
  if (batch &&
      (*batch < std::numeric_limits<int>::min() || *batch > std::numeric_limits<int>::max())) {
    // Would wrap in an int (4294967297 -> 1).
    f.problem("batch_per_device",
              "expected an integer between 1 and 2147483647, got " + std::to_string(*batch));
  } else {
    w.batch_per_device = static_cast<int>(batch.value_or(1));
  }
  w.source = f.string("source").value_or("");
  w.optimizer_sec = f.number("optimizer_sec").value_or(0);
  if (const json* layers = f.value("layers")) {
    if (!layers->is_array()) {
      f.problem("layers", "expected an array of layers, got " + describe_json(*layers));
    } else {
      for (std::size_t i = 0; i < layers->size(); ++i) {
        w.layers.push_back(read_layer((*layers)[i], "/layers/" + std::to_string(i), problems));
      }
    }
  }
  if (const json* m = f.value("measurement", /*required=*/false)) {
    w.measurement = read_measurement(*m, problems);
  }
  // Semantic problems too, except where a field already failed to read (it holds a default).
  const std::size_t read_problems = problems.size();
  for (const std::string& p : validate(w)) {
    const std::string pointer = pointer_of(p);
    bool already = false;
    for (std::size_t i = 0; i < read_problems; ++i) {
      // The same field, a field inside it, or an object enclosing it ("/": the document).
      const std::string read = pointer_of(problems[i]);
      already = already || read == "/" || read == pointer || read.starts_with(pointer + "/") ||
                pointer.starts_with(read + "/");
    }
    if (!already) {
      problems.push_back(p);
    }
  }
  if (!problems.empty()) {
    throw_problems(file, problems);
  }
  return w;
}

Workload read_workload(const std::string& path) {
  std::string text;
  try {
    text = parsing::read_input_file(path, "workload trace");
  } catch (const parsing::InputFileError& e) {
    throw TraceError(e.what());
  }
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {  // parse_error, or out_of_range for a number like 1e400
    throw TraceError(path + ": " + e.what());
  }
  return workload_from_json(doc, path);
}

}  // namespace dtsim::workloads
