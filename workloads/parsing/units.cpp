#include "workloads/parsing/units.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>

namespace dtsim::parsing {

namespace {

struct Unit {
  std::string_view suffix;
  double factor;
};

// Splits "<number><suffix>" and scales the number by the suffix's factor from `units`.
std::optional<double> parse_with_units(std::string_view text, std::initializer_list<Unit> units,
                                       bool allow_no_unit) {
  double value = 0;
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(begin, end, value);
  if (ec != std::errc() || ptr == begin) {
    return std::nullopt;
  }
  std::string_view suffix(ptr, static_cast<std::size_t>(end - ptr));
  double factor = 0;
  if (suffix.empty()) {
    if (!allow_no_unit) {
      return std::nullopt;
    }
    factor = 1;
  }
  for (const Unit& u : units) {
    if (suffix == u.suffix) {
      factor = u.factor;
    }
  }
  double result = value * factor;
  if (factor == 0 || !std::isfinite(result) || result < 0) {
    return std::nullopt;
  }
  return result;
}

}  // namespace

std::optional<double> parse_bandwidth(std::string_view text) {
  constexpr double kBitsPerByte = 8;
  return parse_with_units(text,
                          {{"Bps", 1},
                           {"kBps", 1e3},
                           {"KBps", 1e3},
                           {"MBps", 1e6},
                           {"GBps", 1e9},
                           {"TBps", 1e12},
                           {"KiBps", 1024.0},
                           {"MiBps", 1024.0 * 1024},
                           {"GiBps", 1024.0 * 1024 * 1024},
                           {"TiBps", 1024.0 * 1024 * 1024 * 1024},
                           {"bps", 1 / kBitsPerByte},
                           {"kbps", 1e3 / kBitsPerByte},
                           {"Kbps", 1e3 / kBitsPerByte},
                           {"Mbps", 1e6 / kBitsPerByte},
                           {"Gbps", 1e9 / kBitsPerByte},
                           {"Tbps", 1e12 / kBitsPerByte}},
                          /*allow_no_unit=*/false);
}

std::optional<double> parse_duration(std::string_view text) {
  if (text == "0") {
    return 0.0;
  }
  return parse_with_units(text, {{"s", 1}, {"ms", 1e-3}, {"us", 1e-6}, {"ns", 1e-9}, {"ps", 1e-12}},
                          /*allow_no_unit=*/false);
}

std::optional<double> parse_power(std::string_view text) {
  return parse_with_units(text, {{"W", 1}, {"kW", 1e3}}, /*allow_no_unit=*/false);
}

std::optional<std::uint64_t> parse_size(std::string_view text) {
  constexpr double kKiB = 1024;
  auto bytes = parse_with_units(text,
                                {{"B", 1},
                                 {"kB", 1e3},
                                 {"KB", 1e3},
                                 {"MB", 1e6},
                                 {"GB", 1e9},
                                 {"TB", 1e12},
                                 {"KiB", kKiB},
                                 {"MiB", kKiB * kKiB},
                                 {"GiB", kKiB * kKiB * kKiB},
                                 {"TiB", kKiB * kKiB * kKiB * kKiB},
                                 {"PB", 1e15},
                                 {"PiB", kKiB * kKiB * kKiB * kKiB * kKiB}},
                                /*allow_no_unit=*/true);
  // 2^64 is exactly representable; anything at or above it does not fit.
  if (!bytes || *bytes != std::floor(*bytes) || *bytes >= 18446744073709551616.0) {
    return std::nullopt;
  }
  return static_cast<std::uint64_t>(*bytes);
}

std::string format_number(const char* fmt, double value) {
  char text[64];
  std::snprintf(text, sizeof text, fmt, value);
  return text;
}

std::string format_bytes(std::uint64_t bytes) {
  constexpr std::pair<const char*, double> kUnits[] = {
      {"GiB", 1024.0 * 1024 * 1024}, {"MiB", 1024.0 * 1024}, {"KiB", 1024.0}};
  for (const auto& [name, size] : kUnits) {
    if (static_cast<double>(bytes) >= size) {
      char text[32];
      std::snprintf(text, sizeof text, "%.4g %s", static_cast<double>(bytes) / size, name);
      return text;
    }
  }
  return std::to_string(bytes) + " B";
}

}  // namespace dtsim::parsing
