// JsonFields and describe_json, the lowest layer's JSON helpers (workloads/parsing/json_fields.h).
#include "workloads/parsing/json_fields.h"

#include <string>

#include <gtest/gtest.h>

namespace dtsim::parsing {
namespace {

using nlohmann::json;

TEST(DescribeJson, ShortValuesInFullLongOnesCut) {
  EXPECT_EQ(describe_json(json("abc")), "string \"abc\"");
  EXPECT_EQ(describe_json(json(nullptr)), "null");
  EXPECT_EQ(describe_json(json(std::string(50, 'x'))), "string \"" + std::string(39, 'x') + "...");
}

// Issue #21: a file of 100,000 nested arrays crashed every reader (the message rendered the
// value recursively and overflowed the stack).
TEST(DescribeJson, DeeplyNestedValuesAreNamedNotRendered) {
  const json deep = json::parse(std::string(100000, '[') + std::string(100000, ']'));
  EXPECT_EQ(describe_json(deep), "array nested more than 32 levels deep");
  const json shallow = json::parse("[[1]]");
  EXPECT_EQ(describe_json(shallow), "array [[1]]");
}

}  // namespace
}  // namespace dtsim::parsing
