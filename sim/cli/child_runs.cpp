#include "sim/cli/child_runs.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <map>
#include <stdexcept>
#include <thread>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace dtsim::sim {

pid_t spawn_process(std::vector<std::string> argv, const std::string& stdout_path,
                    const std::string& stderr_path, int& error, const char* program) {
  std::vector<char*> words;
  for (std::string& a : argv) {
    words.push_back(a.data());
  }
  words.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, stdout_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, stderr_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  error = program != nullptr
              ? posix_spawn(&pid, program, &actions, nullptr, words.data(), environ)
              : posix_spawnp(&pid, words[0], &actions, nullptr, words.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  return error == 0 ? pid : -1;
}

pid_t spawn_child(const ChildRun& child) {
  std::vector<std::string> args{"dtsim"};
  args.insert(args.end(), child.args.begin(), child.args.end());
  int error = 0;
  const pid_t pid = spawn_process(args, "/dev/null", child.stderr_path, error, "/proc/self/exe");
  if (pid < 0) {
    throw std::runtime_error(std::string("cannot start dtsim: ") + std::strerror(error));
  }
  return pid;
}

std::vector<ChildStatus> run_children(const std::vector<ChildRun>& children, int jobs,
                                      double timeout_sec) {
  using Clock = std::chrono::steady_clock;
  std::vector<ChildStatus> status(children.size(), ChildStatus::kFailed);
  struct Running {
    std::size_t index;
    Clock::time_point started;
    bool killed = false;
  };
  std::map<pid_t, Running> running;
  std::size_t next = 0;
  while (next < children.size() || !running.empty()) {
    while (next < children.size() && running.size() < static_cast<std::size_t>(jobs)) {
      running.emplace(spawn_child(children[next]), Running{next, Clock::now()});
      ++next;
    }
    int wstatus = 0;
    const pid_t pid = ::waitpid(-1, &wstatus, WNOHANG);
    if (pid < 0 && errno != EINTR) {
      throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
    }
    if (const auto it = running.find(pid); pid > 0 && it != running.end()) {
      const bool ok = WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0;
      status[it->second.index] = it->second.killed ? ChildStatus::kTimedOut
                                 : ok              ? ChildStatus::kOk
                                                   : ChildStatus::kFailed;
      running.erase(it);
      continue;
    }
    for (auto& [child, r] : running) {
      const std::chrono::duration<double> age = Clock::now() - r.started;
      if (timeout_sec > 0 && !r.killed && age.count() > timeout_sec) {
        ::kill(child, SIGKILL);
        r.killed = true;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return status;
}

}  // namespace dtsim::sim
