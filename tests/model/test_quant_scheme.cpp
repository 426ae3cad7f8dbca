#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "base/json_util.hpp"
#include "base/units.hpp"
#include "model/hf_config.hpp"
#include "model/quant_scheme.hpp"
#include "../test_support.hpp"

using namespace preflight;
using namespace preflight::model;

TEST(QuantScheme, Fp8BlockBytesIncludeScales) {
  QuantScheme s;
  s.method = "fp8";
  // 4096 x 4096 fp8 = 16 MiB + 32 x 32 fp32 block scales = 4 KiB.
  EXPECT_DOUBLE_EQ(linear_weight_bytes(WeightFormat::fp8_block, 4096, 4096, s, 2), 4096.0 * 4096.0 + 32 * 32 * 4);
  // AWQ int4, group 128, zeros: 0.5 B/param + fp16 scale and packed zero per group per output.
  s.group_size = 128;
  s.group_zero_point = true;
  EXPECT_DOUBLE_EQ(linear_weight_bytes(WeightFormat::int4_group, 4096, 4096, s, 2), 4096.0 * 4096 / 2 + 32 * 4096 * 2 + 32 * 4096 / 2.0);
  EXPECT_DOUBLE_EQ(linear_weight_bytes(WeightFormat::mxfp4, 2880, 2880, s, 2), 2880.0 * 2880 / 2 + 90 * 2880);
}

TEST(QuantScheme, Qwen3_32B_Fp8CheckpointIsAboutHalfTheBf16Size) {
  auto bf16 = load_hf_config(pftest::shared_path("models/Qwen__Qwen3-32B/config.json"));
  auto fp8 = load_hf_config(pftest::shared_path("models/Qwen__Qwen3-32B-FP8/config.json"));
  ASSERT_TRUE(bf16 && fp8);
  EXPECT_EQ(fp8->quant.linear_format, WeightFormat::fp8_block);
  const double r = compute_weight_bytes(*fp8).total / compute_weight_bytes(*bf16).total;
  EXPECT_GT(r, 0.5);
  EXPECT_LT(r, 0.56);  // embeddings and lm_head stay bf16
}

TEST(QuantScheme, ModelOptMixedPrecisionAndCompressedTensorsIgnore) {
  auto nvfp4 = load_hf_config(pftest::shared_path("models/nvidia__Qwen3.6-27B-NVFP4/config.json"));
  ASSERT_TRUE(nvfp4.has_value()) << nvfp4.error().describe();
  EXPECT_EQ(module_format(nvfp4->quant, "model.layers.*.mlp.down_proj", false), WeightFormat::nvfp4);
  EXPECT_EQ(module_format(nvfp4->quant, "model.layers.*.linear_attn.out_proj", false), WeightFormat::fp8_tensor);
  auto w8a8 = load_hf_config(pftest::shared_path("models/DocPang__Qwen3.6-35B-A3B-W8A8-DCU/config.json"));
  ASSERT_TRUE(w8a8.has_value()) << w8a8.error().describe();
  EXPECT_EQ(module_format(w8a8->quant, "model.layers.*.mlp.gate", false), WeightFormat::native);
  EXPECT_EQ(module_format(w8a8->quant, "model.layers.*.mlp.experts.*.down_proj", true), WeightFormat::int8_channel);
}

TEST(QuantScheme, ModelSlimDescription) {
  auto json = parse_json(R"({"model_quant_type":"W8A8_DYNAMIC","kv_cache_type":"C8",
    "model.layers.0.self_attn.q_proj.weight":"W8A8_DYNAMIC","model.layers.0.mlp.gate.weight":"FLOAT",
    "model.layers.0.mlp.experts.0.down_proj.weight":"W4A8_DYNAMIC","model.embed_tokens.weight":"FLOAT"})", "quant_model_description.json");
  ASSERT_TRUE(json.has_value());
  auto s = parse_modelslim_description(*json, "quant_model_description.json");
  ASSERT_TRUE(s.has_value()) << s.error().describe();
  EXPECT_EQ(s->method, "ascend");
  EXPECT_EQ(s->kv_cache_quant, "int8");
  EXPECT_EQ(module_format(*s, "model.layers.*.self_attn.q_proj", false), WeightFormat::modelslim_w8a8_dynamic);
  EXPECT_EQ(module_format(*s, "model.layers.*.mlp.experts.*.down_proj", true), WeightFormat::modelslim_w4a8_dynamic);
  EXPECT_EQ(module_format(*s, "model.layers.*.mlp.gate", false), WeightFormat::native);
  auto bad = parse_json(R"({"model.layers.0.q_proj.weight":"W3A9"})", "q.json");
  EXPECT_FALSE(parse_modelslim_description(*bad, "q.json").has_value());
}

// Issue 19 (start-up time): ignore patterns and modules already in normal form are matched without the
// per-thread normalization tables; names that are not (layer numbers, "language_model.", empty parts)
// still normalize first. The answers are the HF substring-with-'*' semantics either way.
TEST(QuantScheme, Issue19_IgnoreMatchingSameForNormalAndRawNames) {
  QuantScheme s;
  s.method = "fp8";
  s.linear_format = s.expert_format = WeightFormat::fp8_block;
  struct Row { const char* pattern; const char* module; bool ignored; };
  const Row rows[] = {
      {"lm_head", "lm_head", true},
      {"mlp.gate", "model.layers.*.mlp.gate", true},
      {"mlp.gate", "model.layers.*.mlp.gate_up_proj", true},  // substring, as HF matches
      {"mlp.gate", "model.layers.*.mlp.down_proj", false},
      {"visual", "model.visual.blocks.*.attn.qkv", true},
      {"layers.*.self_attn", "model.layers.*.self_attn.q_proj", true},
      {"layers.*.self_attn", "model.layers.*.mlp.down_proj", false},
      {"model.layers.3.self_attn", "model.layers.*.self_attn.o_proj", true},          // layer number normalized
      {"model.language_model.layers.0.mlp", "model.layers.*.mlp.up_proj", true},     // VL prefix normalized
      {"model.language_model.embed_tokens", "model.embed_tokens", true},
      {"language_model.lm_head", "lm_head", true},
      {"model.layers.7.mlp", "model.language_model.layers.7.mlp.down_proj", true},   // the module normalized too
      {"model.layers.7.mlp", "model.layers.7.self_attn.q_proj", false},
      {"embed", "model.embed_tokens", true},
      {"tokens.x", "model.embed_tokens", false},
      {"", "model.embed_tokens", true},                                               // the empty entry is a substring of all
      {"*", "lm_head", true},
      {"model.*.down_proj", "model.layers.*.mlp.down_proj", true},
      {"model.*.down_proj", "model.layers.*.mlp.up_proj", false},
      {".mlp", "model.layers.*.mlp.gate", true},
      {"mlp.", "model.layers.*.mlp.gate", true},
      {"lm_head.", "lm_head", false},
  };
  s.lm_head_quantized = true;  // misc21: "lm_head" follows the patterns only in a scheme that quantizes the head
  for (const auto& r : rows) {
    s.ignore = {r.pattern};
    EXPECT_EQ(module_ignored(s, r.module), r.ignored) << r.pattern << " vs " << r.module;
    EXPECT_EQ(module_format(s, r.module, false), r.ignored ? WeightFormat::native : WeightFormat::fp8_block) << r.pattern << " vs " << r.module;
  }
}

// Issue 19 (start-up time): module_format remembers its answers per pattern list; a scheme whose lists
// change in place (or another scheme with other lists) gets its own answers, never a stale one.
TEST(QuantScheme, Issue19_ModuleFormatFollowsSchemeChangedInPlace) {
  QuantScheme s;
  s.method = "modelopt";
  s.linear_format = WeightFormat::native;
  s.expert_format = WeightFormat::native;
  const std::string down = "model.layers.*.mlp.down_proj", q = "model.layers.*.self_attn.q_proj";
  EXPECT_EQ(module_format(s, down, false), WeightFormat::native);
  s.module_formats = {{"model.layers.*.mlp.down_proj", WeightFormat::nvfp4}};
  EXPECT_EQ(module_format(s, down, false), WeightFormat::nvfp4);
  EXPECT_EQ(module_format(s, q, false), WeightFormat::native);
  s.module_formats = {{"self_attn", WeightFormat::fp8_tensor}, {"mlp", WeightFormat::int4_group}};
  EXPECT_EQ(module_format(s, down, false), WeightFormat::int4_group);
  EXPECT_EQ(module_format(s, q, false), WeightFormat::fp8_tensor);
  s.ignore = {"self_attn"};
  EXPECT_EQ(module_format(s, q, false), WeightFormat::native);
  EXPECT_EQ(module_format(s, down, false), WeightFormat::int4_group);
  s.module_formats[1].second = WeightFormat::nvfp4;  // same patterns, another format
  EXPECT_EQ(module_format(s, down, false), WeightFormat::nvfp4);
  // More pattern lists than the per-thread table holds: each still answers for itself.
  for (int round = 0; round < 2; ++round)
    for (int i = 0; i < 12; ++i) {
      QuantScheme t;
      t.method = "fp8";
      t.linear_format = t.expert_format = WeightFormat::fp8_block;
      t.ignore = {"layers." + std::to_string(i) + ".mlp"};
      EXPECT_EQ(module_format(t, "model.layers." + std::to_string(i) + ".mlp.down_proj", false), WeightFormat::native) << i;
      EXPECT_EQ(module_format(t, "model.layers." + std::to_string(i) + ".self_attn.q_proj", false), WeightFormat::fp8_block) << i;
    }
}

// Issue 19 (start-up time): SchemeFormats (the pattern lists looked up once for all of a model's groups)
// answers as module_format does, also for an unquantized scheme and after other schemes evicted its lists.
TEST(QuantScheme, Issue19_SchemeFormatsEqualsModuleFormat) {
  QuantScheme s;
  s.method = "modelopt";
  s.ignore = {"lm_head", "mlp.gate"};
  s.module_formats = {{"self_attn", WeightFormat::fp8_tensor}, {"layers.*.mlp.experts", WeightFormat::nvfp4}};
  s.linear_format = WeightFormat::int8_channel;
  s.expert_format = WeightFormat::mxfp4;
  const SchemeFormats formats(s);
  for (int i = 0; i < 12; ++i) {  // evict s's lists from the per-thread table
    QuantScheme t;
    t.method = "fp8";
    t.ignore = {"x" + std::to_string(i)};
    (void)module_format(t, "lm_head", false);
  }
  struct Row { const char* module; bool expert; WeightFormat want; };
  for (const Row r : {Row{"lm_head", false, WeightFormat::native}, Row{"model.layers.*.mlp.gate", false, WeightFormat::native},
                      Row{"model.layers.*.self_attn.q_proj", false, WeightFormat::fp8_tensor},
                      Row{"model.layers.*.mlp.experts.down_proj", true, WeightFormat::nvfp4},
                      Row{"model.layers.*.mlp.shared_expert.down_proj", false, WeightFormat::int8_channel},
                      Row{"model.layers.*.mlp.shared_expert.up_proj", true, WeightFormat::mxfp4}}) {
    EXPECT_EQ(formats(r.module, r.expert), r.want) << r.module;
    EXPECT_EQ(module_format(s, r.module, r.expert), r.want) << r.module;
  }
  QuantScheme none;
  none.ignore = {"lm_head"};
  EXPECT_EQ(SchemeFormats(none)("model.layers.*.self_attn.q_proj", false), WeightFormat::native);
}

namespace {
const WeightGroup* group_named(const ModelSpec& m, const std::string& module) {
  for (const auto& g : m.weights)
    if (g.module == module) return &g;
  return nullptr;
}
}  // namespace

// Issue 16 (misc21): nvidia/Qwen3.6-27B-NVFP4 (ModelOpt 0.45.0, MIXED_PRECISION) lists its untied lm_head as
// W4A16_NVFP4, group 16, in hf_quant_config.json quantized_layers and in config.json's config_groups targets, and
// vLLM's ModelOptMixedPrecisionConfig gives ParallelLMHead that linear method (vllm modelopt.py, PR #42124). The head is
// 248,320 x 5,120: in bf16 2 B a parameter = 2,542,796,800 B; stored NVFP4 0.5 B a parameter + one fp8 scale per 16
// inputs + two fp32 global scales = 635,699,200 + 248,320 x 320 + 8 = 715,161,608 B.
TEST(QuantScheme, Misc21_ModelOptLmHeadSizedAsStored) {
  auto m = load_hf_config(pftest::shared_path("models/nvidia__Qwen3.6-27B-NVFP4/config.json"));
  ASSERT_TRUE(m.has_value()) << m.error().describe();
  EXPECT_TRUE(m->quant.lm_head_quantized);
  EXPECT_EQ(module_format(m->quant, "lm_head", false), WeightFormat::nvfp4);
  const WeightGroup* head = group_named(*m, "lm_head");
  ASSERT_NE(head, nullptr);
  EXPECT_EQ(head->rows, 248320);
  EXPECT_EQ(head->cols, 5120);
  EXPECT_DOUBLE_EQ(weight_group_bytes(*m, *head), 715161608.0);
  // The embedding is not a linear layer: bf16 whatever the scheme.
  const WeightGroup* embed = group_named(*m, "model.embed_tokens");
  ASSERT_NE(embed, nullptr);
  EXPECT_DOUBLE_EQ(weight_group_bytes(*m, *embed), 2542796800.0);

  // The legacy hf_quant_config.json of the same checkpoint says the same.
  auto legacy_json = load_json_file(pftest::shared_path("models/nvidia__Qwen3.6-27B-NVFP4/hf_quant_config.json"));
  ASSERT_TRUE(legacy_json.has_value());
  auto legacy = parse_hf_quant_config(*legacy_json, "hf_quant_config.json");
  ASSERT_TRUE(legacy.has_value()) << legacy.error().describe();
  EXPECT_TRUE(legacy->lm_head_quantized);
  EXPECT_EQ(module_format(*legacy, "lm_head", false), WeightFormat::nvfp4);

  // A ModelOpt export that excludes it (exclude_modules ["lm_head"], nvidia/Qwen3-32B-NVFP4) keeps it in bf16.
  auto excluded_json = load_json_file(pftest::shared_path("models/nvidia__Qwen3-32B-NVFP4/hf_quant_config.json"));
  ASSERT_TRUE(excluded_json.has_value());
  auto excluded = parse_hf_quant_config(*excluded_json, "hf_quant_config.json");
  ASSERT_TRUE(excluded.has_value());
  EXPECT_FALSE(excluded->lm_head_quantized);
  EXPECT_EQ(module_format(*excluded, "lm_head", false), WeightFormat::native);
  EXPECT_EQ(module_format(*excluded, "model.layers.*.mlp.down_proj", false), WeightFormat::nvfp4);
  // A single-algorithm export that does not exclude it: vLLM's ModelOptQuantConfigBase quantizes ParallelLMHead.
  auto single = parse_hf_quant_config(Json::parse(R"({"quantization": {"quant_algo": "FP8", "exclude_modules": []}})"), "inline");
  ASSERT_TRUE(single.has_value());
  EXPECT_TRUE(single->lm_head_quantized);
  EXPECT_EQ(module_format(*single, "lm_head", false), WeightFormat::fp8_tensor);

  // Other methods leave ParallelLMHead unquantized whatever their patterns match: block FP8 (Qwen3-32B-FP8, no ignore
  // list naming lm_head) keeps a bf16 head, 151,936 x 5,120 x 2 B.
  auto fp8 = load_hf_config(pftest::shared_path("models/Qwen__Qwen3-32B-FP8/config.json"));
  ASSERT_TRUE(fp8.has_value());
  EXPECT_FALSE(fp8->quant.lm_head_quantized);
  EXPECT_EQ(module_format(fp8->quant, "lm_head", false), WeightFormat::native);
  const WeightGroup* fp8_head = group_named(*fp8, "lm_head");
  ASSERT_NE(fp8_head, nullptr);
  EXPECT_DOUBLE_EQ(weight_group_bytes(*fp8, *fp8_head), 151936.0 * 5120.0 * 2.0);
}

// Issue 16: a GPTQ export with "lm_head": true (GPTQModel's / AutoRound's quant_lm_head) stores the untied head
// packed like the other linears, and vLLM's GPTQConfig / GPTQMarlinConfig / AWQMarlinConfig read that key into
// lm_head_quantized. The real descriptor of obh07/Meta-llama-3-8B-Instruct-GPTQ-4Bit (4 bits, group 128, sym, no
// lm_head key) with the key added. Llama-3-8B's head is 128,256 x 4,096, GPTQ 4-bit layout per out x in:
//   qweight int32 [in/8, out] = 128,256 x 4,096 / 2 = 262,668,288 B; scales fp16 [in/128, out] = 32 x 128,256 x 2 =
//   8,208,384 B; qzeros int32 [in/128, out/8] = 32 x 16,032 x 4 = 2,052,096 B; g_idx int32 [in] = 16,384 B;
//   in all 272,945,152 B, against 128,256 x 4,096 x 2 = 1,050,673,152 B in bf16.
TEST(QuantScheme, Issue16_GptqLmHeadTrueSizedPacked) {
  auto text = pftest::read_all(pftest::quant_fixture("obh07__Meta-llama-3-8B-Instruct-GPTQ-4Bit/config.json"));
  auto root = parse_json(text, "config.json");
  ASSERT_TRUE(root.has_value());
  for (const bool head : {false, true}) {
    SCOPED_TRACE(head);
    Json cfg = *root;
    if (head) cfg["quantization_config"]["lm_head"] = true;
    const std::string dir = pftest::scratch_dir(std::string("gptq-lm-head-") + (head ? "1" : "0"));
    { std::ofstream(dir + "/config.json") << cfg.dump(); }
    auto m = load_hf_config(dir + "/config.json");
    ASSERT_TRUE(m.has_value()) << m.error().describe();
    EXPECT_EQ(m->quant.lm_head_quantized, head);
    const WeightGroup* lm = group_named(*m, "lm_head");
    ASSERT_NE(lm, nullptr);
    EXPECT_DOUBLE_EQ(weight_group_bytes(*m, *lm), head ? 272945152.0 : 1050673152.0);
    const WeightGroup* embed = group_named(*m, "model.embed_tokens");
    ASSERT_NE(embed, nullptr);
    EXPECT_DOUBLE_EQ(weight_group_bytes(*m, *embed), 1050673152.0);  // an embedding, never packed
    // modules_to_not_convert naming the head wins over the key: the export left it unpacked (AWQMarlinConfig checks
    // is_layer_skipped before the head's method; a head listed there is stored in the model dtype).
    cfg["quantization_config"]["modules_to_not_convert"] = Json::array({"lm_head"});
    { std::ofstream(dir + "/config.json") << cfg.dump(); }
    auto skipped = load_hf_config(dir + "/config.json");
    ASSERT_TRUE(skipped.has_value());
    EXPECT_DOUBLE_EQ(weight_group_bytes(*skipped, *group_named(*skipped, "lm_head")), 1050673152.0);
    std::filesystem::remove_all(dir);
  }
  // A value that is not a boolean is bad input naming the key.
  Json bad = *root;
  bad["quantization_config"]["lm_head"] = "yes";
  auto s = parse_quantization_config(bad["quantization_config"], "config.json");
  ASSERT_FALSE(s.has_value());
  EXPECT_NE(s.error().describe().find("lm_head"), std::string::npos) << s.error().describe();
}
