#include "platforms/xml_checks.h"

#include <cmath>
#include <csignal>
#include <cstdio>
#include <new>

#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>

#include "platforms/platform_spec.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

namespace sg4 = simgrid::s4u;

namespace dtsim::platforms {

namespace {

// The pair the child looks up last, shared with the parent so that a crash names it.
struct Probe {
  std::size_t src = 0;
  std::size_t dst = 0;
};

std::string number(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", x);
  return text;
}

[[noreturn]] void probe_routes(const std::vector<sg4::Host*>& hosts, Probe* probe) {
  // Quietly: the parent says what failed. SimGrid's own handler would print "Segmentation fault."
  std::signal(SIGSEGV, SIG_DFL);
  std::signal(SIGBUS, SIG_DFL);
  const int null = open("/dev/null", O_WRONLY);
  if (null >= 0) {
    dup2(null, STDERR_FILENO);
    dup2(null, STDOUT_FILENO);
  }
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    for (std::size_t j = 0; j < hosts.size(); ++j) {
      if (i == j) {
        continue;
      }
      probe->src = i;
      probe->dst = j;
      std::vector<sg4::Link*> links;
      double latency_sec = 0;
      hosts[i]->route_to(hosts[j], links, &latency_sec);
      if (links.empty()) {
        _exit(1);
      }
    }
  }
  _exit(0);
}

}  // namespace

void check_xml_links(const std::string& file) {
  for (const sg4::Link* link : sg4::Engine::get_instance()->get_all_links()) {
    const double bandwidth = link->get_bandwidth();
    const double latency = link->get_latency();
    if (!std::isfinite(bandwidth) || bandwidth <= 0) {
      throw PlatformError(file + ": link \"" + link->get_name() +
                          "\": expected a bandwidth > 0, got " + number(bandwidth) + " bytes/s");
    }
    if (!std::isfinite(latency) || latency < 0) {
      throw PlatformError(file + ": link \"" + link->get_name() +
                          "\": expected a latency >= 0, got " + number(latency) + " s");
    }
  }
}

void check_xml_routes(const std::string& file, const std::vector<sg4::Host*>& hosts) {
  if (hosts.size() > kMaxRouteCheckedHosts) {
    return;
  }
  void* shared =
      mmap(nullptr, sizeof(Probe), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shared == MAP_FAILED) {
    throw PlatformError(file + ": cannot check the routes (mmap failed)");
  }
  auto* probe = new (shared) Probe{};
  std::fflush(nullptr);  // the child exits with _exit: nothing buffered may be written twice
  const pid_t child = fork();
  if (child == 0) {
    probe_routes(hosts, probe);
  }
  int status = 0;
  const bool waited = child > 0 && waitpid(child, &status, 0) == child;
  const Probe last = *probe;
  munmap(shared, sizeof(Probe));
  if (!waited) {
    throw PlatformError(file + ": cannot check the routes (fork failed)");
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    return;
  }
  // An empty route and one SimGrid crashes on are the same mistake in the file.
  throw PlatformError(file + ": no route from host \"" + hosts[last.src]->get_name() +
                      "\" to host \"" + hosts[last.dst]->get_name() +
                      "\" (declare a <route> between them with at least one link_ctn)");
}

}  // namespace dtsim::platforms
