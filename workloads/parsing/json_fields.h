// Typed access to JSON object fields that records problems instead of throwing, so a reader can
// report every problem of a file at once. Shared by the trace and platform readers.
#ifndef DTSIM_WORKLOADS_PARSING_JSON_FIELDS_H_
#define DTSIM_WORKLOADS_PARSING_JSON_FIELDS_H_

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace dtsim::parsing {

// Reads the fields of one JSON object found at JSON pointer `pointer` (e.g. "/layers/3").
// Each getter returns nothing and appends "<pointer>/<key>: <problem>" to `problems` when the
// field is missing (if required) or has the wrong type. The object must outlive the reader.
class JsonFields {
 public:
  JsonFields(const nlohmann::json& object, std::string pointer, std::vector<std::string>& problems);

  [[nodiscard]] bool is_object() const { return object_.is_object(); }
  [[nodiscard]] bool has(const char* key) const;

  [[nodiscard]] std::optional<std::string> string(const char* key, bool required = true);
  [[nodiscard]] std::optional<double> number(const char* key, bool required = true);
  [[nodiscard]] std::optional<std::int64_t> integer(const char* key, bool required = true);
  [[nodiscard]] std::optional<std::uint64_t> unsigned_integer(const char* key,
                                                              bool required = true);
  // A JSON array of non-negative integers.
  [[nodiscard]] std::optional<std::vector<std::uint64_t>> unsigned_array(const char* key,
                                                                         bool required = true);
  // The raw value, or nullptr (with a problem recorded if `required`).
  [[nodiscard]] const nlohmann::json* value(const char* key, bool required = true);

  // Records "<pointer>/<key>: unknown key (expected one of a, b, c)" for every key not in `known`.
  void reject_unknown(std::initializer_list<const char*> known);

  // The fields of `value`, the member `key` of this object; problems go to the same list.
  [[nodiscard]] JsonFields child(const nlohmann::json& value, const std::string& key) const {
    return JsonFields(value, pointer_ + "/" + key, problems_);
  }

  // Records a problem about `key` (empty key: about the object itself).
  void problem(const std::string& key, const std::string& message);

  [[nodiscard]] const std::string& pointer() const { return pointer_; }

 private:
  const nlohmann::json& object_;
  std::string pointer_;
  std::vector<std::string>& problems_;
};

// A short rendering of a JSON value for messages: strings quoted, long values cut.
[[nodiscard]] std::string describe_json(const nlohmann::json& value);
// The same for a document that keeps its keys' order (no copy: copying a value nested 100,000
// deep overflows the stack).
[[nodiscard]] std::string describe_ordered_json(const nlohmann::ordered_json& value);

// Whether `text` is valid UTF-8 (what a JSON document may hold).
[[nodiscard]] bool is_valid_utf8(std::string_view text);

// `text` for a message, bounded: control characters, quotes, backslashes and bytes that are not
// valid UTF-8 written as \xHH, cut after 64 bytes with "...". Always valid UTF-8.
//   printable("a\xff") == "a\\xFF"
[[nodiscard]] std::string printable(std::string_view text);

}  // namespace dtsim::parsing

#endif  // DTSIM_WORKLOADS_PARSING_JSON_FIELDS_H_
