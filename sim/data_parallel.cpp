#include "sim/data_parallel.h"

#include <map>

#include "platforms/units.h"
#include "sim/config_error.h"

namespace dtsim::sim {

namespace {

using workloads::Workload;

// The backward pass cut where buckets become ready: segment b ends when bucket b's gradients are
// all computed; the last segment covers the layers left (those before the last bucket's first).
std::vector<double> backward_segments_sec(const Workload& w, const std::vector<Bucket>& buckets) {
  std::vector<double> segments;
  int done_down_to = static_cast<int>(w.layers.size());  // covered: layers [done_down_to, end)
  // In execution order (the last layer first), as a task covering consecutive layers sums them.
  auto backward_sec = [&w](int from, int to) {
    double total = 0;
    for (int i = to - 1; i >= from; --i) {
      total += w.layers[static_cast<std::size_t>(i)].backward_sec;
    }
    return total;
  };
  for (const Bucket& b : buckets) {
    segments.push_back(backward_sec(b.first_layer, done_down_to));
    done_down_to = b.first_layer;
  }
  segments.push_back(backward_sec(0, done_down_to));
  return segments;
}

// A slow GPU's tasks take this many times the trace's durations.
double compute_factor(const DataParallelJob& job, int r) {
  return job.compute_factor.empty() ? 1.0 : job.compute_factor[static_cast<std::size_t>(r)];
}

// Adds rank r's compute tasks of one iteration (all but the optimizer step).
void add_compute_tasks(TaskGraph& graph, const Workload& workload, const DataParallelJob& job,
                       const std::vector<double>& segments_sec, int r,
                       DataParallelGraph::Iteration& iter) {
  const double k = compute_factor(job, r);
  // The compute stream orders forward after the previous optimizer step: no explicit dep.
  // Each micro-batch before the last: a forward task and a backward task.
  double backward_sec = 0;
  for (auto layer = workload.layers.rbegin(); layer != workload.layers.rend(); ++layer) {
    backward_sec += layer->backward_sec;
  }
  for (int m = 0; m + 1 < job.accumulation_steps; ++m) {
    const TaskId f = graph.add_compute(r, k * workload.forward_sec(), {});
    const TaskId b = graph.add_compute(r, k * backward_sec, {});
    if (m == 0) {
      iter.accumulate.push_back(f);
    }
    if (m + 2 == job.accumulation_steps) {
      iter.accumulate_end.push_back(b);
    }
  }
  iter.forward.push_back(graph.add_compute(r, k * workload.forward_sec(), {}));
  for (std::size_t b = 0; b + 1 < segments_sec.size(); ++b) {
    iter.ready[b][static_cast<std::size_t>(r)] = graph.add_compute(r, k * segments_sec[b], {});
  }
  iter.backward_end.push_back(graph.add_compute(r, k * segments_sec.back(), {}));
}

// Every rank's entries of `iter` made rank 0's.
void share_rank0(DataParallelGraph::Iteration& iter, int p) {
  const auto n = static_cast<std::size_t>(p);
  if (!iter.accumulate.empty()) {
    iter.accumulate.assign(n, iter.accumulate.front());
    iter.accumulate_end.assign(n, iter.accumulate_end.front());
  }
  iter.forward.assign(n, iter.forward.front());
  iter.backward_end.assign(n, iter.backward_end.front());
  for (auto& ready : iter.ready) {
    ready.assign(n, ready.front());
  }
}

// The all-reduce of one bucket when ranks are folded (all enter with rank 0's `entry0` and leave
// together): a join of the entry, then either the schedule and a join of its exits (the first
// time this size occurs, or without memoize) or one memoized wait as long as that first time.
CollectiveTasks add_folded_all_reduce(TaskGraph& g, const Schedule& schedule, std::uint64_t bytes,
                                      const std::vector<TaskId>& entry0, int p, bool memoize,
                                      std::map<std::uint64_t, CollectiveTasks>& simulated) {
  const auto n = static_cast<std::size_t>(p);
  const TaskId in = g.add_stream_wait(0, 0, entry0);
  const auto it = simulated.find(bytes);
  if (memoize && it != simulated.end()) {
    const TaskId from = it->second.first;
    const TaskId to = it->second.end - 1;
    const std::vector<TaskId> deps{in};
    const TaskId wait = g.add_memo_wait(0, from, to, deps);
    return {.first = in, .end = wait + 1, .exits = {n, {wait}}, .memoized = true};
  }
  const CollectiveTasks c = g.add_schedule(schedule, {n, {in}});
  const TaskId out =
      g.add_stream_wait(0, 0, c.exits.front().empty() ? std::vector<TaskId>{in} : c.exits.front());
  CollectiveTasks result{.first = in, .end = out + 1, .exits = {n, {out}}};
  simulated.emplace(bytes, result);
  return result;
}

// Whether every rank computes at the same speed (no slow GPU): a condition of folding.
bool uniform_compute(const DataParallelJob& job) {
  for (double k : job.compute_factor) {
    if (k != job.compute_factor.front()) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::optional<Overlap> parse_overlap(const std::string& name) {
  if (name == "backward") {
    return Overlap::kBackward;
  }
  if (name == "none") {
    return Overlap::kNone;
  }
  return std::nullopt;
}

std::string overlap_name(Overlap overlap) {
  return overlap == Overlap::kBackward ? "backward" : "none";
}

namespace {

// Refuses a task graph of more than kMaxGraphTasks (at about 200 bytes each, ~10 GB): per
// iteration, nb + 3 compute tasks per computing rank and every bucket's all-reduce operations
// (a folded one: a handful).
void check_graph_size(const DataParallelJob& job, int computing_ranks,
                      const std::vector<Bucket>& buckets,
                      const std::map<std::uint64_t, CollectiveChoice>& choices) {
  constexpr double kMaxGraphTasks = 5e7;
  double per_iteration = static_cast<double>(computing_ranks) * (buckets.size() + 3);
  for (const Bucket& b : buckets) {
    per_iteration += computing_ranks == 1 ? 4 : choices.at(b.bytes).schedule.ops.size();
  }
  const double tasks = per_iteration * job.iterations;
  if (tasks > kMaxGraphTasks) {
    throw ConfigError("--iterations " + std::to_string(job.iterations) + ": about " +
                      platforms::format_number("%.3g", tasks) +
                      " tasks to replay (at most 5e7, ~10 GB); the last of 3 iterations is "
                      "already the steady state");
  }
}

}  // namespace

bool ranks_exit_together(const Schedule& schedule) {
  for (const auto& exits : schedule.exit_ops) {
    if (exits != schedule.exit_ops.front()) {
      return false;
    }
  }
  return true;
}

DataParallelGraph build_data_parallel(
    const Workload& workload, const DataParallelJob& job,
    const std::function<CollectiveChoice(std::uint64_t bytes)>& all_reduce) {
  DataParallelGraph out;
  out.accumulation_steps = job.accumulation_steps;
  out.buckets = assign_buckets(workload, job.bucket_cap_bytes, job.first_bucket_cap_bytes);
  const int p = job.ranks;
  const auto nb = out.buckets.size();

  // One schedule per distinct bucket size, shared by all iterations.
  std::map<std::uint64_t, CollectiveChoice> choices;
  for (const Bucket& b : out.buckets) {
    if (!choices.contains(b.bytes)) {
      choices.emplace(b.bytes, all_reduce(b.bytes));
    }
  }

  out.ranks_folded = job.fold_identical_ranks && p > 1 && uniform_compute(job);
  for (const auto& [bytes, choice] : choices) {
    out.ranks_folded = out.ranks_folded && ranks_exit_together(choice.schedule);
  }
  const int computing_ranks = out.ranks_folded ? 1 : p;
  check_graph_size(job, computing_ranks, out.buckets, choices);

  const std::vector<double> segments_sec = backward_segments_sec(workload, out.buckets);
  for (int it = 0; it < job.iterations; ++it) {
    DataParallelGraph::Iteration iter;
    iter.ready.assign(nb, std::vector<TaskId>(static_cast<std::size_t>(p)));
    for (int r = 0; r < computing_ranks; ++r) {
      add_compute_tasks(out.graph, workload, job, segments_sec, r, iter);
    }
    if (out.ranks_folded) {
      share_rank0(iter, p);
    }
    // All-reduces in bucket order; entry of bucket b on r: ready on r (no overlap: r's backward
    // pass done), and r left bucket b-1.
    std::vector<std::vector<TaskId>> entry(static_cast<std::size_t>(p));
    for (std::size_t b = 0; b < nb; ++b) {
      if (out.ranks_folded) {
        std::vector<TaskId> entry0 =
            b == 0 ? std::vector<TaskId>{} : iter.all_reduce.back().exits[0];
        entry0.push_back(job.overlap == Overlap::kNone ? iter.backward_end[0] : iter.ready[b][0]);
        iter.all_reduce.push_back(add_folded_all_reduce(
            out.graph, choices.at(out.buckets[b].bytes).schedule, out.buckets[b].bytes, entry0, p,
            job.memoize_repeats, out.simulated));
        continue;
      }
      for (int r = 0; r < p; ++r) {
        auto& e = entry[static_cast<std::size_t>(r)];
        if (b == 0) {
          e.clear();
        } else {
          e = iter.all_reduce.back().exits[static_cast<std::size_t>(r)];
        }
        e.push_back(job.overlap == Overlap::kNone ? iter.backward_end[static_cast<std::size_t>(r)]
                                                  : iter.ready[b][static_cast<std::size_t>(r)]);
      }
      iter.all_reduce.push_back(
          out.graph.add_schedule(choices.at(out.buckets[b].bytes).schedule, entry));
    }
    for (int r = 0; r < computing_ranks; ++r) {
      std::vector<TaskId> deps{iter.backward_end[static_cast<std::size_t>(r)]};
      if (nb > 0) {
        const auto& exits = iter.all_reduce.back().exits[static_cast<std::size_t>(r)];
        deps.insert(deps.end(), exits.begin(), exits.end());
      }
      const double k = compute_factor(job, r);
      iter.optimizer.push_back(out.graph.add_compute(r, k * workload.optimizer_sec, deps));
    }
    if (out.ranks_folded) {
      iter.optimizer.assign(static_cast<std::size_t>(p), iter.optimizer.front());
    }
    out.iterations.push_back(std::move(iter));
  }
  for (const Bucket& b : out.buckets) {
    const CollectiveChoice& c = choices.at(b.bytes);
    out.choices.push_back({.algorithm = c.algorithm, .candidates = c.candidates});
  }
  return out;
}

}  // namespace dtsim::sim
