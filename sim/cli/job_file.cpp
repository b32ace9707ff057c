#include "sim/cli/job_file.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "sim/config_error.h"
#include "workloads/parsing/input_file.h"
#include "workloads/parsing/json_fields.h"
#include "workloads/transformer_file.h"

namespace dtsim::sim {

namespace fs = std::filesystem;
namespace po = boost::program_options;
using nlohmann::json;
using parsing::describe_json;

namespace {

// Flags whose value is a file: relative in a job file, relative to the job file's folder. So is
// "model" when it names an architecture file (a path ending in .json).
constexpr const char* kPathFlags[] = {"platform",    "workload",   "graph",
                                      "chakra",      "report",     "timeline",
                                      "link-report", "dump-graph", "dump-chakra"};
// The path flags that name a file the run writes.
constexpr const char* kOutputFlags[] = {"report", "timeline", "link-report", "dump-graph"};
// The keys of "parallel" as an object, in parallel_name's order.
constexpr const char* kDegrees[] = {"tp", "cp", "dp", "pp", "ep"};

bool in(const auto& list, const std::string& name) {
  return std::find(std::begin(list), std::end(list), name) != std::end(list);
}

// Levenshtein distance, for "did you mean".
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) {
    row[j] = j;
  }
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// The values of one flag, one per occurrence; nothing if the value is wrong (a problem recorded).
using Words = std::optional<std::vector<std::string>>;

Words one(std::string word) {
  return std::vector<std::string>{std::move(word)};
}

// Checks one key's value against its flag and turns it into words, recording problems.
class ValueReader {
 public:
  explicit ValueReader(std::vector<std::string>& problems) : problems_(problems) {}

  std::nullopt_t fail(const std::string& pointer, const std::string& message) {
    problems_.push_back(pointer + ": " + message);
    return std::nullopt;
  }

  Words text(const json& v, const std::string& pointer) {
    if (!v.is_string() || v.get_ref<const std::string&>().empty()) {
      return fail(pointer, "expected a non-empty string, got " + describe_json(v));
    }
    return one(v.get<std::string>());
  }

  // An integer that fits the flag's int.
  std::optional<int> integer(const json& v, const std::string& pointer, int least) {
    constexpr std::int64_t kMax = std::numeric_limits<int>::max();
    bool fits = false;
    if (v.is_number_unsigned()) {
      fits = v.get<std::uint64_t>() <= static_cast<std::uint64_t>(kMax) &&
             v.get<std::int64_t>() >= least;
    } else if (v.is_number_integer()) {
      fits = v.get<std::int64_t>() >= least && v.get<std::int64_t>() <= kMax;
    }
    if (!fits) {
      fail(pointer, "expected an integer from " + std::to_string(least) + " to " +
                        std::to_string(kMax) + ", got " + describe_json(v));
      return std::nullopt;
    }
    return v.get<int>();
  }

  Words number(const json& v, const std::string& pointer) {
    if (!v.is_number()) {
      return fail(pointer, "expected a number, got " + describe_json(v));
    }
    return one(v.dump());
  }

  // A repeatable flag: one string, or a non-empty array of them.
  Words texts(const json& v, const std::string& pointer) {
    if (v.is_string()) {
      return text(v, pointer);
    }
    if (!v.is_array() || v.empty()) {
      return fail(pointer,
                  "expected a string or a non-empty array of strings, got " + describe_json(v));
    }
    std::vector<std::string> words;
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (auto w = text(v[i], pointer + "/" + std::to_string(i))) {
        words.push_back(w->front());
      }
    }
    return words.size() == v.size() ? Words(words) : std::nullopt;
  }

  // "parallel": the flag's text, or {"tp": T, "pp": P, ...}.
  Words parallel(const json& v, const std::string& pointer) {
    if (v.is_string()) {
      return text(v, pointer);
    }
    if (!v.is_object() || v.empty()) {
      return fail(pointer,
                  "expected a string such as \"tp=8,pp=4,dp=8\" or an object such as "
                  "{\"tp\": 8, \"pp\": 4, \"dp\": 8}, got " +
                      describe_json(v));
    }
    bool ok = true;
    for (const auto& [key, degree] : v.items()) {
      if (!in(kDegrees, key)) {
        fail(pointer + "/" + key, "unknown key (expected one of tp, cp, dp, pp, ep)");
        ok = false;
      } else {
        ok = integer(degree, pointer + "/" + key, 1).has_value() && ok;
      }
    }
    std::string words;
    for (const char* key : kDegrees) {
      if (ok && v.contains(key)) {
        words += (words.empty() ? "" : ",") + std::string(key) + "=" + v[key].dump();
      }
    }
    return ok ? one(words) : std::nullopt;
  }

  // "stage-layers": the flag's text, or an array of integers.
  Words counts(const json& v, const std::string& pointer) {
    if (v.is_string()) {
      return text(v, pointer);
    }
    if (!v.is_array() || v.empty()) {
      return fail(pointer,
                  "expected a string such as \"10,11,11,10\" or a non-empty array of "
                  "integers, got " +
                      describe_json(v));
    }
    std::string words;
    bool ok = true;
    for (std::size_t i = 0; i < v.size(); ++i) {
      const auto n = integer(v[i], pointer + "/" + std::to_string(i), 0);
      ok = ok && n.has_value();
      words += (i == 0 ? "" : ",") + std::to_string(n.value_or(0));
    }
    return ok ? one(words) : std::nullopt;
  }

  // The words of `v` for `option`, as its value type wants (sim/cli/JOB.md, "Values").
  Words words(const po::option_description& option, const json& v, const std::string& pointer) {
    const std::string& name = option.long_name();
    if (name == "parallel") {
      return parallel(v, pointer);
    }
    if (name == "stage-layers") {
      return counts(v, pointer);
    }
    const po::value_semantic* semantic = option.semantic().get();
    if (dynamic_cast<const po::typed_value<bool>*>(semantic) != nullptr) {
      if (!v.is_boolean()) {
        return fail(pointer, "expected true or false, got " + describe_json(v));
      }
      return std::vector<std::string>(v.get<bool>() ? 1 : 0);
    }
    if (dynamic_cast<const po::typed_value<int>*>(semantic) != nullptr) {
      const auto n = integer(v, pointer, std::numeric_limits<int>::min());
      return n ? one(std::to_string(*n)) : std::nullopt;
    }
    if (dynamic_cast<const po::typed_value<double>*>(semantic) != nullptr) {
      return number(v, pointer);
    }
    if (dynamic_cast<const po::typed_value<std::vector<std::string>>*>(semantic) != nullptr) {
      return texts(v, pointer);
    }
    if (dynamic_cast<const po::typed_value<std::string>*>(semantic) != nullptr) {
      return text(v, pointer);
    }
    // --help, the one flag without a value.
    return fail(pointer, "not a flag a job file can set (it prints the flags and runs nothing)");
  }

 private:
  std::vector<std::string>& problems_;
};

// "<pointer>: unknown key ...", with the nearest flag if it is close.
std::string unknown_key(const std::string& key, const po::options_description& flags) {
  std::string nearest;
  std::size_t best = 3;  // suggest only within 2 edits
  for (const auto& option : flags.options()) {
    const std::string& name = option->long_name();
    // The distance is at least the lengths' difference: a long key (a fuzzer's was 115 KB, and
    // its distances to every flag took seconds) is compared with no flag.
    if (std::max(key.size(), name.size()) - std::min(key.size(), name.size()) >= best) {
      continue;
    }
    const std::size_t d = edit_distance(key, name);
    if (d < best && name != "job" && name != "help") {
      best = d;
      nearest = name;
    }
  }
  return "unknown key: not a flag of dtsim simulate " +
         (nearest.empty() ? std::string("(see dtsim simulate --help)")
                          : "(did you mean \"" + nearest + "\"?)");
}

bool same_file(const fs::path& a, const fs::path& b) {
  std::error_code ec_a, ec_b;
  const fs::path ca = fs::weakly_canonical(a, ec_a);
  const fs::path cb = fs::weakly_canonical(b, ec_b);
  return !ec_a && !ec_b && ca == cb;
}

json read_json(const std::string& path) {
  std::string text;
  try {
    text = parsing::read_input_file(path, "job file");
  } catch (const parsing::InputFileError& e) {
    throw ConfigError(e.what());
  }
  try {
    return json::parse(text);
  } catch (const json::exception& e) {  // parse_error, or out_of_range for a number like 1e400
    throw ConfigError(path + ": " + e.what());
  }
}

}  // namespace

JobFile::JobFile(const std::string& path, const po::options_description& flags,
                 const std::vector<std::string>& given)
    : path_(path) {
  const json doc = read_json(path);
  std::vector<std::string> problems;
  ValueReader reader(problems);
  if (!doc.is_object()) {
    reader.fail("/", "expected an object of flag: value, got " + describe_json(doc));
  }
  const fs::path folder = fs::path(path).parent_path();
  const json empty = json::object();
  for (const auto& [key, value] : (doc.is_object() ? doc : empty).items()) {
    const std::string pointer = "/" + key;
    if (key == "job") {
      reader.fail(pointer,
                  "a job file cannot name another job file (--job is for the command "
                  "line only)");
      continue;
    }
    // Boost matches "" to every flag without a short name, and "-o" to a short one.
    if (key.empty() || key.front() == '-') {
      reader.fail(pointer, std::string(key.empty() ? "the empty key" : "a key with dashes") +
                               " is not a flag name (a key is a flag without its dashes, "
                               "such as \"ranks\")");
      continue;
    }
    const po::option_description* option = flags.find_nothrow(key, /*approx=*/false);
    if (option == nullptr) {
      reader.fail(pointer, unknown_key(key, flags));
      continue;
    }
    auto words = reader.words(*option, value, pointer);
    if (!words) {
      continue;
    }
    const bool names_file =
        in(kPathFlags, key) || (key == "model" && workloads::is_transformer_file(words->front()));
    if (names_file && fs::path(words->front()).is_relative()) {
      words->front() = (folder / words->front()).string();
    }
    if (in(kOutputFlags, key) && same_file(words->front(), path)) {
      reader.fail(pointer, "\"" + value.get<std::string>() +
                               "\" is this job file: an output never overwrites an input");
      continue;
    }
    if (in(given, key)) {
      continue;  // the command line's value wins
    }
    const bool is_switch = option->semantic()->max_tokens() == 0;
    for (const std::string& w : *words) {
      args_.push_back("--" + key + (is_switch ? "" : "=" + w));
    }
    if (!is_switch || !words->empty()) {
      flags_.push_back(key);
    }
  }
  if (!problems.empty()) {
    std::string message;
    for (const std::string& p : problems) {
      message += (message.empty() ? "" : "\n") + path + ": " + p;
    }
    throw ConfigError(message);
  }
}

std::string JobFile::locate(const std::string& message) const {
  if (flags_.empty()) {
    return message;
  }
  std::istringstream lines(message);
  std::string out;
  for (std::string line; std::getline(lines, line);) {
    for (const std::string& flag : flags_) {
      const std::string name = "--" + flag;
      const char next = line.size() > name.size() ? line[name.size()] : ':';
      if (line.starts_with(name) && (next == ' ' || next == ':')) {
        // "--zero 4: ..." and "--parallel: tp=8 ..." alike: the rest after ':' or ' '.
        std::string rest = line.substr(name.size());
        rest.erase(0, rest.starts_with(":") ? 1 : 0);
        rest.erase(0, rest.starts_with(" ") ? 1 : 0);
        line = path_ + ": /" + flag + (rest.empty() ? "" : ": " + rest);
        break;
      }
    }
    out += (out.empty() ? "" : "\n") + line;
  }
  return out;
}

std::vector<std::string> with_job_file(const std::vector<std::string>& args,
                                       const po::options_description& flags, JobFile& job) {
  // A first pass over the command line alone, for --job and the flags it gives (boost's own
  // errors come again, and positional words are reported, by the caller's parse).
  const po::parsed_options parsed = po::command_line_parser(args).options(flags).run();
  po::variables_map vm;
  po::store(parsed, vm);
  if (vm.count("help") || !vm.count("job")) {
    return args;
  }
  std::vector<std::string> given;
  for (const po::option& o : parsed.options) {
    if (!o.string_key.empty()) {
      given.push_back(o.string_key);
    }
  }
  job = JobFile(vm["job"].as<std::string>(), flags, given);
  std::vector<std::string> all = args;
  all.insert(all.end(), job.args().begin(), job.args().end());
  return all;
}

}  // namespace dtsim::sim
