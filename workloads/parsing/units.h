// Unit strings of data files and flags ("25GBps", "200Gbps", "1us", "100MB", "1GiB") converted
// once, at the boundary, to SI base units: bytes/s, seconds, watts, bytes.
//
//   parse_bandwidth("25GBps")  == 25e9    bytes/s  (B = byte)
//   parse_bandwidth("200Gbps") == 25e9    bytes/s  (b = bit: divided by 8)
//   parse_duration("1us")      == 1e-6    s
//   parse_power("500W")        == 500     W
//   parse_size("100MB")        == 100'000'000 bytes;  parse_size("1GiB") == 1'073'741'824 bytes
#ifndef DTSIM_WORKLOADS_PARSING_UNITS_H_
#define DTSIM_WORKLOADS_PARSING_UNITS_H_

#include <cstdint>
#include <optional>
#include <string_view>

namespace dtsim::parsing {

// The longest duration dtsim accepts in any input (a layer's time, a latency): 10^9 s, about 32
// years. Longer ones are mistakes, and overflow the simulated clock (10^308 s ran into a SimGrid
// deadlock) or print 300-digit times.
inline constexpr double kMaxDurationSec = 1e9;

// Bytes per second from "<number><unit>", unit one of Bps kBps KBps MBps GBps TBps KiBps MiBps
// GiBps TiBps (bytes) or bps kbps Kbps Mbps Gbps Tbps (bits). Nothing if malformed, unitless,
// negative or not finite.
[[nodiscard]] std::optional<double> parse_bandwidth(std::string_view text);

// Seconds from "<number><unit>", unit one of s ms us ns ps; "0" alone is accepted.
// Nothing if malformed, negative or not finite.
[[nodiscard]] std::optional<double> parse_duration(std::string_view text);

// Watts from "<number><unit>", unit W or kW ("500W", "0.5kW"). Nothing if malformed, unitless,
// negative or not finite.
[[nodiscard]] std::optional<double> parse_power(std::string_view text);

// Bytes from "<number>[unit]", unit one of B kB KB MB GB TB PB (powers of 1000) or KiB MiB GiB
// TiB PiB (powers of 1024); no unit means bytes. Nothing unless the result is a whole number of
// bytes that fits in 64 bits.
[[nodiscard]] std::optional<std::uint64_t> parse_size(std::string_view text);

// Human rendering of a byte count with a binary unit, e.g. "25 MiB", "97.5 MiB", "512 B".
[[nodiscard]] std::string format_bytes(std::uint64_t bytes);

// `value` printed with the printf format `fmt` (one double conversion, e.g. "%g", "%.3g"), for
// messages and reports.
[[nodiscard]] std::string format_number(const char* fmt, double value);

}  // namespace dtsim::parsing

#endif  // DTSIM_WORKLOADS_PARSING_UNITS_H_
