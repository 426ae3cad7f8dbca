#include <gtest/gtest.h>

#include "engine/engine_profile.hpp"

using namespace preflight;
using namespace preflight::engine;

TEST(EngineCatalog, SelectsByVersionRange) {
  auto c = load_engine_catalog();
  ASSERT_TRUE(c.has_value()) << c.error().describe();
  struct Row { const char* engine; const char* version; const char* id; };
  const Row rows[] = {
      {"vllm-ascend", "0.23.0", "vllm-ascend@0.23-0.26"}, {"vllm-ascend@0.18", "", "vllm-ascend@0.18-0.20"},
      {"vllm-ascend", "vllm 0.10.2 + vllm-ascend 0.10.2rc1", "vllm-ascend@0.7-0.12"}, {"vllm", "0.10.1.1", "vllm@0.9.2-0.11.0"}, {"vllm", "0.11.2", "vllm@0.11.1-0.13"},
      {"vllm", "", "vllm@0.26-0.30"}, {"vllm-ascend", "0.11.0rc3", "vllm-ascend@0.7-0.12"},
  };
  for (const auto& r : rows) {
    auto p = select_engine(*c, r.engine, r.version);
    ASSERT_TRUE(p.has_value()) << r.engine << " " << r.version;
    EXPECT_EQ(p->id, r.id);
  }
  auto ascend18 = select_engine(*c, "vllm-ascend", "0.18.0");
  EXPECT_FALSE(ascend18->accepts_quantization("fp8"));
  EXPECT_FALSE(ascend18->accepts_quantization("awq"));
  EXPECT_TRUE(ascend18->accepts_quantization("ascend"));
  EXPECT_EQ(ascend18->block_size, 128);
}

TEST(EngineCatalog, UnknownEngineOrVersionSuggests) {
  auto c = load_engine_catalog();
  ASSERT_TRUE(c.has_value());
  auto e = select_engine(*c, "vlm-ascend", "");
  ASSERT_FALSE(e.has_value());
  EXPECT_NE(e.error().message.find("did you mean vllm-ascend"), std::string::npos);
  auto v = select_engine(*c, "vllm-ascend", "0.3.0");
  ASSERT_FALSE(v.has_value());
  EXPECT_NE(v.error().message.find("known ranges"), std::string::npos);
  EXPECT_EQ(parse_version("v0.11.0rc3")->minor, 11);
}

// A malformed overheads entry names the file and the key: the rotary-cache size per element is required and
// bounded (it is added to the printed weights).
TEST(EngineCatalog, OverheadsRotaryCacheSizeIsChecked) {
  auto text = [](const std::string& rope) {
    return R"({"schema_version": 1, "profiles": [], "overheads": [{"platform": "npu", "non_torch_bytes": 1, "graph_bytes": 1,
      "activation_bytes_per_batched_token_factor": 1, "vision_activation_factor": 0.1, )" + rope +
           R"( "evidence": "e", "band_fraction": 0.3}]})";
  };
  auto good = parse_json(text(R"("rope_cache_bytes_per_element": 8, "rope_cache_source": "s",)"), "engines.json");
  ASSERT_TRUE(good.has_value());
  auto ok = parse_engine_catalog(*good, "engines.json");
  ASSERT_TRUE(ok.has_value()) << ok.error().describe();
  EXPECT_DOUBLE_EQ(ok->overheads.front().rope_cache_bytes_per_element, 8.0);
  for (const std::string bad : {std::string(R"("rope_cache_bytes_per_element": -2, "rope_cache_source": "s",)"), std::string(R"("rope_cache_source": "s",)")}) {
    auto j = parse_json(text(bad), "engines.json");
    ASSERT_TRUE(j.has_value());
    auto e = parse_engine_catalog(*j, "engines.json");
    ASSERT_FALSE(e.has_value()) << bad;
    EXPECT_NE(e.error().describe().find("engines.json"), std::string::npos);
    EXPECT_NE(e.error().describe().find("rope_cache_bytes_per_element"), std::string::npos) << e.error().describe();
  }
}
