// Issue 15: hybrid (Gated DeltaNet + full attention) KV budgets on recent vLLM. The state blocks each request
// holds follow vLLM's Mamba cache mode, which --enable-prefix-caching / --no-enable-prefix-caching select by
// version (vllm/v1/kv_cache_interface.py MambaSpec.max_memory_usage_bytes: none 1 block, align 2, since PR #30877).
// Expected numbers are derived by hand below from the configs in shared/models and the printed start-up lines.
#include <gtest/gtest.h>

#include "device/device_spec.hpp"
#include "engine/engine_profile.hpp"
#include "estimate/fit.hpp"
#include "logs/engine_log.hpp"
#include "model/model_source.hpp"
#include "fit_setup.hpp"

using namespace preflight;

namespace {
using Setup = pftest::FitSetup;
Setup setup(const std::string& model_id, const std::string& device_id, const std::string& engine_id, const std::string& version) {
  return pftest::fit_setup(model_id, device_id, engine_id, version);
}
constexpr double k_gib = 1024.0 * 1024.0 * 1024.0;
}  // namespace

// github.com/noonghunna/club-3090/issues/612: Qwen3.6-35B-A3B (the Qwen3.5-35B-A3B layout) on one RTX 5090, vLLM 0.24.0,
// fp8 KV, max_model_len 131072, 'enable_prefix_caching': True. Printed: "Available KV cache memory: 5.98 GiB",
// "GPU KV cache size: 567,978 tokens", "Maximum concurrency for 131,072 tokens per request: 4.33x".
// By hand: K+V per token per full-attention layer 2 x 2 heads x 256 x 1 B = 1,024; GDN state per layer: conv
// (2 x 16 x 128 + 32 x 128 = 8,192 channels) x 3 rows x 2 B = 49,152 + ssm 32 x 128 x 128 x 4 B = 2,097,152 ->
// 2,146,304; block 16 x ceil(2,146,304 / (16 x 1,024)) = 2,096, page 2,096 x 1,024 = 2,146,304. 10 attention and
// 30 GDN layers: group size 10, 1 + 3 groups. num_blocks = 5.98 GiB // 2,146,304 // 10 = 299.
// align (prefix caching on): 299 / (ceil(131072 / 2096) = 63 + 3 x 2) = 299 / 69 -> int(299 x 131072 / 69) = 567,978.
// none (the 0.24 default without the flag): 299 / 66 -> 593,795 tokens, 4.53x (+4.5%).
TEST(HybridKv, Issue15_PrefixCachingOnVllm024PrintsTheLogsTokens) {
  auto s = setup("Qwen/Qwen3.5-35B-A3B", "RTX5090", "vllm", "0.24.0");
  estimate::Deployment d;
  d.max_model_len = 131072;
  d.max_num_seqs = 1;
  d.max_num_batched_tokens = 8192;
  d.kv_cache_dtype = "fp8";
  d.kv_cache_memory_bytes = 5.98 * k_gib;
  const auto none = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
  EXPECT_EQ(none.block_size, 2096);
  EXPECT_EQ(none.page_bytes, 2146304);
  EXPECT_EQ(none.group_size, 10);
  EXPECT_EQ(none.num_blocks, 299);
  EXPECT_EQ(none.kv_tokens, 593795);
  d.enable_prefix_caching = true;
  const auto align = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
  EXPECT_EQ(align.num_blocks, 299);
  EXPECT_EQ(align.kv_tokens, 567978);
  EXPECT_NEAR(align.max_concurrency, 299.0 / 69.0, 1e-9);
  // The second boot of the recipe (issue #652): 6.01 GiB -> 6.01 GiB // 2,146,304 // 10 = 300 -> 569,878 tokens, 4.35x.
  d.kv_cache_memory_bytes = 6.01 * k_gib;
  const auto second = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
  EXPECT_EQ(second.kv_tokens, 569878);
}

// The flag by version, on Qwen3.5-27B (TP 1, bf16 KV): K+V per token 2 x 4 x 256 x 2 B = 4,096; state 10,240 x 3 x 2 B +
// 48 x 128 x 128 x 4 B = 3,207,168 -> block 16 x ceil(3,207,168 / 65,536) = 784, page 3,211,264; 16 + 48 layers: group 16,
// 1 + 3 groups. With 652 blocks at max_model_len 8192 (ceil(8192 / 784) = 11 attention blocks):
//  - none: 652 / (11 + 3) -> int(652 x 8192 / 14) = 381,513 tokens; align: 652 / (11 + 6) -> 314,187 (the tokens
//    vLLM 0.29.0 printed for this layout at 31.24 GiB: 31.24 GiB // 3,211,264 // 16 = 652).
//  - vLLM 0.24 defaults to none, 0.29 to align (prefix caching on by default for hybrids); each flag overrides.
//  - vLLM 0.11.0 has no align mode: the flag leaves the state blocks as they are; tokens by its rule (652 // 4) x 784.
TEST(HybridKv, Issue15_MambaCacheModeByVersionAndFlag) {
  const double budget = 652.0 * 16 * 3211264 + 1000;
  struct Row {
    const char* version;
    std::optional<bool> prefix_caching;
    int64_t tokens;
  };
  for (const Row& row : {Row{"0.24.0", std::nullopt, 381513}, Row{"0.24.0", true, 314187}, Row{"0.24.0", false, 381513},
                         Row{"0.29.0", std::nullopt, 314187}, Row{"0.29.0", false, 381513}, Row{"0.29.0", true, 314187},
                         Row{"0.11.0", true, 127792}, Row{"0.11.0", std::nullopt, 127792}}) {
    auto s = setup("Qwen/Qwen3.5-27B", "H200", "vllm", row.version);
    estimate::Deployment d;
    d.max_model_len = 8192;
    d.kv_cache_memory_bytes = budget;
    d.enable_prefix_caching = row.prefix_caching;
    const auto e = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
    const std::string label = std::string(row.version) + (row.prefix_caching ? (*row.prefix_caching ? " on" : " off") : " unset");
    EXPECT_EQ(e.block_size, 784) << label;
    EXPECT_EQ(e.num_blocks, 652) << label;
    EXPECT_EQ(e.kv_tokens, row.tokens) << label;
  }
}

// vllm-ascend >= 0.16 runs the same mode switch (patch_mamba_config: mamba_block_size = block_size when prefix
// caching is on in align mode): the seeds/001 layout (block 1536, page 6,352,896) with 41 blocks at 32,768 prints
// 41 / (22 + 3) = 1.64x by default and 41 / (22 + 6) = 1.46x with --enable-prefix-caching.
TEST(HybridKv, Issue15_PrefixCachingOnVllmAscend) {
  auto s = setup("Qwen/Qwen3.5-27B", "910B3", "vllm-ascend", "0.23.0");
  estimate::Deployment d;
  d.max_model_len = 32768;
  d.kv_cache_memory_bytes = 41.0 * 16 * 6352896 + 1000;
  const auto base = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
  EXPECT_EQ(base.num_blocks, 41);
  EXPECT_NEAR(base.max_concurrency, 41.0 / 25.0, 1e-9);
  d.enable_prefix_caching = true;
  const auto on = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
  EXPECT_NEAR(on.max_concurrency, 41.0 / 28.0, 1e-9);
  EXPECT_EQ(on.kv_tokens, static_cast<int64_t>(41.0 / 28.0 * 32768));
}

// `preflight logs` reads the flag back: from the non-default args dict of club-3090 #612 and from a command line with
// --no-enable-prefix-caching (robin's vLLM-Ascend 0.18 runs); a log that states neither leaves it unset.
TEST(HybridKv, Issue15_PrefixCachingReadBackFromTheLog) {
  auto sigs = logs::load_signatures();
  ASSERT_TRUE(sigs.has_value());
  const auto dict = logs::parse_engine_log(
      "(APIServer pid=1) INFO 07-06 22:50:34 [api_utils.py:273] non-default args: {'model': '~/.cache/huggingface/qwen3.6-35b-a3b-nvfp4', "
      "'max_model_len': 131072, 'kv_cache_dtype': 'fp8', 'enable_prefix_caching': True, 'max_num_seqs': 1}\n",
      *sigs);
  ASSERT_TRUE(dict.args.enable_prefix_caching);
  EXPECT_TRUE(dict.args.enable_prefix_caching->value);
  const auto off = logs::parse_engine_log("vllm serve /home/ma-user/work/Qwen3.6-27B-w8a8 --no-enable-prefix-caching --max-model-len 4096\n", *sigs);
  ASSERT_TRUE(off.args.enable_prefix_caching);
  EXPECT_FALSE(off.args.enable_prefix_caching->value);
  const auto on = logs::parse_engine_log("vllm serve Qwen/Qwen3.5-27B --enable-prefix-caching --max-model-len 8192\n", *sigs);
  ASSERT_TRUE(on.args.enable_prefix_caching);
  EXPECT_TRUE(on.args.enable_prefix_caching->value);
  EXPECT_EQ(on.args.max_model_len->value, 8192);
  const auto none = logs::parse_engine_log("vllm serve Qwen/Qwen3.5-27B --max-model-len 8192\n", *sigs);
  EXPECT_FALSE(none.args.enable_prefix_caching);
}
