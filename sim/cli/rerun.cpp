#include "sim/cli/rerun.h"

#include <cerrno>
#include <cstring>
#include <iostream>

#include <unistd.h>

namespace dtsim::sim {

namespace {

std::string next_fold(const std::string& fold) {
  return fold == "node" ? "exact" : "node";
}

// The value --fold has in `args` ("verified" if none).
std::string fold_of(const std::vector<std::string>& args) {
  std::string fold = "verified";
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--fold" && i + 1 < args.size()) {
      fold = args[i + 1];
    } else if (args[i].starts_with("--fold=")) {
      fold = args[i].substr(7);
    }
  }
  return fold;
}

}  // namespace

std::vector<std::string> with_next_fold(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  bool set = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--fold" && i + 1 < args.size()) {
      out.insert(out.end(), {"--fold", next_fold(args[i + 1])});
      ++i;
      set = true;
    } else if (args[i].starts_with("--fold=")) {
      out.push_back("--fold=" + next_fold(args[i].substr(7)));
      set = true;
    } else {
      out.push_back(args[i]);
    }
  }
  if (!set) {
    out.insert(out.end(), {"--fold", "node"});
  }
  return out;
}

void rerun_with_next_fold(const std::string& verb, const std::string& why, int argc, char** argv) {
  std::vector<std::string> args = with_next_fold(std::vector<std::string>(argv + 1, argv + argc));
  std::cerr << "dtsim " << verb << ": folded ranks did not all match their representative (" << why
            << "): simulating again with --fold " << fold_of(args) << "\n";
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
