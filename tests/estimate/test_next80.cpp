// Issue 15, held-out case vllm-ascend #6250 (Qwen3-Next-80B-A3B bf16, TP 4 on Atlas 800I A2, vLLM-Ascend
// 0.13.0rc2, util 0.8, max_model_len 32,768, 4,096 batched tokens). The available-KV miss (9.99 GiB predicted,
// 9.11 printed) is documented as a negative result in docs/memory-model.md; these tests pin what the printed lines
// do confirm: the hybrid KV geometry and the token rule, so the whole miss sits in the budget. Expected numbers are
// derived by hand from the config (shared/models/Qwen__Qwen3-Next-80B-A3B-Thinking) and the engine source.
#include <gtest/gtest.h>

#include <cmath>

#include "estimate/fit.hpp"
#include "fit_setup.hpp"

using namespace preflight;

namespace {

estimate::Deployment issue6250() {
  estimate::Deployment d;
  d.tensor_parallel_size = 4;
  d.max_model_len = 32768;
  d.max_num_batched_tokens = 4096;
  d.gpu_memory_utilization = 0.8;
  d.device_total_bytes = 65452113920.0;  // printed 'total memory: 65452113920'
  return d;
}

// vLLM's hybrid allocator: one tensor per layer slot shared by the 4 groups of 12 layers; tokens printed =
// (num_blocks / groups) x block_size (vllm v1/core/kv_cache_utils.py, hybrid groups).
int64_t tokens_from_budget(double budget_bytes) {
  const int64_t page = 393216, group_size = 12, groups = 4, block = 384;
  const auto blocks = static_cast<int64_t>(std::floor(budget_bytes / static_cast<double>(page * group_size)));
  return blocks / groups * block;
}

}  // namespace

// patch_mamba_config.py (v0.13.0rc2 verify_and_update_config): attention page per token at TP 4 = K + V x 1 KV head
// (2 heads replicated to 4 ranks) x head_dim 256 x 2 B = 1,024 B. Mamba page per layer at TP 4: conv state 3
// (conv_kernel 4 - 1) x conv_dim / 4 (16 x 128 x 2 + 32 x 128 = 8,192 / 4 = 2,048) x 2 B = 12,288 B; SSM state 8 value
// heads x 128 x 128 x 2 B = 262,144 B; 274,432 B in all. Block size = 128 x cdiv(274,432, 128 x 1,024) = 384 tokens,
// page 384 x 1,024 = 393,216 B (the mamba page padded to it). 36 GDN + 12 attention layers: groups of 12.
TEST(Next80, Issue15_Next80_HybridGeometryFromMambaConfig) {
  auto s = pftest::fit_setup("Qwen/Qwen3-Next-80B-A3B-Thinking", "910B3", "vllm-ascend", "0.13.0");
  const auto e = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, issue6250());
  EXPECT_EQ(e.block_size, 384);
  EXPECT_EQ(e.page_bytes, 393216);
  EXPECT_EQ(e.group_size, 12);
}

// The printed budget 9,786,143,744 B gives floor(9,786,143,744 / (393,216 x 12)) = 2,073 blocks, 2,073 / 4 = 518,
// x 384 = 198,912 tokens: exactly the printed 'GPU KV cache size: 198,912 tokens'. The estimate applies the same rule
// to its own budget, so the tokens' 9.6% miss is the budget's, not the geometry's.
TEST(Next80, Issue15_Next80_TokensFollowTheBudgetByThePrintedRule) {
  EXPECT_EQ(tokens_from_budget(9786143744.0), 198912);
  auto s = pftest::fit_setup("Qwen/Qwen3-Next-80B-A3B-Thinking", "910B3", "vllm-ascend", "0.13.0");
  const auto e = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, issue6250());
  EXPECT_EQ(e.kv_tokens, tokens_from_budget(e.available_kv_bytes));
}
