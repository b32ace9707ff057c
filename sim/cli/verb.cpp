#include "sim/cli/verb.h"

#include <iostream>

#include "sim/cli/output_flags.h"
#include "sim/config_error.h"

namespace dtsim::sim {

namespace po = boost::program_options;

namespace {

// Throws ConfigError for a flag given an empty text.
void reject_empty_values(const po::variables_map& vm) {
  for (const auto& [name, value] : vm) {
    const auto* text = boost::any_cast<std::string>(&value.value());
    if (!value.defaulted() && text != nullptr && text->empty()) {
      throw ConfigError("--" + name + ": expected a value, got an empty text");
    }
  }
}

}  // namespace

po::parsed_options parse_flags_only(const std::vector<std::string>& args,
                                    const po::options_description& flags) {
  po::parsed_options parsed = po::command_line_parser(args).options(flags).run();
  for (const po::option& o : parsed.options) {
    if (o.position_key >= 0 && !o.value.empty()) {
      throw ConfigError("unexpected argument \"" + o.value.front() +
                        "\": every value follows its flag (see --help)");
    }
  }
  return parsed;
}

bool parse_verb_flags(const std::vector<std::string>& args, const po::options_description& flags,
                      const std::string& verb, const char* what, po::variables_map* vm) {
  po::variables_map parsed;
  po::store(parse_flags_only(args, flags), parsed);
  if (parsed.count("help")) {
    std::cout << "Usage: dtsim " << verb << " [flags]\n" << what << "\n" << flags;
    return false;
  }
  reject_empty_values(parsed);
  po::notify(parsed);
  if (vm != nullptr) {
    *vm = parsed;
  }
  return true;
}

void write_report(const std::string& path, nlohmann::ordered_json report,
                  const std::vector<InputFile>& inputs) {
  if (path.empty()) {
    return;
  }
  report["provenance"] = provenance_json(inputs);
  write_text("report", path, report.dump(2) + "\n");
}

std::vector<std::pair<std::string, std::string>> with_inputs(
    std::vector<std::pair<std::string, std::string>> files, const std::vector<InputFile>& inputs) {
  for (const auto& input : inputs) {
    files.emplace_back(input.flag, input.path);
  }
  return files;
}

}  // namespace dtsim::sim
