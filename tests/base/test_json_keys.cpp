// Issue 19 (hard30): base/json_keys finds a key one object names twice; the user's overlays refuse it, and no shipped
// catalogue holds one.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "base/file.hpp"
#include "base/json_keys.hpp"
#include "../test_support.hpp"

using namespace preflight;

TEST(JsonKeys, Issue19_RepeatedKeyIsNamedByItsPath) {
  struct Case {
    std::string text, path;  // path "" : no repeated key
  };
  const std::vector<Case> cases = {
      {R"({"a": 1, "b": 2})", ""},
      {R"({"a": {"x": 1}, "b": {"x": 2}})", ""},  // the same key in two objects
      {R"([{"id": 1}, {"id": 2}])", ""},
      {R"({"a": 1, "a": 2})", "a"},
      {R"({"devices": [{"id": "H100-SXM", "hbm_bandwidth_bytes_per_s": 3e12, "hbm_bandwidth_bytes_per_s": 1e12}]})", "devices[].hbm_bandwidth_bytes_per_s"},
      {R"({"a": {"b": [[{"c": 1, "c": 1}]]}})", "a.b[][].c"},
      {R"({"a": 1, "a)", ""},          // malformed: parse_json's error, not this one
      {R"({"a": NaN, "b": 1})", ""},  // Python's NaN: parse_json's reading
  };
  for (const auto& c : cases) {
    const auto r = check_unique_keys(c.text, "f.json");
    if (c.path.empty()) {
      EXPECT_TRUE(r) << c.text << ": " << r.error().describe();
    } else {
      ASSERT_FALSE(r) << c.text;
      EXPECT_EQ(r.error().kind, ErrorKind::corrupt);
      EXPECT_EQ(r.error().message, "f.json: " + c.path + ": key appears twice in one object") << c.text;
    }
  }
}

// Every catalogue under data/ (embedded in the binary): a repeated key there would hide its first value from review.
TEST(JsonKeys, Issue19_ShippedCataloguesRepeatNoKey) {
  int files = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(std::string(PREFLIGHT_SOURCE_DIR) + "/data")) {
    if (entry.path().extension() != ".json") continue;
    const auto text = read_text_file(entry.path().string());
    ASSERT_TRUE(text) << entry.path();
    const auto r = check_unique_keys(*text, entry.path().string());
    EXPECT_TRUE(r) << r.error().describe();
    ++files;
  }
  EXPECT_GT(files, 10);
}
