// How the command line says an input error: the configuration field at fault as its flag, those
// of a job file's keys as the file's, one problem a line, bounded. Part of the dtsim command line.
#ifndef DTSIM_SIM_CLI_ERROR_MESSAGES_H_
#define DTSIM_SIM_CLI_ERROR_MESSAGES_H_

#include <exception>
#include <string>

#include "sim/cli/job_file.h"
#include "workloads/parsing/field_error.h"

namespace dtsim::sim {

// The flag that sets configuration field `field` (config_error.h), e.g. "bucket-mb" for
// "bucket_cap_bytes".
[[nodiscard]] std::string flag_of(const std::string& field);

// `e` as the command line says it: the field at fault (`problem`) as its flag.
[[nodiscard]] std::string cli_message(const std::exception& e,
                                      const parsing::FieldProblem& problem);

// Prints an input error on stderr, one problem per line, each prefixed with "dtsim <verb>: ",
// those of flags from `job` said as its own; at most 100 lines of at most 8 KiB, then how many
// more problems there were.
void print_error(const std::string& verb, const std::string& message, const JobFile& job);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_CLI_ERROR_MESSAGES_H_
