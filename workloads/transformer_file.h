// A transformer that is not in the catalogue, read from a JSON file: dtsim's own keys, or the
// `config.json` Hugging Face ships with a model of a family dtsim models (workloads/
// TRANSFORMER.md, "Your own model").
//
//   if (is_transformer_file(model)) arch = read_transformer_file(model);  // throws TraceError
#ifndef DTSIM_WORKLOADS_TRANSFORMER_FILE_H_
#define DTSIM_WORKLOADS_TRANSFORMER_FILE_H_

#include <optional>
#include <string>
#include <string_view>

#include "workloads/transformer.h"

namespace dtsim::workloads {

// Whether `model` (a --model value) names an architecture file rather than a catalogue entry:
// it ends in ".json".
[[nodiscard]] bool is_transformer_file(std::string_view model);

// The architecture in the file at `path`, checked as the catalogue's are. Throws TraceError
// listing every problem as "<path>: <JSON pointer>: <what is wrong>", e.g.
// "m.json: /heads: 30: does not divide hidden 4096".
[[nodiscard]] TransformerArch read_transformer_file(const std::string& path);

// `model` as --model takes it: an architecture file (read, or TraceError), a catalogue entry
// (a copy), or nullopt for a name the catalogue does not hold.
[[nodiscard]] std::optional<TransformerArch> find_or_read_transformer(const std::string& model);

}  // namespace dtsim::workloads

#endif  // DTSIM_WORKLOADS_TRANSFORMER_FILE_H_
