// Readers of the values platform specs share (units, positive lists), recording problems in a
// JsonFields; and the per-topology readers built on them. Internal to platforms/.
#ifndef DTSIM_PLATFORMS_SPEC_FIELDS_H_
#define DTSIM_PLATFORMS_SPEC_FIELDS_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "platforms/platform_spec.h"
#include "workloads/parsing/json_fields.h"

namespace dtsim::platforms {

// Hosts beyond this are refused before SimGrid tries to build them.
inline constexpr double kMaxHosts = 1 << 24;

[[nodiscard]] double product(const std::vector<unsigned>& values);

// The bandwidth (bytes/s) or latency (s) written as `value`, the member `key` of `f`'s object
// (key may be a path such as "link_bandwidth/1"); 0 and a problem if it is not one.
[[nodiscard]] double bandwidth_of(parsing::JsonFields& f, const std::string& key,
                                  const nlohmann::json& value);
[[nodiscard]] double latency_of(parsing::JsonFields& f, const std::string& key,
                                const nlohmann::json& value);
// The required string member `key`, as a bandwidth or a latency.
[[nodiscard]] double read_bandwidth(parsing::JsonFields& f, const char* key);
[[nodiscard]] double read_latency(parsing::JsonFields& f, const char* key);

// A list of integers 1..2^24 of the given length (0: any non-empty length).
[[nodiscard]] std::vector<unsigned> read_positive_list(parsing::JsonFields& f, const char* key,
                                                       std::size_t length);
// Records "describes more than 16777216 hosts" at `key` if the product of `factors` is.
void check_host_total(parsing::JsonFields& f, const char* key,
                      const std::vector<unsigned>& factors);

// The "fat-tree" topology's keys (explicit lists, or the k-ary n-tree shorthand; per-level
// links). REQUIRES: f's object has "topology": "fat-tree". "node" is read by the caller.
[[nodiscard]] FatTreeSpec read_fat_tree(parsing::JsonFields& f);

// The optional "perturbations" section of `parent` (the spec's top level), for a platform of
// `topology` with `hosts` hosts (0: unknown, XML).
[[nodiscard]] Perturbations read_perturbations(parsing::JsonFields& parent,
                                               const Topology& topology, unsigned hosts);

// The "dragonfly" topology's keys. REQUIRES: as read_fat_tree.
[[nodiscard]] DragonflySpec read_dragonfly(parsing::JsonFields& f);

}  // namespace dtsim::platforms

#endif  // DTSIM_PLATFORMS_SPEC_FIELDS_H_
