// Lowering's shared pieces (lowering_internal.h) and the task count it checks before lowering.
#include <set>

#include "sim/lowering/lowering_internal.h"

namespace dtsim::sim::lowering {

namespace {

bool same_tags(const Node& a, const Node& b) {
  return a.iteration == b.iteration && a.micro_batch == b.micro_batch && a.phase == b.phase;
}

}  // namespace

ProgramCuts program_cuts(const Program& p) {
  const std::size_t n = p.nodes.size();
  std::vector<std::uint8_t> has_dependent(n, 0);
  for (std::int32_t d : p.deps) {
    has_dependent[static_cast<std::size_t>(d)] = 1;
  }
  ProgramCuts cuts{.starts = std::vector<std::uint8_t>(n, 0),
                   .ends = std::vector<std::uint8_t>(n, 0)};
  std::int64_t previous = -1;  // the previous compute node
  for (std::size_t i = 0; i < n; ++i) {
    const Node& node = p.nodes[i];
    if (node.kind != NodeKind::kCompute) {
      continue;
    }
    const auto prev = static_cast<std::size_t>(previous);
    const bool starts = previous < 0 || node.dep_begin != node.dep_end ||
                        !same_tags(p.nodes[prev], node) || has_dependent[prev] != 0;
    cuts.starts[i] = starts ? 1 : 0;
    if (starts && previous >= 0) {
      cuts.ends[prev] = 1;
    }
    cuts.runs += starts ? 1 : 0;
    previous = static_cast<std::int64_t>(i);
  }
  if (previous >= 0) {
    cuts.ends[static_cast<std::size_t>(previous)] = 1;
  }
  cuts.streams.resize(p.comms.size() + 1);
  for (std::size_t i = 0; i < n; ++i) {
    const Node& node = p.nodes[i];
    const std::int32_t stream = node.kind == NodeKind::kCompute ? 0 : node.comm + 1;
    cuts.stream_of.push_back(stream);
    cuts.streams[static_cast<std::size_t>(stream)].push_back(static_cast<std::int32_t>(i));
  }
  return cuts;
}

std::int32_t Choices::index(int rank, const Node& node) {
  const Communicator& comm = g_.communicator_of(rank, node);
  const auto comm_index = static_cast<std::int32_t>(&comm - g_.communicators.data());
  const auto key = std::make_tuple(comm_index, node.op, node.bytes, node.root, node.algorithm);
  auto [it, inserted] = index_.try_emplace(key, static_cast<std::int32_t>(choices_.size()));
  if (inserted) {
    const std::string algorithm =
        node.algorithm < 0 ? "" : g_.algorithms[static_cast<std::size_t>(node.algorithm)];
    choices_.push_back(&choose_({.op = node.op,
                                 .ranks = static_cast<int>(comm.ranks.size()),
                                 .bytes = node.bytes,
                                 .root = node.root,
                                 .algorithm = algorithm},
                                comm));
  }
  return it->second;
}

std::vector<CollectiveChoice> Choices::summaries() const {
  std::vector<CollectiveChoice> out;
  for (const CollectiveChoice* c : choices_) {
    out.push_back({.algorithm = c->algorithm, .candidates = c->candidates});
  }
  return out;
}

FoldPlan make_plan(const ExecutionGraph& g, const LoweringOptions& options, Choices& choices) {
  const ScheduleOf schedule_of = [&](int rank, std::int32_t node) -> const Schedule& {
    const Node& n = g.program_of(rank).nodes[static_cast<std::size_t>(node)];
    return choices.schedule(choices.index(rank, n));
  };
  const bool verify = options.fold == FoldMode::kVerified || options.fold == FoldMode::kNode;
  FoldPlatform platform{.compute_factor = options.compute_factor,
                        .rank_nodes = options.rank_nodes,
                        .route_shape = options.route_shape,
                        .route_links = options.route_links};
  FoldPlan plan = plan_fold(g, platform, verify ? FoldMode::kExact : options.fold, options.memoize,
                            schedule_of);
  if (!verify) {
    return plan;
  }
  // Verified classes only where they save work: a folded collective costs a join and an exit
  // more than its schedule, which small classes may not earn back.
  platform.route_links = {};
  FoldPlan verified = plan_fold(g, platform, options.fold, options.memoize, schedule_of);
  verified.private_links = plan.private_links;
  if (verified.stands_for != plan.stands_for &&
      count_tasks(g, verified, choices) < count_tasks(g, plan, choices)) {
    return verified;
  }
  return plan;
}

double count_tasks(const ExecutionGraph& g, const FoldPlan& plan, Choices& choices) {
  std::map<const Program*, ProgramCuts> cuts;
  double tasks = 0;
  std::set<std::int32_t> replayed;  // choices replayed in full
  for (int r = 0; r < g.rank_count(); ++r) {
    if (plan.stands_for[static_cast<std::size_t>(r)] != r) {
      continue;
    }
    const Program& p = g.program_of(r);
    auto [it, inserted] = cuts.try_emplace(&p);
    if (inserted) {
      it->second = program_cuts(p);
    }
    tasks += it->second.runs;
    const std::vector<std::vector<ClassComm>> roles = class_comms(g, plan, r);
    for (const Node& node : p.nodes) {
      if (node.kind == NodeKind::kCompute || node.kind == NodeKind::kRecv) {
        continue;
      }
      const std::vector<ClassComm>& comms = roles[static_cast<std::size_t>(node.comm)];
      for (const ClassComm& cc : comms) {
        if (node.kind == NodeKind::kSend) {
          tasks += static_cast<double>(cc.members.size());
          continue;
        }
        const std::int32_t c = choices.index(cc.members.front(), node);
        const double ops = static_cast<double>(choices.schedule(c).ops.size());
        if (!cc.single) {  // counted once, by the class of its first rank
          const int first = g.communicators[static_cast<std::size_t>(cc.comm)].ranks.front();
          tasks += plan.stands_for[static_cast<std::size_t>(first)] == r ? ops : 0.0;
          continue;
        }
        const bool own = cc.comm == comms.front().comm;
        switch (folded_kind(plan, own, cc.comm, comms.front().comm, replayed.contains(c))) {
          case FoldedKind::kReplay:
            tasks += ops + 2;
            replayed.insert(c);
            break;
          case FoldedKind::kMemoized:
            tasks += 2;
            break;
          case FoldedKind::kLeftOut:
            break;
        }
      }
    }
  }
  return tasks;
}

}  // namespace dtsim::sim::lowering

namespace dtsim::sim {

double count_lowered_tasks(const ExecutionGraph& g, const LoweringOptions& options,
                           const ChooseCollective& choose) {
  lowering::Choices choices(g, choose);
  return lowering::count_tasks(g, lowering::make_plan(g, options, choices), choices);
}

}  // namespace dtsim::sim
