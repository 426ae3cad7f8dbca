// Issue 19 (hard30): base/json_keys finds a key one object names twice; the user's overlays refuse it, and no shipped
// catalogue holds one.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "base/file.hpp"
#include "base/json_depth.hpp"
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

// Issue 19 (hard31): the path of a repeated key as segments, so a reader whose keys hold dots (safetensors tensor names)
// names the right one, and the depth of its object.
TEST(JsonKeys, Issue19_RepeatedKeyPathSegmentsAndDepth) {
  struct Case {
    std::string text;
    std::vector<std::string> path;  // empty: none repeats
    size_t depth;
  };
  const std::vector<Case> cases = {
      {R"({"model.layers.0.w": 1, "model.layers.0.w": 2})", {"model.layers.0.w"}, 1},
      {R"({"t.a": {"dtype": "BF16", "dtype": "F16"}})", {"t.a", "dtype"}, 2},
      {R"({"a": [{"b": 1}, {"b": 1, "b": 2}]})", {"a", "[]", "b"}, 2},
      {R"([[{"x": 1, "x": 1}]])", {"[]", "[]", "x"}, 1},
      {R"({"a": 1})", {}, 0},
      {"{\"a\": 1, \"b", {}, 0},  // malformed: no answer, parse_json's error is the caller's
  };
  for (const auto& c : cases) {
    const auto r = find_repeated_key(c.text);
    if (c.path.empty()) {
      EXPECT_FALSE(r) << c.text;
      continue;
    }
    ASSERT_TRUE(r) << c.text;
    EXPECT_EQ(r->path, c.path) << c.text;
    EXPECT_EQ(r->depth(), c.depth) << c.text;
  }
}

// Issue 19 (hard31): calibrate --save and bw --save read the overlay they merge into with the 64 MiB default of
// read_text_file and without the repeated-key check, where fit read the same file within 4 MiB and refused a repeat.
// load_owned_json_file is the one reading: the bound, then the check.
TEST(JsonKeys, Issue19_OverlayReadingHasOneBoundAndRefusesARepeat) {
  const std::string dir = pftest::scratch_dir("overlay-bound");
  const std::string big = dir + "/big.json";
  {
    std::ofstream out(big);
    out << "{\"profiles\": [\"" << std::string(k_max_owned_json_bytes, 'x') << "\"]}";
  }
  const auto r = load_owned_json_file(big);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().describe().find("big.json"), std::string::npos) << r.error().describe();
  const std::string twice = dir + "/twice.json";
  std::ofstream(twice) << R"({"schema_version": 1, "profiles": [{"engine": "vllm", "engine": "sglang"}]})";
  const auto t = load_owned_json_file(twice);
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().message, twice + ": profiles[].engine: key appears twice in one object");
  const std::string fine = dir + "/fine.json";
  std::ofstream(fine) << R"({"schema_version": 1, "profiles": []})";
  const auto f = load_owned_json_file(fine);
  ASSERT_TRUE(f) << f.error().describe();
  EXPECT_EQ((*f)["schema_version"], 1);
}

// Review (session 37, duplicates D6): the nesting scan deploy's flag bound and engine's --compilation-config refusal both
// read. Depth counts lists and objects, not brackets inside strings (an escaped quote keeps the string open).
TEST(JsonDepth, Issue19_NestingIsCountedOutsideStringsAndStopsPastTheLimit) {
  EXPECT_EQ(preflight::json_depth_scan("").deepest, 0u);
  EXPECT_EQ(preflight::json_depth_scan("{\"a\": [1, {\"b\": []}]}").deepest, 4u);
  EXPECT_EQ(preflight::json_depth_scan("{\"a\": \"[[[{{{\\\"[[[\"}").deepest, 1u);
  EXPECT_EQ(preflight::json_depth_scan("[[]][[[]]]").deepest, 3u);
  const auto scan = preflight::json_depth_scan("[[[[", 2);
  EXPECT_EQ(scan.past_limit_at, 2u);  // the third '[' opens level 3
  EXPECT_EQ(scan.deepest, 2u);
  EXPECT_EQ(preflight::json_depth_scan("[[]]", 2).past_limit_at, std::string_view::npos);
}
