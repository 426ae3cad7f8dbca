// Issue 15 (acc31): the rotary caches inside "Model loading took" for an MLA model. vLLM's DeepseekV2MLAAttention builds
// get_rope(qk_rope_head_dim, ...) and turns a scaled rope_scaling into "deepseek_yarn", a DeepseekScalingRotaryEmbedding
// whose cache is original_max_position_embeddings x factor rows of rotary_dim (vllm deepseek_v2.py); a DSA model (an
// indexer) builds a second one with is_neox_style=True, which get_rope's _ROPE_DICT does not share with the attention's.
// vLLM-Ascend's AscendDeepseekScalingRotaryEmbedding keeps three copies in the model dtype (cos_sin_cache, cos_cached,
// sin_cached: engines.json overheads[npu].rope_cache_deepseek_scaling_copies); vLLM on CUDA keeps cos_sin_cache only.
// Expected bytes worked by hand from the configs in ../shared/models:
//  - DeepSeek-V3.2: qk_rope_head_dim 64 (hidden 7,168 / 128 heads = 56 was taken before), max_position_embeddings 163,840
//    (4,096 x factor 40), bf16, index_head_dim 128 (an indexer). NPU: 2 ropes x 3 copies x 2 B x 163,840 x 64 =
//    125,829,120 B (before: 163,840 x 56 x 8 B = 73,400,320). CUDA: 2 x 163,840 x 64 x 2 B = 41,943,040.
//  - DeepSeek-V3: no indexer. NPU: 3 x 2 B x 163,840 x 64 = 62,914,560. DeepSeek-R1 on CUDA: 163,840 x 64 x 2 = 20,971,520.
//  - Qwen3-8B (plain rope): unchanged, max_position_embeddings 40,960 x head_dim 128 x the NPU's calibrated 8 B =
//    41,943,040, and x 2 B on CUDA = 10,485,760.
#include <gtest/gtest.h>

#include <string>

#include "base/json_util.hpp"
#include "engine/engine_profile.hpp"
#include "estimate/fit.hpp"
#include "fit_setup.hpp"

using namespace preflight;

namespace {

double rotary_cache_bytes(const std::string& model, const std::string& device, const std::string& engine, const std::string& version) {
  auto s = pftest::fit_setup(model, device, engine, version);
  // On the NPU the nightly's layout (DP 2 x TP 8, EP, --quantization ascend: vLLM-Ascend loads no FP8 checkpoint).
  estimate::Deployment d = pftest::dsv32_a3_nightly();
  if (engine != "vllm-ascend") {
    d = estimate::Deployment{};
    d.max_model_len = 4096;
    d.gpu_memory_utilization = 0.9;
    d.tensor_parallel_size = 8;
  }
  const auto e = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
  EXPECT_FALSE(e.ranks.empty()) << model;
  if (e.ranks.empty()) return -1;
  for (const auto& [name, value] : e.ranks[0].weights.inputs)
    if (name == "rotary_cache_bytes") return value;
  ADD_FAILURE() << model << " on " << device << ": no rotary_cache_bytes input in the weights term: " << e.ranks[0].weights.rule;
  return -1;
}

}  // namespace

TEST(RopeCache, Issue15_MlaRopeIsQkRopeHeadDimWide) {
  auto s = pftest::fit_setup("deepseek-ai/DeepSeek-V3.2", "910C", "vllm-ascend", "0.13.0");
  EXPECT_EQ(s.model.rotary_dim, 64);
  EXPECT_EQ(s.model.rope_class, model::RopeClass::deepseek_scaling);
  auto q = pftest::fit_setup("Qwen/Qwen3-8B", "910C", "vllm-ascend", "0.13.0");
  EXPECT_EQ(q.model.rotary_dim, 128);
  EXPECT_EQ(q.model.rope_class, model::RopeClass::plain);
}

TEST(RopeCache, Issue15_DeepseekScalingCopiesOnNpuAndTheIndexerRope) {
  EXPECT_DOUBLE_EQ(rotary_cache_bytes("deepseek-ai/DeepSeek-V3.2", "910C", "vllm-ascend", "0.13.0"), 125829120.0);
  EXPECT_DOUBLE_EQ(rotary_cache_bytes("deepseek-ai/DeepSeek-V3", "910C", "vllm-ascend", "0.13.0"), 62914560.0);
  EXPECT_DOUBLE_EQ(rotary_cache_bytes("deepseek-ai/DeepSeek-V3.2", "H200", "vllm", "0.13.0"), 41943040.0);
  EXPECT_DOUBLE_EQ(rotary_cache_bytes("deepseek-ai/DeepSeek-R1", "H100", "vllm", "0.8.4"), 20971520.0);
}

TEST(RopeCache, Issue15_PlainRopeKeepsThePlatformRule) {
  EXPECT_DOUBLE_EQ(rotary_cache_bytes("Qwen/Qwen3-8B", "910C", "vllm-ascend", "0.13.0"), 41943040.0);
  EXPECT_DOUBLE_EQ(rotary_cache_bytes("Qwen/Qwen3-8B", "H200", "vllm", "0.13.0"), 10485760.0);
}

// The catalogue record carries its source; CUDA has none (its class keeps cos_sin_cache alone, the 2 B rule).
TEST(RopeCache, Issue15_CatalogueRecord) {
  auto engines = engine::load_engine_catalog();
  ASSERT_TRUE(engines.has_value());
  const engine::Overheads* npu = engines->overheads_for("npu");
  ASSERT_NE(npu, nullptr);
  ASSERT_TRUE(npu->rope_cache_deepseek_scaling_copies.has_value());
  EXPECT_DOUBLE_EQ(*npu->rope_cache_deepseek_scaling_copies, 3.0);
  EXPECT_NE(npu->rope_cache_deepseek_scaling_source.find("AscendDeepseekScalingRotaryEmbedding"), std::string::npos);
  const engine::Overheads* cuda = engines->overheads_for("cuda");
  ASSERT_NE(cuda, nullptr);
  EXPECT_FALSE(cuda->rope_cache_deepseek_scaling_copies.has_value());
}

// A copies count is bounded and needs its source; the error names the file and the key.
TEST(RopeCache, Issue15_CopiesWithoutSourceAreRefused) {
  auto text = [](const std::string& extra) {
    return R"({"schema_version": 1, "profiles": [], "overheads": [{"platform": "npu", "non_torch_bytes": 1, "graph_bytes": 1,
      "activation_bytes_per_batched_token_factor": 1, "vision_activation_factor": 0.1, "rope_cache_bytes_per_element": 8, "rope_cache_source": "s", )" +
           extra + R"( "evidence": "e", "band_fraction": 0.3, "non_torch_multi_rank_fraction": 0.5, "non_torch_multi_rank_source": "s"}]})";
  };
  auto good = parse_json(text(R"("rope_cache_deepseek_scaling_copies": 3, "rope_cache_deepseek_scaling_source": "s",)"), "engines.json");
  ASSERT_TRUE(good.has_value());
  auto ok = engine::parse_engine_catalog(*good, "engines.json");
  ASSERT_TRUE(ok.has_value()) << ok.error().describe();
  EXPECT_DOUBLE_EQ(ok->overheads.front().rope_cache_deepseek_scaling_copies.value_or(0), 3.0);
  for (const std::string bad : {std::string(R"("rope_cache_deepseek_scaling_copies": 3,)"),
                                std::string(R"("rope_cache_deepseek_scaling_copies": 0, "rope_cache_deepseek_scaling_source": "s",)")}) {
    auto j = parse_json(text(bad), "engines.json");
    ASSERT_TRUE(j.has_value());
    auto e = engine::parse_engine_catalog(*j, "engines.json");
    ASSERT_FALSE(e.has_value()) << bad;
    EXPECT_NE(e.error().describe().find("engines.json"), std::string::npos);
    EXPECT_NE(e.error().describe().find("rope_cache_deepseek_scaling_copies"), std::string::npos) << e.error().describe();
  }
}
