// Reading platform specs (platforms/FORMAT.md) without building them: what each topology reads
// as, and the exact message for each kind of bad spec. Pure: no SimGrid engine is created.
#include "platforms/platform_spec.h"

#include <filesystem>
#include <fstream>
#include <string>
#include <variant>
#include <vector>

#include <gtest/gtest.h>

#include <unistd.h>

namespace dtsim::platforms {
namespace {

// The message of the PlatformError that reading `path` throws, or "<no error>".
std::string read_error(const std::string& path) {
  try {
    (void)read_platform_spec(path);
  } catch (const PlatformError& e) {
    return e.what();
  }
  return "<no error>";
}

// Writes `text` to a file of this test process's temporary folder and returns its path.
class TempSpec {
 public:
  explicit TempSpec(const std::string& text)
      : path_((std::filesystem::temp_directory_path() /
               ("dtsim_pf_" + std::to_string(::getpid()) + ".json"))
                  .string()) {
    std::ofstream(path_) << text;
  }
  ~TempSpec() { std::filesystem::remove(path_); }
  TempSpec(const TempSpec&) = delete;
  TempSpec& operator=(const TempSpec&) = delete;

  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(PlatformSpec, ReadsStar) {
  const PlatformSpec spec = read_platform_spec("tests/testdata/pf_star.json");
  EXPECT_EQ(spec.file, "tests/testdata/pf_star.json");
  EXPECT_EQ(spec.topology_name(), "star");
  EXPECT_EQ(spec.host_count(), 8u);
  // 25GBps = 25 x 10^9 bytes/s; 1us = 10^-6 s.
  const StarSpec expected{.hosts = 8,
                          .link = {.bandwidth_bytes_per_sec = 25e9, .latency_sec = 1e-6}};
  EXPECT_EQ(std::get<StarSpec>(spec.topology), expected);
}

TEST(PlatformSpec, ReadsFatTree) {
  const PlatformSpec spec = read_platform_spec("tests/testdata/pf_fat_tree.json");
  EXPECT_EQ(spec.topology_name(), "fat-tree");
  const auto& tree = std::get<FatTreeSpec>(spec.topology);
  EXPECT_EQ(tree.levels, 2u);
  EXPECT_EQ(tree.down, (std::vector<unsigned>{4, 8}));
  EXPECT_EQ(tree.up, (std::vector<unsigned>{1, 2}));
  EXPECT_EQ(tree.parallel, (std::vector<unsigned>{1, 2}));
  // 200Gbps = 200 x 10^9 bits/s / 8 = 25 x 10^9 bytes/s.
  EXPECT_EQ(tree.link.bandwidth_bytes_per_sec, 25e9);
  // 500ns = 500 x 10^-9 s.
  EXPECT_DOUBLE_EQ(tree.link.latency_sec, 5e-7);
  // hosts = product(down) = 4 x 8.
  EXPECT_EQ(spec.host_count(), 32u);
}

TEST(PlatformSpec, ReadsTorus) {
  const PlatformSpec spec = read_platform_spec("tests/testdata/pf_torus.json");
  EXPECT_EQ(spec.topology_name(), "torus");
  // 50GBps = 50 x 10^9 bytes/s; 2us = 2 x 10^-6 s.
  const TorusSpec expected{.dims = {2, 3, 4},
                           .link = {.bandwidth_bytes_per_sec = 50e9, .latency_sec = 2e-6}};
  EXPECT_EQ(std::get<TorusSpec>(spec.topology), expected);
  // hosts = product(dims) = 2 x 3 x 4.
  EXPECT_EQ(spec.host_count(), 24u);
}

TEST(PlatformSpec, ResolvesXmlFileRelativeToTheSpecFolder) {
  // pf_xml.json says "file": "pf_cluster.xml", next to itself.
  const PlatformSpec spec = read_platform_spec("tests/testdata/pf_xml.json");
  EXPECT_EQ(spec.topology_name(), "xml");
  EXPECT_EQ(std::get<XmlSpec>(spec.topology).path, "tests/testdata/pf_cluster.xml");
  // Unknown until SimGrid loads the file.
  EXPECT_EQ(spec.host_count(), 0u);
}

TEST(PlatformSpec, KeepsAbsoluteXmlPathAsGiven) {
  const std::string xml = std::filesystem::absolute("tests/testdata/pf_cluster.xml").string();
  const TempSpec spec_file(R"({"topology": "xml", "file": ")" + xml + R"("})");
  EXPECT_EQ(std::get<XmlSpec>(read_platform_spec(spec_file.path()).topology).path, xml);
}

TEST(PlatformSpec, AcceptsXmlPathDirectly) {
  const PlatformSpec spec = read_platform_spec("tests/testdata/pf_cluster.xml");
  EXPECT_EQ(spec.file, "tests/testdata/pf_cluster.xml");
  EXPECT_EQ(std::get<XmlSpec>(spec.topology).path, "tests/testdata/pf_cluster.xml");
}

TEST(PlatformSpec, ReadsShippedPlatforms) {
  // platforms/files: 2-level 16x16 and 32x32 fat-trees (hosts = product(down)), a star of 16,
  // a 4x4x4 torus.
  EXPECT_EQ(read_platform_spec("platforms/files/fat_tree_256.json").host_count(), 256u);
  EXPECT_EQ(read_platform_spec("platforms/files/fat_tree_1024.json").host_count(), 1024u);
  EXPECT_EQ(read_platform_spec("platforms/files/star_16.json").host_count(), 16u);
  EXPECT_EQ(read_platform_spec("platforms/files/torus_4x4x4.json").host_count(), 64u);
  // A 8-ary 3-tree: 8^3 hosts; dragonfly 4 groups x 4 chassis x 4 routers x 4 hosts; 16 nodes
  // of 8 GPUs with rails; the 16x16 fat-tree with perturbations.
  EXPECT_EQ(read_platform_spec("platforms/files/k8_n3_taper2.json").host_count(), 512u);
  EXPECT_EQ(read_platform_spec("platforms/files/dragonfly_256.json").host_count(), 256u);
  EXPECT_EQ(read_platform_spec("platforms/files/rails_16x8.json").host_count(), 128u);
  const PlatformSpec degraded = read_platform_spec("platforms/files/fat_tree_256_degraded.json");
  EXPECT_EQ(degraded.host_count(), 256u);
  EXPECT_EQ(degraded.perturbations.slow_links.size(), 1u);
  // fat_tree_256.json says "100Gbps": 100 x 10^9 bits/s / 8 = 12.5 x 10^9 bytes/s.
  const auto tree =
      std::get<FatTreeSpec>(read_platform_spec("platforms/files/fat_tree_256.json").topology);
  EXPECT_EQ(tree.link.bandwidth_bytes_per_sec, 12.5e9);
}

TEST(PlatformSpec, AcceptsZeroLatencyWithoutUnit) {
  const TempSpec spec_file(
      R"({"topology": "star", "hosts": 2, "link_bandwidth": "1GBps", "link_latency": "0"})");
  EXPECT_EQ(std::get<StarSpec>(read_platform_spec(spec_file.path()).topology).link.latency_sec,
            0.0);
}

TEST(PlatformSpec, ReportsMissingFile) {
  EXPECT_EQ(read_error("tests/testdata/pf_no_such_spec.json"),
            "tests/testdata/pf_no_such_spec.json: cannot open platform file");
}

TEST(PlatformSpec, ReportsMissingXmlFileGivenDirectly) {
  EXPECT_EQ(read_error("tests/testdata/pf_no_such_platform.xml"),
            "tests/testdata/pf_no_such_platform.xml: cannot open platform file");
}

TEST(PlatformSpec, ReportsMissingXmlFileNamedBySpec) {
  // The message shows the path as resolved against the spec's folder.
  EXPECT_EQ(read_error("tests/testdata/pf_xml_missing.json"),
            "tests/testdata/pf_xml_missing.json: /file: no such file "
            "\"tests/testdata/pf_no_such_platform.xml\"");
}

TEST(PlatformSpec, ReportsMalformedJsonWithLineAndColumn) {
  const TempSpec spec_file("{\"topology\": \"star\",\n \"hosts\": 4,\n}");
  // The parser meets '}' on line 3, column 1 where it expects the next key.
  EXPECT_EQ(read_error(spec_file.path()),
            spec_file.path() +
                ": [json.exception.parse_error.101] parse error at line 3, column 1: syntax error "
                "while parsing object key - unexpected '}'; expected string literal");
}

TEST(PlatformSpec, ReportsNumberTooLargeForADouble) {
  // Bug: nlohmann reports 1e400 as json::out_of_range, not json::parse_error, and
  // read_platform_spec caught only parse_error, so dtsim aborted (exit 134) instead of exiting 2.
  const TempSpec spec_file(
      R"({"topology": "star", "hosts": 1e400, "link_bandwidth": "1GBps", "link_latency": "1us"})");
  EXPECT_EQ(
      read_error(spec_file.path()),
      spec_file.path() + ": [json.exception.out_of_range.406] number overflow parsing '1e400'");
}

TEST(PlatformSpec, RejectsUnknownTopology) {
  EXPECT_EQ(read_error("tests/testdata/pf_unknown_topology.json"),
            "tests/testdata/pf_unknown_topology.json: /topology: unknown topology \"hypercube\" "
            "(expected one of star, fat-tree, torus, dragonfly, xml)");
}

TEST(PlatformSpec, RejectsMissingTopology) {
  const TempSpec spec_file(R"({"hosts": 4})");
  EXPECT_EQ(read_error(spec_file.path()), spec_file.path() + ": /topology: missing");
}

TEST(PlatformSpec, RejectsTopologyThatIsNotAString) {
  const TempSpec spec_file(R"({"topology": 3})");
  EXPECT_EQ(read_error(spec_file.path()),
            spec_file.path() + ": /topology: expected a string, got number 3");
}

TEST(PlatformSpec, RejectsDocumentThatIsNotAnObject) {
  const TempSpec spec_file(R"(["star"])");
  EXPECT_EQ(read_error(spec_file.path()),
            spec_file.path() + ": /: expected an object, got array [\"star\"]");
}

TEST(PlatformSpec, RejectsZeroBandwidth) {
  EXPECT_EQ(read_error("tests/testdata/pf_zero_bandwidth.json"),
            "tests/testdata/pf_zero_bandwidth.json: /link_bandwidth: expected a bandwidth > 0 "
            "such as \"25GBps\" (bytes/s) or \"200Gbps\" (bits/s), got \"0GBps\"");
}

TEST(PlatformSpec, RejectsNegativeBandwidth) {
  EXPECT_EQ(read_error("tests/testdata/pf_negative_bandwidth.json"),
            "tests/testdata/pf_negative_bandwidth.json: /link_bandwidth: expected a bandwidth > "
            "0 such as \"25GBps\" (bytes/s) or \"200Gbps\" (bits/s), got \"-1GBps\"");
}

TEST(PlatformSpec, RejectsUnitlessBandwidth) {
  EXPECT_EQ(read_error("tests/testdata/pf_unitless_bandwidth.json"),
            "tests/testdata/pf_unitless_bandwidth.json: /link_bandwidth: expected a bandwidth > "
            "0 such as \"25GBps\" (bytes/s) or \"200Gbps\" (bits/s), got \"25\"");
}

TEST(PlatformSpec, RejectsBandwidthGivenAsNumber) {
  const TempSpec spec_file(
      R"({"topology": "star", "hosts": 2, "link_bandwidth": 25e9, "link_latency": "1us"})");
  EXPECT_EQ(read_error(spec_file.path()),
            spec_file.path() + ": /link_bandwidth: expected a string, got number 25000000000.0");
}

TEST(PlatformSpec, RejectsUnitlessNonZeroLatency) {
  const TempSpec spec_file(
      R"({"topology": "star", "hosts": 2, "link_bandwidth": "1GBps", "link_latency": "1"})");
  EXPECT_EQ(read_error(spec_file.path()),
            spec_file.path() +
                ": /link_latency: expected a latency >= 0 such as \"1us\" (s, ms, "
                "us, ns, ps), got \"1\"");
}

TEST(PlatformSpec, RejectsMissingLinkKeys) {
  const TempSpec spec_file(R"({"topology": "torus", "dims": [4]})");
  EXPECT_EQ(read_error(spec_file.path()), spec_file.path() + ": /link_bandwidth: missing\n" +
                                              spec_file.path() + ": /link_latency: missing");
}

TEST(PlatformSpec, RejectsKeyOfAnotherTopology) {
  const TempSpec spec_file(
      R"({"topology": "star", "hosts": 2, "dims": [2], "link_bandwidth": "1GBps",
          "link_latency": "1us"})");
  EXPECT_EQ(read_error(spec_file.path()),
            spec_file.path() +
                ": /dims: unknown key (expected one of topology, hosts, link_bandwidth, "
                "link_latency, node, perturbations)");
}

TEST(PlatformSpec, RejectsStarWithoutHosts) {
  const TempSpec spec_file(
      R"({"topology": "star", "hosts": 0, "link_bandwidth": "1GBps", "link_latency": "1us"})");
  EXPECT_EQ(read_error(spec_file.path()),
            spec_file.path() + ": /hosts: expected an integer between 1 and 16777216, got 0");
}

TEST(PlatformSpec, RejectsFatTreeListsOfWrongLength) {
  // levels = 2, so down, up and parallel need 2 entries each; they have 3, 1 and 0.
  EXPECT_EQ(read_error("tests/testdata/pf_fat_tree_wrong_lengths.json"),
            "tests/testdata/pf_fat_tree_wrong_lengths.json: /down: expected 2 entries (one per "
            "level), got 3\n"
            "tests/testdata/pf_fat_tree_wrong_lengths.json: /up: expected 2 entries (one per "
            "level), got 1\n"
            "tests/testdata/pf_fat_tree_wrong_lengths.json: /parallel: expected 2 entries (one "
            "per level), got 0");
}

TEST(PlatformSpec, RejectsFatTreeZeroEntries) {
  EXPECT_EQ(read_error("tests/testdata/pf_fat_tree_zero_entries.json"),
            "tests/testdata/pf_fat_tree_zero_entries.json: /down/1: expected an integer between "
            "1 and 16777216, got 0\n"
            "tests/testdata/pf_fat_tree_zero_entries.json: /up/0: expected an integer between 1 "
            "and 16777216, got 0\n"
            "tests/testdata/pf_fat_tree_zero_entries.json: /parallel/1: expected an integer "
            "between 1 and 16777216, got 0");
}

TEST(PlatformSpec, RejectsFatTreeWithZeroLevels) {
  const TempSpec spec_file(
      R"({"topology": "fat-tree", "levels": 0, "down": [4], "up": [1], "parallel": [1],
          "link_bandwidth": "1GBps", "link_latency": "1us"})");
  EXPECT_EQ(read_error(spec_file.path()),
            spec_file.path() + ": /levels: expected an integer between 1 and 8, got 0");
}

TEST(PlatformSpec, RejectsNegativeListEntry) {
  const TempSpec spec_file(
      R"({"topology": "torus", "dims": [4, -4], "link_bandwidth": "1GBps", "link_latency": "1us"})");
  EXPECT_EQ(read_error(spec_file.path()),
            spec_file.path() + ": /dims/1: expected an integer >= 0, got number -4");
}

TEST(PlatformSpec, RejectsTorusWithoutDimensions) {
  const TempSpec spec_file(
      R"({"topology": "torus", "dims": [], "link_bandwidth": "1GBps", "link_latency": "1us"})");
  EXPECT_EQ(read_error(spec_file.path()),
            spec_file.path() + ": /dims: expected at least one entry");
}

TEST(PlatformSpec, RejectsMoreThan16MiHosts) {
  // 4096 x 4096 x 2 = 2^25 hosts > 2^24 = 16777216.
  const TempSpec spec_file(
      R"({"topology": "torus", "dims": [4096, 4096, 2], "link_bandwidth": "1GBps",
          "link_latency": "1us"})");
  EXPECT_EQ(read_error(spec_file.path()),
            spec_file.path() + ": /dims: describes more than 16777216 hosts");
}

TEST(PlatformSpec, RejectsFatTreesOfMoreThan16MiSwitchesOrLinks) {
  // 4 hosts, but each leaf has 2^24 parents: level 1 holds down[2] x up[1] = 2 x 2^24 switches,
  // level 2 up[1] x up[2] = 2^48; links 4 x 2^24 + 2^25 x 2^24.
  const TempSpec huge_up(
      R"({"topology": "fat-tree", "levels": 2, "down": [2, 2], "up": [16777216, 16777216],
          "parallel": [1, 1], "link_bandwidth": "1GBps", "link_latency": "1us"})");
  EXPECT_EQ(read_error(huge_up.path()),
            huge_up.path() + ": /up: describes 2.815e+14 switches (at most 16777216)\n" +
                huge_up.path() + ": /parallel: describes 5.63e+14 links (at most 16777216)");
  // 4 switches, but 4 x 2^24 + 2 x 2 x 2^24 = 2^27 links.
  const TempSpec huge_parallel(
      R"({"topology": "fat-tree", "levels": 2, "down": [2, 2], "up": [1, 2],
          "parallel": [16777216, 16777216], "link_bandwidth": "1GBps", "link_latency": "1us"})");
  EXPECT_EQ(read_error(huge_parallel.path()),
            huge_parallel.path() + ": /parallel: describes 1.342e+08 links (at most 16777216)");
}

TEST(PlatformSpec, RejectsDragonfliesOfMoreThan16MiLinksOfAKind) {
  // 2 groups x 1 chassis x 100000 routers, all joined: 2 x 100000 x 99999 / 2 green links.
  const TempSpec spec_file(
      R"({"topology": "dragonfly", "groups": 2, "chassis": 1, "routers": 100000, "nodes": 1,
          "link_bandwidth": "1GBps", "link_latency": "1us"})");
  EXPECT_EQ(read_error(spec_file.path()),
            spec_file.path() +
                ": /routers: describes 1e+10 links within chassis (green) (at most 16777216)");
}

TEST(PlatformSpec, ReadsKAryNTreeAsGeneralizedFatTree) {
  // A 4-ary 3-tree: 4^3 = 64 hosts, 3 levels of 4^2 = 16 switches with 4 links down and 4 up:
  // PGFT(3; 4,4,4; 1,4,4; 1,1,1).
  const TempSpec spec_file(
      R"({"topology": "fat-tree", "k": 4, "n": 3, "link_bandwidth": "25GBps",
          "link_latency": "1us"})");
  const PlatformSpec spec = read_platform_spec(spec_file.path());
  const FatTreeSpec expected{.levels = 3,
                             .down = {4, 4, 4},
                             .up = {1, 4, 4},
                             .parallel = {1, 1, 1},
                             .link = {.bandwidth_bytes_per_sec = 25e9, .latency_sec = 1e-6}};
  EXPECT_EQ(std::get<FatTreeSpec>(spec.topology), expected);
  EXPECT_EQ(spec.host_count(), 64u);
}

TEST(PlatformSpec, KAryNTreeTaperDividesTheUpLinksOfALevel) {
  // taper [2, 1]: level-1 switches keep 4 / 2 = 2 up links (2:1), level-2 switches 4 / 1.
  const TempSpec spec_file(
      R"({"topology": "fat-tree", "k": 4, "n": 3, "taper": [2, 1], "link_bandwidth": "25GBps",
          "link_latency": "1us"})");
  const PlatformSpec spec = read_platform_spec(spec_file.path());
  const auto& tree = std::get<FatTreeSpec>(spec.topology);
  EXPECT_EQ(tree.up, (std::vector<unsigned>{1, 2, 4}));
  EXPECT_EQ(tree.down, (std::vector<unsigned>{4, 4, 4}));
}

TEST(PlatformSpec, ReadsPerLevelLinks) {
  // Entry i: links between level i and i+1. A single string still applies to every level.
  const TempSpec spec_file(
      R"({"topology": "fat-tree", "levels": 2, "down": [4, 4], "up": [1, 4], "parallel": [1, 1],
          "link_bandwidth": ["25GBps", "100Gbps"], "link_latency": "1us"})");
  const PlatformSpec spec = read_platform_spec(spec_file.path());
  const auto& tree = std::get<FatTreeSpec>(spec.topology);
  // 100Gbps = 12.5e9 bytes/s.
  const std::vector<LinkSpec> expected{{.bandwidth_bytes_per_sec = 25e9, .latency_sec = 1e-6},
                                       {.bandwidth_bytes_per_sec = 12.5e9, .latency_sec = 1e-6}};
  EXPECT_EQ(tree.level_links, expected);
  EXPECT_EQ(tree.link, expected[0]);
}

TEST(PlatformSpec, RejectsKAryNTreeMixedWithListsAndBadTaper) {
  const TempSpec spec_file(
      R"({"topology": "fat-tree", "k": 4, "n": 2, "levels": 2, "taper": [3],
          "link_bandwidth": "1GBps", "link_latency": "1us"})");
  const std::string& p = spec_file.path();
  EXPECT_EQ(read_error(p),
            p +
                ": /levels: not allowed with \"k\" and \"n\" (a k-ary n-tree sets levels, down, "
                "up and parallel)\n" +
                p +
                ": /taper/0: expected a divisor of k = 4 (SimGrid needs a whole number of up "
                "links), got 3");
}

TEST(PlatformSpec, RejectsTaperWithExplicitLists) {
  const TempSpec explicit_lists(
      R"({"topology": "fat-tree", "levels": 1, "down": [4], "up": [1], "parallel": [1],
          "taper": [2], "link_bandwidth": "1GBps", "link_latency": "1us"})");
  EXPECT_EQ(read_error(explicit_lists.path()),
            explicit_lists.path() +
                ": /taper: only with \"k\" and \"n\" (with explicit lists, taper through \"up\" "
                "and \"parallel\")");
}

TEST(PlatformSpec, RejectsKAryNTreeOutOfRange) {
  const TempSpec spec_file(
      R"({"topology": "fat-tree", "k": 0, "n": 9, "link_bandwidth": "1GBps",
          "link_latency": "1us"})");
  const std::string& p = spec_file.path();
  EXPECT_EQ(read_error(p), p + ": /k: expected an integer between 1 and 4096, got 0\n" + p +
                               ": /n: expected an integer between 1 and 8, got 9");
}

TEST(PlatformSpec, RejectsPerLevelLinksOfWrongLengthOrValue) {
  const TempSpec spec_file(
      R"({"topology": "fat-tree", "k": 2, "n": 2, "taper": [1, 1],
          "link_bandwidth": ["25GBps"], "link_latency": ["1us", "1"]})");
  const std::string& p = spec_file.path();
  EXPECT_EQ(read_error(p),
            p + ": /taper: expected 1 entries (one per switch level below the top), got 2\n" + p +
                ": /link_bandwidth: expected 2 entries (one per level), got 1\n" + p +
                ": /link_latency/1: expected a latency >= 0 such as \"1us\" (s, ms, us, ns, ps), "
                "got \"1\"");
}

TEST(PlatformSpec, ReadsDragonfly) {
  const TempSpec spec_file(
      R"({"topology": "dragonfly", "groups": 3, "chassis": 2, "routers": 4, "nodes": 5,
          "blue_links": 2, "link_bandwidth": "25GBps", "link_latency": "1us"})");
  const PlatformSpec spec = read_platform_spec(spec_file.path());
  EXPECT_EQ(spec.topology_name(), "dragonfly");
  // Hosts = 3 groups x 2 chassis x 4 routers x 5 nodes.
  EXPECT_EQ(spec.host_count(), 120u);
  const DragonflySpec expected{.groups = 3,
                               .chassis = 2,
                               .routers = 4,
                               .nodes = 5,
                               .blue_links = 2,
                               .link = {.bandwidth_bytes_per_sec = 25e9, .latency_sec = 1e-6}};
  EXPECT_EQ(std::get<DragonflySpec>(spec.topology), expected);
}

TEST(PlatformSpec, DragonflyLinksPerKindNeedEveryKind) {
  const TempSpec spec_file(
      R"({"topology": "dragonfly", "groups": 1, "chassis": 1, "routers": 2, "nodes": 2,
          "link_bandwidth": {"local": "25GBps", "green": "10GBps", "black": "1GBps",
                             "purple": "1GBps"},
          "link_latency": "1us"})");
  const std::string& p = spec_file.path();
  EXPECT_EQ(read_error(p), p +
                               ": /link_bandwidth/purple: unknown key (expected one of local, "
                               "green, black, blue)\n" +
                               p + ": /link_bandwidth/blue: missing");
}

TEST(PlatformSpec, RejectsDragonflyWithMoreGroupsThanRouters) {
  const TempSpec spec_file(
      R"({"topology": "dragonfly", "groups": 3, "chassis": 1, "routers": 2, "nodes": 0,
          "link_bandwidth": "25GBps", "link_latency": "1us"})");
  const std::string& p = spec_file.path();
  EXPECT_EQ(read_error(p),
            p + ": /nodes: expected an integer between 1 and 16777216, got 0\n" + p +
                ": /groups: expected at most \"routers\" (2) groups: SimGrid's dragonfly "
                "attaches a group's link to group h at its router h, got 3");
}

TEST(PlatformSpec, RailNodesHaveOneNicPerGpu) {
  const PlatformSpec spec = read_platform_spec("tests/testdata/sim_two_nodes_rails.json");
  const auto& node = *std::get<StarSpec>(spec.topology).node;
  EXPECT_TRUE(node.rails);
  // Each rail is one NIC of 200 Gb/s = 25 GB/s (not summed over the 4 GPUs).
  EXPECT_EQ(node.nic_bandwidth_bytes_per_sec, 25e9);
  EXPECT_EQ(spec.host_count(), 8u);
}

TEST(PlatformSpec, NvlinkSharpIsABooleanOfTheNode) {
  const TempSpec spec_file(
      R"({"topology": "star", "hosts": 2, "link_bandwidth": "1GBps", "link_latency": "1us",
          "node": {"gpus": 4, "gpu_link_bandwidth": "1GBps", "gpu_link_latency": "1us",
                   "nvlink_sharp": 1, "nic_bandwidth": "1GBps", "nic_latency": "1us"}})");
  const std::string& p = spec_file.path();
  EXPECT_EQ(read_error(p), p + ": /node/nvlink_sharp: expected true or false, got number 1");
  EXPECT_TRUE(read_platform_spec("tests/testdata/sim_two_nodes_nvls.json").nvlink_sharp());
  EXPECT_FALSE(read_platform_spec("tests/testdata/sim_two_nodes.json").nvlink_sharp());
}

TEST(PlatformSpec, SharpSwitchesAreAFatTreesOrAFatTreePresetsFlag) {
  EXPECT_TRUE(read_platform_spec("tests/testdata/sim_two_nodes_sharp.json").network_sharp());
  EXPECT_FALSE(read_platform_spec("tests/testdata/sim_two_nodes_nvls.json").network_sharp());
  const TempSpec preset(R"({"preset": "dgx-h100", "nodes": 4, "sharp": true})");
  EXPECT_TRUE(read_platform_spec(preset.path()).network_sharp());
  const TempSpec star_preset(R"({"preset": "pcie4-25gbe", "nodes": 4, "sharp": true})");
  EXPECT_EQ(read_error(star_preset.path()),
            star_preset.path() +
                ": /sharp: in-network reduction needs a fat-tree fabric, and preset "
                "\"pcie4-25gbe\" is not one");
  const TempSpec not_bool(R"({"preset": "dgx-h100", "nodes": 4, "sharp": "on"})");
  EXPECT_EQ(read_error(not_bool.path()),
            not_bool.path() + ": /sharp: expected true or false, got string \"on\"");
}

TEST(PlatformSpec, APresetsNicsCanBeWhatAMachineHas) {
  // A DGX-1 with one 100 Gb/s EDR port instead of four: 12.5 GB/s per node, fabric links too.
  const TempSpec one_port(R"({"preset": "dgx1-v100", "nodes": 2, "nic_bandwidth": "100Gbps"})");
  const auto tree = std::get<FatTreeSpec>(read_platform_spec(one_port.path()).topology);
  EXPECT_DOUBLE_EQ(tree.node->nic_bandwidth_bytes_per_sec, 100e9 / 8);
  EXPECT_DOUBLE_EQ(tree.link.bandwidth_bytes_per_sec, 100e9 / 8);
  const TempSpec torus(R"({"preset": "tpu-torus", "nodes": 8, "nic_bandwidth": "100Gbps"})");
  EXPECT_EQ(read_error(torus.path()),
            torus.path() +
                ": /nic_bandwidth: preset \"tpu-torus\" has no multi-GPU nodes whose NICs it "
                "could change");
}

TEST(PlatformSpec, RejectsRailsWithFewerNicsThanGpus) {
  const TempSpec spec_file(
      R"({"topology": "star", "hosts": 2, "link_bandwidth": "1GBps", "link_latency": "1us",
          "node": {"gpus": 4, "gpu_link_bandwidth": "1GBps", "gpu_link_latency": "1us",
                   "rails": "yes", "nics": 2, "nic_bandwidth": "1GBps", "nic_latency": "1us"}})");
  const std::string& p = spec_file.path();
  EXPECT_EQ(read_error(p), p + ": /node/rails: expected true or false, got string \"yes\"");
  const TempSpec two_nics(
      R"({"topology": "star", "hosts": 2, "link_bandwidth": "1GBps", "link_latency": "1us",
          "node": {"gpus": 4, "gpu_link_bandwidth": "1GBps", "gpu_link_latency": "1us",
                   "rails": true, "nics": 2, "nic_bandwidth": "1GBps", "nic_latency": "1us"}})");
  EXPECT_EQ(read_error(two_nics.path()),
            two_nics.path() +
                ": /node/nics: with \"rails\" every GPU has its own NIC: expected 4 (the GPUs) or "
                "no \"nics\", got 2");
}

TEST(PlatformSpec, ReadsPerturbations) {
  const TempSpec spec_file(
      R"({"topology": "fat-tree", "levels": 2, "down": [4, 4], "up": [1, 4], "parallel": [1, 1],
          "link_bandwidth": "25GBps", "link_latency": "1us",
          "perturbations": {
            "slow_links": [{"level": 1, "bandwidth_factor": 0.5},
                           {"link": "link_from_0_21_0", "bandwidth_factor": 0.25}],
            "slow_gpus": [{"rank": 3, "compute_factor": 1.5}, {"host": 15, "compute_factor": 2}],
            "background": [{"from": 0, "to": 5, "rate": "8Gbps"}]}})");
  const Perturbations p = read_platform_spec(spec_file.path()).perturbations;
  const Perturbations expected{
      .slow_links = {{.where = "/perturbations/slow_links/0", .level = 1, .bandwidth_factor = 0.5},
                     {.where = "/perturbations/slow_links/1",
                      .link = "link_from_0_21_0",
                      .bandwidth_factor = 0.25}},
      .slow_gpus = {{.where = "/perturbations/slow_gpus/0", .rank = 3, .compute_factor = 1.5},
                    {.where = "/perturbations/slow_gpus/1", .host = 15, .compute_factor = 2}},
      // 8 Gb/s = 1 GB/s.
      .background = {
          {.where = "/perturbations/background/0", .from = 0, .to = 5, .bytes_per_sec = 1e9}}};
  EXPECT_EQ(p, expected);
}

TEST(PlatformSpec, RejectsBadPerturbations) {
  const TempSpec spec_file(
      R"({"topology": "star", "hosts": 4, "link_bandwidth": "25GBps", "link_latency": "1us",
          "perturbations": {
            "slow_links": [{"level": 0, "bandwidth_factor": 0}, {"bandwidth_factor": 0.5}],
            "failed_links": [{"level": 0, "lower": 1, "parent": 0}],
            "slow_gpus": [{"host": 4, "compute_factor": 2}],
            "background": [{"from": 1, "to": 1, "rate": "1GBps"},
                           {"from": 0, "to": 1, "rate": "1GBps", "period": "1ms"}],
            "jitter": 1}})");
  const std::string& p = spec_file.path();
  const std::string at = p + ": /perturbations";
  EXPECT_EQ(
      read_error(p),
      at +
          "/jitter: unknown key (expected one of slow_links, failed_links, slow_gpus, "
          "background)\n" +
          at + "/slow_links/0/level: only a fat-tree has levels (name the links with \"link\")\n" +
          at +
          "/slow_links/0/bandwidth_factor: expected a number between 1e-06 and 1e+06, got 0\n" +
          at +
          "/slow_links/1: expected one of \"level\" (a fat-tree level), \"link\" (a SimGrid "
          "link name) or \"host\" (a host's own links)\n" +
          at +
          "/failed_links/0: only a fat-tree without \"node\" can route around a failed link "
          "(SimGrid 3.32's other zones route statically: torus dimension order, dragonfly "
          "minimal, XML as written); use \"slow_links\" with a small \"bandwidth_factor\"\n" +
          at + "/slow_gpus/0/host: expected a host index below 4, got 4\n" + at +
          "/background/0/to: expected a host other than \"from\" (1)\n" + at +
          "/background/1: expected \"rate\" (a constant flow) or \"bytes\" and \"period\" (a "
          "repeated transfer)");
}

TEST(PlatformSpec, FailedFatTreeLinkIndicesAreChecked) {
  // Level 1 of down [2, 2], up [1, 2]: 1 x 2 = 2 leaf switches, each with up[1] = 2 parents and
  // parallel[1] = 1 link to each.
  const TempSpec spec_file(
      R"({"topology": "fat-tree", "levels": 2, "down": [2, 2], "up": [1, 2], "parallel": [1, 1],
          "link_bandwidth": "25GBps", "link_latency": "1us",
          "perturbations": {"failed_links": [{"level": 2, "lower": 0, "parent": 0},
                                             {"level": 1, "lower": 2, "parent": 2, "parallel": 1}]}})");
  const std::string at = spec_file.path() + ": /perturbations/failed_links/";
  EXPECT_EQ(read_error(spec_file.path()),
            at + "0/level: expected a level (0: the hosts' links) below 2, got 2\n" + at +
                "1/lower: expected a node index of the level below 2, got 2\n" + at +
                "1/parent: expected a parent index (up[level]) below 2, got 2\n" + at +
                "1/parallel: expected a link index (parallel[level]) below 1, got 1");
}

TEST(PlatformSpec, ReportsEveryProblemAtOnce) {
  const TempSpec spec_file(
      R"({"topology": "star", "hosts": -1, "link_bandwidth": "25", "link_latency": "-1us",
          "bandwidth": "25GBps"})");
  const std::string& p = spec_file.path();
  EXPECT_EQ(read_error(p),
            p +
                ": /bandwidth: unknown key (expected one of topology, hosts, link_bandwidth, "
                "link_latency, node, perturbations)\n" +
                p + ": /hosts: expected an integer >= 0, got number -1\n" + p +
                ": /link_bandwidth: expected a bandwidth > 0 such as \"25GBps\" (bytes/s) or "
                "\"200Gbps\" (bits/s), got \"25\"\n" +
                p +
                ": /link_latency: expected a latency >= 0 such as \"1us\" (s, ms, us, ns, ps), "
                "got \"-1us\"");
}

}  // namespace
}  // namespace dtsim::platforms
