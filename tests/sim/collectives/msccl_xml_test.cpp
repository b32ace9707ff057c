// MSCCL algorithm XML: three algorithms written by hand in that format (tests/testdata/msccl)
// read and checked, and broken variants of them refused at the GPU, thread block and step where
// they go wrong. Their times are in tests/cli/collective_cli_test.cpp.
#include "sim/collectives/msccl_xml.h"

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "sim/config_error.h"

namespace dtsim::sim {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

const std::string kDir = "tests/testdata/msccl/";

int transfers(const AlgorithmFile& file) {
  int n = 0;
  for (const FileOp& op : file.ops) {
    n += op.transfer && !op.transfer->local ? 1 : 0;
  }
  return n;
}

TEST(MscclXml, HandWrittenAlgorithmsAreCorrectAllReduces) {
  // Every file is checked when read (schedule_check.h); count the messages by hand:
  // a ring sends 2(p - 1) chunks per GPU; the two-level one 3 (intra, inter, intra); all-pairs
  // 2(p - 1) (one each way to every peer).
  const AlgorithmFile ring = read_msccl_xml(kDir + "ring_allreduce_4.xml");
  EXPECT_EQ(ring.op, CollectiveOp::kAllReduce);
  EXPECT_EQ(ring.ranks, 4);
  EXPECT_EQ(ring.chunks, 4u);
  EXPECT_EQ(transfers(ring), 4 * 6);
  EXPECT_EQ(transfers(read_msccl_xml(kDir + "hierarchical_allreduce_4.xml")), 4 * 3);
  EXPECT_EQ(transfers(read_msccl_xml(kDir + "allpairs_allreduce_4.xml")), 4 * 6);
}

// The text of `file` with the first `from` replaced by `to`.
std::string edited(const std::string& file, const std::string& from, const std::string& to) {
  std::string text = slurp(kDir + file);
  const std::size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

std::string error_of(const std::string& text) {
  try {
    (void)parse_msccl_xml(text, "x.xml");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(MscclXml, ALostContributionIsFoundInTheResult) {
  // GPU 0's first reduce-scatter step forwards its message without adding its own chunk
  // ("rcs" instead of "rrs"): its contribution to that chunk is lost, which the check finds
  // where the reduced chunk ends up.
  const std::string wrong = edited("ring_allreduce_4.xml", R"(type="rrs")", R"(type="rcs")");
  EXPECT_NE(error_of(wrong).find("x.xml: "), std::string::npos);
  EXPECT_NE(error_of(wrong).find("not a correct all-reduce"), std::string::npos) << error_of(wrong);
  EXPECT_NE(error_of(wrong).find("ends without rank 0's contribution"), std::string::npos)
      << error_of(wrong);
}

TEST(MscclXml, StructuralProblemsAreLocated) {
  EXPECT_NE(error_of(edited("ring_allreduce_4.xml", R"(type="rrs")", R"(type="recv")"))
                .find("gpu 0 tb 0 step 1: type=\"recv\": expected s, r, rcs"),
            std::string::npos);
  EXPECT_NE(error_of(edited("ring_allreduce_4.xml", R"(ngpus="4")", R"(ngpus="5")"))
                .find("no <gpu id=\"4\">"),
            std::string::npos);
  EXPECT_NE(error_of(edited("ring_allreduce_4.xml", R"(coll="allreduce")", R"(coll="gather")"))
                .find("coll=\"gather\": expected allreduce"),
            std::string::npos);
  // A receive whose sender sends 2 chunks: the counts disagree.
  EXPECT_NE(error_of(edited("ring_allreduce_4.xml", R"(cnt="1")", R"(cnt="2")"))
                .find("receives 1 chunks, and the matching send sends 2"),
            std::string::npos)
      << error_of(edited("ring_allreduce_4.xml", R"(cnt="1")", R"(cnt="2")"));
  // GPU 0 waits for a step of a thread block that waits for it: nothing can run.
  const std::string first_send = R"(srcoff="1" dstbuf="i" dstoff="1" cnt="1" depid="-1" deps="-1")";
  EXPECT_NE(error_of(edited("hierarchical_allreduce_4.xml", first_send,
                            R"(srcoff="1" dstbuf="i" dstoff="1" cnt="1" depid="1" deps="1")"))
                .find("gpu 0 tb 0 step 0: never runs"),
            std::string::npos);
  // Nested 200,000 deep (1.4 MB): Boost's recursive parser overflowed the stack (SIGSEGV) before
  // the depth was bounded; now a located error at the element that goes too deep.
  std::string deep;
  for (int i = 0; i < 200000; ++i) {
    deep += "<a>";
  }
  EXPECT_EQ(error_of(deep),
            "x.xml:1: elements nested more than 64 deep (an MSCCL algorithm nests algo, gpu, tb "
            "and step)");
  // Not XML at all: the parser's line.
  EXPECT_NE(error_of("<algo name=\"a\"\n<gpu>").find("x.xml:2: "), std::string::npos)
      << error_of("<algo name=\"a\"\n<gpu>");
}

}  // namespace
}  // namespace dtsim::sim
