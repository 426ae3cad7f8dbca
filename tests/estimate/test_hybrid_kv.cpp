// Issue 15: hybrid (Gated DeltaNet + full attention) KV budgets on recent vLLM. The state blocks each request
// holds follow vLLM's Mamba cache mode, which --enable-prefix-caching / --no-enable-prefix-caching select by
// version (vllm/v1/kv_cache_interface.py MambaSpec.max_memory_usage_bytes: none 1 block, align 2, since PR #30877).
// Expected numbers are derived by hand below from the configs in shared/models and the printed start-up lines.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "deploy/deployment.hpp"
#include "device/device_spec.hpp"
#include "engine/engine_profile.hpp"
#include "estimate/fit.hpp"
#include "model/model_source.hpp"
#include "fit_setup.hpp"
#include "../validate/validate_support.hpp"

using namespace preflight;

using Setup = pftest::FitSetup;
using pftest::fit_setup;

namespace {
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
  auto s = fit_setup("Qwen/Qwen3.5-35B-A3B", "RTX5090", "vllm", "0.24.0");
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
//  - vLLM 0.24, 0.26.0 and 0.27.1 default to none (arg_utils: default_prefix_caching = is_prefix_caching_supported and
//    not is_hybrid, 'keep it opt-in for now'), 0.28.0 and 0.29 to align (PR #50991, first in 0.28.0, turns prefix
//    caching on by default for hybrids in align mode); each flag overrides.
//  - vLLM 0.11.0 has no align mode: the flag leaves the state blocks as they are; tokens by its rule (652 // 4) x 784.
TEST(HybridKv, Issue15_MambaCacheModeByVersionAndFlag) {
  const double budget = 652.0 * 16 * 3211264 + 1000;
  struct Row {
    const char* version;
    std::optional<bool> prefix_caching;
    int64_t tokens;
  };
  for (const Row& row : {Row{"0.24.0", std::nullopt, 381513}, Row{"0.24.0", true, 314187}, Row{"0.24.0", false, 381513},
                         Row{"0.26.0", std::nullopt, 381513}, Row{"0.27.1", std::nullopt, 381513}, Row{"0.27.1", true, 314187},
                         Row{"0.28.0", std::nullopt, 314187}, Row{"0.28.0", false, 381513},
                         Row{"0.29.0", std::nullopt, 314187}, Row{"0.29.0", false, 381513}, Row{"0.29.0", true, 314187},
                         Row{"0.11.0", true, 127792}, Row{"0.11.0", std::nullopt, 127792}}) {
    auto s = fit_setup("Qwen/Qwen3.5-27B", "H200", "vllm", row.version);
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

// Issue 15 (hyb): the blocks-form token line (vLLM 0.10.2 - 0.20, kv_cache_utils: num_blocks // len(groups) x the
// smallest block size of the groups) takes the state groups' block too. In Mamba cache mode none vLLM gives a Mamba
// layer block_size = max_model_len ("so that mamba model will always have only one block"); in align mode the
// attention block (mamba_block_size = block_size). Same Qwen3.5-27B layout (block 784, page 3,211,264, group 16, 1 + 3
// groups) on vLLM 0.16.0 with 652 blocks at max_model_len 512, shorter than the block:
//  - none (the default): 652 // 4 x min(784, 512) = 163 x 512 = 83,456 tokens; 652 / (ceil(512 / 784) = 1 + 3) = 163x.
//  - --enable-prefix-caching (align): 163 x min(784, 784) = 127,792 tokens; 652 / (1 + 6) = 93.14x.
//  - at 8,192 (longer than the block) none prints 163 x 784 = 127,792 as before.
TEST(HybridKv, Issue15_BlocksTokenLineTakesTheSmallestGroupBlock) {
  auto s = fit_setup("Qwen/Qwen3.5-27B", "H200", "vllm", "0.16.0");
  estimate::Deployment d;
  d.max_model_len = 512;
  d.kv_cache_memory_bytes = 652.0 * 16 * 3211264 + 1000;
  const auto none = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
  EXPECT_EQ(none.block_size, 784);
  EXPECT_EQ(none.num_blocks, 652);
  EXPECT_EQ(none.kv_tokens, 83456);
  EXPECT_NEAR(none.max_concurrency, 163.0, 1e-9);
  d.enable_prefix_caching = true;
  const auto align = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
  EXPECT_EQ(align.kv_tokens, 127792);
  EXPECT_NEAR(align.max_concurrency, 652.0 / 7.0, 1e-9);
  d.enable_prefix_caching = std::nullopt;
  d.max_model_len = 8192;
  EXPECT_EQ(estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d).kv_tokens, 127792);
}

// vllm-ascend >= 0.16 runs the same mode switch (patch_mamba_config: mamba_block_size = block_size when prefix
// caching is on in align mode): the seeds/001 layout (block 1536, page 6,352,896) with 41 blocks at 32,768 prints
// 41 / (22 + 3) = 1.64x by default and 41 / (22 + 6) = 1.46x with --enable-prefix-caching.
TEST(HybridKv, Issue15_PrefixCachingOnVllmAscend) {
  auto s = fit_setup("Qwen/Qwen3.5-27B", "910B3", "vllm-ascend", "0.23.0");
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
  const auto dict = pftest::parse_log(
      "(APIServer pid=1) INFO 07-06 22:50:34 [api_utils.py:273] non-default args: {'model': '~/.cache/huggingface/qwen3.6-35b-a3b-nvfp4', "
      "'max_model_len': 131072, 'kv_cache_dtype': 'fp8', 'enable_prefix_caching': True, 'max_num_seqs': 1}\n");
  ASSERT_TRUE(dict.args.enable_prefix_caching);
  EXPECT_TRUE(dict.args.enable_prefix_caching->value);
  const auto off = pftest::parse_log("vllm serve /home/ma-user/work/Qwen3.6-27B-w8a8 --no-enable-prefix-caching --max-model-len 4096\n");
  ASSERT_TRUE(off.args.enable_prefix_caching);
  EXPECT_FALSE(off.args.enable_prefix_caching->value);
  const auto on = pftest::parse_log("vllm serve Qwen/Qwen3.5-27B --enable-prefix-caching --max-model-len 8192\n");
  ASSERT_TRUE(on.args.enable_prefix_caching);
  EXPECT_TRUE(on.args.enable_prefix_caching->value);
  EXPECT_EQ(on.args.max_model_len->value, 8192);
  const auto none = pftest::parse_log("vllm serve Qwen/Qwen3.5-27B --max-model-len 8192\n");
  EXPECT_FALSE(none.args.enable_prefix_caching);
}

// Issue 15, robin's three vLLM-Ascend 0.18.0rc1 runs of Qwen3.6-27B-w8a8 (the Qwen3.5-27B layout) on one 910B3:
// printed 50,688 tokens / 22.50x at 4,096, 62,976 / 18.44x at 8,192, 67,584 / 12.64x at 16,384. By hand, from
// vllm_ascend/patch/platform/patch_mamba_config.py (v0.18.0rc1) and the config (mamba_ssm_dtype float32):
// ssm 48 x 128 x 128 x 4 B = 3,145,728, conv 10,240 x 3 x 2 B = 61,440, K per token 4 x 256 x 2 B = 2,048;
// block 128 x ceil(3,145,728 / (128 x 2,048)) = 1,536; page 1,536 x 4,096 + 61,440 = 6,352,896; 16 attention +
// 48 GDN layers: 4 groups of 16. vLLM 0.18 prints (num_blocks // 4) x 1,536 tokens and num_blocks /
// (ceil(L / 1,536) + 3) concurrency, so the lines decode to exactly one block count each: 135 (33 x 1,536 =
// 50,688; 135 / 6 = 22.50), 166 (41 x 1,536; 166 / 9 = 18.44), 177 (44 x 1,536; 177 / 14 = 12.64). The token
// count grows with max_model_len because the budget did (12.8, 15.7, 16.8 GiB), not because of how it is printed.
TEST(HybridKv, Issue15_RobinLinesDecodeToOneBlockCountEach) {
  auto s = fit_setup("Qwen/Qwen3.5-27B", "910B3", "vllm-ascend", "0.18.0");
  struct Row {
    int64_t len, blocks, tokens;
    double concurrency;
  };
  for (const Row& row : {Row{4096, 135, 50688, 22.50}, Row{8192, 166, 62976, 18.44}, Row{16384, 177, 67584, 12.64}}) {
    estimate::Deployment d;
    d.max_model_len = row.len;
    d.max_num_seqs = 1;
    d.enable_prefix_caching = false;
    d.kv_cache_memory_bytes = static_cast<double>(row.blocks) * 16 * 6352896 + 1000;
    const auto e = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
    EXPECT_EQ(e.block_size, 1536) << row.len;
    EXPECT_EQ(e.page_bytes, 6352896) << row.len;
    EXPECT_EQ(e.num_blocks, row.blocks) << row.len;
    EXPECT_EQ(e.kv_tokens, row.tokens) << row.len;
    EXPECT_NEAR(e.max_concurrency, row.concurrency, 0.005) << row.len;
  }
}

// Issue 15: --limit-mm-per-prompt is read back from a log in the three forms it takes (the key=value form robin's
// command line uses, the flag's JSON, the non-default args dict) as the JSON vLLM parses; unreadable text is left unset.
TEST(HybridKv, Issue15_LimitMmPerPromptReadBackFromTheLog) {
  const auto kv = pftest::parse_log(
      "vllm serve /home/ma-user/work/Qwen3.6-27B-w8a8 --quantization ascend --max-model-len 4096 --limit-mm-per-prompt image=0,video=0 --enforce-eager\n");
  ASSERT_TRUE(kv.args.limit_mm_per_prompt);
  EXPECT_EQ(kv.args.limit_mm_per_prompt->value, R"({"image": 0, "video": 0})");
  EXPECT_EQ(kv.args.limit_mm_per_prompt->line, 1);
  EXPECT_TRUE(kv.args.enforce_eager);
  const auto json = pftest::parse_log("vllm serve Qwen/Qwen3.5-27B --limit-mm-per-prompt '{\"image\": 2}' --max-model-len 8192\n");
  ASSERT_TRUE(json.args.limit_mm_per_prompt);
  EXPECT_EQ(json.args.limit_mm_per_prompt->value, R"({"image": 2})");
  EXPECT_EQ(json.args.max_model_len->value, 8192);
  const auto dict = pftest::parse_log(
      "(APIServer pid=1) INFO [utils.py:326] non-default args: {'model': 'Qwen/Qwen3.5-27B', 'limit_mm_per_prompt': {'image': 0, 'video': 0}, 'max_model_len': 8192}\n");
  ASSERT_TRUE(dict.args.limit_mm_per_prompt);
  EXPECT_EQ(nlohmann::json::parse(dict.args.limit_mm_per_prompt->value), nlohmann::json::parse(R"({"image": 0, "video": 0})"));
  EXPECT_EQ(dict.args.max_model_len->value, 8192);
  EXPECT_FALSE(pftest::parse_log("vllm serve Qwen/Qwen3.5-27B --limit-mm-per-prompt image=all\n").args.limit_mm_per_prompt);
  EXPECT_FALSE(pftest::parse_log("vllm serve Qwen/Qwen3.5-27B --max-model-len 8192\n").args.limit_mm_per_prompt);
}

// Issue 15: a case records --limit-mm-per-prompt (robin's runs: image=0,video=0), `logs --emit-case` writes it, and
// validate reads it as an input: with no image and no video allowed vLLM's profile run is text only (gpu_model_runner
// profile_run: a zero encoder budget skips the encoder pass), so the vision pass (> 3 GiB for this model at
// 32,768) and the encoder outputs held leave the activation term. An unreadable value is an error naming the field.
TEST(HybridKv, Issue15_LimitMmPerPromptCaseFieldIsAnInput) {
  const std::string dir = ::testing::TempDir();
  const std::string log = dir + "/robin_text_only.log";
  std::ofstream(log) << "INFO 06-22 10:00:00 [__init__.py:43] vllm-ascend version 0.18.0rc1\n"
                     << "vllm serve Qwen/Qwen3.5-27B --max-model-len 32768 --limit-mm-per-prompt image=0,video=0 --enforce-eager\n"
                     << "(EngineCore pid=2) INFO [kv_cache_utils.py:1000] GPU KV cache size: 50,688 tokens\n";
  const auto r = pftest::run_cli("logs " + log + " --device 910B3 --models " + pftest::shared_path("models") + " --emit-case", {.with_stderr = false});
  ASSERT_EQ(r.code, 0) << r.out;
  const auto emitted = nlohmann::json::parse(r.out);
  EXPECT_EQ(emitted["limit_mm_per_prompt"], nlohmann::json::parse(R"({"image": 0, "video": 0})"));

  const std::string cases = dir + "/text_only.jsonl";
  const std::string head = R"J({"engine":"vllm-ascend","engine_version":"0.23.0","device":"Ascend 910B3 64GB","model":"Qwen/Qwen3.5-27B","max_model_len":32768,"kv_cache_tokens":53739,)J";
  std::ofstream(cases) << head << R"J("id":"default"})J" "\n"
                       << head << R"J("id":"object","limit_mm_per_prompt":{"image":0,"video":0}})J" "\n"
                       << head << R"J("id":"text","limit_mm_per_prompt":"{\"image\": 0, \"video\": 0}"})J" "\n"
                       << head << R"J("id":"images","limit_mm_per_prompt":{"image":1,"video":0}})J" "\n";
  auto v = pftest::validate_with_models({cases});
  ASSERT_TRUE(v.has_value()) << v.error().describe();
  ASSERT_EQ(v->rows.size(), 4u);
  auto term = [](const validate::CaseResult& row, const char* name) { return row.memory_terms.at(name) / k_gib; };
  EXPECT_GT(term(v->rows[0], "activation"), 3.0);
  EXPECT_GT(term(v->rows[0], "encoder_held"), 0.0);
  for (int i : {1, 2}) {
    EXPECT_LT(term(v->rows[i], "activation"), 0.5) << v->rows[i].id;
    EXPECT_EQ(term(v->rows[i], "encoder_held"), 0.0) << v->rows[i].id;
    EXPECT_GT(term(v->rows[i], "available"), term(v->rows[0], "available") + 3.0) << v->rows[i].id;
  }
  EXPECT_GT(term(v->rows[3], "activation"), 3.0);  // images allowed: the encoder pass stays

  std::ofstream(cases) << head << R"J("id":"bad","limit_mm_per_prompt":"image=0,video=0"})J" "\n";
  auto bad = pftest::validate_with_models({cases});
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().describe().find("limit_mm_per_prompt"), std::string::npos) << bad.error().describe();
}

// Issue 15: vLLM 0.21+ prints the token line as int(concurrency x max_model_len) (PR #41069), so the seed's "53,739
// tokens" beside "1.64x" at 32,768 is the concurrency line again (int(1.64 x 32,768) = 53,739); validate says so on
// the row. A vLLM-Ascend 0.18 case (vLLM 0.18: (num_blocks // groups) x block size) gets no such note.
TEST(HybridKv, Issue15_TokensLineIsTheConcurrencyLineFromVllm021) {
  const std::string cases = ::testing::TempDir() + "/tokens_rule.jsonl";
  std::ofstream(cases)
      << R"J({"id":"seed","engine":"vllm-ascend","engine_version":"0.23.0","device":"Ascend 910B3 64GB","model":"Qwen/Qwen3.5-27B","kv_cache_tokens":53739,"max_concurrency":1.64,"concurrency_len":32768})J" "\n"
      << R"J({"id":"robin","engine":"vllm-ascend","engine_version":"0.18.0","device":"Ascend 910B3 64GB","model":"Qwen/Qwen3.5-27B","kv_cache_tokens":62976,"max_concurrency":18.44,"concurrency_len":8192})J" "\n";
  auto v = pftest::validate_with_models({cases});
  ASSERT_TRUE(v.has_value()) << v.error().describe();
  ASSERT_EQ(v->rows.size(), 2u);
  auto says = [](const validate::CaseResult& row) {
    for (const auto& a : row.assumptions)
      if (a.find("printed kv_cache_tokens 53739 is the concurrency line again") != std::string::npos && a.find("1.64x x 32768") != std::string::npos) return true;
    return false;
  };
  EXPECT_TRUE(says(v->rows[0]));
  for (const auto& a : v->rows[1].assumptions) EXPECT_EQ(a.find("concurrency line again"), std::string::npos) << a;
}

// Issue 15: with no image and no video allowed, vLLM >= 0.16 builds a multimodal model's vision tower as
// StageMissingLayer and skips its weights (vllm PR #32605 / #32757, 2026-01; Qwen3.5 builds its tower inside
// `_mark_tower_model`), so "Model loading took" is the language model alone: Qwen3.5-27B's vision parameters x 2 B
// (bf16) less. vLLM 0.11 (before the context managers) keeps the tower in this estimate; images allowed keep it too.
TEST(HybridKv, Issue15_TextOnlyLeavesTheVisionTowerUnloaded) {
  struct Row {
    const char* engine;
    const char* device;
    const char* version;
    bool skipped;
  };
  for (const Row& row : {Row{"vllm", "H200", "0.24.0", true}, Row{"vllm-ascend", "910B3", "0.18.0", true}, Row{"vllm", "H200", "0.11.0", false}}) {
    auto s = fit_setup("Qwen/Qwen3.5-27B", row.device, row.engine, row.version);
    ASSERT_GT(s.model.vision_params, 400'000'000) << "Qwen3.5-27B's vision tower (27 blocks of 1152)";
    estimate::Deployment d;
    d.max_model_len = 8192;
    const auto with_tower = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
    d.no_images = true;
    const auto images_off = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
    d.no_video = true;
    const auto text_only = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
    const std::string label = std::string(row.engine) + " " + row.version;
    EXPECT_DOUBLE_EQ(images_off.weights_bytes, with_tower.weights_bytes) << label;  // video still allowed: the tower stays
    EXPECT_NEAR(with_tower.weights_bytes - text_only.weights_bytes, row.skipped ? 2.0 * static_cast<double>(s.model.vision_params) : 0.0, 1.0) << label;
  }
}

// Issue 15 (session 12): --mamba-ssm-cache-dtype sets the dtype of each Gated-DeltaNet layer's SSM state (vLLM
// CacheConfig.mamba_ssm_cache_dtype; MambaStateDtypeCalculator), which the club-3090 Qwen3.8-27B recipes set to
// bfloat16 (models/qwen3.8-27b/vllm/compose/dual/fp8/dflash2.yml: "bf16 halves the per-request SSM state charged to
// the KV pool"). By hand for Qwen/Qwen3.5-27B at TP 2, fp8 KV, prefix caching on (align: 2 state blocks):
//   K+V per token per attention layer 2 heads x 256 x 2 x 1 B = 1,024; conv (2 x 16 x 128 + 48 x 128) / 2 = 5,120
//   channels x 3 rows x 2 B = 30,720.
//   auto (the config's mamba_ssm_dtype float32): ssm 24 x 128 x 128 x 4 B = 1,572,864, state 1,603,584, block
//     16 x ceil(1,603,584 / 16,384) = 1,568, page 1,605,632; 10 GiB // page // 16 = 417 blocks;
//     ceil(65,536 / 1,568) + 3 x 2 = 48 a request -> 417 / 48 = 8.6875x, int(8.6875 x 65,536) = 569,344 tokens.
//   bfloat16: ssm 786,432, state 817,152, block 16 x ceil(817,152 / 16,384) = 800, page 819,200; 819 blocks;
//     ceil(65,536 / 800) + 6 = 88 -> 819 / 88 = 9.3068x, 609,931 tokens.
TEST(HybridKv, Issue15_MambaSsmCacheDtypeSetsTheStatePage) {
  auto s = fit_setup("Qwen/Qwen3.5-27B", "RTX5090", "vllm", "0.29.0");
  estimate::Deployment d{.tensor_parallel_size = 2, .max_model_len = 65536, .kv_cache_dtype = "fp8", .enable_prefix_caching = true, .kv_cache_memory_bytes = 10.0 * k_gib};
  struct Row {
    const char* dtype;  // "" = not given (the config's float32)
    int64_t block_size, page_bytes, num_blocks, blocks_per_request, kv_tokens;
  };
  for (const Row& row : {Row{"", 1568, 1605632, 417, 48, 569344}, Row{"float32", 1568, 1605632, 417, 48, 569344}, Row{"bfloat16", 800, 819200, 819, 88, 609931}}) {
    d.mamba_ssm_cache_dtype = row.dtype;
    const auto e = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
    EXPECT_EQ(e.block_size, row.block_size) << row.dtype;
    EXPECT_EQ(e.page_bytes, row.page_bytes) << row.dtype;
    EXPECT_EQ(e.num_blocks, row.num_blocks) << row.dtype;
    EXPECT_NEAR(e.max_concurrency, static_cast<double>(row.num_blocks) / static_cast<double>(row.blocks_per_request), 1e-9) << row.dtype;
    EXPECT_EQ(e.kv_tokens, row.kv_tokens) << row.dtype;
  }
}

// The flag as fit takes it (a value outside vLLM's MambaDType is bad input naming the flag), as a case field and read
// back from a log's non-default args and command line.
TEST(HybridKv, Issue15_MambaSsmCacheDtypeFromFlagsCasesAndLogs) {
  deploy::Flags f;
  f.mamba_ssm_cache_dtype = deploy::Given<std::string>{"BFloat16", "--mamba-ssm-cache-dtype"};
  auto d = deploy::deployment_from_flags(f);
  ASSERT_TRUE(d.has_value()) << d.error().describe();
  EXPECT_EQ(d->mamba_ssm_cache_dtype, "bfloat16");
  f.mamba_ssm_cache_dtype = deploy::Given<std::string>{"fp8", "--mamba-ssm-cache-dtype"};
  auto bad = deploy::deployment_from_flags(f);
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().describe().find("--mamba-ssm-cache-dtype: expected one of auto|float32|float16|bfloat16, found 'fp8'"), std::string::npos)
      << bad.error().describe();

  const auto dict = pftest::parse_log(
      "(APIServer pid=1) INFO 08-27 10:00:00 [api_utils.py:273] non-default args: {'model': 'qwen3.8-27b', 'max_model_len': 65536, "
      "'mamba_ssm_cache_dtype': 'bfloat16', 'enable_prefix_caching': True}\n");
  ASSERT_TRUE(dict.args.mamba_ssm_cache_dtype);
  EXPECT_EQ(dict.args.mamba_ssm_cache_dtype->value, "bfloat16");
  const auto cmd = pftest::parse_log("vllm serve Qwen/Qwen3.5-27B --block-size 1600 --mamba-ssm-cache-dtype bfloat16 --max-model-len 8192\n");
  ASSERT_TRUE(cmd.args.mamba_ssm_cache_dtype);
  EXPECT_EQ(cmd.args.mamba_ssm_cache_dtype->value, "bfloat16");
  EXPECT_FALSE(pftest::parse_log("vllm serve Qwen/Qwen3.5-27B --max-model-len 8192\n").args.mamba_ssm_cache_dtype);

  const std::string cases = ::testing::TempDir() + "/ssm_dtype.jsonl";
  const std::string head = R"J({"engine":"vllm","engine_version":"0.29.0","device":"NVIDIA GeForce RTX 5090 32GB","num_devices":2,"tensor_parallel_size":2,"model":"Qwen/Qwen3.5-27B","max_model_len":65536,"kv_cache_dtype":"fp8","enable_prefix_caching":true,"available_kv_gib":10.0,)J";
  std::ofstream(cases) << head << R"J("id":"auto"})J" "\n" << head << R"J("id":"bf16","mamba_ssm_cache_dtype":"bfloat16"})J" "\n";
  auto v = pftest::validate_with_models({cases});
  ASSERT_TRUE(v.has_value()) << v.error().describe();
  ASSERT_EQ(v->rows.size(), 2u);
  EXPECT_GT(v->rows[1].memory_terms.at("max_concurrency"), v->rows[0].memory_terms.at("max_concurrency") * 1.05);
}
