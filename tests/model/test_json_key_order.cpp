// Issue 16 (h-quant25): model/json_key_order reads an object's keys in the order the text writes them, for GPTQ's
// "dynamic" map whose rules vLLM applies in the file's order (preflight::Json sorts keys).
#include <gtest/gtest.h>

#include "model/json_key_order.hpp"
#include "../test_support.hpp"

using namespace preflight;
using namespace preflight::model;

TEST(JsonKeyOrder, Issue16_KeysInTextOrder) {
  struct Row {
    std::string text;
    std::vector<std::string> path;
    std::vector<std::string> keys;
  };
  const std::vector<Row> rows = {
      {R"({"b": 1, "a": 2})", {}, {"b", "a"}},
      // nested, values of every kind skipped, escapes decoded as JSON strings
      {R"({"z": [1, {"x": "}"}], "q": {"-:m\\.1": {}, "+:m\\.0\\..*": {"bits": 8}, "\u0041": null}, "a": true})",
       {"q"},
       {"-:m\\.1", "+:m\\.0\\..*", "A"}},
      {R"({"quantization_config": {"bits": 4, "dynamic": {"k2": {}, "k1": {"group_size": -1.5e3}}}})",
       {"quantization_config", "dynamic"},
       {"k2", "k1"}},
      // an absent member on the path: no keys
      {R"({"quantization_config": {"bits": 4}})", {"quantization_config", "dynamic"}, {}},
      {R"({"a": {}})", {"a"}, {}},
      // a byte order mark, NaN (parse_json reads both)
      {"\xEF\xBB\xBF{\"y\": NaN, \"x\": 1}", {}, {"y", "x"}},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.text);
    auto keys = object_keys_in_order(row.text, row.path, "config.json");
    ASSERT_TRUE(keys.has_value()) << keys.error().describe();
    EXPECT_EQ(*keys, row.keys);
  }
}

// The real GPTQModel descriptor: its keys as the file writes them.
TEST(JsonKeyOrder, Issue16_RealDynamicDescriptor) {
  const std::string text =
      pftest::read_all(pftest::quant_fixture("ModelCloud__TinyLlama-1.1B-Chat-v1.0-GPTQ-4bits-dynamic-cfg/quantize_config.json"));
  auto keys = object_keys_in_order(text, {"dynamic"}, "quantize_config.json");
  ASSERT_TRUE(keys.has_value()) << keys.error().describe();
  EXPECT_EQ(*keys, (std::vector<std::string>{"-:model\\.layers\\.([2-9]\\d*|[1-9]\\d+)\\..*", ".*\\.1\\..*"}));
  auto top = object_keys_in_order(text, {}, "quantize_config.json");
  ASSERT_TRUE(top.has_value());
  EXPECT_EQ(top->front(), "bits");
  EXPECT_EQ(top->back(), "meta");
}

// Text the scan cannot read is a corrupt error naming the file and the offset, never a crash or a long walk.
TEST(JsonKeyOrder, Issue16_CorruptTextIsRefused) {
  struct Row {
    std::string text;
    std::vector<std::string> path;
    std::string fragment;
  };
  const std::vector<Row> rows = {
      {R"({"a": "unterminated)", {}, "unterminated string"},
      {R"({"a" 1})", {}, "expected ':' after a key"},
      {R"({"a": 1 "b": 2})", {}, "expected ',' or '}'"},
      {R"([1, 2])", {}, "expected an object"},
      {R"({"q": [1, 2]})", {"q"}, "expected an object"},
      {R"({"q": {"a": [1 2]}})", {"q"}, "expected ',' or ']'"},
      {std::string("{\"a\": ") + std::string(200, '[') + std::string(200, ']') + "}", {}, "nesting deeper than 128"},
      {R"({"a": })", {}, "expected a value"},
      {"", {}, "expected an object"},
      {R"({"a\)", {}, "unterminated string"},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.text.substr(0, 40));
    auto keys = object_keys_in_order(row.text, row.path, "config.json");
    ASSERT_FALSE(keys.has_value());
    EXPECT_EQ(keys.error().kind, ErrorKind::corrupt);
    EXPECT_NE(keys.error().message.find(row.fragment), std::string::npos) << keys.error().message;
    EXPECT_NE(keys.error().message.find("config.json"), std::string::npos);
    EXPECT_NE(keys.error().message.find("at byte"), std::string::npos);
  }
}
