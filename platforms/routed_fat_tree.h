// A fat-tree with failed links, built by dtsim itself: SimGrid 3.32's FatTreeZone routes
// statically and cannot avoid a failed link, so dtsim computes every host pair's route (D-mod-K
// over the live links, skipping those from which the destination is unreachable) and gives them
// to a SimGrid full zone. Internal to platforms/.
#ifndef DTSIM_PLATFORMS_ROUTED_FAT_TREE_H_
#define DTSIM_PLATFORMS_ROUTED_FAT_TREE_H_

#include <string>
#include <vector>

#include "platforms/build_platform.h"
#include "platforms/platform_spec.h"

namespace dtsim::platforms {

// Hosts beyond this are refused with failed links (a full zone stores hosts^2 routes).
inline constexpr unsigned kMaxRoutedFatTreeHosts = 1024;

// Builds `tree` without the links in `failed`, links named as SimGrid's fat-tree names them
// ("link_from_<lower id>_<upper id>_<k>", ids: hosts 0..H-1, then each level's switches).
// Throws PlatformError naming `file` and the failed links if a host cannot reach another, or if
// the tree has more than kMaxRoutedFatTreeHosts hosts. REQUIRES: no "node" section.
[[nodiscard]] Platform build_routed_fat_tree(const FatTreeSpec& tree,
                                             const std::vector<FailedLink>& failed,
                                             const std::string& file);

}  // namespace dtsim::platforms

#endif  // DTSIM_PLATFORMS_ROUTED_FAT_TREE_H_
