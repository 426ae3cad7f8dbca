#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "base/embedded.hpp"
#include "base/json_util.hpp"
#include "model/architecture_traits.hpp"

using namespace preflight;
using namespace preflight::model;

namespace {

std::string read_checkout_file(const std::string& relative) {
  std::ifstream in(std::string(PREFLIGHT_SOURCE_DIR) + "/" + relative, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

// Issue 19 (start-up time): a fit reads its architecture's traits from that record alone, located by the build-time
// index (cmake/catalog_index.cpp). data/architectures/traits.json in the checkout, parsed whole, is the reference: the
// embedded copy must be its bytes, each indexed record must be the bytes of its object, and every architecture must
// come back from find_builtin_traits equal to the whole file's parse, so a stale index or embedded copy fails here.
TEST(ArchitectureTraits, Issue19_OneRecordEqualsTheWholeFile) {
  const std::string text = read_checkout_file("data/architectures/traits.json");
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(std::string(embedded_data("architectures/traits.json")), text);
  auto json = parse_json(text, "traits.json");
  ASSERT_TRUE(json.has_value()) << json.error().describe();
  auto whole = parse_traits_catalog(*json, "traits.json");
  ASSERT_TRUE(whole.has_value()) << whole.error().describe();
  ASSERT_GE(whole->entries.size(), 28u);  // traits.json at ea38f99: 28 architectures
  const auto records = embedded_records("architectures/traits.json", "architectures");
  ASSERT_EQ(records.size(), whole->entries.size());
  for (size_t i = 0; i < records.size(); ++i) {
    auto one = parse_json(std::string(embedded_record_text("architectures/traits.json", records[i])), "record");
    ASSERT_TRUE(one.has_value()) << records[i].id;
    EXPECT_EQ(*one, (*json)["architectures"][i]) << records[i].id;
    EXPECT_EQ(std::string(records[i].id), whole->entries[i].id);
  }
  for (const auto& expected : whole->entries) {
    const ArchitectureTraits* one = find_builtin_traits(expected.id);
    ASSERT_NE(one, nullptr) << expected.id;
    EXPECT_EQ(*one, expected) << expected.id;
    EXPECT_EQ(find_builtin_traits(expected.id), one) << expected.id;  // parsed once, then kept
  }
  EXPECT_EQ(find_builtin_traits("NoSuchForCausalLM"), nullptr);
  EXPECT_EQ(find_builtin_traits(""), nullptr);
}
