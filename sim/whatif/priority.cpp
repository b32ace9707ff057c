#include "sim/whatif/priority.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "sim/config_error.h"
#include "sim/invariant.h"

namespace dtsim::sim {

ExecutionGraph set_priority(ExecutionGraph g, std::span<const NodeRef> nodes,
                            std::int32_t priority) {
  for (const NodeRef ref : nodes) {
    node_at(g, ref, "set_priority").priority = priority;
  }
  require_valid(g, "set_priority");
  return g;
}

bool has_priorities(const ExecutionGraph& g) {
  for (const Program& p : g.programs) {
    for (const Node& n : p.nodes) {
      if (n.priority != 0) {
        return true;
      }
    }
  }
  return false;
}

namespace {

// One stream of a program being list-scheduled: a queue per priority, in issue order.
struct Stream {
  std::map<std::int32_t, std::deque<std::int32_t>> queues;
  double free_sec = 0;
};

// The order in which the policy starts the nodes of `p`.
std::vector<std::int32_t> policy_order(const ExecutionGraph& g, const Program& p, int rank,
                                       const RankCollectiveSeconds& sec) {
  const std::size_t n = p.nodes.size();
  std::vector<Stream> streams(p.comms.size() + 1);  // 0: compute; 1 + role: that communicator's
  std::vector<double> duration_sec(n);
  for (std::size_t i = 0; i < n; ++i) {
    const Node& node = p.nodes[i];
    const bool compute = node.kind == NodeKind::kCompute;
    duration_sec[i] = compute ? node.duration_sec : sec(g, rank, node);
    streams[compute ? 0 : static_cast<std::size_t>(node.comm) + 1].queues[node.priority].push_back(
        static_cast<std::int32_t>(i));
  }
  constexpr double kNotStarted = std::numeric_limits<double>::infinity();
  std::vector<double> end_sec(n, kNotStarted);
  const auto ready = [&](std::int32_t i, double t) {
    for (std::int32_t d : p.deps_of(p.nodes[static_cast<std::size_t>(i)])) {
      if (!(end_sec[static_cast<std::size_t>(d)] <= t)) {
        return false;
      }
    }
    return true;
  };
  std::vector<std::int32_t> order;
  order.reserve(n);
  for (double t = 0; order.size() < n;) {
    for (bool started = true; started;) {  // zero-length nodes can free a stream at t again
      started = false;
      for (Stream& s : streams) {
        if (s.free_sec > t) {
          continue;
        }
        for (auto& [priority, queue] : s.queues) {
          if (!queue.empty() && ready(queue.front(), t)) {
            const auto i = static_cast<std::size_t>(queue.front());
            queue.pop_front();
            end_sec[i] = t + duration_sec[i];
            s.free_sec = end_sec[i];
            order.push_back(static_cast<std::int32_t>(i));
            started = true;
            break;
          }
        }
      }
    }
    double next = kNotStarted;  // the next end: a node ends when its stream becomes free
    for (const Stream& s : streams) {
      if (s.free_sec > t) {
        next = std::min(next, s.free_sec);
      }
    }
    // The earliest node not started has its deps earlier in issue order, all started: it is the
    // head of its queue and becomes ready once they end, so something is always running here.
    DTSIM_CHECK(order.size() == n || next < kNotStarted, "the policy always finds a next node");
    t = next;
  }
  return order;
}

// `p` with its nodes in `order`, dependencies renumbered.
Program reordered(const Program& p, const std::vector<std::int32_t>& order) {
  std::vector<std::int32_t> position(p.nodes.size());
  for (std::size_t k = 0; k < order.size(); ++k) {
    position[static_cast<std::size_t>(order[k])] = static_cast<std::int32_t>(k);
  }
  Program out{.name = p.name, .comms = p.comms, .nodes = {}, .deps = {}};
  std::vector<std::int32_t> deps;
  for (std::int32_t old : order) {
    const Node& node = p.nodes[static_cast<std::size_t>(old)];
    deps.clear();
    for (std::int32_t d : p.deps_of(node)) {
      deps.push_back(position[static_cast<std::size_t>(d)]);
    }
    (void)out.add(node, std::span<const std::int32_t>(deps));
  }
  return out;
}

// Per communicator, the program all its members run, or -1 where they run different ones.
std::vector<std::int32_t> communicator_programs(const ExecutionGraph& g) {
  std::vector<std::int32_t> program(g.communicators.size(), -2);  // -2: no member seen yet
  for (std::size_t c = 0; c < g.communicators.size(); ++c) {
    for (int r : g.communicators[c].ranks) {
      const std::int32_t pr = g.ranks[static_cast<std::size_t>(r)].program;
      program[c] = program[c] == -2 || program[c] == pr ? pr : -1;
    }
  }
  return program;
}

// Throws unless program `pi` can be list-scheduled on its own (priority.h).
void check_schedulable(const ExecutionGraph& g, std::int32_t pi,
                       const std::vector<std::int32_t>& comm_programs) {
  const Program& p = g.programs[static_cast<std::size_t>(pi)];
  for (const Node& n : p.nodes) {
    if (n.kind == NodeKind::kSend || n.kind == NodeKind::kRecv) {
      throw ConfigError("what_if",
                        "the priority policy (p3=, or priorities in a graph): "
                        "program \"" +
                            p.name +
                            "\" has sends and receives, and the policy is applied to "
                            "programs of compute and collectives only (WHATIF.md)");
    }
  }
  for (const RankProgram& rp : g.ranks) {
    if (rp.program != pi) {
      continue;
    }
    for (std::int32_t c : rp.comms) {
      if (comm_programs[static_cast<std::size_t>(c)] != pi) {
        throw ConfigError("what_if",
                          "the priority policy (p3=, or priorities in a graph): "
                          "communicator " +
                              g.communicators[static_cast<std::size_t>(c)].name +
                              " has members running another program than \"" + p.name +
                              "\", and the policy needs them all to run one "
                              "(WHATIF.md)");
      }
    }
  }
}

}  // namespace

ExecutionGraph order_by_priority(ExecutionGraph g, const RankCollectiveSeconds& sec) {
  const std::vector<std::int32_t> comm_programs = communicator_programs(g);
  for (std::size_t pi = 0; pi < g.programs.size(); ++pi) {
    Program& p = g.programs[pi];
    bool any = false;
    for (const Node& n : p.nodes) {
      any = any || n.priority != 0;
    }
    if (!any) {
      continue;
    }
    check_schedulable(g, static_cast<std::int32_t>(pi), comm_programs);
    int rank = 0;  // the first rank running it
    while (rank < g.rank_count() &&
           g.ranks[static_cast<std::size_t>(rank)].program != static_cast<std::int32_t>(pi)) {
      ++rank;
    }
    if (rank < g.rank_count()) {  // a program nobody runs has no times
      p = reordered(p, policy_order(g, p, rank, sec));
    }
  }
  require_valid(g, "order_by_priority");
  return g;
}

}  // namespace dtsim::sim
