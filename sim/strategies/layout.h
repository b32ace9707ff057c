// How the ranks of a hybrid-parallel job are arranged: every global rank gets a coordinate in
// each parallelism dimension, and the groups of ranks that differ in one coordinate only are the
// job's communicators. Megatron-LM's rule (megatron/core/parallel_state.py, RankGenerator): the
// first dimension of the order varies fastest, by default tensor, then context, data, pipeline
// ("tp-cp-dp-pp"), so with consecutive ranks on a node a tensor-parallel group shares one.
// Expert parallelism is carved out of the data dimension as Megatron-core does: an expert group
// is `ep` consecutive data-parallel indices.
#ifndef DTSIM_SIM_STRATEGIES_LAYOUT_H_
#define DTSIM_SIM_STRATEGIES_LAYOUT_H_

#include <array>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dtsim::sim {

// The parallelism dimensions a rank has a coordinate in.
enum class Dim { kTp = 0, kCp = 1, kDp = 2, kPp = 3 };
inline constexpr int kDims = 4;

struct ParallelDegrees {
  int tp = 1;  // tensor
  int cp = 1;  // context (sequence split for attention)
  int dp = 1;  // data (replicas, or the ZeRO/FSDP sharding group)
  int pp = 1;  // pipeline stages
  int ep = 1;  // expert: divides dp

  [[nodiscard]] long long ranks() const { return 1LL * tp * cp * dp * pp; }
  bool operator==(const ParallelDegrees&) const = default;
};

// "tp=8,pp=4,dp=8" (any order; cp and ep too; absent ones are 1). `dp` may be left out and is
// then nullopt in *dp_given. Returns nullopt and sets *why for bad text (unknown key, a key
// twice, a degree that is not an integer in 1 .. 2^24).
[[nodiscard]] std::optional<ParallelDegrees> parse_parallel(std::string_view text, bool* dp_given,
                                                            std::string* why);
[[nodiscard]] std::string parallel_name(const ParallelDegrees& degrees);  // "tp=8,cp=1,..."

// The order of the dimensions, fastest first: "tp-cp-dp-pp" (Megatron-LM's default) or any
// permutation of the four. Returns nullopt and sets *why for bad text.
[[nodiscard]] std::optional<std::array<Dim, kDims>> parse_order(std::string_view text,
                                                                std::string* why);
[[nodiscard]] std::string order_name(const std::array<Dim, kDims>& order);
[[nodiscard]] std::string_view dim_name(Dim dim);  // "tp", "cp", "dp", "pp"

class RankLayout {
 public:
  // REQUIRES: every degree >= 1, ep divides dp, ranks() fits in an int.
  RankLayout(const ParallelDegrees& degrees, const std::array<Dim, kDims>& order);

  [[nodiscard]] const ParallelDegrees& degrees() const { return degrees_; }
  [[nodiscard]] int ranks() const { return static_cast<int>(degrees_.ranks()); }
  [[nodiscard]] int degree(Dim dim) const;
  // The coordinate of `rank` in `dim`, 0 .. degree(dim)-1.
  [[nodiscard]] int coordinate(int rank, Dim dim) const;
  // The global rank with coordinates `coords` (indexed by Dim).
  [[nodiscard]] int rank_at(const std::array<int, kDims>& coords) const;
  // The members of `rank`'s group along `dims` (the ranks that share every other coordinate),
  // ordered by their coordinates in `dims`, the first of `dims` fastest. Its local rank i is
  // members[i].
  [[nodiscard]] std::vector<int> group(int rank, std::initializer_list<Dim> dims) const;
  // Expert groups: the ep ranks that share every coordinate but the data one, whose data
  // indices are the same block of ep consecutive ones; and the expert-data group, the dp/ep
  // ranks with the same data index modulo ep.
  [[nodiscard]] std::vector<int> expert_group(int rank) const;
  [[nodiscard]] std::vector<int> expert_data_group(int rank) const;

 private:
  ParallelDegrees degrees_;
  std::array<Dim, kDims> order_;
  std::array<int, kDims> stride_{};  // indexed by Dim
};

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_STRATEGIES_LAYOUT_H_
