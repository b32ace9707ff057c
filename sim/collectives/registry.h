// The explicit table of collective algorithms by name (no static-initialisation magic).
#ifndef DTSIM_SIM_COLLECTIVES_REGISTRY_H_
#define DTSIM_SIM_COLLECTIVES_REGISTRY_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sim/collectives/collective_algorithm.h"

namespace dtsim::sim {

// Names accepted by make_algorithm, in display order: ring, tree, double-tree,
// halving-doubling, recursive-doubling, direct, hierarchical, torus-2d, nvls, nvls-tree.
[[nodiscard]] const std::vector<std::string>& algorithm_names();

// The names `--algorithm auto` weighs: all but nvls-tree (no measurement checks it yet).
[[nodiscard]] const std::vector<std::string>& auto_algorithm_names();

// "file:PATH" names the algorithm written in the file at PATH (algorithm_file.h).
inline constexpr std::string_view kFilePrefix = "file:";

// The algorithm called `name`, or nullptr if there is none. Throws ConfigError for a file that
// cannot be read or is not a correct algorithm.
[[nodiscard]] std::unique_ptr<CollectiveAlgorithm> make_algorithm(std::string_view name,
                                                                  const AlgorithmOptions& options);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_COLLECTIVES_REGISTRY_H_
