#include "sim/data_parallel.h"

#include <map>

namespace dtsim::sim {

namespace {

using workloads::Workload;

// Backward time of layers [from, to) in forward indices.
double backward_sec(const Workload& w, int from, int to) {
  double total = 0;
  for (int i = from; i < to; ++i) {
    total += w.layers[static_cast<std::size_t>(i)].backward_sec;
  }
  return total;
}

}  // namespace

DataParallelGraph build_data_parallel(const Workload& workload, const DataParallelJob& job,
                                      const CollectiveAlgorithm& algorithm,
                                      const TopologyHints& hints) {
  DataParallelGraph out;
  out.buckets = assign_buckets(workload, job.bucket_cap_bytes, job.first_bucket_cap_bytes);
  const int p = job.ranks;
  const auto nb = out.buckets.size();

  // One schedule per distinct bucket size, shared by all iterations.
  std::map<std::uint64_t, Schedule> schedules;
  for (const Bucket& b : out.buckets) {
    if (!schedules.contains(b.bytes)) {
      schedules.emplace(b.bytes, algorithm.all_reduce(p, b.bytes, hints));
    }
  }

  const int layers = static_cast<int>(workload.layers.size());
  for (int it = 0; it < job.iterations; ++it) {
    DataParallelGraph::Iteration iter;
    iter.ready.assign(nb, std::vector<TaskId>(static_cast<std::size_t>(p)));
    for (int r = 0; r < p; ++r) {
      // The compute stream orders forward after the previous optimizer step: no explicit dep.
      TaskId t = out.graph.add_compute(r, workload.forward_sec(), {});
      iter.forward.push_back(t);
      int done_down_to = layers;  // backward has covered layers [done_down_to, layers)
      for (std::size_t b = 0; b < nb; ++b) {
        const int first = out.buckets[b].first_layer;
        t = out.graph.add_compute(r, backward_sec(workload, first, done_down_to), {});
        done_down_to = first;
        iter.ready[b][static_cast<std::size_t>(r)] = t;
      }
      t = out.graph.add_compute(r, backward_sec(workload, 0, done_down_to), {});
      iter.backward_end.push_back(t);
    }
    // All-reduces in bucket order; entry of bucket b on r: ready on r, and r left bucket b-1.
    std::vector<std::vector<TaskId>> entry(static_cast<std::size_t>(p));
    for (std::size_t b = 0; b < nb; ++b) {
      for (int r = 0; r < p; ++r) {
        auto& e = entry[static_cast<std::size_t>(r)];
        if (b == 0) {
          e.clear();
        } else {
          e = iter.all_reduce.back().exits[static_cast<std::size_t>(r)];
        }
        e.push_back(iter.ready[b][static_cast<std::size_t>(r)]);
      }
      iter.all_reduce.push_back(out.graph.add_schedule(schedules.at(out.buckets[b].bytes), entry));
    }
    for (int r = 0; r < p; ++r) {
      std::vector<TaskId> deps{iter.backward_end[static_cast<std::size_t>(r)]};
      if (nb > 0) {
        const auto& exits = iter.all_reduce.back().exits[static_cast<std::size_t>(r)];
        deps.insert(deps.end(), exits.begin(), exits.end());
      }
      iter.optimizer.push_back(out.graph.add_compute(r, workload.optimizer_sec, deps));
    }
    out.iterations.push_back(std::move(iter));
  }
  return out;
}

}  // namespace dtsim::sim
