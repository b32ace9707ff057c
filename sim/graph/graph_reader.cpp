#include "sim/graph/graph_reader.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>

#include "sim/graph/graph_error.h"
#include "sim/graph/graph_reader_internal.h"
#include "sim/graph/graph_validate.h"
#include "sim/graph/graph_validate_internal.h"
#include "workloads/parsing/input_file.h"
#include "workloads/parsing/json_fields.h"

namespace dtsim::sim {

using nlohmann::json;
using parsing::describe_json;
using parsing::JsonFields;

namespace {

constexpr const char* kFormat = "dtsim-execution-graph";
constexpr int kVersion = 1;

[[noreturn]] void throw_problems(const std::string& file,
                                 const std::vector<std::string>& problems) {
  std::string message;
  for (const std::string& p : problems) {
    message += (message.empty() ? "" : "\n") + file + ": " + p;
  }
  throw GraphError(message);
}

// "/ranks/3" of "/ranks/3: covers rank 4, already covered by /ranks/1".
std::string pointer_of(const std::string& problem) {
  return problem.substr(0, problem.find(": "));
}

bool is_count(const json& v) {
  return v.is_number_unsigned() || (v.is_number_integer() && v.get<std::int64_t>() >= 0);
}

// [first, end) or, with `step`, [first, end, step]: the ranks first, first + step, ... < end.
std::optional<std::vector<int>> read_range(JsonFields& f, const char* key, bool step) {
  const json* v = f.value(key);
  if (v == nullptr) {
    return std::nullopt;
  }
  const auto limit = static_cast<std::uint64_t>(kMaxGraphRanks);
  bool ok = v->is_array() && (v->size() == 2 || (step && v->size() == 3)) &&
            std::all_of(v->begin(), v->end(), is_count);
  if (ok) {
    const auto first = (*v)[0].get<std::uint64_t>();
    const auto end = (*v)[1].get<std::uint64_t>();
    const std::uint64_t by = v->size() == 3 ? (*v)[2].get<std::uint64_t>() : 1;
    ok = first < end && end <= limit && by >= 1 && by <= limit;
    if (ok) {
      std::vector<int> ranks;
      for (std::uint64_t r = first; r < end; r += by) {
        ranks.push_back(static_cast<int>(r));
      }
      return ranks;
    }
  }
  f.problem(key, std::string(step ? "expected [FIRST, END] or [FIRST, END, STEP]"
                                  : "expected [FIRST, END]") +
                     ": integers with 0 <= FIRST < END <= " + std::to_string(kMaxGraphRanks) +
                     (step ? " and 1 <= STEP <= " + std::to_string(kMaxGraphRanks) : "") +
                     ", got " + describe_json(*v));
  return std::nullopt;
}

// A JSON array of ranks, each below kMaxGraphRanks.
std::optional<std::vector<int>> read_rank_list(JsonFields& f, const char* key) {
  const auto list = f.unsigned_array(key);
  if (!list) {
    return std::nullopt;
  }
  std::vector<int> ranks;
  bool ok = true;
  for (std::size_t i = 0; i < list->size(); ++i) {
    if ((*list)[i] >= static_cast<std::uint64_t>(kMaxGraphRanks)) {
      f.problem(std::string(key) + "/" + std::to_string(i),
                "expected a rank between 0 and " + std::to_string(kMaxGraphRanks - 1) + ", got " +
                    std::to_string((*list)[i]));
      ok = false;
    }
    ranks.push_back(static_cast<int>((*list)[i]));
  }
  return ok ? std::optional(ranks) : std::nullopt;
}

// Exactly one of `keys` (e.g. ranks, rank_range) must be present; returns it, or nullptr.
const char* one_of(JsonFields& f, std::initializer_list<const char*> keys) {
  std::vector<const char*> present;
  for (const char* k : keys) {
    if (f.has(k)) {
      present.push_back(k);
    }
  }
  std::string names;
  for (const char* k : keys) {
    names += (names.empty() ? "" : ", ") + std::string(k);
  }
  if (present.size() == 1) {
    return present[0];
  }
  if (f.is_object()) {
    f.problem("", present.empty() ? "needs one of " + names
                                  : "has both " + std::string(present[0]) + " and " + present[1] +
                                        " (expected one of " + names + ")");
  }
  return nullptr;
}

class Reader {
 public:
  explicit Reader(std::vector<std::string>& problems)
      : problems_(problems),
        tables_{{"layers", graph_.layers},
                {"op_classes", graph_.op_classes},
                {"labels", graph_.labels},
                {"algorithms", graph_.algorithms}} {}

  void read(JsonFields& doc) {
    tables_.layers.read(doc);
    tables_.op_classes.read(doc);
    tables_.labels.read(doc);
    tables_.algorithms.read(doc);
    read_communicators(doc);
    read_programs(doc);
    read_ranks(doc);
  }
  ExecutionGraph& graph() { return graph_; }

  GraphLocator locator() const {
    GraphLocator locator;
    locator.node = [this](std::int32_t program, std::int32_t node) {
      return "/programs/" + std::to_string(program) + "/nodes/" +
             std::to_string(
                 file_position_[static_cast<std::size_t>(program)][static_cast<std::size_t>(node)]);
    };
    locator.rank = [this](int rank) {
      const int entry = rank_entry_[static_cast<std::size_t>(rank)];
      return entry < 0 ? std::string("/ranks") : "/ranks/" + std::to_string(entry);
    };
    return locator;
  }

 private:
  // The array doc[key], or nullptr (problem recorded if it is missing or not an array).
  const json* array(JsonFields& doc, const char* key, const char* what) {
    const json* v = doc.value(key);
    if (v != nullptr && !v->is_array()) {
      doc.problem(key, std::string("expected an array of ") + what + ", got " + describe_json(*v));
      return nullptr;
    }
    return v;
  }

  void read_communicators(JsonFields& doc) {
    // At most this many members over all communicators (4 bytes each, 256 MiB).
    constexpr std::size_t kMaxCommunicatorMembers = std::size_t{1} << 26;
    std::size_t members = 0;
    const json* list = array(doc, "communicators", "communicators");
    for (std::size_t i = 0; list != nullptr && i < list->size(); ++i) {
      JsonFields f((*list)[i], "/communicators/" + std::to_string(i), problems_);
      f.reject_unknown({"name", "ranks", "rank_range"});
      Communicator comm;
      comm.name = f.string("name").value_or("");
      if (const char* key = one_of(f, {"ranks", "rank_range"})) {
        comm.ranks = (std::string_view(key) == "ranks" ? read_rank_list(f, key)
                                                       : read_range(f, key, /*step=*/true))
                         .value_or(std::vector<int>{});
      }
      comm_index_.emplace(comm.name, static_cast<std::int32_t>(i));
      members += comm.ranks.size();
      graph_.communicators.push_back(std::move(comm));
      if (members > kMaxCommunicatorMembers) {  // memory: stop before it runs out
        f.problem("", "the communicators up to here hold " + std::to_string(members) +
                          " members in all, more than " + std::to_string(kMaxCommunicatorMembers) +
                          " (2^26)");
        return;
      }
    }
  }

  void read_programs(JsonFields& doc) {
    const json* list = array(doc, "programs", "programs");
    for (std::size_t i = 0; list != nullptr && i < list->size(); ++i) {
      graph_internal::ProgramRead read =
          graph_internal::read_program((*list)[i], static_cast<int>(i), tables_, problems_);
      program_index_.emplace(read.program.name, static_cast<std::int32_t>(i));
      graph_.programs.push_back(std::move(read.program));
      file_position_.push_back(std::move(read.file_position));
    }
  }

  // The communicators of entry `f`'s "comms" object, by role of `prog` (-1: not bound).
  std::vector<std::int32_t> read_bindings(JsonFields& f, const Program& prog) {
    std::vector<std::int32_t> comms(prog.comms.size(), -1);
    const json* v = f.value("comms", /*required=*/false);
    if (v != nullptr && !v->is_object()) {
      f.problem("comms", "expected an object of role: communicator, got " + describe_json(*v));
      return comms;
    }
    static const json kNone = json::object();
    for (const auto& [role, name] : (v != nullptr ? *v : kNone).items()) {
      const std::string key = "comms/" + graph_internal::pointer_token(role);
      const auto r = std::find(prog.comms.begin(), prog.comms.end(), role);
      if (r == prog.comms.end()) {
        f.problem(key, "program \"" + prog.name + "\" has no role \"" + role + "\"");
      } else if (!name.is_string()) {
        f.problem(key, "expected a communicator name, got " + describe_json(name));
      } else if (const auto c = comm_index_.find(name.get<std::string>()); c == comm_index_.end()) {
        f.problem(key, "no communicator is named \"" + name.get<std::string>() + "\"");
      } else {
        comms[static_cast<std::size_t>(r - prog.comms.begin())] = c->second;
      }
    }
    for (std::size_t i = 0; i < prog.comms.size(); ++i) {
      if (comms[i] < 0 && (v == nullptr || !v->contains(prog.comms[i]))) {
        f.problem("comms", "binds no communicator to role \"" + prog.comms[i] + "\" of program \"" +
                               prog.name + "\"");
      }
    }
    return comms;
  }

  // The ranks entry `f` places, or nothing.
  std::vector<int> read_entry_ranks(JsonFields& f) {
    const char* key = one_of(f, {"rank", "ranks", "rank_range"});
    if (key == nullptr) {
      return {};
    }
    const std::string_view k = key;
    if (k == "rank") {
      const auto r = f.unsigned_integer(key);
      if (r && *r >= static_cast<std::uint64_t>(kMaxGraphRanks)) {
        f.problem(key, "expected a rank between 0 and " + std::to_string(kMaxGraphRanks - 1) +
                           ", got " + std::to_string(*r));
        return {};
      }
      return r ? std::vector<int>{static_cast<int>(*r)} : std::vector<int>{};
    }
    return (k == "ranks" ? read_rank_list(f, key) : read_range(f, key, /*step=*/false))
        .value_or(std::vector<int>{});
  }

  void read_ranks(JsonFields& doc) {
    const json* list = array(doc, "ranks", "rank entries");
    std::vector<RankProgram> entries;
    std::vector<std::pair<int, int>> covered;  // (rank, entry)
    for (std::size_t e = 0; list != nullptr && e < list->size(); ++e) {
      JsonFields f((*list)[e], "/ranks/" + std::to_string(e), problems_);
      f.reject_unknown({"rank", "ranks", "rank_range", "program", "comms"});
      const std::vector<int> ranks = read_entry_ranks(f);
      RankProgram rp;
      if (const auto name = f.string("program")) {
        const auto p = program_index_.find(*name);
        if (p == program_index_.end()) {
          f.problem("program", "no program is named \"" + *name + "\"");
        } else {
          rp.program = p->second;
          rp.comms = read_bindings(f, graph_.programs[static_cast<std::size_t>(p->second)]);
        }
      }
      entries.push_back(std::move(rp));
      if (covered.size() + ranks.size() > static_cast<std::size_t>(kMaxGraphRanks)) {
        f.problem("", "the entries place more than " + std::to_string(kMaxGraphRanks) + " ranks");
        break;
      }
      for (int r : ranks) {
        covered.emplace_back(r, static_cast<int>(e));
      }
    }
    place(entries, covered);
  }

  // Fills graph_.ranks from the entries; records ranks placed twice and ranks not placed.
  void place(const std::vector<RankProgram>& entries,
             const std::vector<std::pair<int, int>>& covered) {
    int n = 0;
    for (const auto& [r, e] : covered) {
      n = std::max(n, r + 1);
    }
    rank_entry_.assign(static_cast<std::size_t>(n), -1);
    std::map<std::pair<int, int>, std::vector<int>> twice;  // (entry, earlier entry) -> ranks
    for (const auto& [r, e] : covered) {
      int& owner = rank_entry_[static_cast<std::size_t>(r)];
      if (owner >= 0) {
        twice[{e, owner}].push_back(r);
      } else {
        owner = e;
      }
    }
    for (const auto& [entries_pair, ranks] : twice) {
      const auto& [e, earlier] = entries_pair;
      problems_.push_back(
          "/ranks/" + std::to_string(e) + ": covers " + graph_internal::ranks_text(ranks) +
          (e == earlier ? " more than once"
                        : ", already covered by /ranks/" + std::to_string(earlier)));
    }
    std::vector<int> missing;
    graph_.ranks.resize(static_cast<std::size_t>(n));
    for (int r = 0; r < n; ++r) {
      const int e = rank_entry_[static_cast<std::size_t>(r)];
      if (e < 0) {
        missing.push_back(r);
      } else {
        graph_.ranks[static_cast<std::size_t>(r)] = entries[static_cast<std::size_t>(e)];
      }
    }
    if (!missing.empty()) {
      problems_.push_back("/ranks: no entry covers " + graph_internal::ranks_text(missing));
    }
  }

  std::vector<std::string>& problems_;
  ExecutionGraph graph_;
  graph_internal::NameTables tables_;
  std::unordered_map<std::string, std::int32_t> comm_index_;     // first of each name
  std::unordered_map<std::string, std::int32_t> program_index_;  // first of each name
  std::vector<std::vector<std::int32_t>> file_position_;         // [program][node]
  std::vector<int> rank_entry_;                                  // per rank, -1: none
};

void check_header(JsonFields& f, const std::vector<std::string>& problems,
                  const std::string& file) {
  if (const auto format = f.string("format"); format && *format != kFormat) {
    // Another kind of file: nothing else in it can be trusted.
    f.problem("format", std::string("expected \"") + kFormat + "\", got " + describe_json(*format));
    throw_problems(file, problems);
  }
  if (const auto version = f.integer("version"); version && *version != kVersion) {
    f.problem("version", "unsupported version " + std::to_string(*version) +
                             " (this dtsim reads version " + std::to_string(kVersion) + ")");
    throw_problems(file, problems);
  }
}

// Whether a validator problem at `pointer` concerns a value whose reading failed.
bool already_reported(const std::string& pointer, const std::vector<std::string>& problems,
                      std::size_t read_problems) {
  for (std::size_t i = 0; i < read_problems; ++i) {
    // The same value, a value inside it, or an object enclosing it ("/": the document).
    const std::string read = pointer_of(problems[i]);
    if (read == "/" || read == pointer || read.starts_with(pointer + "/") ||
        pointer.starts_with(read + "/")) {
      return true;
    }
  }
  return false;
}

}  // namespace

ExecutionGraph parse_execution_graph(const json& doc, const std::string& file) {
  std::vector<std::string> problems;
  JsonFields f(doc, "", problems);
  f.reject_unknown({"format", "version", "layers", "op_classes", "labels", "algorithms",
                    "communicators", "programs", "ranks"});
  check_header(f, problems, file);
  Reader reader(problems);
  reader.read(f);
  // Then what the validator finds, except about values already reported; what spans ranks only
  // in a file read without problems (a value that failed holds a default).
  const std::size_t read_problems = problems.size();
  ValidateOptions options;
  options.locator = reader.locator();
  options.across_ranks = read_problems == 0;
  for (std::string& p : validate_execution_graph(reader.graph(), options)) {
    if (!already_reported(pointer_of(p), problems, read_problems)) {
      problems.push_back(std::move(p));
    }
  }
  if (!problems.empty()) {
    throw_problems(file, problems);
  }
  return std::move(reader.graph());
}

ExecutionGraph read_execution_graph(const std::string& path) {
  json doc;
  try {
    doc = parsing::read_json_file(path, "execution graph");
  } catch (const parsing::InputFileError& e) {
    throw GraphError(e.what());
  }
  return parse_execution_graph(doc, path);
}

}  // namespace dtsim::sim
