// MSCCL algorithm XML (what MSCCL's language and tools emit) read into an algorithm file
// (algorithm_file.h), then checked and run as any other: `--algorithm file:PATH.xml`.
//
// An <algo> (coll, ngpus, nchunksperloop, inplace) holds per <gpu> its thread blocks <tb>
// (send and recv peer, channel), each a sequence of <step>s (type, srcbuf/srcoff, dstbuf/dstoff,
// cnt chunks, and depid/deps: a step of another thread block of the same GPU to wait for).
// Steps run in order within a thread block. The i-th sending step of a thread block to peer q on
// channel c is received by the i-th receiving step of q's thread block from this GPU on c. Step
// types: s send; r receive; rcs receive, keep and send on; rrs receive, add the own chunk and
// send on; rrc receive and add to the own chunk (into dst); rrcs both; cpy and re local copy and
// reduction; nop only waits. A received message waits in the connection until its step runs (a
// scratch slot of its own here); local steps take no time. ALGORITHMS.md has the mapping.
#ifndef DTSIM_SIM_COLLECTIVES_MSCCL_XML_H_
#define DTSIM_SIM_COLLECTIVES_MSCCL_XML_H_

#include <string>

#include "sim/collectives/algorithm_file.h"

namespace dtsim::sim {

// The MSCCL XML at `path` as an algorithm file with explicit dependencies, checked. Throws
// ConfigError naming the file and the GPU, thread block and step at fault, or the XML parser's
// line.
[[nodiscard]] AlgorithmFile read_msccl_xml(const std::string& path);

// The same from XML text (tests).
[[nodiscard]] AlgorithmFile parse_msccl_xml(const std::string& text, const std::string& path);

}  // namespace dtsim::sim

#endif  // DTSIM_SIM_COLLECTIVES_MSCCL_XML_H_
