#include "sim/collectives/registry.h"

#include "sim/collectives/ring.h"
#include "sim/collectives/tree.h"

namespace dtsim::sim {

const std::vector<std::string>& algorithm_names() {
  static const std::vector<std::string> kNames{"ring", "tree"};
  return kNames;
}

std::unique_ptr<CollectiveAlgorithm> make_algorithm(std::string_view name,
                                                    const AlgorithmOptions& options) {
  if (name == "ring") {
    return std::make_unique<RingAlgorithm>(options.collapse);
  }
  if (name == "tree") {
    return std::make_unique<TreeAlgorithm>(options.tree_chunk_bytes);
  }
  return nullptr;
}

}  // namespace dtsim::sim
