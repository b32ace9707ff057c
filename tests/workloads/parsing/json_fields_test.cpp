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

// Issue #21: the sweep reader copied its (key-ordered) document into a json to describe it, and
// the copy recursed 100,000 levels deep.
TEST(DescribeJson, OrderedDocumentsAreDescribedWithoutACopy) {
  const auto deep =
      nlohmann::ordered_json::parse(std::string(100000, '[') + std::string(100000, ']'));
  EXPECT_EQ(describe_ordered_json(deep), "array nested more than 32 levels deep");
}

TEST(Utf8, ValidTextOnly) {
  EXPECT_TRUE(is_valid_utf8("plain, \xC3\xA9t\xC3\xA9, \xE2\x82\xAC, \xF0\x9F\x98\x80"));
  EXPECT_FALSE(is_valid_utf8("a\xFF"));
  EXPECT_FALSE(is_valid_utf8("\xC3"));              // cut short
  EXPECT_FALSE(is_valid_utf8("\xC0\xAF"));          // overlong "/"
  EXPECT_FALSE(is_valid_utf8("\xED\xA0\x80"));      // a surrogate
  EXPECT_FALSE(is_valid_utf8("\xF4\x90\x80\x80"));  // beyond U+10FFFF
}

// What a message may echo: escaped, valid UTF-8, at most 64 bytes of the value.
TEST(Printable, EscapesAndBoundsWhatAMessageEchoes) {
  EXPECT_EQ(printable("a\xFF\"\n"), "a\\xFF\\x22\\x0A");
  EXPECT_EQ(printable("\xC3\xA9"), "\xC3\xA9");
  EXPECT_EQ(printable(std::string(1000000, 'x')), std::string(64, 'x') + "...");
}

}  // namespace
}  // namespace dtsim::parsing
