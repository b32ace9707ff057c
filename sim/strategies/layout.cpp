#include "sim/strategies/layout.h"

#include <charconv>

namespace dtsim::sim {

namespace {

constexpr std::array<std::string_view, kDims> kDimNames{"tp", "cp", "dp", "pp"};
constexpr int kMaxDegree = 1 << 24;

int index(Dim dim) {
  return static_cast<int>(dim);
}

// Splits `text` at `separator`, keeping empty pieces.
std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> pieces;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = text.find(separator, start);
    pieces.push_back(text.substr(start, end - start));
    if (end == std::string_view::npos) {
      return pieces;
    }
    start = end + 1;
  }
}

std::optional<int> parse_degree(std::string_view text) {
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 1 || value > kMaxDegree) {
    return std::nullopt;
  }
  return value;
}

int* degree_field(ParallelDegrees& d, std::string_view key) {
  if (key == "tp")
    return &d.tp;
  if (key == "cp")
    return &d.cp;
  if (key == "dp")
    return &d.dp;
  if (key == "pp")
    return &d.pp;
  if (key == "ep")
    return &d.ep;
  return nullptr;
}

}  // namespace

std::string_view dim_name(Dim dim) {
  return kDimNames[static_cast<std::size_t>(index(dim))];
}

std::optional<ParallelDegrees> parse_parallel(std::string_view text, bool* dp_given,
                                              std::string* why) {
  ParallelDegrees degrees;
  std::vector<std::string_view> seen;
  *dp_given = false;
  for (std::string_view item : split(text, ',')) {
    const std::size_t eq = item.find('=');
    const std::string_view key = item.substr(0, eq);
    int* field = eq == std::string_view::npos ? nullptr : degree_field(degrees, key);
    if (field == nullptr) {
      *why = "\"" + std::string(item) +
             "\": expected KEY=DEGREE with KEY tp, cp, dp, pp or ep (a CNN: also spatial, filter, "
             "channel)";
      return std::nullopt;
    }
    for (std::string_view s : seen) {
      if (s == key) {
        *why = std::string(key) + " is given twice";
        return std::nullopt;
      }
    }
    seen.push_back(key);
    const std::optional<int> value = parse_degree(item.substr(eq + 1));
    if (!value) {
      *why = "\"" + std::string(item) + "\": the degree must be an integer in 1 .. " +
             std::to_string(kMaxDegree);
      return std::nullopt;
    }
    *field = *value;
    *dp_given = *dp_given || key == "dp";
  }
  return degrees;
}

std::string parallel_name(const ParallelDegrees& d) {
  return "tp=" + std::to_string(d.tp) + ",cp=" + std::to_string(d.cp) +
         ",dp=" + std::to_string(d.dp) + ",pp=" + std::to_string(d.pp) +
         ",ep=" + std::to_string(d.ep);
}

std::optional<std::array<Dim, kDims>> parse_order(std::string_view text, std::string* why) {
  const std::vector<std::string_view> names = split(text, '-');
  std::array<Dim, kDims> order{};
  std::array<bool, kDims> used{};
  bool ok = names.size() == kDims;
  for (std::size_t i = 0; ok && i < names.size(); ++i) {
    ok = false;
    for (int d = 0; d < kDims; ++d) {
      if (names[i] == kDimNames[static_cast<std::size_t>(d)] &&
          !used[static_cast<std::size_t>(d)]) {
        used[static_cast<std::size_t>(d)] = true;
        order[i] = static_cast<Dim>(d);
        ok = true;
      }
    }
  }
  if (!ok) {
    *why = "\"" + std::string(text) +
           "\": expected the four dimensions tp, cp, dp, pp once each, fastest first, joined "
           "by '-' (e.g. tp-cp-dp-pp)";
    return std::nullopt;
  }
  return order;
}

std::string order_name(const std::array<Dim, kDims>& order) {
  std::string name;
  for (Dim d : order) {
    name += (name.empty() ? "" : "-") + std::string(dim_name(d));
  }
  return name;
}

RankLayout::RankLayout(const ParallelDegrees& degrees, const std::array<Dim, kDims>& order)
    : degrees_(degrees), order_(order) {
  int stride = 1;
  for (Dim d : order_) {
    stride_[static_cast<std::size_t>(index(d))] = stride;
    stride *= degree(d);
  }
}

int RankLayout::degree(Dim dim) const {
  switch (dim) {
    case Dim::kTp:
      return degrees_.tp;
    case Dim::kCp:
      return degrees_.cp;
    case Dim::kDp:
      return degrees_.dp;
    case Dim::kPp:
      return degrees_.pp;
  }
  return 1;
}

int RankLayout::coordinate(int rank, Dim dim) const {
  return rank / stride_[static_cast<std::size_t>(index(dim))] % degree(dim);
}

int RankLayout::rank_at(const std::array<int, kDims>& coords) const {
  int rank = 0;
  for (int d = 0; d < kDims; ++d) {
    rank += coords[static_cast<std::size_t>(d)] * stride_[static_cast<std::size_t>(d)];
  }
  return rank;
}

std::vector<int> RankLayout::group(int rank, std::initializer_list<Dim> dims) const {
  std::array<int, kDims> coords{};
  for (int d = 0; d < kDims; ++d) {
    coords[static_cast<std::size_t>(d)] = coordinate(rank, static_cast<Dim>(d));
  }
  int size = 1;
  for (Dim d : dims) {
    size *= degree(d);
  }
  std::vector<int> members;
  members.reserve(static_cast<std::size_t>(size));
  for (int i = 0; i < size; ++i) {
    int rest = i;
    for (Dim d : dims) {  // the first of `dims` fastest
      coords[static_cast<std::size_t>(index(d))] = rest % degree(d);
      rest /= degree(d);
    }
    members.push_back(rank_at(coords));
  }
  return members;
}

std::vector<int> RankLayout::expert_group(int rank) const {
  const std::vector<int> data = group(rank, {Dim::kDp});
  const int first = coordinate(rank, Dim::kDp) / degrees_.ep * degrees_.ep;
  return {data.begin() + first, data.begin() + first + degrees_.ep};
}

std::vector<int> RankLayout::expert_data_group(int rank) const {
  const std::vector<int> data = group(rank, {Dim::kDp});
  std::vector<int> members;
  for (int i = coordinate(rank, Dim::kDp) % degrees_.ep; i < degrees_.dp; i += degrees_.ep) {
    members.push_back(data[static_cast<std::size_t>(i)]);
  }
  return members;
}

}  // namespace dtsim::sim
