// Issue 16 (llamacpp33): llama.cpp's KV cache of an MLA model (GGUF architecture deepseek2) by the file's layout and
// llama.cpp's build. Expected values: the per-head layout against two public logs of DeepSeek-R1 GGUFs converted before
// llama.cpp PR #12801 (data/evidence/llamacpp-startup-public.jsonl line 8, Ollama on 8 x MI250X, April 2025:
// 'KV self size = 39040.00 MiB, K (f16): 23424.00 MiB, V (f16): 15616.00 MiB' at 8,192 cells; LM Studio, 2026-01-30,
// github.com/lmstudio-ai/lmstudio-bug-tracker/issues/1454: 'llama_kv_cache: size = 78080.00 MiB ( 16384 cells, 61 layers,
// 1/1 seqs), K (f16): 46848.00 MiB, V (f16): 31232.00 MiB'); the K-only layout (PR #19067) against the real llama.cpp of
// tests/llama_cpp (last test). The K + V layout (PR #12801) is a worked example: no public log of it was found.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "../test_support.hpp"
#include "base/json_util.hpp"
#include "estimate/llama_cpp.hpp"
#include "gguf_fixtures.hpp"

using namespace preflight;
using namespace preflight::estimate;

namespace {

constexpr double k_mla_mib = 1048576.0;

// DeepSeek-R1's attention as a GGUF states it: 61 layers, 7168 wide, 128 heads, kv_lora_rank 512, rope 64,
// qk_nope 128, v_head_dim 128. `mla_file`: written by a converter from PR #12801 on (one latent KV head: key_length 576,
// value_length 512, key_length_mla 192, value_length_mla 128); else the older layout (128 KV heads of K 192 / V 128).
model::GgufFile deepseek2_file(bool mla_file) {
  model::GgufFile f;
  const std::string a = "deepseek2";
  f.strings["general.architecture"] = a;
  f.numbers[a + ".block_count"] = 61;
  f.numbers[a + ".embedding_length"] = 7168;
  f.numbers[a + ".attention.head_count"] = 128;
  f.numbers[a + ".attention.head_count_kv"] = mla_file ? 1 : 128;
  f.numbers[a + ".attention.key_length"] = mla_file ? 576 : 192;
  f.numbers[a + ".attention.value_length"] = mla_file ? 512 : 128;
  if (mla_file) {
    f.numbers[a + ".attention.key_length_mla"] = 192;
    f.numbers[a + ".attention.value_length_mla"] = 128;
  }
  f.numbers[a + ".attention.kv_lora_rank"] = 512;
  f.numbers[a + ".rope.dimension_count"] = 64;
  f.numbers[a + ".feed_forward_length"] = 18432;
  f.array_lengths["tokenizer.ggml.tokens"] = 129280;
  f.tensors.push_back(pftest::gguf::tensor("token_embd.weight", {64, 32}, 8, 0));  // the KV does not read it: kept small on disk
  return f;
}

LlamaCppEstimate mla_estimate(bool mla_file, int64_t ctx, std::optional<int64_t> build, const std::string& cache_type = "f16") {
  auto e = estimate_llama_cpp(deepseek2_file(mla_file), {.ctx_size = ctx, .cache_type_k = cache_type, .cache_type_v = cache_type,
                                                         .flash_attn = LlamaFlashAttn::off, .build = build});
  EXPECT_TRUE(e) << e.error().describe();
  return e ? *e : LlamaCppEstimate{};
}

}  // namespace

// A GGUF converted before PR #12801 has no key_length_mla: every build caches it per head, K 128 x 192 and V 128 x 128.
// 8,192 cells x 61 layers x 24,576 x 2 B = 23,424 MiB of K, x 16,384 x 2 B = 15,616 MiB of V (the Ollama log); at 16,384
// cells on a build of January 2026 (the LM Studio log) 46,848 + 31,232 = 78,080 MiB.
TEST(LlamaCppMla33, Issue16_OldDeepSeekGgufIsCachedPerHeadAtAnyBuild) {
  for (const std::optional<int64_t> build : {std::optional<int64_t>{}, std::optional<int64_t>{4000}, std::optional<int64_t>{7917}}) {
    const auto e = mla_estimate(false, 8192, build);
    EXPECT_DOUBLE_EQ(e.kv_buffer_bytes / k_mla_mib, 39040.0);
    EXPECT_DOUBLE_EQ(e.kv_k_bytes / k_mla_mib, 23424.0);
    EXPECT_DOUBLE_EQ(e.kv_v_bytes / k_mla_mib, 15616.0);
    EXPECT_EQ(e.kv_other_build_bytes, 0u);  // the file decides: no band
  }
  const auto lmstudio = mla_estimate(false, 16384, std::nullopt);
  EXPECT_DOUBLE_EQ(lmstudio.kv_buffer_bytes / k_mla_mib, 78080.0);
  EXPECT_DOUBLE_EQ(lmstudio.kv_k_bytes / k_mla_mib, 46848.0);
  EXPECT_DOUBLE_EQ(lmstudio.kv_v_bytes / k_mla_mib, 31232.0);
  bool said = false;
  for (const auto& a : lmstudio.assumptions) said = said || a.find("converted before llama.cpp PR #12801") != std::string::npos;
  EXPECT_TRUE(said);
}

// An MLA GGUF: one latent K row of 512 + 64 = 576 values a cell (8,192 x 61 x 576 x 2 B = 549 MiB) and, before PR #19067,
// the 512-wide latent again as V (8,192 x 61 x 512 x 2 B = 488 MiB). The build named decides; an unstated one or one
// between the builds that bracket #19067 (b7599, b7917) takes the newest and states the other as the band.
TEST(LlamaCppMla33, Issue16_MlaGgufCacheFollowsTheBuild) {
  const auto before = mla_estimate(true, 8192, 7599);
  EXPECT_DOUBLE_EQ(before.kv_k_bytes / k_mla_mib, 549.0);
  EXPECT_DOUBLE_EQ(before.kv_v_bytes / k_mla_mib, 488.0);
  EXPECT_EQ(before.kv_other_build_bytes, 0u);
  const auto after = mla_estimate(true, 8192, 7917);
  EXPECT_DOUBLE_EQ(after.kv_buffer_bytes / k_mla_mib, 549.0);
  EXPECT_EQ(after.kv_v_bytes, 0u);
  EXPECT_EQ(after.kv_other_build_bytes, 0u);
  for (const std::optional<int64_t> build : {std::optional<int64_t>{}, std::optional<int64_t>{7700}}) {
    const auto e = mla_estimate(true, 8192, build);
    EXPECT_DOUBLE_EQ(e.kv_buffer_bytes / k_mla_mib, 549.0);
    EXPECT_DOUBLE_EQ(e.kv_other_build_bytes / k_mla_mib, 1037.0);
    bool band = false;
    for (const auto& a : e.assumptions) band = band || a.find("the KV buffer is 1037.00 MiB (K 549.00 MiB + V 488.00 MiB) instead of 549.00 MiB") != std::string::npos;
    EXPECT_TRUE(band) << (e.assumptions.empty() ? "" : e.assumptions.back());
  }
  // -ctk q8_0: a 576-wide K row is 18 blocks of 34 B = 612 B: 8,192 x 61 x 612 B = 291.66 MiB.
  const auto q8 = mla_estimate(true, 8192, 7917, "q8_0");
  EXPECT_EQ(q8.kv_k_bytes, 8192ull * 61ull * 612ull);
  EXPECT_EQ(q8.kv_v_bytes, 0u);
}

// The rule as a table: source and build -> layout, and whether a band remains.
TEST(LlamaCppMla33, Issue16_MlaCacheRuleByBuild) {
  struct Row {
    LlamaMlaSource source;
    std::optional<int64_t> build;
    LlamaMlaCache cache;
    bool band;
  };
  const Row rows[] = {
      {LlamaMlaSource::gguf_per_head, std::nullopt, LlamaMlaCache::per_head, false},
      {LlamaMlaSource::gguf_per_head, 8000, LlamaMlaCache::per_head, false},
      {LlamaMlaSource::checkpoint, 4524, LlamaMlaCache::per_head, false},
      {LlamaMlaSource::checkpoint, 5000, LlamaMlaCache::latent_k_and_v, true},
      {LlamaMlaSource::checkpoint, 5554, LlamaMlaCache::latent_k_and_v, false},
      {LlamaMlaSource::checkpoint, 7599, LlamaMlaCache::latent_k_and_v, false},
      {LlamaMlaSource::checkpoint, 7600, LlamaMlaCache::latent_k, true},
      {LlamaMlaSource::checkpoint, 7917, LlamaMlaCache::latent_k, false},
      {LlamaMlaSource::checkpoint, std::nullopt, LlamaMlaCache::latent_k, true},
      {LlamaMlaSource::gguf_mla, 6000, LlamaMlaCache::latent_k_and_v, false},
      {LlamaMlaSource::gguf_mla, std::nullopt, LlamaMlaCache::latent_k, true},
  };
  for (const auto& r : rows) {
    const auto c = llama_mla_cache(r.source, r.build);
    EXPECT_EQ(c.cache, r.cache) << static_cast<int>(r.source) << " b" << r.build.value_or(-1);
    EXPECT_EQ(c.other.has_value(), r.band) << static_cast<int>(r.source) << " b" << r.build.value_or(-1);
    EXPECT_FALSE(c.why.empty());
  }
}

// The plan row of DeepSeek-R1 (its config.json in ../shared/models) sizes the cache as the named build's converter writes
// the GGUF: before PR #12801 per head, as the Ollama log of deepseek-r1:671b prints at -c 8192 -np 4 (39,040 MiB over
// the 8 MI250X GCDs); unstated: the V-less latent (8,192 x 61 x 576 x 2 B = 549 MiB) with the K + V band (1,037 MiB).
TEST(LlamaCppMla33, Issue16_DeepSeekPlanRowCacheByBuild) {
  const std::string models = std::string(PREFLIGHT_SOURCE_DIR) + "/../shared/models/";
  auto kv_of = [&](const std::string& engine, std::string& assumptions) {
    const auto run = pftest::run_cli("plan deepseek-ai/DeepSeek-R1 --models " + models + " --engine " + engine +
                                         " --device MI250X --max-devices 8 --context 2048 --concurrency 4 --variant gguf_q4_k_m --json",
                                     {.with_stderr = false});
    const Json j = Json::parse(run.out);
    for (const auto* list : {&j["recommended"], &j["rejected"]})
      for (const auto& r : *list)
        if (r.contains("llama_cpp") && r["llama_cpp"].is_object() && r["num_devices"] == 8) {
          for (const auto& a : r["llama_cpp"]["assumptions"]) assumptions += a.get<std::string>() + "\n";
          return r["llama_cpp"]["kv_buffer_bytes"].get<double>() / k_mla_mib;
        }
    return -1.0;
  };
  std::string old_notes, new_notes;
  EXPECT_DOUBLE_EQ(kv_of("llama.cpp@b4000", old_notes), 39040.0);
  EXPECT_NE(old_notes.find("predates llama.cpp PR #12801"), std::string::npos) << old_notes;
  EXPECT_DOUBLE_EQ(kv_of("llama.cpp", new_notes), 549.0);
  EXPECT_NE(new_notes.find("the KV buffer is 1037.00 MiB"), std::string::npos) << new_notes;
}

// fit FILE.gguf --engine llama.cpp@bNNNN: the build reaches the estimate, the K/V split is printed, and a build that is
// not one is refused with exit 2.
TEST(LlamaCppMla33, Issue16_FitReadsTheBuildFromTheEngine) {
  const std::string dir = pftest::scratch_dir("mla33");
  pftest::gguf::write_gguf(dir + "/ds.gguf", deepseek2_file(true));
  const auto old_build = pftest::run_cli("fit " + dir + "/ds.gguf --engine llama.cpp@b7599 --device H200 --ctx-size 8192 --flash-attn off");
  EXPECT_NE(old_build.out.find("llama_kv_cache: size =  1037.00 MiB (8192 cells), K:   549.00 MiB, V:   488.00 MiB"), std::string::npos) << old_build.out;
  const auto new_build = pftest::run_cli("fit " + dir + "/ds.gguf --engine llama.cpp@b7917 --device H200 --ctx-size 8192 --flash-attn off");
  EXPECT_NE(new_build.out.find("llama_kv_cache: size =   549.00 MiB (8192 cells), K:   549.00 MiB, V:     0.00 MiB"), std::string::npos) << new_build.out;
  const auto bad = pftest::run_cli("fit " + dir + "/ds.gguf --engine llama.cpp@latest --device H200");
  EXPECT_EQ(bad.code, 2) << bad.out;
  EXPECT_NE(bad.out.find("expected llama.cpp@bNNNN"), std::string::npos) << bad.out;
  std::filesystem::remove_all(dir);
}

// The real llama.cpp: node-llama-cpp 3.21.1 (tests/llama_cpp; it bundles llama.cpp release v0.4.0, after PR #19067) loaded
// a 2-layer deepseek2 MLA GGUF (kv_lora_rank 64, rope 16, 4 heads of qk_nope 32 / v_head 32; written like
// tests/llama_cpp/gguf_writer.mjs's models) at 4,096 cells on CPU and printed, with flash attention off and on alike:
// 'llama_kv_cache: size =    1.25 MiB (  4096 cells,   2 layers,  1/1 seqs), K (f16):    1.25 MiB, V (f16):    0.00 MiB'.
TEST(LlamaCppMla33, Issue16_TinyMlaGgufAsTheRealLlamaCppPrintedIt) {
  model::GgufFile f;
  const std::string a = "deepseek2";
  f.strings["general.architecture"] = a;
  for (const auto& [key, value] : std::vector<std::pair<std::string, double>>{{"block_count", 2}, {"embedding_length", 256}, {"feed_forward_length", 512},
                                                                              {"attention.head_count", 4}, {"attention.head_count_kv", 1},
                                                                              {"attention.key_length", 80}, {"attention.value_length", 64},
                                                                              {"attention.key_length_mla", 48}, {"attention.value_length_mla", 32},
                                                                              {"attention.kv_lora_rank", 64}, {"rope.dimension_count", 16}})
    f.numbers[a + "." + key] = value;
  f.array_lengths["tokenizer.ggml.tokens"] = 1024;
  f.tensors.push_back(pftest::gguf::tensor("token_embd.weight", {256, 1024}, 1, 0));
  for (const auto fa : {LlamaFlashAttn::off, LlamaFlashAttn::on}) {
    auto e = estimate_llama_cpp(f, {.ctx_size = 4096, .flash_attn = fa});
    ASSERT_TRUE(e) << e.error().describe();
    EXPECT_DOUBLE_EQ(e->kv_k_bytes / k_mla_mib, 1.25);
    EXPECT_EQ(e->kv_v_bytes, 0u);
    EXPECT_EQ(e->kv_buffer_bytes, e->kv_k_bytes);
  }
}
