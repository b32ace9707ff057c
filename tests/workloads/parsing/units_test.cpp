// Unit strings of data files and flags -> SI base units (workloads/parsing/units.h). Every expected
// value says where it comes from: the definition of the unit, or a hand calculation.
#include "workloads/parsing/units.h"

#include <cstdint>
#include <optional>

#include <gtest/gtest.h>

namespace dtsim::parsing {
namespace {

TEST(Units, BandwidthInBytesPerSecondIsTakenAsIs) {
  // B = byte, G = 10^9: 25 x 10^9 bytes/s.
  EXPECT_EQ(parse_bandwidth("25GBps"), 25e9);
}

TEST(Units, BandwidthInBitsPerSecondIsDividedByEight) {
  // b = bit = 1/8 byte: 200 x 10^9 bits/s = 200e9 / 8 = 25e9 bytes/s.
  EXPECT_EQ(parse_bandwidth("200Gbps"), 25e9);
  // 1 x 10^9 bits/s = 1e9 / 8 = 1.25e8 bytes/s.
  EXPECT_EQ(parse_bandwidth("1Gbps"), 1.25e8);
  // 100 x 10^9 bits/s (platforms/files/fat_tree_256.json) = 12.5e9 bytes/s.
  EXPECT_EQ(parse_bandwidth("100Gbps"), 12.5e9);
}

TEST(Units, BandwidthBitAndByteSpellingsOfTheSameRateAgree) {
  // 8 bits = 1 byte, for every decimal prefix.
  EXPECT_EQ(parse_bandwidth("8bps"), parse_bandwidth("1Bps"));
  EXPECT_EQ(parse_bandwidth("8kbps"), parse_bandwidth("1kBps"));
  EXPECT_EQ(parse_bandwidth("8Mbps"), parse_bandwidth("1MBps"));
  EXPECT_EQ(parse_bandwidth("8Gbps"), parse_bandwidth("1GBps"));
  EXPECT_EQ(parse_bandwidth("8Tbps"), parse_bandwidth("1TBps"));
}

TEST(Units, BandwidthAcceptsEveryDocumentedSuffix) {
  // Decimal prefixes are powers of 1000 (k and K both mean 10^3); Ki, Mi, Gi, Ti powers of 1024.
  EXPECT_EQ(parse_bandwidth("3Bps"), 3.0);
  EXPECT_EQ(parse_bandwidth("3kBps"), 3e3);
  EXPECT_EQ(parse_bandwidth("3KBps"), 3e3);
  EXPECT_EQ(parse_bandwidth("3MBps"), 3e6);
  EXPECT_EQ(parse_bandwidth("3GBps"), 3e9);
  EXPECT_EQ(parse_bandwidth("3TBps"), 3e12);
  EXPECT_EQ(parse_bandwidth("3KiBps"), 3.0 * 1024);                       // 3072
  EXPECT_EQ(parse_bandwidth("3MiBps"), 3.0 * 1024 * 1024);                // 3145728
  EXPECT_EQ(parse_bandwidth("3GiBps"), 3.0 * 1024 * 1024 * 1024);         // 3221225472
  EXPECT_EQ(parse_bandwidth("3TiBps"), 3.0 * 1024 * 1024 * 1024 * 1024);  // 3298534883328
  EXPECT_EQ(parse_bandwidth("16bps"), 2.0);                               // 16 / 8
  EXPECT_EQ(parse_bandwidth("16kbps"), 2e3);                              // 16e3 / 8
  EXPECT_EQ(parse_bandwidth("16Kbps"), 2e3);                              // 16e3 / 8
  EXPECT_EQ(parse_bandwidth("16Mbps"), 2e6);                              // 16e6 / 8
  EXPECT_EQ(parse_bandwidth("16Gbps"), 2e9);                              // 16e9 / 8
  EXPECT_EQ(parse_bandwidth("16Tbps"), 2e12);                             // 16e12 / 8
}

TEST(Units, BandwidthAcceptsFractionsAndExponents) {
  // 1.5 x 10^9; 1e3 x 1 byte/s.
  EXPECT_EQ(parse_bandwidth("1.5GBps"), 1.5e9);
  EXPECT_EQ(parse_bandwidth("1e3Bps"), 1e3);
}

TEST(Units, BandwidthOfZeroParses) {
  // parse_bandwidth accepts 0; the platform reader is the one that asks for > 0.
  EXPECT_EQ(parse_bandwidth("0GBps"), 0.0);
}

TEST(Units, BandwidthRejectsUnitlessNegativeAndMalformedText) {
  EXPECT_EQ(parse_bandwidth("25"), std::nullopt);       // a unit is required
  EXPECT_EQ(parse_bandwidth("-1GBps"), std::nullopt);   // negative
  EXPECT_EQ(parse_bandwidth("25gbps"), std::nullopt);   // suffixes are case-sensitive
  EXPECT_EQ(parse_bandwidth("25GB/s"), std::nullopt);   // not a listed suffix
  EXPECT_EQ(parse_bandwidth("25 GBps"), std::nullopt);  // no space before the unit
  EXPECT_EQ(parse_bandwidth(" 25GBps"), std::nullopt);  // nor before the number
  EXPECT_EQ(parse_bandwidth("+25GBps"), std::nullopt);  // no sign
  EXPECT_EQ(parse_bandwidth("GBps"), std::nullopt);     // no number
  EXPECT_EQ(parse_bandwidth(""), std::nullopt);
  EXPECT_EQ(parse_bandwidth("infGBps"), std::nullopt);    // not finite
  EXPECT_EQ(parse_bandwidth("nanGBps"), std::nullopt);    // not a number
  EXPECT_EQ(parse_bandwidth("1e400GBps"), std::nullopt);  // overflows a double
}

TEST(Units, DurationsScaleBySiPrefix) {
  // u = micro = 10^-6.
  EXPECT_EQ(parse_duration("1us"), 1e-6);
  // n = nano = 10^-9: 500 x 10^-9 s = 5 x 10^-7 s (DOUBLE_EQ: 1e-9 has no exact binary form).
  ASSERT_TRUE(parse_duration("500ns").has_value());
  EXPECT_DOUBLE_EQ(*parse_duration("500ns"), 5e-7);
  // m = milli = 10^-3: 2 x 10^-3 s.
  EXPECT_EQ(parse_duration("2ms"), 2e-3);
  EXPECT_EQ(parse_duration("3s"), 3.0);
  // p = pico = 10^-12.
  EXPECT_EQ(parse_duration("1ps"), 1e-12);
  // 1.5 x 10^-3 s.
  EXPECT_EQ(parse_duration("1.5ms"), 1.5e-3);
}

TEST(Units, DurationZeroNeedsNoUnit) {
  EXPECT_EQ(parse_duration("0"), 0.0);
  EXPECT_EQ(parse_duration("0us"), 0.0);
}

TEST(Units, DurationRejectsUnitlessNonZeroNegativeAndMalformedText) {
  EXPECT_EQ(parse_duration("1"), std::nullopt);     // only "0" may omit the unit
  EXPECT_EQ(parse_duration("0.0"), std::nullopt);   // ... spelt exactly "0"
  EXPECT_EQ(parse_duration("-1us"), std::nullopt);  // negative
  EXPECT_EQ(parse_duration("1 us"), std::nullopt);  // no space before the unit
  EXPECT_EQ(parse_duration("1µs"), std::nullopt);   // micro is spelt "u"
  EXPECT_EQ(parse_duration("1min"), std::nullopt);  // not a listed unit
  EXPECT_EQ(parse_duration("abc"), std::nullopt);
  EXPECT_EQ(parse_duration(""), std::nullopt);
}

TEST(Units, PowerIsInWatts) {
  EXPECT_EQ(parse_power("500W"), 500.0);
  EXPECT_EQ(parse_power("0.5kW"), 500.0);  // k = 1000
  EXPECT_EQ(parse_power("72.5W"), 72.5);
}

TEST(Units, PowerRejectsUnitlessNegativeAndMalformedText) {
  EXPECT_EQ(parse_power("500"), std::nullopt);    // a unit is needed
  EXPECT_EQ(parse_power("-500W"), std::nullopt);  // negative
  EXPECT_EQ(parse_power("500 W"), std::nullopt);  // no space before the unit
  EXPECT_EQ(parse_power("500w"), std::nullopt);   // the unit is spelt W
  EXPECT_EQ(parse_power("500MW"), std::nullopt);  // not a listed unit
  EXPECT_EQ(parse_power("W"), std::nullopt);
  EXPECT_EQ(parse_power(""), std::nullopt);
}

TEST(Units, SizesWithDecimalPrefixesArePowersOfThousand) {
  // M = 10^6: 100 x 10^6 bytes.
  EXPECT_EQ(parse_size("100MB"), 100000000u);
  EXPECT_EQ(parse_size("2kB"), 2000u);
  EXPECT_EQ(parse_size("2KB"), 2000u);
  EXPECT_EQ(parse_size("2GB"), 2000000000u);
  EXPECT_EQ(parse_size("2TB"), 2000000000000u);
}

TEST(Units, SizesWithBinaryPrefixesArePowersOf1024) {
  // Gi = 2^30 = 1024^3.
  EXPECT_EQ(parse_size("1GiB"), 1073741824u);
  // Ki = 2^10: 1.5 x 1024 = 1536.
  EXPECT_EQ(parse_size("1.5KiB"), 1536u);
  // Mi = 2^20: 25 x 1048576 = 26214400 (DDP's default bucket cap).
  EXPECT_EQ(parse_size("25MiB"), 26214400u);
  // Ti = 2^40.
  EXPECT_EQ(parse_size("1TiB"), 1099511627776u);
  // Pi = 2^50 = 1125899906842624 (dtsim's largest message); P = 10^15.
  EXPECT_EQ(parse_size("1PiB"), 1125899906842624u);
  EXPECT_EQ(parse_size("2PB"), 2000000000000000u);
}

TEST(Units, SizeWithoutUnitIsBytes) {
  EXPECT_EQ(parse_size("4096"), 4096u);
  EXPECT_EQ(parse_size("4096B"), 4096u);
  EXPECT_EQ(parse_size("0"), 0u);
}

TEST(Units, SizeRejectsPartialBytesNegativeOverflowAndMalformedText) {
  EXPECT_EQ(parse_size("0.5B"), std::nullopt);      // half a byte
  EXPECT_EQ(parse_size("1.0001KB"), std::nullopt);  // 1000.1 bytes
  EXPECT_EQ(parse_size("abc"), std::nullopt);
  EXPECT_EQ(parse_size("-1MB"), std::nullopt);   // negative
  EXPECT_EQ(parse_size("1e20"), std::nullopt);   // 10^20 > 2^64 - 1 ~ 1.8 x 10^19
  EXPECT_EQ(parse_size("100mb"), std::nullopt);  // suffixes are case-sensitive
  EXPECT_EQ(parse_size("100MBps"), std::nullopt);
  EXPECT_EQ(parse_size(""), std::nullopt);
}

TEST(Units, FormatBytesUsesLargestBinaryUnitWithFourDigits) {
  EXPECT_EQ(format_bytes(512), "512 B");
  EXPECT_EQ(format_bytes(1536), "1.5 KiB");         // 1536 / 1024
  EXPECT_EQ(format_bytes(26214400), "25 MiB");      // 25 x 2^20
  EXPECT_EQ(format_bytes(102236160), "97.5 MiB");   // 97.5 x 2^20
  EXPECT_EQ(format_bytes(102228128), "97.49 MiB");  // 97.4923... x 2^20, 4 digits
  EXPECT_EQ(format_bytes(1073741824), "1 GiB");     // 2^30
}

}  // namespace
}  // namespace dtsim::parsing
