#include "sim/data_parallel.h"

#include <map>

namespace dtsim::sim {

namespace {

using workloads::Workload;

// The backward pass cut where buckets become ready: segment b ends when bucket b's gradients are
// all computed; the last segment covers the layers left (those before the last bucket's first).
std::vector<double> backward_segments_sec(const Workload& w, const std::vector<Bucket>& buckets) {
  std::vector<double> segments;
  int done_down_to = static_cast<int>(w.layers.size());  // covered: layers [done_down_to, end)
  auto backward_sec = [&w](int from, int to) {
    double total = 0;
    for (int i = from; i < to; ++i) {
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

  const std::vector<double> segments_sec = backward_segments_sec(workload, out.buckets);
  auto factor = [&job](int r) {
    return job.compute_factor.empty() ? 1.0 : job.compute_factor[static_cast<std::size_t>(r)];
  };
  for (int it = 0; it < job.iterations; ++it) {
    DataParallelGraph::Iteration iter;
    iter.ready.assign(nb, std::vector<TaskId>(static_cast<std::size_t>(p)));
    for (int r = 0; r < p; ++r) {
      const double k = factor(r);
      // The compute stream orders forward after the previous optimizer step: no explicit dep.
      if (job.accumulation_steps > 1) {
        const double micro_batch_sec = workload.forward_sec() + workload.backward_sec();
        iter.accumulate.push_back(
            out.graph.add_compute(r, k * (job.accumulation_steps - 1) * micro_batch_sec, {}));
      }
      iter.forward.push_back(out.graph.add_compute(r, k * workload.forward_sec(), {}));
      for (std::size_t b = 0; b < nb; ++b) {
        iter.ready[b][static_cast<std::size_t>(r)] =
            out.graph.add_compute(r, k * segments_sec[b], {});
      }
      iter.backward_end.push_back(out.graph.add_compute(r, k * segments_sec.back(), {}));
    }
    // All-reduces in bucket order; entry of bucket b on r: ready on r (no overlap: r's backward
    // pass done), and r left bucket b-1.
    std::vector<std::vector<TaskId>> entry(static_cast<std::size_t>(p));
    for (std::size_t b = 0; b < nb; ++b) {
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
    for (int r = 0; r < p; ++r) {
      std::vector<TaskId> deps{iter.backward_end[static_cast<std::size_t>(r)]};
      if (nb > 0) {
        const auto& exits = iter.all_reduce.back().exits[static_cast<std::size_t>(r)];
        deps.insert(deps.end(), exits.begin(), exits.end());
      }
      iter.optimizer.push_back(out.graph.add_compute(r, factor(r) * workload.optimizer_sec, deps));
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
