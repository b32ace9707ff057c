// Platform presets: clusters of real machines, from their public datasheets, sized by node count.
// A spec file {"preset": "dgx-a100", "nodes": 16} stands for the full spec made here; every
// figure and its source is in platforms/PRESETS.md.
#ifndef DTSIM_PLATFORMS_PRESETS_H_
#define DTSIM_PLATFORMS_PRESETS_H_

#include <optional>
#include <string>
#include <vector>

#include "platforms/platform_spec.h"

namespace dtsim::platforms {

struct PresetInfo {
  std::string name;         // "dgx-a100", ...
  std::string description;  // one line
  std::string source;       // the datasheet(s) followed
};

// "dgx1-v100", "dgx2h", "dgx-a100", "hgx-h200", "dgx-h100", "hgx-b200", "aws-p4d", "aws-p5",
// "pcie8-single-root", "pcie8-dual-root", "pcie4-25gbe", "pcie8-fdr", "tpu-torus".
[[nodiscard]] const std::vector<PresetInfo>& preset_catalog();

// The topology of preset `name` with `nodes` nodes (for tpu-torus: chips), or nothing for an
// unknown name. REQUIRES: nodes >= 1.
[[nodiscard]] std::optional<Topology> make_preset(const std::string& name, unsigned nodes);

}  // namespace dtsim::platforms

#endif  // DTSIM_PLATFORMS_PRESETS_H_
