// SHA-256 (FIPS 180-4) of a byte string, for the provenance of reports: the digest of every
// input file, so that a published figure can be traced to the exact inputs that produced it.
//
//   sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
#ifndef DTSIM_WORKLOADS_PARSING_SHA256_H_
#define DTSIM_WORKLOADS_PARSING_SHA256_H_

#include <string>
#include <string_view>

namespace dtsim::parsing {

// The SHA-256 digest of `bytes` as 64 lowercase hexadecimal digits (what `sha256sum` prints).
[[nodiscard]] std::string sha256_hex(std::string_view bytes);

}  // namespace dtsim::parsing

#endif  // DTSIM_WORKLOADS_PARSING_SHA256_H_
