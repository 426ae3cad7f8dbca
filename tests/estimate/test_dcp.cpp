// Issue 15 (dcp): decode context parallel (--decode-context-parallel-size, -dcp). The KV cache of one rank is sized as
// without it (same page, same budget, same num_blocks); each request's full-attention blocks cover ceil(L / D) tokens
// (vllm/v1/kv_cache_interface.py FullAttentionSpec.max_memory_usage_bytes) and the printed token count is multiplied by
// D (vllm/v1/core/kv_cache_utils.py _report_kv_cache_config), both read at vLLM 45f526d65 (the 0.18.0 tree).
// Expected numbers are derived by hand below from the configs in shared/models.
#include <gtest/gtest.h>

#include <string>

#include "estimate/fit.hpp"
#include "fit_setup.hpp"

using namespace preflight;

namespace {
constexpr double k_gib = 1024.0 * 1024.0 * 1024.0;
}  // namespace

// Qwen3-32B (64 layers, 64 query heads, 8 KV heads, head_dim 128, bf16) at TP 16 on vLLM 0.18: KV heads per rank
// max(1, 8 // 16) = 1 (replicated, which is what DCP takes back), K+V per token per layer 2 x 1 x 128 x 2 B = 512 B,
// page 16 tokens x 512 = 8,192 B, one group of 64 layers. A 10 GiB budget: 10,737,418,240 // 8,192 // 64 = 20,480 blocks.
//  - DCP 1: 20,480 x 16 = 327,680 tokens; at L = 32,768 a request takes 32,768 / 16 = 2,048 blocks: 10.00x.
//  - DCP 2: the same 20,480 blocks, printed x 2 = 655,360 tokens; a request keeps ceil(32,768 / 2) = 16,384 tokens on a
//    rank, 1,024 blocks: 20.00x. The engine's "Multiplying the GPU KV cache size" line comes before the size line.
TEST(DecodeContextParallel, Issue15_TokensAndConcurrencyScaleWithDcp) {
  auto s = pftest::fit_setup("Qwen/Qwen3-32B", "H100", "vllm", "0.18.0");
  estimate::Deployment d;
  d.tensor_parallel_size = 16;
  d.max_model_len = 32768;
  d.kv_cache_memory_bytes = 10.0 * k_gib;
  const auto plain = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
  EXPECT_EQ(plain.block_size, 16);
  EXPECT_EQ(plain.page_bytes, 8192);
  EXPECT_EQ(plain.num_blocks, 20480);
  EXPECT_EQ(plain.kv_tokens, 327680);
  EXPECT_NEAR(plain.max_concurrency, 10.0, 1e-9);
  d.decode_context_parallel_size = 2;
  const auto dcp = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
  EXPECT_EQ(dcp.page_bytes, 8192);
  EXPECT_EQ(dcp.num_blocks, 20480);
  EXPECT_EQ(dcp.kv_tokens, 655360);
  EXPECT_NEAR(dcp.max_concurrency, 20.0, 1e-9);
  EXPECT_EQ(dcp.decode_context_parallel_size, 2);
  bool multiplied = false;
  for (const auto& line : dcp.lines)
    multiplied = multiplied || line == "Multiplying the GPU KV cache size by the cp_world_size 2 (pcp_world_size 1 * dcp_world_size 2).";
  EXPECT_TRUE(multiplied);
  // An odd context: ceil(32,769 / 2) = 16,385 tokens -> ceil(16,385 / 16) = 1,025 blocks: 20,480 / 1,025.
  d.max_model_len = 32769;
  const auto odd = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
  EXPECT_NEAR(odd.max_concurrency, 20480.0 / 1025.0, 1e-9);
}

// vLLM's refusals, as the engine words them (vllm/config/parallel.py and vllm/config/model.py at 45f526d65), and the
// layouts it accepts. Qwen3-32B: 64 query / 8 KV heads; Qwen2.5-7B: 28 / 4 (7 query heads per KV head); Qwen3.5-35B-A3B:
// 16 / 2 (#40585's TP 8 x DCP 4: 8 // 2 = 4, 8 query heads per KV head); DeepSeek-V3: MLA, no KV-head rule;
// gpt-oss-20b: sliding-window layers.
TEST(DecodeContextParallel, Issue15_EngineRefusesBadLayouts) {
  struct Row {
    const char* model;
    int64_t tp, dcp;
    const char* message;  // empty: accepted
  };
  const Row rows[] = {
      {"Qwen/Qwen3-32B", 16, 3, "ValueError: tp_size=16 must be divisible bydcp_size=3."},
      {"Qwen/Qwen3-32B", 8, 2, "AssertionError: tensor parallel size 8 must be greater than total num kv heads 8 when enable decode context parallel for GQA/MQA"},
      {"Qwen/Qwen3-32B", 16, 4,
       "AssertionError: decode context parallel size must less than or equal to (tensor parallel size 16 // total num kv heads 8) = 2, but got 4"},
      {"Qwen/Qwen3-32B", 16, 2, ""},
      {"Qwen/Qwen3-32B", 4, 1, ""},
      {"Qwen/Qwen2.5-7B", 28, 2,
       "AssertionError: Total number of q per kv attn heads (7) must be divisible by dcp world size when enable decode context parallel for GQA (2)."},
      {"Qwen/Qwen3.5-35B-A3B", 8, 4, ""},
      {"deepseek-ai/DeepSeek-V3", 8, 8, ""},
      {"deepseek-ai/DeepSeek-V3", 8, 3, "ValueError: tp_size=8 must be divisible bydcp_size=3."},
      {"openai/gpt-oss-20b", 8, 2, "AssertionError: DCP not support sliding window."},
  };
  for (const Row& r : rows) {
    auto m = model::resolve_model(r.model);
    ASSERT_TRUE(m.has_value()) << r.model;
    const std::string why = estimate::decode_context_parallel_rejection(*m, r.tp, r.dcp);
    if (std::string(r.message).empty()) EXPECT_EQ(why, "") << r.model << " TP " << r.tp << " DCP " << r.dcp;
    else EXPECT_NE(why.find(r.message), std::string::npos) << r.model << " TP " << r.tp << " DCP " << r.dcp << ": " << why;
  }
}
