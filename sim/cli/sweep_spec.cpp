#include "sim/cli/sweep_spec.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>

#include "sim/config_error.h"
#include "workloads/parsing/input_file.h"
#include "workloads/parsing/json_fields.h"

namespace dtsim::sim {

using json = nlohmann::ordered_json;

namespace {

std::string describe(const json& v) {
  return parsing::describe_ordered_json(v);
}

// One word of a flag value: a string as is, an integer in decimal, another number as JSON
// writes it (the shortest text that reads back the same double).
std::optional<std::string> word(const json& v) {
  if (v.is_string() && v.get<std::string>().find_first_of("\n\r") == std::string::npos) {
    return v.get<std::string>();
  }
  if (v.is_number()) {
    return v.dump();
  }
  return std::nullopt;
}

// Collects problems as "<pointer>: <message>".
class Checker {
 public:
  explicit Checker(const std::vector<std::string>& flags) : flags_(flags) {}

  // A flag value: a string or a number, or a non-empty array of them (a repeated flag).
  std::optional<FlagValue> value(const json& v, const std::string& pointer) {
    if (auto w = word(v)) {
      return FlagValue{*w};
    }
    if (!v.is_array() || v.empty()) {
      return fail(pointer,
                  "expected a string (one line), a number or a non-empty array of them, got " +
                      describe(v));
    }
    FlagValue words;
    for (std::size_t i = 0; i < v.size(); ++i) {
      auto w = word(v[i]);
      if (!w) {
        return fail(pointer + "/" + std::to_string(i),
                    "expected a string (one line) or a number, got " + describe(v[i]));
      }
      words.push_back(*w);
    }
    return words;
  }

  // Whether `name` (at `pointer`) is a flag a sweep may set.
  bool flag(const std::string& name, const std::string& pointer) {
    if (std::find(std::begin(kFlagsNotInSweeps), std::end(kFlagsNotInSweeps), name) !=
        std::end(kFlagsNotInSweeps)) {
      fail(pointer, "--" + name + " cannot be set in a sweep " +
                        (name == "help" ? std::string("(it runs nothing)")
                                        : std::string("(the sweep sets each point's report; an "
                                                      "output file would be overwritten by every "
                                                      "point)")));
      return false;
    }
    if (std::find(flags_.begin(), flags_.end(), name) == flags_.end()) {
      fail(pointer, "not a flag of dtsim simulate (see dtsim simulate --help)");
      return false;
    }
    return true;
  }

  std::nullopt_t fail(const std::string& pointer, const std::string& message) {
    problems_.push_back(pointer + ": " + message);
    return std::nullopt;
  }

  [[nodiscard]] const std::vector<std::string>& problems() const { return problems_; }

 private:
  const std::vector<std::string>& flags_;
  std::vector<std::string> problems_;
};

void read_fixed(const json& fixed, Checker& check, SweepSpec& spec) {
  if (!fixed.is_object()) {
    check.fail("/fixed", "expected an object of flag: value, got " + describe(fixed));
    return;
  }
  for (const auto& [name, v] : fixed.items()) {
    const std::string pointer = "/fixed/" + name;
    auto value = check.value(v, pointer);
    if (check.flag(name, pointer) && value) {
      spec.fixed.emplace_back(name, std::move(*value));
    }
  }
}

void read_vary(const json& vary, Checker& check, SweepSpec& spec) {
  if (!vary.is_object()) {
    check.fail("/vary", "expected an object of flag: [values], got " + describe(vary));
    return;
  }
  for (const auto& [name, list] : vary.items()) {
    const std::string pointer = "/vary/" + name;
    if (!check.flag(name, pointer)) {
      continue;
    }
    if (!list.is_array() || list.empty()) {
      check.fail(pointer, "expected a non-empty array of values, got " + describe(list));
      continue;
    }
    const std::string& flag = name;  // clang 14 cannot capture a structured binding
    if (std::any_of(spec.fixed.begin(), spec.fixed.end(),
                    [&](const auto& f) { return f.first == flag; })) {
      check.fail(pointer, "also set in /fixed");
      continue;
    }
    std::vector<FlagValue> values;
    for (std::size_t i = 0; i < list.size(); ++i) {
      if (auto v = check.value(list[i], pointer + "/" + std::to_string(i))) {
        values.push_back(std::move(*v));
      }
    }
    spec.vary.emplace_back(name, std::move(values));
  }
}

void add_flag(std::vector<std::string>& args, const std::string& name, const FlagValue& value) {
  for (const std::string& w : value) {
    args.push_back("--" + name);
    args.push_back(w);
  }
}

}  // namespace

SweepSpec sweep_from_json(const json& doc, const std::string& file,
                          const std::vector<std::string>& flags) {
  SweepSpec spec{.file = file};
  Checker check(flags);
  if (!doc.is_object()) {
    check.fail("/", "expected an object with \"fixed\" and \"vary\", got " + describe(doc));
  } else {
    for (const auto& [key, v] : doc.items()) {
      if (key != "fixed" && key != "vary") {
        check.fail("/" + key, "unknown key (expected fixed, vary)");
      }
    }
    if (doc.contains("fixed")) {
      read_fixed(doc["fixed"], check, spec);
    }
    if (doc.contains("vary")) {
      read_vary(doc["vary"], check, spec);
    } else {
      check.fail("/vary", "missing (expected an object of flag: [values])");
    }
  }
  if (!check.problems().empty()) {
    std::string message;
    for (const std::string& p : check.problems()) {
      message += (message.empty() ? "" : "\n") + file + ": " + p;
    }
    throw ConfigError(message);
  }
  return spec;
}

SweepSpec read_sweep(const std::string& path, const std::vector<std::string>& flags) {
  std::string text;
  try {
    text = parsing::read_input_file(path, "sweep file");
  } catch (const parsing::InputFileError& e) {
    throw ConfigError(e.what());
  }
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {
    throw ConfigError(path + ": " + e.what());
  }
  return sweep_from_json(doc, path, flags);
}

std::vector<SweepPoint> sweep_points(const SweepSpec& spec) {
  std::size_t count = 1;
  for (const auto& [name, values] : spec.vary) {
    count *= values.size();
  }
  std::vector<SweepPoint> points;
  for (std::size_t index = 0; index < count; ++index) {
    SweepPoint p{.index = static_cast<int>(index)};
    for (const auto& [name, value] : spec.fixed) {
      add_flag(p.args, name, value);
    }
    // Mixed radix, the last key fastest.
    std::vector<std::size_t> digit(spec.vary.size());
    std::size_t rest = index;
    for (std::size_t k = spec.vary.size(); k-- > 0;) {
      digit[k] = rest % spec.vary[k].second.size();
      rest /= spec.vary[k].second.size();
    }
    for (std::size_t k = 0; k < spec.vary.size(); ++k) {
      const FlagValue& value = spec.vary[k].second[digit[k]];
      add_flag(p.args, spec.vary[k].first, value);
      p.vary.push_back(flag_value_text(value));
    }
    points.push_back(std::move(p));
  }
  return points;
}

std::string flag_value_text(const FlagValue& value) {
  std::string text;
  for (const std::string& w : value) {
    text += (text.empty() ? "" : " ") + w;
  }
  return text;
}

}  // namespace dtsim::sim
