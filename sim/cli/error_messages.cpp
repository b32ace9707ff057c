#include "sim/cli/error_messages.h"

#include <algorithm>
#include <iostream>
#include <sstream>

namespace dtsim::sim {

// The flag that sets configuration field `field` (config_error.h): the field's name with dashes,
// or the flag whose unit or name differs.
std::string flag_of(const std::string& field) {
  if (field == "simgrid_cfg") {
    return "cfg";
  }
  if (field == "chunk_bytes") {
    return "chunk";
  }
  if (field == "collective_latency_sec") {
    return "collective-latency";
  }
  if (field == "bucket_cap_bytes") {
    return "bucket-mb";
  }
  if (field == "what_if") {
    return "apply";
  }
  if (field == "collapse_pipelines") {
    return "replay";
  }
  if (field == "calibrate_iteration_sec") {
    return "calibrate-iter-sec";
  }
  std::string flag = field;
  std::replace(flag.begin(), flag.end(), '_', '-');
  return flag;
}

// An error as the command line says it: the field at fault as its flag.
std::string cli_message(const std::exception& e, const parsing::FieldProblem& problem) {
  return problem.field().empty()
             ? e.what()
             : parsing::FieldProblem::join("--" + flag_of(problem.field()), problem.detail());
}

// Prints an input error, one problem per line, each prefixed with "dtsim <verb>: ", those of
// flags from `job` said as its own.
void print_error(const std::string& verb, const std::string& message, const JobFile& job) {
  // Bounded, whatever the input: a file with a million bad entries gets the first ones.
  constexpr int kMaxLines = 100;
  constexpr std::size_t kMaxLineBytes = 8192;
  std::istringstream lines(job.locate(message));
  int printed = 0, left_out = 0;
  for (std::string line; std::getline(lines, line);) {
    if (printed == kMaxLines) {
      ++left_out;
      continue;
    }
    if (line.size() > kMaxLineBytes) {
      line = line.substr(0, kMaxLineBytes) + "...";
    }
    std::cerr << "dtsim " << verb << ": " << line << "\n";
    ++printed;
  }
  if (left_out > 0) {
    std::cerr << "dtsim " << verb << ": ... and " << left_out << " more problems\n";
  }
}

}  // namespace dtsim::sim
