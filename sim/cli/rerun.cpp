#include "sim/cli/rerun.h"

#include <cerrno>
#include <cstring>
#include <iostream>

#include <unistd.h>

namespace dtsim::sim {

std::vector<std::string> with_exact_fold(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  bool set = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--fold" && i + 1 < args.size()) {
      out.insert(out.end(), {"--fold", "exact"});
      ++i;
      set = true;
    } else if (args[i].starts_with("--fold=")) {
      out.emplace_back("--fold=exact");
      set = true;
    } else {
      out.push_back(args[i]);
    }
  }
  if (!set) {
    out.insert(out.end(), {"--fold", "exact"});
  }
  return out;
}

void rerun_with_exact_fold(const std::string& verb, const std::string& why, int argc, char** argv) {
  std::cerr << "dtsim " << verb << ": ranks folded with --fold verified did not all match their "
            << "representative (" << why << "): simulating again with --fold exact\n";
  std::vector<std::string> args = with_exact_fold(std::vector<std::string>(argv + 1, argv + argc));
  std::vector<char*> exec_argv{argv[0]};
  for (std::string& a : args) {
    exec_argv.push_back(a.data());
  }
  exec_argv.push_back(nullptr);
  std::cout.flush();
  ::execv("/proc/self/exe", exec_argv.data());
  std::cerr << "dtsim " << verb << ": internal error: could not run dtsim again ("
            << std::strerror(errno) << ")\n";
}

}  // namespace dtsim::sim
