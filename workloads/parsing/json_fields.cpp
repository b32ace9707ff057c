#include "workloads/parsing/json_fields.h"

#include <cmath>
#include <cstdio>
#include <utility>
#include <vector>

namespace dtsim::parsing {

using nlohmann::json;

namespace {

// Parsed text stores a non-negative integer as number_unsigned, but a document built in C++
// (json(5)) stores it as number_integer: accept both.
bool is_non_negative_integer(const json& v) {
  return v.is_number_unsigned() || (v.is_number_integer() && v.get<std::int64_t>() >= 0);
}

}  // namespace

JsonFields::JsonFields(const json& object, std::string pointer, std::vector<std::string>& problems)
    : object_(object), pointer_(std::move(pointer)), problems_(problems) {
  if (!object_.is_object()) {
    problems_.push_back((pointer_.empty() ? "/" : pointer_) + ": expected an object, got " +
                        describe_json(object_));
  }
}

bool JsonFields::has(const char* key) const {
  return object_.is_object() && object_.contains(key);
}

void JsonFields::problem(const std::string& key, const std::string& message) {
  std::string where = key.empty() ? (pointer_.empty() ? "/" : pointer_) : pointer_ + "/" + key;
  problems_.push_back(where + ": " + message);
}

const json* JsonFields::value(const char* key, bool required) {
  if (!object_.is_object()) {
    return nullptr;
  }
  auto it = object_.find(key);
  if (it == object_.end()) {
    if (required) {
      problem(key, "missing");
    }
    return nullptr;
  }
  return &*it;
}

std::optional<std::string> JsonFields::string(const char* key, bool required) {
  const json* v = value(key, required);
  if (v == nullptr) {
    return std::nullopt;
  }
  if (!v->is_string()) {
    problem(key, "expected a string, got " + describe_json(*v));
    return std::nullopt;
  }
  return v->get<std::string>();
}

std::optional<double> JsonFields::number(const char* key, bool required) {
  const json* v = value(key, required);
  if (v == nullptr) {
    return std::nullopt;
  }
  if (!v->is_number()) {
    problem(key, "expected a number, got " + describe_json(*v));
    return std::nullopt;
  }
  return v->get<double>();
}

std::optional<std::int64_t> JsonFields::integer(const char* key, bool required) {
  const json* v = value(key, required);
  if (v == nullptr) {
    return std::nullopt;
  }
  if (!v->is_number_integer()) {
    problem(key, "expected an integer, got " + describe_json(*v));
    return std::nullopt;
  }
  return v->get<std::int64_t>();
}

std::optional<std::uint64_t> JsonFields::unsigned_integer(const char* key, bool required) {
  const json* v = value(key, required);
  if (v == nullptr) {
    return std::nullopt;
  }
  if (!is_non_negative_integer(*v)) {
    problem(key, "expected an integer >= 0, got " + describe_json(*v));
    return std::nullopt;
  }
  return v->get<std::uint64_t>();
}

std::optional<std::vector<std::uint64_t>> JsonFields::unsigned_array(const char* key,
                                                                     bool required) {
  const json* v = value(key, required);
  if (v == nullptr) {
    return std::nullopt;
  }
  if (!v->is_array()) {
    problem(key, "expected an array of integers >= 0, got " + describe_json(*v));
    return std::nullopt;
  }
  std::vector<std::uint64_t> out;
  bool ok = true;
  for (std::size_t i = 0; i < v->size(); ++i) {
    const json& item = (*v)[i];
    if (!is_non_negative_integer(item)) {
      problem(std::string(key) + "/" + std::to_string(i),
              "expected an integer >= 0, got " + describe_json(item));
      ok = false;
      continue;
    }
    out.push_back(item.get<std::uint64_t>());
  }
  if (!ok) {
    return std::nullopt;
  }
  return out;
}

void JsonFields::reject_unknown(std::initializer_list<const char*> known) {
  if (!object_.is_object()) {
    return;
  }
  for (const auto& [key, unused] : object_.items()) {
    bool found = false;
    for (const char* k : known) {
      found = found || key == k;
    }
    if (!found) {
      std::string list;
      for (const char* k : known) {
        list += (list.empty() ? "" : ", ") + std::string(k);
      }
      problem(printable(key), "unknown key (expected one of " + list + ")");
    }
  }
}

namespace {

// Whether `value` nests arrays or objects more than `limit` levels deep (without recursion: a
// file may nest them 100,000 deep, and dump() would overflow the stack).
template <typename Json>
bool nested_deeper_than(const Json& value, int limit) {
  std::vector<std::pair<const Json*, int>> stack{{&value, 0}};
  while (!stack.empty()) {
    const auto [v, depth] = stack.back();
    stack.pop_back();
    if (!v->is_structured()) {
      continue;
    }
    if (depth >= limit) {
      return true;
    }
    for (const Json& child : *v) {
      stack.emplace_back(&child, depth + 1);
    }
  }
  return false;
}

template <typename Json>
std::string describe(const Json& value) {
  constexpr std::size_t kMaxChars = 40;
  constexpr int kMaxDepth = 32;
  if (value.is_null()) {
    return "null";
  }
  if (nested_deeper_than(value, kMaxDepth)) {
    return std::string(value.type_name()) + " nested more than " + std::to_string(kMaxDepth) +
           " levels deep";
  }
  // Invalid UTF-8 cannot come from a parsed file, but a value built in C++ may hold it.
  std::string text = value.dump(-1, ' ', false, Json::error_handler_t::replace);
  if (text.size() > kMaxChars) {
    text = text.substr(0, kMaxChars) + "...";
  }
  return std::string(value.type_name()) + " " + text;
}

}  // namespace

std::string describe_json(const json& value) {
  return describe(value);
}

std::string describe_ordered_json(const nlohmann::ordered_json& value) {
  return describe(value);
}

namespace {

// The length of the valid UTF-8 sequence that starts `text`, or 0.
std::size_t utf8_sequence_length(std::string_view text) {
  const auto byte = [&](std::size_t i) {
    return static_cast<unsigned char>(text[i]);
  };
  const unsigned char lead = byte(0);
  std::size_t length = 0;
  unsigned char low = 0x80, high = 0xBF;  // the range of the second byte
  if (lead < 0x80) {
    return 1;
  }
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    low = lead == 0xE0 ? 0xA0 : 0x80;   // no overlong forms
    high = lead == 0xED ? 0x9F : 0xBF;  // no surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    low = lead == 0xF0 ? 0x90 : 0x80;
    high = lead == 0xF4 ? 0x8F : 0xBF;  // at most U+10FFFF
  } else {
    return 0;
  }
  if (text.size() < length || byte(1) < low || byte(1) > high) {
    return 0;
  }
  for (std::size_t i = 2; i < length; ++i) {
    if (byte(i) < 0x80 || byte(i) > 0xBF) {
      return 0;
    }
  }
  return length;
}

}  // namespace

bool is_valid_utf8(std::string_view text) {
  while (!text.empty()) {
    const std::size_t length = utf8_sequence_length(text);
    if (length == 0) {
      return false;
    }
    text.remove_prefix(length);
  }
  return true;
}

std::string printable(std::string_view text) {
  constexpr std::size_t kMaxBytes = 64;
  std::string out;
  std::size_t i = 0;
  while (i < text.size() && i < kMaxBytes) {
    const std::size_t length = utf8_sequence_length(text.substr(i));
    const auto c = static_cast<unsigned char>(text[i]);
    if (length == 0 || c < 0x20 || c == 0x7F || c == '"' || c == '\\') {
      char escaped[5];
      std::snprintf(escaped, sizeof escaped, "\\x%02X", c);
      out += escaped;
      ++i;
      continue;
    }
    out += text.substr(i, length);
    i += length;
  }
  return i < text.size() ? out + "..." : out;
}

}  // namespace dtsim::parsing
