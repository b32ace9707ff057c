#include "platforms/xml_checks.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <new>
#include <stdexcept>

#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <xbt/asserts.h>

#include "platforms/platform_spec.h"
#include "workloads/parsing/json_fields.h"
#include "workloads/parsing/units.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

// AddressSanitizer builds (g++ defines __SANITIZE_ADDRESS__, clang answers __has_feature).
#if defined(__SANITIZE_ADDRESS__)
#define DTSIM_XML_CHECKS_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DTSIM_XML_CHECKS_ASAN 1
#endif
#endif
#ifdef DTSIM_XML_CHECKS_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

namespace sg4 = simgrid::s4u;

namespace dtsim::platforms {

using parsing::format_number;

namespace {

// The pair the child looks up last, shared with the parent so that a crash names it.
struct Probe {
  std::size_t index = 0;  // into the pairs checked
};

// A forked child that may die of what SimGrid refuses: it dies as a plain process would, by the
// default handler of a deadly signal, not by the parent's (a fuzzer's would write every refusal
// as a crash of its own), and a sanitizer's fatal report in it runs no callback of the parent's.
// Under AddressSanitizer SimGrid's request for 64 GB (a fat-tree with radical="0"), which a plain
// build gets as std::bad_alloc, is such a report, and libFuzzer's death callback, inherited by
// the child, wrote it as a crash.
void become_disposable_child() {
  for (const int sig : {SIGSEGV, SIGBUS, SIGABRT, SIGILL, SIGFPE}) {
    std::signal(sig, SIG_DFL);
  }
  // A failed xbt_assert prints SimGrid's backtrace, symbolized from the binary's debug
  // information: most of a refused platform's time in the child under ASan (0.6 of 0.7 s), for
  // lines the parent never reads (simgrid_message keeps the CRITICAL line). SimGrid's
  // --log=no_loc.
  xbt_log_no_loc = 1;
#ifdef DTSIM_XML_CHECKS_ASAN
  __sanitizer_set_death_callback(nullptr);
#endif
}

// Whether a transfer from `src` to `dst` has somewhere to go: links, or (a Vivaldi zone's hosts)
// a latency of its own. SimGrid refuses a route with neither.
bool routable(const sg4::Host* src, const sg4::Host* dst) {
  std::vector<sg4::Link*> links;
  double latency_sec = 0;
  src->route_to(dst, links, &latency_sec);
  return !links.empty() || latency_sec > 0;
}

[[noreturn]] void probe_routes(const std::vector<HostPair>& pairs, Probe* probe) {
  // Quietly: the parent says what failed. SimGrid's own handler would print "Segmentation fault."
  become_disposable_child();
  const int null = open("/dev/null", O_WRONLY);
  if (null >= 0) {
    dup2(null, STDERR_FILENO);
    dup2(null, STDOUT_FILENO);
  }
  try {
    for (std::size_t k = 0; k < pairs.size(); ++k) {
      probe->index = k;
      if (!routable(pairs[k].first, pairs[k].second)) {
        _exit(1);
      }
    }
  } catch (...) {  // never unwind into the parent's code
    _exit(1);
  }
  _exit(0);
}

// Runs probe_routes(pairs) in a child; the index of the pair it failed on, or -1.
long first_unroutable(const std::vector<HostPair>& pairs) {
  void* shared =
      mmap(nullptr, sizeof(Probe), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shared == MAP_FAILED) {
    throw std::runtime_error("checking the XML platform's routes: mmap failed");
  }
  auto* probe = new (shared) Probe{};
  std::fflush(nullptr);  // the child exits with _exit: nothing buffered may be written twice
  const pid_t child = fork();
  if (child == 0) {
    probe_routes(pairs, probe);
  }
  int status = 0;
  pid_t waited = -1;
  if (child > 0) {
    do {
      waited = waitpid(child, &status, 0);
    } while (waited < 0 && errno == EINTR);
  }
  const std::size_t last = probe->index;
  munmap(shared, sizeof(Probe));
  if (child < 0 || waited != child) {
    throw std::runtime_error("checking the XML platform's routes: cannot run the child process");
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? -1 : static_cast<long>(last);
}

// The message of SimGrid's fatal error in what the child wrote on stderr ("[0.000000]
// ./src/...:147: [root/CRITICAL] Zone(ft): ...": the text after the category), or the first line.
std::string simgrid_message(const std::string& output) {
  constexpr std::size_t kMaxChars = 300;
  std::string line = output.substr(0, output.find('\n'));
  const std::size_t critical = output.find("/CRITICAL] ");
  if (critical != std::string::npos) {
    const std::size_t start = critical + std::string("/CRITICAL] ").size();
    line = output.substr(start, output.find('\n', start) - start);
  }
  return line.size() > kMaxChars ? line.substr(0, kMaxChars) + "..." : line;
}

[[noreturn]] void load_in_child(const std::string& file, int stderr_fd) {
  become_disposable_child();  // it dies of what SimGrid refuses (xbt_die aborts)
  dup2(stderr_fd, STDERR_FILENO);
  const int null = open("/dev/null", O_WRONLY);
  if (null >= 0) {
    dup2(null, STDOUT_FILENO);
  }
  try {
    sg4::Engine::get_instance()->load_platform(file);
  } catch (...) {  // an exception the parent's own load will throw and report
  }
  _exit(0);
}

}  // namespace

void check_xml_loads(const std::string& file) {
  int fds[2];
  if (pipe(fds) != 0) {
    throw std::runtime_error("checking the XML platform: pipe failed");
  }
  std::fflush(nullptr);  // the child exits with _exit: nothing buffered may be written twice
  const pid_t child = fork();
  if (child == 0) {
    close(fds[0]);
    load_in_child(file, fds[1]);
  }
  close(fds[1]);
  std::string output;
  char buffer[4096];
  for (ssize_t n; (n = read(fds[0], buffer, sizeof buffer)) != 0;) {
    if (n < 0 && errno != EINTR) {
      break;
    }
    output.append(buffer, static_cast<std::size_t>(std::max<ssize_t>(n, 0)));
  }
  close(fds[0]);
  int status = 0;
  pid_t waited = -1;
  if (child > 0) {
    do {
      waited = waitpid(child, &status, 0);
    } while (waited < 0 && errno == EINTR);
  }
  if (child < 0 || waited != child) {
    throw std::runtime_error("checking the XML platform: cannot run the child process");
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw PlatformError(file + ": SimGrid refused the platform: " + simgrid_message(output));
  }
}

void check_xml_names(const std::string& file) {
  const auto check = [&](const char* what, const std::string& name) {
    if (!parsing::is_valid_utf8(name)) {
      throw PlatformError(file + ": " + what + " \"" + parsing::printable(name) +
                          "\": the name is not valid UTF-8");
    }
  };
  const sg4::Engine* engine = sg4::Engine::get_instance();
  for (const sg4::Host* host : engine->get_all_hosts()) {
    check("host", host->get_name());
  }
  for (const sg4::Link* link : engine->get_all_links()) {
    check("link", link->get_name());
  }
  for (const auto* point : engine->get_all_netpoints()) {
    check("router or zone", point->get_name());
  }
}

void check_xml_links(const std::string& file) {
  for (const sg4::Link* link : sg4::Engine::get_instance()->get_all_links()) {
    const double bandwidth = link->get_bandwidth();
    const double latency = link->get_latency();
    if (!std::isfinite(bandwidth) || bandwidth <= 0) {
      throw PlatformError(file + ": link \"" + link->get_name() +
                          "\": expected a bandwidth > 0, got " + format_number("%g", bandwidth) +
                          " bytes/s");
    }
    if (!std::isfinite(latency) || latency < 0) {
      throw PlatformError(file + ": link \"" + link->get_name() +
                          "\": expected a latency >= 0, got " + format_number("%g", latency) +
                          " s");
    }
  }
}

void check_xml_routes(const std::string& file, const std::vector<sg4::Host*>& hosts,
                      const std::vector<HostPair>& pairs) {
  std::vector<HostPair> checked;
  if (hosts.size() <= kMaxRouteCheckedHosts) {
    for (sg4::Host* src : hosts) {
      for (sg4::Host* dst : hosts) {
        if (src != dst) {
          checked.emplace_back(src, dst);
        }
      }
    }
  }
  checked.insert(checked.end(), pairs.begin(), pairs.end());
  const long failed = first_unroutable(checked);
  if (failed < 0) {
    return;
  }
  // An empty route and one SimGrid crashes on are the same mistake in the file.
  const auto& [src, dst] = checked[static_cast<std::size_t>(failed)];
  throw PlatformError(file + ": no route from host \"" + src->get_name() + "\" to host \"" +
                      dst->get_name() +
                      "\" (declare a <route> between them with at least one link_ctn)");
}

}  // namespace dtsim::platforms
