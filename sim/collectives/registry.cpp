#include "sim/collectives/registry.h"

#include "sim/collectives/algorithm_file.h"
#include "sim/collectives/direct.h"
#include "sim/collectives/halving_doubling.h"
#include "sim/collectives/hierarchical.h"
#include "sim/collectives/nvls.h"
#include "sim/collectives/ring.h"
#include "sim/collectives/tree.h"

namespace dtsim::sim {

namespace {

constexpr std::pair<CollectiveOp, std::string_view> kOpNames[] = {
    {CollectiveOp::kAllReduce, "all-reduce"}, {CollectiveOp::kReduceScatter, "reduce-scatter"},
    {CollectiveOp::kAllGather, "all-gather"}, {CollectiveOp::kBroadcast, "broadcast"},
    {CollectiveOp::kReduce, "reduce"},        {CollectiveOp::kAllToAll, "all-to-all"},
    {CollectiveOp::kSendRecv, "send-recv"}};

}  // namespace

std::string_view op_name(CollectiveOp op) {
  for (const auto& [o, name] : kOpNames) {
    if (o == op) {
      return name;
    }
  }
  return "?";
}

std::optional<CollectiveOp> parse_op(std::string_view name) {
  for (const auto& [o, n] : kOpNames) {
    if (n == name) {
      return o;
    }
  }
  return std::nullopt;
}

const std::vector<CollectiveOp>& all_ops() {
  static const std::vector<CollectiveOp> kOps = [] {
    std::vector<CollectiveOp> ops;
    for (const auto& [o, name] : kOpNames) {
      ops.push_back(o);
    }
    return ops;
  }();
  return kOps;
}

const std::vector<std::string>& algorithm_names() {
  static const std::vector<std::string> kNames{
      "ring",         "tree",     "double-tree", "halving-doubling", "recursive-doubling", "direct",
      "hierarchical", "torus-2d", "nvls",        "nvls-tree"};
  return kNames;
}

const std::vector<std::string>& auto_algorithm_names() {
  // nvls-tree waits for a measurement to check it (sim/collectives/nvls.h).
  static const std::vector<std::string> kNames = [] {
    std::vector<std::string> names = algorithm_names();
    std::erase(names, "nvls-tree");
    return names;
  }();
  return kNames;
}

std::unique_ptr<CollectiveAlgorithm> make_algorithm(std::string_view name,
                                                    const AlgorithmOptions& options) {
  if (name.starts_with(kFilePrefix)) {
    return make_file_algorithm(std::string(name.substr(kFilePrefix.size())));
  }
  if (name == "ring") {
    return std::make_unique<RingAlgorithm>(options);
  }
  if (name == "tree") {
    return std::make_unique<TreeAlgorithm>(options);
  }
  if (name == "double-tree") {
    return std::make_unique<DoubleTreeAlgorithm>(options);
  }
  if (name == "halving-doubling") {
    return std::make_unique<HalvingDoublingAlgorithm>();
  }
  if (name == "recursive-doubling") {
    return std::make_unique<RecursiveDoublingAlgorithm>();
  }
  if (name == "direct") {
    return std::make_unique<DirectAlgorithm>();
  }
  if (name == "hierarchical") {
    return std::make_unique<HierarchicalAlgorithm>();
  }
  if (name == "torus-2d") {
    return std::make_unique<Torus2dAlgorithm>();
  }
  if (name == "nvls") {
    return std::make_unique<NvlsAlgorithm>();
  }
  if (name == "nvls-tree") {
    return std::make_unique<NvlsTreeAlgorithm>();
  }
  return nullptr;
}

}  // namespace dtsim::sim
