// Job files of `dtsim simulate --job J.json` (format: sim/cli/JOB.md): a JSON object of
// flag: value, read into the command-line arguments of the flags the command line does not give,
// so that the flags are parsed once, and errors about those flags said as the file's JSON
// pointers. Part of the dtsim command line.
//
//   {"model": "gpt3-1.3b", "platform": "dgx.json", "parallel": {"tp": 2, "pp": 2, "dp": 4}}
//
// read from experiments/j.json gives --model=gpt3-1.3b --parallel=tp=2,dp=4,pp=2
// --platform=experiments/dgx.json; an error "--parallel tp=2,dp=4,pp=2: ..." is said as
// "experiments/j.json: /parallel: tp=2,dp=4,pp=2: ...".
#ifndef DTSIM_SIM_CLI_JOB_FILE_H_
#define DTSIM_SIM_CLI_JOB_FILE_H_

#include <string>
#include <vector>

#include <boost/program_options.hpp>

namespace dtsim::sim {

class JobFile {
 public:
  // No job file: no arguments, and locate() changes nothing.
  JobFile() = default;

  // Reads and validates the job file at `path`. `flags` are dtsim simulate's; `given` the long
  // names of the flags the command line gives, whose keys in the file are checked but not used.
  // Throws ConfigError listing every problem, one a line, as "<path>: <JSON pointer>: <what was
  // expected>", if the file cannot be read, is not JSON, or any key or value is wrong.
  JobFile(const std::string& path, const boost::program_options::options_description& flags,
          const std::vector<std::string>& given);

  // The arguments of the keys used, "--flag=value" (or "--flag" for a switch), in key order.
  [[nodiscard]] const std::vector<std::string>& args() const { return args_; }

  // `message` with each line that starts with a flag this file set ("--zero 4: expected ...")
  // said as the file's ("<path>: /zero: 4: expected ..."); other lines as they are.
  [[nodiscard]] std::string locate(const std::string& message) const;

 private:
  std::string path_;
  std::vector<std::string> args_;
  std::vector<std::string> flags_;  // the long names args_ sets
};

// The arguments to parse: `args` (dtsim simulate's, against `flags`), then, if they name a job
// file with --job, that file's arguments for the flags `args` does not give, with `job` set to
// the file read. `args` alone, and `job` left empty, without --job or with --help. Throws what
// JobFile's constructor throws, and boost's errors for `args` that do not parse.
[[nodiscard]] std::vector<std::string> with_job_file(
    const std::vector<std::string>& args, const boost::program_options::options_description& flags,
    JobFile& job);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_CLI_JOB_FILE_H_
