// Which algorithm runs a collective: the one the user named, or with "auto" the candidate with
// the lowest estimated time on the actual topology (schedule_cost.h), as NCCL's tuner picks one
// per call. The choice and every candidate's estimate go into the report.
#ifndef DTSIM_SIM_COLLECTIVES_COLLECTIVE_CHOICE_H_
#define DTSIM_SIM_COLLECTIVES_COLLECTIVE_CHOICE_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/collectives/collective_algorithm.h"

namespace dtsim::sim {

struct Candidate {
  std::string algorithm;
  std::optional<double> estimated_sec;  // set if it was evaluated
  std::string skipped;                  // why not, otherwise
};

struct CollectiveChoice {
  std::string algorithm;  // the one that runs
  Schedule schedule;
  std::vector<Candidate> candidates;  // auto only
};

// Auto skips a candidate whose schedule would exceed this many operations (direct on thousands
// of ranks): building it would cost more than it could win.
inline constexpr double kMaxAutoCandidateOps = 4e6;
// Auto also skips a candidate more of whose transfers than this may run at once on entry (on
// distinct channels, after no other transfer): SimGrid holds every running flow, about 40 KB
// each as measured here (direct all-reduce on 512 ranks: 261,632 at once, 11 GB, 44 s; on 1024
// ranks over 20 GB, killed). Direct on more than ~316 ranks; ring and trees hold O(ranks).
inline constexpr double kMaxAutoConcurrentTransfers = 1e5;
// A named algorithm whose schedule would exceed this many operations is refused: at about 240
// bytes and 30 µs of replay each (a chunked tree, measured here), 2e7 is ~5 GB and ~10 minutes.
inline constexpr double kMaxScheduleOps = 2e7;

class CollectiveChooser {
 public:
  // `algorithm` is a registry name, "file:PATH", "auto" (every built-in algorithm is a
  // candidate) or "auto:A,B,..." (the candidates named, e.g. "auto:ring,double-tree" for NCCL's
  // own, or "auto:ring,file:mine.json"). Throws ConfigError for an unknown name or a wrong file.
  CollectiveChooser(std::string algorithm, AlgorithmOptions options);

  // Throws ConfigError if the named algorithm cannot run `request` with `hints`, or if no
  // algorithm can (auto); checks only what is known before the platform is built.
  void check(const CollectiveRequest& request, const TopologyHints& hints) const;

  // The schedule for `request` (with auto, of the candidate with the lowest estimate_sec).
  [[nodiscard]] CollectiveChoice choose(const CollectiveRequest& request,
                                        const TopologyHints& hints) const;

  [[nodiscard]] const std::string& algorithm() const { return algorithm_; }

  // A chooser of `algorithm` with this one's options (for a collective that names its own).
  // Throws as the constructor does.
  [[nodiscard]] CollectiveChooser with_algorithm(std::string algorithm) const {
    return {std::move(algorithm), options_};
  }

 private:
  // The algorithm called `name`, made once (a file is read and checked once).
  [[nodiscard]] const CollectiveAlgorithm& algorithm(const std::string& name) const;

  std::string algorithm_;
  AlgorithmOptions options_;
  std::vector<std::string> candidates_;  // auto only
  std::map<std::string, std::shared_ptr<const CollectiveAlgorithm>> algorithms_;
};

// What an algorithm may know of the network when it runs on the group `ranks` (global ranks;
// local rank i is ranks[i]): `all`'s routes between the members, the node of each member, the
// most members that share a node (for hierarchical and nvls), and the grid only if the group is
// every rank in order. For the group 0..n-1 of all n ranks in order, `all` unchanged.
[[nodiscard]] TopologyHints group_hints(const TopologyHints& all, const std::vector<int>& ranks,
                                        int rank_count);

// The report entry of an auto choice: {"chosen": ..., "candidates": [...]}.
[[nodiscard]] nlohmann::ordered_json choice_json(const CollectiveChoice& choice);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_COLLECTIVES_COLLECTIVE_CHOICE_H_
