// Builds the task graph of data-parallel training (PyTorch DDP over NCCL):
// per rank and iteration, forward, backward in reverse layer order, one all-reduce per gradient
// bucket on the rank's single communication stream, then the optimizer step.
#ifndef DTSIM_SIM_DATA_PARALLEL_H_
#define DTSIM_SIM_DATA_PARALLEL_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/buckets.h"
#include "sim/collective_choice.h"
#include "sim/task_graph.h"
#include "workloads/trace.h"

namespace dtsim::sim {

// When a rank's gradient all-reduces may run (--overlap).
enum class Overlap {
  // Bucket b's all-reduce starts once its gradients are computed, while the backward pass goes on
  // (NCCL on GPUs: communication has its own engines and links).
  kBackward,
  // Communication cannot run while the rank computes: every all-reduce starts after the rank's
  // whole backward pass (communication needs the cores that compute, e.g. gloo on CPUs).
  kNone,
};

// "backward" or "none"; nothing for other names.
[[nodiscard]] std::optional<Overlap> parse_overlap(const std::string& name);
[[nodiscard]] std::string overlap_name(Overlap overlap);

struct DataParallelJob {
  int ranks = 1;
  std::uint64_t bucket_cap_bytes = kDefaultBucketCapBytes;
  std::uint64_t first_bucket_cap_bytes = kFirstBucketCapBytes;
  int iterations = 3;  // simulated back to back; the last one is the steady state
  // Micro-batches per optimizer step (gradient accumulation): the first steps-1 run forward and
  // backward with no communication (DDP's no_sync), the last one all-reduces as usual.
  int accumulation_steps = 1;
  // Per rank: its forward, backward and optimizer tasks take this many times the trace's
  // durations (a slow GPU). Empty: 1 for every rank.
  std::vector<double> compute_factor;
  Overlap overlap = Overlap::kBackward;
  // Build one compute stream for all ranks when that is provably exact (fold_ranks below).
  bool fold_identical_ranks = false;
  // With folded ranks, replay each distinct all-reduce size once; repeats become a wait as long
  // as the first (exact: see build_data_parallel).
  bool memoize_repeats = false;
};

// The graph and the tasks a report needs to read times from.
struct DataParallelGraph {
  struct Iteration {
    std::vector<TaskId> accumulate;           // per rank, with accumulation_steps > 1: first task
    std::vector<TaskId> accumulate_end;       // and last task of the micro-batches before the last
    std::vector<TaskId> forward;              // per rank
    std::vector<TaskId> backward_end;         // per rank: the last backward segment
    std::vector<std::vector<TaskId>> ready;   // [bucket][rank]: gradients of the bucket computed
    std::vector<CollectiveTasks> all_reduce;  // per bucket
    std::vector<TaskId> optimizer;            // per rank
  };
  TaskGraph graph;
  int accumulation_steps = 1;
  std::vector<Bucket> buckets;
  std::vector<CollectiveChoice> choices;  // per bucket (schedules moved into the graph: empty)
  std::vector<Iteration> iterations;
  // True when every rank's compute tasks are rank 0's (see build_data_parallel): the per-rank
  // vectors of Iteration then all hold rank 0's task ids.
  bool ranks_folded = false;
  // With memoize_repeats: per bucket size, the all-reduce that was replayed transfer by transfer
  // (the others of that size are memoized waits).
  std::map<std::uint64_t, CollectiveTasks> simulated;
};

// Whether data-parallel ranks can share one compute stream exactly: every rank runs the same
// compute tasks, so their times can only differ through the collectives, and a collective whose
// ranks all exit after the same operations (a collapsed ring's common tail) hands every rank back
// at the same instant. If all of `schedules` are such, by induction over the tasks every rank's
// compute times equal rank 0's. A step-level ring or a chunked tree (ranks exit at different
// times) does not fold; a collapsed ring or tree (--replay fast) does.
[[nodiscard]] bool ranks_exit_together(const Schedule& schedule);

// Dependencies, per rank r and iteration:
//  - with gradient accumulation, one task of (steps-1) x (forward + backward) comes first;
//  - forward (one task: the layers' sum) follows the previous optimizer step on r's compute
//    stream; the backward pass is cut into segments that end where a bucket becomes ready;
//  - bucket b's all-reduce enters on r once b is ready on r (with Overlap::kNone: once r's whole
//    backward pass is done) and r left bucket b-1's all-reduce (one communication stream per
//    rank, as NCCL: collectives run in issue order);
//  - the optimizer step waits for the backward pass and every all-reduce on r.
// Consecutive layers with no bucket boundary between them are merged into one task (exact:
// durations add). `all_reduce(bytes)` gives the all-reduce of a bucket (called once per distinct
// size). With job.fold_identical_ranks and ranks_exit_together for every bucket's schedule, only
// rank 0's compute tasks are built and stand for every rank's (ranks_folded). Folded ranks enter
// every all-reduce together and it releases them together, so all-reduces never overlap and run
// on an otherwise idle network (compute uses none): one of a given size takes the same time
// whenever it runs. With job.memoize_repeats, only the first of each size is replayed; the
// others wait as long as it took, from the moment all ranks entered. REQUIRES: job.ranks
// >= 1, job.iterations >= 1, job.accumulation_steps >= 1, caps >= 1.
[[nodiscard]] DataParallelGraph build_data_parallel(
    const workloads::Workload& workload, const DataParallelJob& job,
    const std::function<CollectiveChoice(std::uint64_t bytes)>& all_reduce);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_DATA_PARALLEL_H_
