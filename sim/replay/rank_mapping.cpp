#include "sim/replay/rank_mapping.h"

#include <algorithm>
#include <charconv>
#include <numeric>
#include <random>

#include "sim/config_error.h"

namespace dtsim::sim {

namespace {

constexpr const char* kRandomPrefix = "random:";

// Uniform in [0, m) from 64-bit engine outputs: rejects the low (2^64 mod m) values so that every
// residue is equally likely. REQUIRES: m >= 1.
std::uint64_t uniform_below(std::mt19937_64& rng, std::uint64_t m) {
  const std::uint64_t threshold = (0 - m) % m;  // 2^64 mod m
  std::uint64_t r = rng();
  while (r < threshold) {
    r = rng();
  }
  return r % m;
}

std::vector<std::size_t> shuffled(std::size_t n, std::uint64_t seed) {
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(seed);
  for (std::size_t i = n; i > 1; --i) {  // Fisher-Yates: position i-1 takes a draw from [0, i)
    std::swap(order[i - 1], order[uniform_below(rng, i)]);
  }
  return order;
}

// Torus endpoints in boustrophedon order: the dimensions are walked innermost first, each one
// reversing direction whenever an outer coordinate steps, so consecutive endpoints differ by one
// in one coordinate. An even-sized dimension (the last one) is made the outermost: the walk then
// ends next to its start across that dimension's wrap-around link.
std::vector<std::size_t> snake(const std::vector<unsigned>& dims) {
  std::vector<std::size_t> walk(dims.size());  // walk[j]: the dimension walked j-th
  std::iota(walk.begin(), walk.end(), 0);
  for (std::size_t j = dims.size(); j-- > 0;) {
    if (dims[j] % 2 == 0) {
      walk.erase(walk.begin() + static_cast<std::ptrdiff_t>(j));
      walk.push_back(j);
      break;
    }
  }
  std::size_t total = 1;
  for (unsigned d : dims) {
    total *= d;
  }
  std::vector<std::size_t> order;
  order.reserve(total);
  std::vector<std::size_t> coord(dims.size());
  for (std::size_t counter = 0; counter < total; ++counter) {
    std::size_t rest = counter;
    for (std::size_t j = 0; j < walk.size(); ++j) {
      const std::size_t d = dims[walk[j]];
      const std::size_t digit = rest % d;
      rest /= d;
      // `rest` now counts the steps of the outer dimensions: odd means walking backwards.
      coord[walk[j]] = rest % 2 == 1 ? d - 1 - digit : digit;
    }
    std::size_t index = 0;
    for (std::size_t i = dims.size(); i-- > 0;) {
      index = index * dims[i] + coord[i];
    }
    order.push_back(index);
  }
  return order;
}

}  // namespace

std::optional<Placement> parse_placement(const std::string& text) {
  using Kind = Placement::Kind;
  if (text == "linear") {
    return Placement{.kind = Kind::kLinear};
  }
  if (text == "round-robin") {
    return Placement{.kind = Kind::kRoundRobin};
  }
  if (text == "topology-aware") {
    return Placement{.kind = Kind::kTopologyAware};
  }
  if (text == "random") {
    return Placement{.kind = Kind::kRandom};
  }
  if (text.starts_with(kRandomPrefix)) {
    const char* first = text.data() + std::char_traits<char>::length(kRandomPrefix);
    const char* last = text.data() + text.size();
    std::uint64_t seed = 0;
    auto [end, ec] = std::from_chars(first, last, seed);
    if (ec == std::errc() && end == last && first != last) {
      return Placement{.kind = Kind::kRandom, .seed = seed};
    }
  }
  return std::nullopt;
}

std::string placement_name(const Placement& placement) {
  switch (placement.kind) {
    case Placement::Kind::kRoundRobin:
      return "round-robin";
    case Placement::Kind::kRandom:
      return "random";
    case Placement::Kind::kTopologyAware:
      return "topology-aware";
    default:
      return "linear";
  }
}

PlacementShape placement_shape(const platforms::PlatformSpec& spec, std::size_t hosts) {
  PlacementShape shape{.hosts = hosts, .gpus_per_node = spec.gpus_per_node()};
  if (const auto* torus = std::get_if<platforms::TorusSpec>(&spec.topology)) {
    shape.torus_dims = torus->dims;
  }
  return shape;
}

std::vector<std::size_t> place_ranks(const Placement& placement, const PlacementShape& shape,
                                     int ranks) {
  const auto n = static_cast<std::size_t>(ranks);
  const std::size_t gpus = shape.gpus_per_node;
  std::vector<std::size_t> order(n);
  switch (placement.kind) {
    case Placement::Kind::kLinear:
      std::iota(order.begin(), order.end(), 0);
      break;
    case Placement::Kind::kRoundRobin: {
      const std::size_t nodes = shape.hosts / gpus;
      for (std::size_t r = 0; r < n; ++r) {
        order[r] = (r % nodes) * gpus + r / nodes;
      }
      break;
    }
    case Placement::Kind::kRandom:
      order = shuffled(shape.hosts, placement.seed);
      order.resize(n);
      break;
    case Placement::Kind::kTopologyAware: {
      if (shape.torus_dims.empty()) {
        std::iota(order.begin(), order.end(), 0);
        break;
      }
      const std::vector<std::size_t> endpoints = snake(shape.torus_dims);
      for (std::size_t r = 0; r < n; ++r) {
        order[r] = endpoints[r / gpus] * gpus + r % gpus;
      }
      break;
    }
  }
  return order;
}

std::vector<simgrid::s4u::Host*> place_ranks_on(const platforms::Platform& platform,
                                                const PlacementShape& shape,
                                                const Placement& placement, int ranks,
                                                const std::string& platform_file) {
  if (static_cast<std::size_t>(ranks) > platform.hosts.size()) {
    throw ConfigError(platform_file + ": the platform has " +
                      std::to_string(platform.hosts.size()) + " hosts, fewer than --ranks " +
                      std::to_string(ranks));
  }
  std::vector<simgrid::s4u::Host*> hosts;
  for (std::size_t index : place_ranks(placement, shape, ranks)) {
    hosts.push_back(platform.hosts[index]);
  }
  return hosts;
}

}  // namespace dtsim::sim
