// MindIE Service's static KV allocation (issue 18). Every expected number is derived by hand below from
// MindIE LLM's service_parameter_configuration.md (npuMemSize, maxBatchSize block formula) and the shared
// config.json of the model, not from the code under test.
#include <gtest/gtest.h>

#include "device/device_spec.hpp"
#include "estimate/mindie.hpp"
#include "model/model_source.hpp"
#include "model/quant_scheme.hpp"

using namespace preflight;

namespace {

struct Setup {
  model::ModelSpec model;
  device::DeviceSpec device;
  estimate::MindieCatalog catalog;
};

Setup setup(const std::string& model_id, const std::string& device_id = "910B3") {
  Setup s;
  auto m = model::resolve_model(model_id);
  EXPECT_TRUE(m.has_value()) << (m ? "" : m.error().describe());
  if (m) s.model = *m;
  auto devices = device::load_device_catalog();
  s.device = *device::find_device(*devices, device_id);
  auto c = estimate::load_mindie_catalog();
  EXPECT_TRUE(c.has_value()) << (c ? "" : c.error().describe());
  if (c) s.catalog = *c;
  return s;
}

}  // namespace

// The catalogue carries the documented ModelDeployConfig / ScheduleConfig defaults (doc tables, typed here by hand).
TEST(Mindie, Issue18_CatalogueDefaultsAreTheDocumentedOnes) {
  auto s = setup("Qwen/Qwen3-8B");
  const auto o = estimate::mindie_default_options(s.catalog);
  EXPECT_EQ(o.npu_mem_size, -1);
  EXPECT_EQ(o.cache_block_size, 128);
  EXPECT_EQ(o.max_seq_len, 2560);
  EXPECT_EQ(o.max_input_token_len, 2048);
  EXPECT_EQ(o.max_prefill_tokens, 8192);
  EXPECT_EQ(o.max_prefill_batch_size, 50);
  EXPECT_EQ(o.max_batch_size, 200);
  EXPECT_EQ(o.max_iter_times, 512);
  EXPECT_DOUBLE_EQ(o.npu_memory_fraction, 0.8);
  for (const auto& [key, text] : s.catalog.sources) EXPECT_NE(text.find("https://"), std::string::npos) << key;
}

TEST(Mindie, Issue18_CatalogueRejectsUnknownKeysAndMissingSources) {
  auto ok = estimate::parse_mindie_catalog(Json::parse(R"({"defaults":{},"limits":{},"accepted_weight_formats":["native"],"sources":{"a":"https://x"}})"), "m.json");
  EXPECT_TRUE(ok.has_value());
  const std::vector<std::pair<std::string, std::string>> bad{
      {R"({"defaults":{},"limits":{},"accepted_weight_formats":["native"],"sources":{"a":"https://x"},"extra":1})", "unknown key 'extra'"},
      {R"({"defaults":{},"limits":{},"accepted_weight_formats":["native"],"sources":{}})", "sources"},
      {R"({"defaults":{},"limits":{},"accepted_weight_formats":["native"],"sources":{"a":"no url"}})", "sources.a"},
      {R"({"defaults":{"maxSeqLen":"x"},"limits":{},"accepted_weight_formats":["native"],"sources":{"a":"https://x"}})", "defaults.maxSeqLen"},
      {R"({"defaults":{},"limits":{"cacheBlockSize":[128,1]},"accepted_weight_formats":["native"],"sources":{"a":"https://x"}})", "limits.cacheBlockSize"},
      {R"({"defaults":{},"limits":{},"accepted_weight_formats":["native"],"mtp":{"layers":1},"sources":{"a":"https://x"}})", "mtp: unknown key 'layers'"},
      {R"({"defaults":{},"limits":{},"accepted_weight_formats":["native"],"mtp":{"shared_with_model":"embed_tokens"},"sources":{"a":"https://x"}})", "mtp.shared_with_model"},
      {R"({"defaults":{},"limits":{},"accepted_weight_formats":["native"],"mtp":{"architectures":[""]},"sources":{"a":"https://x"}})", "mtp.architectures"},
  };
  for (const auto& [text, fragment] : bad) {
    auto r = estimate::parse_mindie_catalog(Json::parse(text), "m.json");
    ASSERT_FALSE(r.has_value()) << text;
    EXPECT_EQ(r.error().kind, ErrorKind::corrupt);
    EXPECT_NE(r.error().message.find(fragment), std::string::npos) << r.error().message;
  }
}

// Qwen3-8B (36 layers, 8 KV heads, head_dim 128), worldSize 1, npuMemSize 20 (fixed KV pool of 20 GiB):
//   block = 128 tokens x 36 layers x 8 heads x (128 + 128) x 2 B = 18,874,368 B
//   Total Block Num = floor(20 x 2^30 / 18,874,368) = floor(1137.78) = 1137
//   input = min(2048, 2560 - 1) = 2048 -> 16 blocks; output = min(512, 2560 - 2048) = 512 -> 4 blocks; 20 per request
//   maxBatchSize the blocks hold = floor(1137 / 20) = 56 (the default 200 is flagged)
TEST(Mindie, Issue18_FixedNpuMemSizeGivesDocumentedBlockCount) {
  auto s = setup("Qwen/Qwen3-8B");
  auto o = estimate::mindie_default_options(s.catalog);
  o.npu_mem_size = 20;
  auto e = estimate::estimate_mindie(s.model, s.device, o, s.catalog);
  ASSERT_TRUE(e.has_value()) << e.error().describe();
  EXPECT_EQ(e->kv_bytes_per_token, 147456);
  EXPECT_EQ(e->block_bytes, 18874368);
  EXPECT_EQ(e->total_blocks_low, 1137);
  EXPECT_EQ(e->total_blocks_high, 1137);
  EXPECT_EQ(e->blocks_per_request, 20);
  EXPECT_EQ(e->batch_low, 56);
  EXPECT_EQ(e->verdict, estimate::MindieVerdict::fits);
  ASSERT_EQ(e->warnings.size(), 1u);
  EXPECT_NE(e->warnings[0].find("maxBatchSize 56"), std::string::npos) << e->warnings[0];

  // KV cache int8 (1 B per element): block 9,437,184 B, floor(20 x 2^30 / 9,437,184) = floor(2275.56) = 2275 blocks, 113 requests.
  o.kv_cache_dtype_bytes = 1;
  e = estimate::estimate_mindie(s.model, s.device, o, s.catalog);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->block_bytes, 9437184);
  EXPECT_EQ(e->total_blocks_low, 2275);
  EXPECT_EQ(e->batch_low, 113);
}

// npuMemSize -1 on one 910B3 (npu-smi 64 GiB = 68,719,476,736 B; runtime total 65,452,113,920 B):
//   runtime total x 0.8 = 52,361,691,136 (issue 15, evid33: MindIE's warm_up multiplies the total acl.rt.get_mem_info
//   reports, not the npu-smi figure; the 3,267,362,816 B between them is outside that total and is not subtracted)
//   weights: 8,190,735,360 parameters x 2 B = 16,381,470,720 (embed 622,329,856 + untied head 622,329,856
//            + 36 x 192,946,432 per layer + final norm 4,096)
//   runtime low = 8192 x (2 x 4096 + 2 x 12288) x 2 + 50 x 151,936 x 4 = 536,870,912 + 30,387,200 = 567,258,112; high = 2x
//   KV pool = 52,361,691,136 - 16,381,470,720 - runtime = 34,845,704,192 .. 35,412,962,304
//   blocks = floor(/ 18,874,368) = 1846 .. 1876; full-length requests = 92 .. 93
TEST(Mindie, Issue18_AutoNpuMemSizeIsABandFromTheDocumentedFormula) {
  auto s = setup("Qwen/Qwen3-8B");
  auto o = estimate::mindie_default_options(s.catalog);
  auto e = estimate::estimate_mindie(s.model, s.device, o, s.catalog);
  ASSERT_TRUE(e.has_value()) << e.error().describe();
  EXPECT_DOUBLE_EQ(e->system_bytes, 3267362816.0);
  EXPECT_DOUBLE_EQ(e->fraction_bytes, 52361691136.0);
  EXPECT_DOUBLE_EQ(e->weight_bytes, 16381470720.0);
  EXPECT_DOUBLE_EQ(e->runtime_bytes_low, 567258112.0);
  EXPECT_DOUBLE_EQ(e->kv_pool_bytes_low, 34845704192.0);
  EXPECT_DOUBLE_EQ(e->kv_pool_bytes_high, 35412962304.0);
  EXPECT_EQ(e->total_blocks_low, 1846);
  EXPECT_EQ(e->total_blocks_high, 1876);
  EXPECT_EQ(e->batch_low, 92);
  EXPECT_EQ(e->batch_high, 93);
  EXPECT_EQ(e->verdict, estimate::MindieVerdict::fits);
}

// Issue 15 (evid33): MindIE's own log and code fix which total NPU_MEMORY_FRACTION multiplies. gpustack #2849
// (2025-09-29, DeepSeek-R1-Distill-Qwen-7B on one chip of an Atlas 300I Duo) prints
// 'After Decode warmup, peak mem: 17.02G, total_mem: 43.24G': the chip is sold as 48 GB (44.70 GiB), and the total
// MindIE works from is the 43.24 GiB the runtime reports. MindIE-LLM generator.py (2.x, 2025-12 mirror) sizes the pool
// as total_mem x NPU_MEMORY_FRACTION - peak mem (everything in use after the warm-up), so at the default 0.8 that log
// leaves 43.24 x 0.8 - 17.02 = 17.572 GiB; the old rule (npu-smi total x 0.8, less the 1.46 GiB between the two totals)
// gave 44.70 x 0.8 - 1.46 - 17.02 = 17.28 GiB for the same use. Here: a 48 GB card whose runtime total is the printed
// 43.24 GiB (46,428,596,470 B), Qwen3-8B's weights and runtime band as in the test above; the pool must be
// 43.24 x 0.8 GiB less those two and nothing else.
TEST(Mindie, Issue15_AutoPoolIsTheFractionOfTheRuntimeTotalAsMindieLogsIt) {
  auto s = setup("Qwen/Qwen3-8B");
  s.device.memory_bytes = 48000000000.0;                              // Atlas 300I Duo chip, npu-smi / datasheet
  s.device.runtime_total_bytes = 43.24 * 1024.0 * 1024.0 * 1024.0;    // 'total_mem: 43.24G'
  auto o = estimate::mindie_default_options(s.catalog);
  auto e = estimate::estimate_mindie(s.model, s.device, o, s.catalog);
  ASSERT_TRUE(e.has_value()) << e.error().describe();
  const double gib = 1024.0 * 1024.0 * 1024.0;
  EXPECT_NEAR(e->fraction_bytes / gib, 34.592, 1e-9);                 // 43.24 x 0.8
  // The pool is what is left of that after the weights and the runtime band, with nothing else taken away:
  // weights 16,381,470,720 B (15.256 GiB) + runtime 567,258,112 .. 1,134,516,224 B, as in the test above.
  EXPECT_NEAR(e->kv_pool_bytes_high, 43.24 * 0.8 * gib - 16381470720.0 - 567258112.0, 1.0);
  EXPECT_NEAR(e->kv_pool_bytes_low, 43.24 * 0.8 * gib - 16381470720.0 - 1134516224.0, 1.0);
  EXPECT_NEAR(e->system_bytes / gib, 48000000000.0 / gib - 43.24, 1e-9);  // reported, not subtracted
}

// worldSize 2 halves the KV heads per card (4) and the weights: block = 128 x 36 x 4 x 256 x 2 = 9,437,184 B;
// runtime low = 8192 x (2 x 4096 + 2 x 12288 / 2) x 2 + 30,387,200 = 335,544,320 + 30,387,200 = 365,931,520 (high 731,863,040).
// KV pool = 52,361,691,136 - 8,190,735,360 - {731,863,040 | 365,931,520} -> blocks 4602 .. 4641.
TEST(Mindie, Issue18_WorldSizeSplitsHeadsAndWeights) {
  auto s = setup("Qwen/Qwen3-8B");
  auto o = estimate::mindie_default_options(s.catalog);
  o.world_size = 2;
  auto e = estimate::estimate_mindie(s.model, s.device, o, s.catalog);
  ASSERT_TRUE(e.has_value()) << e.error().describe();
  EXPECT_EQ(e->block_bytes, 9437184);
  EXPECT_DOUBLE_EQ(e->runtime_bytes_low, 365931520.0);
  EXPECT_EQ(e->total_blocks_low, 4602);
  EXPECT_EQ(e->total_blocks_high, 4641);
}

// Qwen2.5-72B bf16 on one card: ~145 GB of weights against 64 GiB x 0.8 -> weight loading fails.
// Qwen3-8B with npuMemSize 40: 40 GiB > the ~32.4 GiB the card can give -> start-up fails (documented: fails or hangs).
TEST(Mindie, Issue18_DoesNotFitNamesTheMechanism) {
  auto big = setup("Qwen/Qwen2.5-72B");
  auto o = estimate::mindie_default_options(big.catalog);
  auto e = estimate::estimate_mindie(big.model, big.device, o, big.catalog);
  ASSERT_TRUE(e.has_value()) << e.error().describe();
  EXPECT_EQ(e->verdict, estimate::MindieVerdict::does_not_fit);
  EXPECT_NE(e->reason.find("weight loading"), std::string::npos) << e->reason;

  auto s = setup("Qwen/Qwen3-8B");
  o = estimate::mindie_default_options(s.catalog);
  o.npu_mem_size = 40;
  e = estimate::estimate_mindie(s.model, s.device, o, s.catalog);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->verdict, estimate::MindieVerdict::does_not_fit);
  EXPECT_NE(e->reason.find("npuMemSize 40"), std::string::npos) << e->reason;
}

// Issue 16 (ux28): NPU_MEMORY_FRACTION is at most 1, so weights above the card's whole runtime total cannot be helped by
// raising it. Qwen3-32B bf16 by hand (config.json: hidden 5120, 64 layers, 64 query / 8 KV heads of 128, intermediate
// 25600, vocab 151936, untied): per layer q 5120 x 8192 + k, v 5120 x 1024 each + o 8192 x 5120 + MLP 3 x 5120 x 25600
// = 487.6 M, x 64 = 31.21 B, embeddings and lm_head 2 x 151936 x 5120 = 1.556 B: 32.76 B x 2 B = 61.0 GiB on one card,
// above the 910B3's runtime total of 60.96 GiB (catalogue): only more cards help. Qwen3-8B (16,381,470,720 B) at
// NPU_MEMORY_FRACTION 0.25: 0.25 x 65,452,113,920 = 16,363,028,480 B is too little (issue 15, evid33: the fraction is of
// the runtime total), and the weights alone need 16,381,470,720 / 65,452,113,920 = 0.2503: the fix names 0.26.
TEST(Mindie, Issue16_WeightsAboveTheWholeCardNeedMoreCardsNotAFraction) {
  auto big = setup("Qwen/Qwen3-32B");
  auto o = estimate::mindie_default_options(big.catalog);
  auto e = estimate::estimate_mindie(big.model, big.device, o, big.catalog);
  ASSERT_TRUE(e.has_value()) << e.error().describe();
  EXPECT_EQ(e->verdict, estimate::MindieVerdict::does_not_fit);
  EXPECT_NE(e->reason.find("at any NPU_MEMORY_FRACTION; add cards (worldSize)"), std::string::npos) << e->reason;
  EXPECT_EQ(e->reason.find("raise NPU_MEMORY_FRACTION"), std::string::npos) << e->reason;

  auto s = setup("Qwen/Qwen3-8B");
  o = estimate::mindie_default_options(s.catalog);
  o.npu_memory_fraction = 0.25;
  e = estimate::estimate_mindie(s.model, s.device, o, s.catalog);
  ASSERT_TRUE(e.has_value()) << e.error().describe();
  EXPECT_EQ(e->verdict, estimate::MindieVerdict::does_not_fit);
  EXPECT_NE(e->reason.find("raise NPU_MEMORY_FRACTION to at least 0.26"), std::string::npos) << e->reason;
}

// Documented ranges and constraints become errors naming the config.json key.
TEST(Mindie, Issue18_RejectsValuesOutsideTheDocumentedRanges) {
  auto s = setup("Qwen/Qwen3-8B");
  struct Case {
    void (*edit)(estimate::MindieOptions&);
    std::string fragment;
  };
  const std::vector<Case> cases{
      {[](estimate::MindieOptions& o) { o.cache_block_size = 256; }, "cacheBlockSize = 256"},
      {[](estimate::MindieOptions& o) { o.max_prefill_tokens = 1024; }, "maxPrefillTokens = 1024"},
      {[](estimate::MindieOptions& o) { o.max_iter_times = 4096; }, "maxIterTimes = 4096"},
      {[](estimate::MindieOptions& o) { o.max_batch_size = 6000; }, "maxBatchSize = 6000"},
      {[](estimate::MindieOptions& o) { o.npu_mem_size = 0; }, "npuMemSize = 0"},
  };
  for (const auto& c : cases) {
    auto o = estimate::mindie_default_options(s.catalog);
    c.edit(o);
    auto e = estimate::estimate_mindie(s.model, s.device, o, s.catalog);
    ASSERT_FALSE(e.has_value()) << c.fragment;
    EXPECT_EQ(e.error().kind, ErrorKind::invalid_argument);
    EXPECT_NE(e.error().message.find(c.fragment), std::string::npos) << e.error().message;
  }
}

// Formats MindIE does not load, and multimodal models with npuMemSize -1 (documented as unsupported).
TEST(Mindie, Issue18_UnsupportedFormatsAndMultimodalAuto) {
  auto fp8 = setup("Qwen/Qwen3-32B-FP8");
  auto o = estimate::mindie_default_options(fp8.catalog);
  o.world_size = 2;
  auto e = estimate::estimate_mindie(fp8.model, fp8.device, o, fp8.catalog);
  ASSERT_FALSE(e.has_value());
  EXPECT_EQ(e.error().kind, ErrorKind::unsupported);
  EXPECT_NE(e.error().message.find("msModelSlim"), std::string::npos) << e.error().message;

  // Issue 15 (evid33): npuMemSize -1 on a multimodal model is not an error in MindIE's code: it warns and sizes a
  // fixed pool. At the defaults (maxPrefillTokens 8192, maxBatchSize 200, maxIterTimes 512), Qwen2.5-VL-7B
  // (config.json: 28 layers, 4 KV / 28 heads, hidden 3584: KV width 4 x 3584 / 28 = 512):
  // ceil(4 x 28 x 512 x (8192 + 200 x 512) / 2^30) = ceil(6,341,787,648 / 2^30 = 5.906) = 6 GiB.
  auto vl = setup("Qwen/Qwen2.5-VL-7B-Instruct");
  o = estimate::mindie_default_options(vl.catalog);
  e = estimate::estimate_mindie(vl.model, vl.device, o, vl.catalog);
  ASSERT_TRUE(e.has_value()) << e.error().describe();
  EXPECT_DOUBLE_EQ(e->kv_pool_bytes_low, 6.0 * 1024 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(e->kv_pool_bytes_high, 6.0 * 1024 * 1024 * 1024);
  ASSERT_FALSE(e->warnings.empty());
  EXPECT_NE(e->warnings.front().find("may be out of memory during inference"), std::string::npos) << e->warnings.front();
  o.npu_mem_size = 10;
  EXPECT_TRUE(estimate::estimate_mindie(vl.model, vl.device, o, vl.catalog).has_value());
}

// Issue 15 (evid33), gpustack #3541 (2025-11-25): Qwen2.5-VL-7B-Instruct with MindIE 2.2.RC1 on 910B2 failed on 1 and
// 2 cards with 'Warmup failed, because of multimodal model inference out of memory when `maxInputTokenLen` set to
// 8192' and started on 4. gpustack at the issue's commit 0d95f78 wrote maxSeqLen = maxInputTokenLen = maxIterTimes =
// maxPrefillTokens = 8192, maxBatchSize 200, npuMemSize -1, NPU_MEMORY_FRACTION 0.8. MindIE's pool for that:
// 4 x 28 x 512 x (8192 + 200 x 8192) = 94,422,171,648 B = 87.94 GiB / worldSize -> 88, 44 (43.97), 22 (21.98) GiB.
// On one card 88 GiB is more than the card; on two, 44 GiB of KV + half the weights leave well under the 26 GiB
// (maxInputTokenLen 8192 > 4096) MindIE asks of a 60 GiB-or-more card; on four, more than 26 GiB stay free.
TEST(Mindie, Issue15_MultimodalAutoPoolAndWarmupCheckMatchGpustack3541) {
  auto vl = setup("Qwen/Qwen2.5-VL-7B-Instruct", "910B2");
  auto o = estimate::mindie_default_options(vl.catalog);
  o.max_seq_len = o.max_input_token_len = o.max_iter_times = o.max_prefill_tokens = 8192;
  const double gib = 1024.0 * 1024.0 * 1024.0;
  const struct {
    int64_t world_size;
    double pool_gib;
    estimate::MindieVerdict verdict;
  } rows[] = {{1, 88, estimate::MindieVerdict::does_not_fit}, {2, 44, estimate::MindieVerdict::does_not_fit}, {4, 22, estimate::MindieVerdict::fits}};
  for (const auto& r : rows) {
    o.world_size = r.world_size;
    auto e = estimate::estimate_mindie(vl.model, vl.device, o, vl.catalog);
    ASSERT_TRUE(e.has_value()) << e.error().describe();
    EXPECT_DOUBLE_EQ(e->kv_pool_bytes_high, r.pool_gib * gib) << r.world_size;
    EXPECT_EQ(e->verdict, r.verdict) << r.world_size << ": " << e->reason;
  }
  o.world_size = 2;
  auto two = estimate::estimate_mindie(vl.model, vl.device, o, vl.catalog);
  ASSERT_TRUE(two.has_value());
  EXPECT_NE(two->reason.find("Warmup failed, because of multimodal model inference out of memory when `maxInputTokenLen` set to 8192"), std::string::npos)
      << two->reason;
}

// msModelSlim W8A8 (the format MindIE's W8A8 feature loads) is accepted and shrinks the weights per card: the
// linear layers (6,945,767,424 of Qwen3-8B's 8,190,735,360 parameters: 36 x (41,943,040 + 150,994,944)) drop from
// 2 bytes to about 1, so the weights go from 16.38 GB to under 10 GB (embeddings and norms stay bf16).
TEST(Mindie, Issue18_ModelSlimW8A8IsAccepted) {
  auto s = setup("Qwen/Qwen3-8B");
  auto desc = parse_json(R"({"model_quant_type":"W8A8","model.layers.0.self_attn.q_proj.weight":"W8A8","model.embed_tokens.weight":"FLOAT"})",
                         "quant_model_description.json");
  ASSERT_TRUE(desc.has_value());
  auto scheme = model::parse_modelslim_description(*desc, "quant_model_description.json");
  ASSERT_TRUE(scheme.has_value()) << scheme.error().describe();
  s.model.quant = *scheme;
  auto o = estimate::mindie_default_options(s.catalog);
  auto e = estimate::estimate_mindie(s.model, s.device, o, s.catalog);
  ASSERT_TRUE(e.has_value()) << e.error().describe();
  EXPECT_LT(e->weight_bytes, 10.0e9);
  EXPECT_GT(e->weight_bytes, 8.0e9);
  EXPECT_GT(e->total_blocks_low, 1876);  // more room for KV than the bf16 checkpoint (1846 .. 1876)
}

// Issue 16 (mindie34): with MTP on (ModelConfig.plugin_params {"plugin_type":"mtp","num_speculative_tokens":N}) MindIE's
// block holds one more layer, whatever N is: MindIE-LLM mindie_llm/text_generator/utils/kvcache_settings.py calc_block_mem,
// num_layers = model_info.num_layers + (num_speculative_tokens >= 1), each layer num_kv_heads x head_size for K and V.
// Qwen3-8B (config: 36 layers, 8 KV heads, head_dim 128, bf16) on one card: 8 x (128 + 128) x 2 B = 4,096 B per layer;
// without MTP 36 x 4,096 = 147,456 B per token, block 128 x 147,456 = 18,874,368 B; with MTP 37 x 4,096 = 151,552 B,
// block 19,398,656 B. Its config names no MTP layer (no num_nextn_predict_layers): no weights are added, and it says so.
TEST(Mindie, Issue16_MtpAddsOneKvLayerToTheBlock) {
  auto s = setup("Qwen/Qwen3-8B");
  auto o = estimate::mindie_default_options(s.catalog);
  auto off = estimate::estimate_mindie(s.model, s.device, o, s.catalog);
  ASSERT_TRUE(off.has_value()) << off.error().describe();
  EXPECT_EQ(off->block_bytes, 18874368);
  for (int64_t n : {1, 2}) {
    o.num_speculative_tokens = n;
    auto on = estimate::estimate_mindie(s.model, s.device, o, s.catalog);
    ASSERT_TRUE(on.has_value()) << on.error().describe();
    EXPECT_EQ(on->kv_bytes_per_token, 151552) << n;  // one layer more for N = 1 and for N = 2
    EXPECT_EQ(on->block_bytes, 19398656) << n;
    EXPECT_DOUBLE_EQ(on->weight_bytes, off->weight_bytes) << n;
    bool said = false;
    for (const auto& w : on->warnings) said = said || w.find("names no MTP layer") != std::string::npos;
    EXPECT_TRUE(said) << n;
  }
  o.num_speculative_tokens = 3;  // MindIE's MTP page: 1 or 2
  auto bad = estimate::estimate_mindie(s.model, s.device, o, s.catalog);
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().kind, ErrorKind::invalid_argument);
  EXPECT_NE(bad.error().describe().find("plugin_params num_speculative_tokens = 3"), std::string::npos) << bad.error().describe();
}

// GLM-4.5-Air (config: 46 layers, 8 KV heads, head_dim 128, num_nextn_predict_layers 1, bf16) at worldSize 8: one KV head per
// card, 256 x 2 B = 512 B per layer; MTP on: 47 x 512 = 24,064 B per token (46 x 512 = 23,552 off), block 128 x 24,064 =
// 3,080,192 B. The MTP module's weights load with it, per its config (hidden 4,096, 96 heads x 128, 8 KV heads, 128
// experts of moe_intermediate 1,408, one shared expert, vocab 151,552), bf16:
//   routed experts 128 x 3 x 4,096 x 1,408 x 2 B = 4,429,185,024; q_proj and o_proj 2 x 4,096 x 12,288 x 2 = 201,326,592;
//   k_proj and v_proj 2 x 4,096 x 1,024 x 2 = 16,777,216; shared expert 3 x 4,096 x 1,408 x 2 = 34,603,008; eh_proj
//   8,192 x 4,096 x 2 = 67,108,864; sum 4,749,000,704 B, per card / 8 = 593,625,088 B (router, norms and biases, about
//   1 MB, not itemised: 0.2 MB per card).
// The checkpoint's own embed_tokens and shared_head.head (2 x 151,552 x 4,096 x 2 = 2,483,027,968 B, 310,378,496 B per
// card) are not loaded: MindIE's ATB MTP takes the main model's (issue 16, mindie35; before, 904,003,584 B per card).
// GLM-4.5 is not on MindIE's MTP page (DeepSeek-R1 / V3 only): the estimate says so.
TEST(Mindie, Issue16_MtpLoadsTheMtpModuleWeights) {
  auto s = setup("zai-org/GLM-4.5-Air");
  ASSERT_EQ(s.model.mtp_layers, 1);
  auto o = estimate::mindie_default_options(s.catalog);
  o.world_size = 8;
  auto off = estimate::estimate_mindie(s.model, s.device, o, s.catalog);
  ASSERT_TRUE(off.has_value()) << off.error().describe();
  o.num_speculative_tokens = 1;
  auto on = estimate::estimate_mindie(s.model, s.device, o, s.catalog);
  ASSERT_TRUE(on.has_value()) << on.error().describe();
  EXPECT_EQ(off->kv_bytes_per_token, 23552);
  EXPECT_EQ(on->kv_bytes_per_token, 24064);
  EXPECT_EQ(on->block_bytes, 3080192);
  EXPECT_NEAR(on->weight_bytes - off->weight_bytes, 593625088.0, 200000.0);
  bool unlisted = false;
  for (const auto& w : on->warnings) {
    EXPECT_EQ(w.find("names no MTP layer"), std::string::npos) << w;
    unlisted = unlisted || w.find("MindIE's MTP page lists MTP for DeepseekV3ForCausalLM only") != std::string::npos;
  }
  EXPECT_TRUE(unlisted);
}

// Issue 16 (mindie35): DeepSeek-V3's MTP module on MindIE, the one architecture MindIE's MTP page lists. Config: hidden
// 7,168, q_lora_rank 1,536, kv_lora_rank 512, qk_nope 128 + qk_rope 64, v_head 128, 128 heads, 256 routed experts and one
// shared expert of moe_intermediate 2,048, vocab 129,280, num_nextn_predict_layers 1, bf16 (the checkpoint converted to bf16,
// as before msModelSlim; the fp8 checkpoint itself MindIE refuses). MindIE's ATB model (modeling_deepseekv2.py,
// flash_causal_deepseekv2.py get_weights_mtp) loads enorm, hnorm, eh_proj, shared_head.norm and one decoder layer, and takes
// embed_tokens and lm_head from the main model. Linear weights of that layer, bf16:
//   q_a_proj 7,168 x 1,536 = 11,010,048; q_b_proj 1,536 x 128 x 192 = 37,748,736; kv_a_proj_with_mqa 7,168 x 576 = 4,128,768;
//   kv_b_proj 512 x 128 x 256 = 16,777,216; o_proj 16,384 x 7,168 = 117,440,512; routed experts 256 x 3 x 7,168 x 2,048 =
//   11,274,289,152; shared expert 3 x 7,168 x 2,048 = 44,040,192; eh_proj 14,336 x 7,168 = 102,760,448;
//   sum 11,608,195,072 parameters x 2 B = 23,216,390,144 B, per card at worldSize 16: 1,451,024,384 B (router 256 x 7,168 and
//   the norms, about 3.7 MB, 0.23 MB per card, not itemised). With the checkpoint's own embed_tokens and shared_head.head
//   (2 x 129,280 x 7,168 x 2 B = 3,706,716,160 B, 231,669,760 B per card) it would be 1,682,694,144 B per card.
// KV: MLA keeps kv_lora_rank + rope = 576 x 2 B = 1,152 B per layer per card; MTP on: 62 x 1,152 = 71,424 B per token.
TEST(Mindie, Issue16_DeepSeekMtpSharesTheEmbeddingAndHead) {
  auto s = setup("deepseek-ai/DeepSeek-V3");
  ASSERT_EQ(s.model.mtp_layers, 1);
  s.model.quant = model::QuantScheme{};  // the bf16 conversion of the fp8 checkpoint
  auto o = estimate::mindie_default_options(s.catalog);
  o.world_size = 16;
  auto off = estimate::estimate_mindie(s.model, s.device, o, s.catalog);
  ASSERT_TRUE(off.has_value()) << off.error().describe();
  o.num_speculative_tokens = 1;
  auto on = estimate::estimate_mindie(s.model, s.device, o, s.catalog);
  ASSERT_TRUE(on.has_value()) << on.error().describe();
  EXPECT_EQ(off->kv_bytes_per_token, 61 * 1152);
  EXPECT_EQ(on->kv_bytes_per_token, 71424);
  EXPECT_NEAR(on->weight_bytes - off->weight_bytes, 1451024384.0, 300000.0);
  for (const auto& w : on->warnings) EXPECT_EQ(w.find("MTP page lists"), std::string::npos) << w;
  bool said = false;
  for (const auto& f : on->formulas) said = said || f.find("embed_tokens and shared_head.head") != std::string::npos;
  EXPECT_TRUE(said);
}

// Issue 16 (mindie34): the catalogue's Atlas 300I Duo chip carries the total its runtime prints, 46,431,260,672 B
// (vLLM-Ascend 'total memory: 46431260672', vllm-ascend #3479 / #4074; MindIE's 'total_mem: 43.24G', gpustack #2849),
// so MindIE's fraction is 0.8 x 46,431,260,672 = 37,145,008,537.6 B (34.59 GiB; from 48 GB it was 38,400,000,000 B,
// 35.76 GiB) and the 48,000,000,000 - 46,431,260,672 = 1,568,739,328 B between the two totals is reported, not subtracted.
// Qwen3-8B's weights (16,381,470,720 B) and runtime band (567,258,112 .. 1,134,516,224 B) as in the tests above.
TEST(Mindie, Issue16_300IDuoPoolIsTheFractionOfItsRuntimeTotal) {
  auto s = setup("Qwen/Qwen3-8B", "300I-Duo");
  auto e = estimate::estimate_mindie(s.model, s.device, estimate::mindie_default_options(s.catalog), s.catalog);
  ASSERT_TRUE(e.has_value()) << e.error().describe();
  EXPECT_DOUBLE_EQ(e->runtime_total_bytes, 46431260672.0);
  EXPECT_NEAR(e->fraction_bytes, 37145008537.6, 1.0);
  EXPECT_NEAR(e->system_bytes, 1568739328.0, 1.0);
  EXPECT_NEAR(e->kv_pool_bytes_high, 37145008537.6 - 16381470720.0 - 567258112.0, 1.0);
  EXPECT_NEAR(e->kv_pool_bytes_low, 37145008537.6 - 16381470720.0 - 1134516224.0, 1.0);
}
