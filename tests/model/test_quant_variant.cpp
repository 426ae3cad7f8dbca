#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "base/json_util.hpp"
#include "model/hf_config.hpp"
#include "model/model_source.hpp"
#include "model/quant_variant.hpp"
#include "../test_support.hpp"
#include "../variant_support.hpp"

using namespace preflight;
using namespace preflight::model;

TEST(QuantVariant, Issue16_ShippedListHasEveryFormatTheIssueNames) {
  const auto& c = pftest::shipped_variants();
  for (const char* id : {"bf16", "w8a8", "w8a8_dynamic", "w4a8_dynamic", "w4a16", "fp8_tensor", "fp8_channel", "fp8_block", "ct_w8a8_int8", "ct_w4a16",
                         "ct_w8a16", "ct_nvfp4", "awq", "gptq", "autoround", "modelopt_fp8", "modelopt_nvfp4", "mxfp4", "bnb_4bit", "bnb_8bit",
                         "gguf_q4_k_m", "gguf_q8_0"}) {
    auto v = find_variant(c, id);
    ASSERT_TRUE(v.has_value()) << id;
    EXPECT_FALSE((*v)->source.empty()) << id;
    EXPECT_FALSE((*v)->layout.empty()) << id;
  }
  // Names are matched case-insensitively, '-' as '_'.
  auto w = find_variant(c, "W4A8-DYNAMIC");
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ((*w)->id, "w4a8_dynamic");
}

TEST(QuantVariant, Issue16_UnknownNameListsTheKnownOnes) {
  auto v = find_variant(pftest::shipped_variants(), "w3a7");
  ASSERT_FALSE(v.has_value());
  EXPECT_EQ(v.error().kind, ErrorKind::invalid_argument);
  EXPECT_NE(v.error().message.find("unknown variant 'w3a7'"), std::string::npos);
  EXPECT_NE(v.error().message.find("w4a8_dynamic"), std::string::npos);
  EXPECT_NE(v.error().message.find("modelopt_nvfp4"), std::string::npos);
}

TEST(QuantVariant, Issue16_StorageOfW4A8DynamicPerModule) {
  auto v = find_variant(pftest::shipped_variants(), "w4a8_dynamic");
  ASSERT_TRUE(v.has_value());
  const QuantScheme& s = (*v)->scheme;
  EXPECT_EQ(s.method, "ascend");
  // Attention stays W8A8_DYNAMIC, the MLP is W4A8_DYNAMIC, the router gate and lm_head stay in the model dtype.
  EXPECT_EQ(module_format(s, "model.layers.*.self_attn.q_proj", false), WeightFormat::modelslim_w8a8_dynamic);
  EXPECT_EQ(module_format(s, "model.layers.*.mlp.down_proj", false), WeightFormat::modelslim_w4a8_dynamic);
  EXPECT_EQ(module_format(s, "model.layers.*.mlp.experts.down_proj", true), WeightFormat::modelslim_w4a8_dynamic);
  EXPECT_EQ(module_format(s, "model.layers.*.mlp.gate", false), WeightFormat::native);
  EXPECT_EQ(module_format(s, "model.layers.*.mlp.shared_expert_gate", false), WeightFormat::native);
  EXPECT_EQ(module_format(s, "lm_head", false), WeightFormat::native);
  // The router gate's name is a prefix of the MLP's gate projection: that one is quantized.
  EXPECT_EQ(module_format(s, "model.layers.*.mlp.gate_proj", false), WeightFormat::modelslim_w4a8_dynamic);
  EXPECT_EQ(module_format(s, "model.layers.*.mlp.experts.gate_proj", true), WeightFormat::modelslim_w4a8_dynamic);
  // A 4096 x 4096 projection: W8A8_DYNAMIC = 16 MiB int8 + scale and offset (bf16) per row = 4096 x 4 bytes;
  // W4A8_DYNAMIC = 8 MiB of packed int4 + fp32 scale, offset, scale_bias per row = 4096 x 12 bytes.
  EXPECT_DOUBLE_EQ(linear_weight_bytes(WeightFormat::modelslim_w8a8_dynamic, 4096, 4096, s, 2), 16777216.0 + 16384.0);
  EXPECT_DOUBLE_EQ(linear_weight_bytes(WeightFormat::modelslim_w4a8_dynamic, 4096, 4096, s, 2), 8388608.0 + 49152.0);
}

TEST(QuantVariant, Issue16_GroupAndBlockParametersComeFromTheRecord) {
  auto awq = find_variant(pftest::shipped_variants(), "awq");
  auto ct = find_variant(pftest::shipped_variants(), "ct_w4a16");
  auto blk = find_variant(pftest::shipped_variants(), "fp8_block");
  auto gguf = find_variant(pftest::shipped_variants(), "gguf_q4_k_m");
  ASSERT_TRUE(awq && ct && blk && gguf);
  // AWQ: group 128 with packed zeros; compressed-tensors W4A16 preset: symmetric, no zeros.
  EXPECT_EQ((*awq)->scheme.group_size, 128);
  EXPECT_TRUE((*awq)->scheme.group_zero_point);
  EXPECT_FALSE((*ct)->scheme.group_zero_point);
  // 4096 x 4096 int4 g128: 8 MiB + 32 groups x 4096 rows x 2 bytes of scales (+ 32 x 4096 / 2 bytes of zeros for AWQ).
  EXPECT_DOUBLE_EQ(linear_weight_bytes(WeightFormat::int4_group, 4096, 4096, (*ct)->scheme, 2), 8388608.0 + 262144.0);
  EXPECT_DOUBLE_EQ(linear_weight_bytes(WeightFormat::int4_group, 4096, 4096, (*awq)->scheme, 2), 8388608.0 + 262144.0 + 65536.0);
  EXPECT_EQ((*blk)->scheme.block_rows, 128);
  // GGUF Q4_K_M: 4.58 GiB for Llama-3-8B's 8.03e9 parameters (quantize.cpp) -> 4.899 bits.
  EXPECT_NEAR((*gguf)->scheme.bits_per_weight, 4.58 * 1073741824.0 * 8 / 8.03e9, 0.001);
}

TEST(QuantVariant, Issue16_TextAsPeopleWriteIt) {
  const auto& c = pftest::shipped_variants();
  const std::vector<std::pair<std::string, std::string>> table = {
      {"w8a8 (ascend w8a8_dynamic)", "w8a8_dynamic"},
      {"AWQ int4", "awq"},
      {"AWQ 4-bit", "awq"},
      {"awq_marlin", "awq"},
      {"auto_round (int4)", "autoround"},
      {"modelopt (NVFP4)", "modelopt_nvfp4"},
      {"compressed-tensors W8A8 (INT8)", "ct_w8a8_int8"},
      {"compressed-tensors (FP8 dynamic)", "fp8_channel"},
      {"fp8 (Marlin weight-only fallback)", "fp8_block"},
      {"FP8 (checkpoint native)", "fp8_block"},
      {"ascend (modelslim W8A8)", "w8a8"},
      {"ascend", "w8a8"},
      {"MXFP4 (checkpoint native)", "mxfp4"},
      {"GGUF Q4_K_M", "gguf_q4_k_m"},
      {"ggml q4 (q4_0 presumably; stated only as 'q4')", "gguf_q4_0"},
      {"none (bf16)", "bf16"},
      {"not stated in excerpt (recipe default)", "bf16"},
      // The ids fit --variant and plan take are read as well.
      {"ct_w4a16", "ct_w4a16"},
      {"w4a8_dynamic", "w4a8_dynamic"},
      // vLLM's own --quantization value: in-flight quantization loads 4-bit (docs.vllm.ai features/quantization/bnb);
      // the 8-bit words stay 8-bit.
      {"bitsandbytes", "bnb_4bit"},
      {"bitsandbytes 8-bit", "bnb_8bit"},
  };
  for (const auto& [text, id] : table) {
    const QuantVariant* v = variant_from_text(c, text);
    ASSERT_NE(v, nullptr) << text;
    EXPECT_EQ(v->id, id) << text;
  }
  EXPECT_EQ(variant_from_text(c, "hqq 3-bit"), nullptr);
  // Whole words only: "w8a8" is not found inside "xw8a8y".
  EXPECT_EQ(variant_from_text(c, "xw8a8y"), nullptr);
}

// Issue 16: every `quantization` text of the validation cases (../shared/validation/*.jsonl and
// data/evidence/*.jsonl) and every string the issue quotes resolves to the variant named here by hand. A new
// text in those files fails until it is added to this table, so none is sized as BF16 by accident.
TEST(QuantVariant, Issue16_EveryCaseQuantizationTextResolvesToTheRightVariant) {
  const std::map<std::string, std::string> by_hand = {
      // as the cases write it
      {"none", "bf16"},
      {"none (bf16)", "bf16"},
      {"none (bf16 assumed)", "bf16"},
      {"not stated in excerpt (recipe default)", "bf16"},
      {"ascend", "w8a8"},  // vLLM-Ascend's --quantization ascend on a msModelSlim W8A8 export
      {"ascend (W8A8)", "w8a8"},
      {"ascend (modelslim W8A8)", "w8a8"},
      {"fp8", "fp8_block"},  // every case writing plain fp8 serves a vendor FP8 checkpoint: block 128x128
      {"FP8", "fp8_block"},
      {"FP8 (checkpoint native)", "fp8_block"},
      {"compressed-tensors (FP8 dynamic)", "fp8_channel"},
      {"awq", "awq"},
      {"awq_marlin", "awq"},
      {"AWQ 4-bit", "awq"},
      {"auto_round (int4)", "autoround"},
      {"modelopt (nvfp4)", "modelopt_nvfp4"},
      {"mxfp4", "mxfp4"},
      {"MXFP4 (checkpoint native)", "mxfp4"},
      {"GGUF Q2_K", "gguf_q2_k"},
      {"GGUF Q4_0", "gguf_q4_0"},
      {"GGUF Q4_1", "gguf_q4_1"},
      {"GGUF Q4_K_M", "gguf_q4_k_m"},
      {"GGUF Q4_K_S", "gguf_q4_k_s"},
      {"GGUF Q5_0", "gguf_q5_0"},
      {"GGUF Q6_K", "gguf_q6_k"},
      {"ggml q4 (q4_0 presumably; stated only as 'q4')", "gguf_q4_0"},
      // as the issue quotes them
      {"w8a8 (ascend w8a8_dynamic)", "w8a8_dynamic"},
      {"AWQ int4", "awq"},
      {"modelopt (NVFP4)", "modelopt_nvfp4"},
      {"modelopt", "modelopt_fp8"},  // vLLM: --quantization modelopt is ModelOpt FP8, modelopt_fp4 is NVFP4
      {"compressed-tensors W8A8 (INT8)", "ct_w8a8_int8"},
      {"fp8 (Marlin weight-only fallback)", "fp8_block"},
      // session 10's held-out cases (vllm-ascend #2473; the Arm learning-path DGX Spark GPTQ run)
      {"ascend (modelslim W8A8 dynamic: the traceback runs vllm_ascend/quantization/w8a8_dynamic.py)", "w8a8_dynamic"},
      {"gptq", "gptq"},
      // issue 15 round 14: cpatonn's Qwen3-30B-A3B AWQ-4bit (llm-compressor AWQ export, compressed-tensors W4A16)
      {"compressed-tensors w4a16", "ct_w4a16"},
      // issue 15 (evid29): RedHatAI/Qwen3.6-35B-A3B-NVFP4, an llm-compressor NVFP4 export ('quantization=compressed-tensors')
      {"compressed-tensors (nvfp4)", "ct_nvfp4"},
      // issue 15 (evid32): RedHatAI's llm-compressor exports in the llm-d-planner sweep: FP8-dynamic (per-channel FP8
      // weights, dynamic per-token activations) and INT8 W8A8
      {"compressed-tensors (fp8 dynamic)", "fp8_channel"},
      {"compressed-tensors w8a8 (int8)", "ct_w8a8_int8"},
  };
  std::set<std::string> seen;
  std::vector<std::string> files;
  for (const auto& dir : {pftest::shared_path("validation"), std::string(PREFLIGHT_SOURCE_DIR) + "/data/evidence"})
    for (const auto& e : std::filesystem::directory_iterator(dir))
      if (e.path().extension() == ".jsonl") files.push_back(e.path().string());
  ASSERT_GE(files.size(), 4u);
  for (const auto& f : files) {
    std::ifstream in(f);
    for (std::string line; std::getline(in, line);) {
      auto j = parse_json(line, f);
      if (!j || !j->is_object() || !j->contains("quantization") || !(*j)["quantization"].is_string()) continue;
      seen.insert((*j)["quantization"].get<std::string>());
    }
  }
  EXPECT_GE(seen.size(), 20u);
  for (const auto& text : seen) EXPECT_TRUE(by_hand.count(text)) << "case quantization '" << text << "' has no hand-named variant in this table";
  for (const auto& [text, id] : by_hand) {
    const QuantVariant* v = variant_from_text(pftest::shipped_variants(), text);
    ASSERT_NE(v, nullptr) << text;
    EXPECT_EQ(v->id, id) << text;
  }
}

TEST(QuantVariant, Issue16_EngineRulesByEngineFamilyVersionAndKind) {
  const auto& c = pftest::shipped_variants();
  auto w4a16 = find_variant(c, "w4a16");
  auto awq = find_variant(c, "awq");
  auto fp8 = find_variant(c, "fp8_block");
  ASSERT_TRUE(w4a16 && awq && fp8);
  const VariantRule* dense = variant_rule(**w4a16, "rejected", "vllm-ascend", "0.19", "ascend-a2", false);
  ASSERT_NE(dense, nullptr);
  EXPECT_EQ(dense->message, "NotImplementedError: Currently, vLLM Ascend doesn't support W4A16 for linear.");
  EXPECT_EQ(variant_rule(**w4a16, "rejected", "vllm-ascend", "0.26", "ascend-a2", true), nullptr);
  const VariantRule* volta = variant_rule(**awq, "rejected", "vllm", "0.30", "volta", false);
  ASSERT_NE(volta, nullptr);
  EXPECT_NE(volta->message.find("Minimum capability: 75. Current capability: 70."), std::string::npos);
  EXPECT_EQ(variant_rule(**awq, "rejected", "vllm", "0.30", "hopper", false), nullptr);
  EXPECT_NE(variant_rule(**fp8, "fallback", "vllm", "0.30", "ampere", false), nullptr);
  EXPECT_EQ(variant_rule(**fp8, "fallback", "vllm", "0.30", "hopper", false), nullptr);
  // before_version: the rule holds only while the profile's newest version is older.
  QuantVariant v;
  v.rules.push_back({"vllm-ascend", {}, "0.21", "", "rejected", "too old"});
  EXPECT_NE(variant_rule(v, "rejected", "vllm-ascend", "0.20", "ascend-a2", false), nullptr);
  EXPECT_EQ(variant_rule(v, "rejected", "vllm-ascend", "0.21", "ascend-a2", false), nullptr);
}

TEST(QuantVariant, Issue16_BadRecordsAreRejected) {
  auto base = R"({"id": "x", "name": "X", "tool": "t", "engine_quantization": "awq", "aliases": [], "weights": {"linear": "int4_group", "experts": "int4_group"},
                 "keep_high_precision": [], "layout": "l", "descriptor": "d", "rules": [], "source": "s"})"_json;
  auto catalog = [](const Json& v1, const Json& v2) { return Json{{"schema_version", 1}, {"variants", Json::array({v1, v2})}}; };
  struct Bad {
    std::string what;
    Json record;
    std::string fragment;
  };
  std::vector<Bad> bad;
  Json unknown_key = base;
  unknown_key["colour"] = "red";
  bad.push_back({"unknown key", unknown_key, "colour"});
  Json no_source = base;
  no_source["source"] = "";
  bad.push_back({"empty source", no_source, "source is empty"});
  Json bad_format = base;
  bad_format["weights"]["linear"] = "int3";
  bad_format["id"] = "y";
  bad.push_back({"unknown format", bad_format, "weight format 'int3'"});
  Json bad_status = base;
  bad_status["id"] = "z";
  bad_status["rules"] = Json::array({{{"engine", "vllm"}, {"status", "maybe"}, {"message", "m"}}});
  bad.push_back({"bad status", bad_status, "status 'maybe'"});
  Json packed = base;
  packed["id"] = "p";
  packed["weights"] = {{"linear", "packed_bits"}, {"experts", "packed_bits"}};
  bad.push_back({"packed without bits", packed, "bits_per_weight"});
  Json bad_bound = base;
  bad_bound["id"] = "b";
  bad_bound["rules"] = Json::array({{{"engine", "vllm-ascend"}, {"from_version", "soon"}, {"status", "rejected"}, {"message", "m"}}});
  bad.push_back({"unreadable version bound (issue 16)", bad_bound, "version bound 'soon', expected X.Y[.Z]"});
  for (const auto& b : bad) {
    Json other = base;
    other["id"] = "other";
    auto r = parse_variant_catalog(catalog(other, b.record), "v.json");
    ASSERT_FALSE(r.has_value()) << b.what;
    EXPECT_EQ(r.error().kind, ErrorKind::corrupt) << b.what;
    EXPECT_NE(r.error().message.find(b.fragment), std::string::npos) << b.what << ": " << r.error().message;
  }
  auto dup = parse_variant_catalog(catalog(base, base), "v.json");
  ASSERT_FALSE(dup.has_value());
  EXPECT_NE(dup.error().message.find("variants[x]: duplicate id"), std::string::npos);
}

// A variant applied to the base config sizes what the published checkpoint's own descriptor says:
// Qwen/Qwen3-32B-FP8's quantization_config (fp8, 128x128 blocks) and nvidia/Qwen3-32B-NVFP4's
// hf_quant_config.json (NVFP4, group 16), both read from ../shared/models.
TEST(QuantVariant, Issue16_VariantOnBaseMatchesThePublishedCheckpointDescriptor) {
  auto base = load_hf_config(pftest::shared_path("models/Qwen__Qwen3-32B/config.json"));
  auto fp8 = load_hf_config(pftest::shared_path("models/Qwen__Qwen3-32B-FP8/config.json"));
  ASSERT_TRUE(base && fp8);
  auto nvfp4_json = load_json_file(pftest::shared_path("models/nvidia__Qwen3-32B-NVFP4/hf_quant_config.json"));
  ASSERT_TRUE(nvfp4_json.has_value());
  auto nvfp4_scheme = parse_hf_quant_config(*nvfp4_json, "hf_quant_config.json");
  ASSERT_TRUE(nvfp4_scheme.has_value()) << nvfp4_scheme.error().describe();
  const std::vector<std::pair<std::string, QuantScheme>> published = {{"fp8_block", fp8->quant}, {"modelopt_nvfp4", *nvfp4_scheme}};
  for (const auto& [id, scheme] : published) {
    auto v = find_variant(pftest::shipped_variants(), id);
    ASSERT_TRUE(v.has_value()) << id;
    ModelSpec as_variant = *base, as_published = *base;
    as_variant.quant = (*v)->scheme;
    as_published.quant = scheme;
    const double want = compute_weight_bytes(as_published).total, got = compute_weight_bytes(as_variant).total;
    // Within 0.5%: the variant keeps the same modules (embeddings, lm_head) in bf16 and stores the same scales.
    EXPECT_NEAR(got, want, 0.005 * want) << id << ": variant " << got / 1073741824.0 << " GiB, published " << want / 1073741824.0 << " GiB";
  }
}

// A variant sized from the base config against the file size of a published checkpoint of it
// (tests/fixtures/variants/published_sizes.json, each with its source): within 1% (the GGUF presets'
// bits per weight are file averages measured on Llama-3-8B).
TEST(QuantVariant, Issue16_VariantOnBaseMatchesPublishedFileSizes) {
  auto fixture = load_json_file(std::string(PREFLIGHT_SOURCE_DIR) + "/tests/fixtures/variants/published_sizes.json");
  ASSERT_TRUE(fixture.has_value()) << fixture.error().describe();
  ASSERT_FALSE((*fixture)["checkpoints"].empty());
  for (const auto& ck : (*fixture)["checkpoints"]) {
    const std::string where = ck["file"].get<std::string>();
    ASSERT_FALSE(ck["source"].get<std::string>().empty()) << where;
    auto base = load_hf_config(pftest::shared_path("models/" + ck["base"].get<std::string>() + "/config.json"));
    ASSERT_TRUE(base.has_value()) << where;
    auto v = find_variant(pftest::shipped_variants(), ck["variant"].get<std::string>());
    ASSERT_TRUE(v.has_value()) << where;
    ModelSpec sized = *base;
    sized.quant = (*v)->scheme;
    const double got = compute_weight_bytes(sized).total, want = ck["bytes"].get<double>();
    EXPECT_NEAR(got, want, 0.01 * want) << where << ": " << got / 1e9 << " GB sized, " << want / 1e9 << " GB published";
  }
}

// Issue 16: a checkpoint, local or fetched from a hub (hub::fetch_model_metadata leaves the same files in a
// directory that load_model_directory reads), is recognized as a variant of the list from its own
// descriptor: config.json quantization_config, hf_quant_config.json or quant_model_description.json. The
// real published descriptors of ../shared/models, each variant named by hand.
TEST(QuantVariant, Issue16_CheckpointDescriptorsAreRecognizedAsVariants) {
  const std::vector<std::pair<std::string, std::string>> table = {
      {"Qwen__Qwen3-32B", "bf16"},                          // no quantization_config
      {"Qwen__Qwen3-32B-FP8", "fp8_block"},                 // quant_method fp8, weight_block_size [128, 128]
      {"Qwen__Qwen3-235B-A22B-FP8", "fp8_block"},
      {"Qwen__Qwen3-30B-A3B-FP8", "fp8_block"},
      {"nvidia__Qwen3-32B-NVFP4", "modelopt_nvfp4"},        // hf_quant_config.json quant_algo NVFP4, group 16
      {"nvidia__Qwen3-30B-A3B-NVFP4", "modelopt_nvfp4"},
      {"nvidia__Llama-3.1-70B-Instruct-FP8", "modelopt_fp8"},  // hf_quant_config.json quant_algo FP8
      {"DocPang__Qwen3.6-35B-A3B-W8A8-DCU", "ct_w8a8_int8"},   // compressed-tensors int8 channel weights, token activations
      {"openai__gpt-oss-20b", "mxfp4"},                     // quant_method mxfp4 on the experts
      {"nvidia__Qwen3.6-27B-NVFP4", ""},                    // MIXED_PRECISION per module: no single variant
  };
  for (const auto& [dir, id] : table) {
    auto spec = load_model_directory(pftest::shared_path("models/" + dir));
    ASSERT_TRUE(spec.has_value()) << dir << ": " << spec.error().describe();
    const QuantVariant* v = variant_of_checkpoint(pftest::shipped_variants(), spec->quant);
    if (id.empty()) {
      EXPECT_EQ(v, nullptr) << dir << " read as " << (v ? v->id : "");
      continue;
    }
    ASSERT_NE(v, nullptr) << dir << " (" << spec->quant.method << ", " << weight_format_name(spec->quant.linear_format) << ")";
    EXPECT_EQ(v->id, id) << dir;
  }
}

// Issue 16: the W4A8_DYNAMIC and W4A16 version limits of vLLM-Ascend are rules, compared with the version
// named (not the engine profile's newest), by major.minor.patch, per device family and model kind. Each
// expected message is the string vLLM-Ascend raises at that tag, copied from its source by hand:
//   quantizer.py / utils.py get_quantizer: "Currently, vLLM Ascend only supports following quant types:" +
//   str(list(table keys)); modelslim_config.py create_scheme_for_layer: "Currently, vLLM Ascend doesn't
//   support {q} for {t}." (to v0.19.1rc1), "... quant_type={q} for layer_type={t}." (v0.20.2rc1; v0.23.0rc1
//   adds "Please use ..."); 310P registry (v0.15.0rc1 on): W8A8 linear, W8A8_DYNAMIC moe (linear from v0.18.0).
TEST(QuantVariant, Issue16_AscendVersionLimitsAreRules) {
  const auto& c = pftest::shipped_variants();
  const std::string only = "NotImplementedError: Currently, vLLM Ascend only supports following quant types:";
  const std::string lin20 = "NotImplementedError: Currently, vLLM Ascend doesn't support quant_type=W4A16 for layer_type=linear.";
  struct Case {
    const char* variant;
    const char* version;
    const char* family;
    bool moe;
    std::string want;  // "" = not rejected
  };
  const std::vector<Case> cases = {
      // W4A8_DYNAMIC: table from v0.9.1rc2 (0.9.1-dev branch), missing again in v0.9.2rc1 (main), back from v0.10.0rc1.
      {"w4a8_dynamic", "0.8.5", "ascend-a2", false, only + "['W8A8', 'W8A8_DYNAMIC']"},
      {"w4a8_dynamic", "0.9.0", "ascend-a2", true, only + "['W8A8', 'W8A8_DYNAMIC']"},
      {"w4a8_dynamic", "0.9.1", "ascend-a2", false, ""},
      {"w4a8_dynamic", "0.9.2rc1", "ascend-a2", false, only + "['W8A8', 'W8A8_DYNAMIC', 'C8']"},
      {"w4a8_dynamic", "0.10.0", "ascend-a2", true, ""},
      {"w4a8_dynamic", "0.12.99", "ascend-a2", false, ""},  // the 0.7-0.12 profile's newest: accepted
      {"w4a8_dynamic", "0.26.99", "ascend-a3", true, ""},
      // 310P: its own registry from v0.15.0rc1; the variant's attention (W8A8_DYNAMIC) fails first before v0.18.
      {"w4a8_dynamic", "0.14.0", "ascend-310p", false, ""},
      {"w4a8_dynamic", "0.15.0", "ascend-310p", true, "NotImplementedError: Currently, vLLM Ascend doesn't support W8A8_DYNAMIC for linear."},
      {"w4a8_dynamic", "0.18.0", "ascend-310p", false, "NotImplementedError: Currently, vLLM Ascend doesn't support W4A8_DYNAMIC for linear."},
      {"w4a8_dynamic", "0.19.1", "ascend-310p", true, "NotImplementedError: Currently, vLLM Ascend doesn't support W4A8_DYNAMIC for moe."},
      {"w4a8_dynamic", "0.20.2", "ascend-310p", true, "NotImplementedError: Currently, vLLM Ascend doesn't support quant_type=W4A8_DYNAMIC for layer_type=moe."},
      {"w4a8_dynamic", "0.23.0", "ascend-310p", false, "NotImplementedError: Unsupported quant_type=W4A8_DYNAMIC for layer_type=linear."},
      {"w8a8_dynamic", "0.17.0", "ascend-310p", false, "NotImplementedError: Currently, vLLM Ascend doesn't support W8A8_DYNAMIC for linear."},
      {"w8a8_dynamic", "0.18.0", "ascend-310p", false, ""},
      {"w8a8", "0.15.0", "ascend-310p", true, ""},
      // W4A16: in the table from v0.12.0rc1, moe only; linear never.
      {"w4a16", "0.9.1", "ascend-a2", true, only + "['W4A8_DYNAMIC', 'W8A8', 'W8A8_DYNAMIC']"},
      {"w4a16", "0.10.2", "ascend-a2", true, only + "['W4A8_DYNAMIC', 'W8A8', 'W8A8_DYNAMIC', 'C8']"},
      {"w4a16", "0.11.0", "ascend-a2", false, only + "['W4A8_DYNAMIC', 'W4A4_FLATQUANT_DYNAMIC', 'W8A8', 'W8A8_DYNAMIC', 'C8']"},
      {"w4a16", "0.12.0", "ascend-a2", true, ""},
      {"w4a16", "0.12.0", "ascend-a2", false, "NotImplementedError: Currently, vLLM Ascend doesn't support W4A16 for linear."},
      {"w4a16", "0.20.2", "ascend-a2", false, lin20},
      {"w4a16", "0.23.0", "ascend-a3", false,
       lin20 + " Please use a supported quantization format or load the model with its original float weights."},
      {"w4a16", "0.26.99", "ascend-a3", true, ""},
      {"w4a16", "0.18.0", "ascend-310p", true, "NotImplementedError: Currently, vLLM Ascend doesn't support W4A16 for moe."},
      {"w4a16", "0.21.0", "ascend-310p", true, "NotImplementedError: Unsupported quant_type=W4A16 for layer_type=moe."},
  };
  for (const auto& k : cases) {
    SCOPED_TRACE(std::string(k.variant) + " @" + k.version + " " + k.family + (k.moe ? " moe" : " dense"));
    auto v = find_variant(c, k.variant);
    ASSERT_TRUE(v.has_value());
    const VariantRule* r = variant_rule(**v, "rejected", "vllm-ascend", k.version, k.family, k.moe);
    if (k.want.empty()) {
      EXPECT_EQ(r, nullptr) << (r ? r->message : "");
    } else {
      ASSERT_NE(r, nullptr);
      EXPECT_EQ(r->message, k.want);
    }
  }
  // from_version + before_version bound a range; a version that does not read never meets a bounded rule.
  QuantVariant v;
  VariantRule range{"vllm-ascend", {}, "0.10.0", "", "rejected", "in range"};
  range.from_version = "0.9.2";
  v.rules.push_back(range);
  EXPECT_EQ(variant_rule(v, "rejected", "vllm-ascend", "0.9.1", "ascend-a2", false), nullptr);
  EXPECT_NE(variant_rule(v, "rejected", "vllm-ascend", "0.9.2", "ascend-a2", false), nullptr);
  EXPECT_NE(variant_rule(v, "rejected", "vllm-ascend", "0.9.99", "ascend-a2", false), nullptr);
  EXPECT_EQ(variant_rule(v, "rejected", "vllm-ascend", "0.10.0", "ascend-a2", false), nullptr);
  EXPECT_EQ(variant_rule(v, "rejected", "vllm-ascend", "latest", "ascend-a2", false), nullptr);
}

// Issue 15 (dsv32): in the msModelSlim W8A8 layout an MLA kv_b_proj and a sparse-attention indexer's wk stay in the model
// dtype (lab_practice/glm_5/glm_5_w8a8.yaml excludes '*kv_b_proj', '*wk', '*weights_proj' from the self_attn W8A8 pass;
// vLLM-Ascend's MLA / SFA backends assert kv_b_proj is unquantized); the indexer's wq_b and the other projections are W8A8.
TEST(QuantVariant, Issue15_W8A8KeepsKvBProjAndIndexerWkInTheModelDtype) {
  auto v = find_variant(pftest::shipped_variants(), "w8a8");
  ASSERT_TRUE(v.has_value());
  const QuantScheme& s = (*v)->scheme;
  EXPECT_EQ(module_format(s, "model.layers.*.self_attn.kv_b_proj", false), WeightFormat::native);
  EXPECT_EQ(module_format(s, "model.layers.*.self_attn.indexer.wk", false), WeightFormat::native);
  EXPECT_EQ(module_format(s, "model.layers.*.self_attn.q_b_proj", false), WeightFormat::modelslim_w8a8);
  EXPECT_EQ(module_format(s, "model.layers.*.self_attn.kv_a_proj_with_mqa", false), WeightFormat::modelslim_w8a8);
}

// Issue 15 (dsvw): both msModelSlim DeepSeek-V3.2 practices (lab_practice/deepseek_v3_2/deepseek_w8a8.yaml and
// deepseek_w8a8_quarot.yaml) exclude '*wq_b' from the '*self_attn*' W8A8 pass: the indexer's wq_b stays bf16, while
// the attention's q_b_proj (which '*wq_b' does not match) is W8A8. DeepSeek-V3.2's wq_b is index_n_heads 64 x
// index_head_dim 128 = 8,192 rows by q_lora_rank 1,536 columns: 8,192 x 1,536 x 2 B = 25,165,824 B in bf16.
TEST(QuantVariant, Issue15_W8A8KeepsTheIndexerWqBInTheModelDtype) {
  auto v = find_variant(pftest::shipped_variants(), "w8a8");
  ASSERT_TRUE(v.has_value());
  const QuantScheme& s = (*v)->scheme;
  EXPECT_EQ(module_format(s, "model.layers.*.self_attn.indexer.wq_b", false), WeightFormat::native);
  EXPECT_EQ(module_format(s, "model.layers.61.self_attn.indexer.wq_b", false), WeightFormat::native);
  EXPECT_EQ(module_format(s, "model.layers.*.self_attn.q_b_proj", false), WeightFormat::modelslim_w8a8);
  EXPECT_DOUBLE_EQ(linear_weight_bytes(module_format(s, "model.layers.*.self_attn.indexer.wq_b", false), 8192, 1536, s, 2), 25165824.0);
}

// Issue 16 (quant27): a Gated DeltaNet layer's b and a projections (linear_num_value_heads rows each: 48 on Qwen3.5-27B)
// stay in the model dtype in block-FP8 and AutoRound exports: Qwen's FP8 releases list them in modules_to_not_convert
// (vLLM cannot load a 48-row output as 128 x 128 FP8 blocks), AutoRound writes them as 16-bit in extra_config. The other
// projections of the layer are quantized. Qwen3.5-27B: 48 layers x 2 x 48 x 5,120 x 2 B = 47,185,920 B in bf16, where
// fp8 blocks would be 48 x 5,120 B + 1 x 40 fp32 scales = 245,920 B a projection (23,608,320 B in all).
TEST(QuantVariant, Issue16_GatedDeltaNetBAndAProjectionsStayInTheModelDtype) {
  struct Row {
    const char* variant;
    WeightFormat quantized;
  };
  for (const Row& row : {Row{"fp8_block", WeightFormat::fp8_block}, Row{"autoround", WeightFormat::int4_group}}) {
    SCOPED_TRACE(row.variant);
    auto v = find_variant(pftest::shipped_variants(), row.variant);
    ASSERT_TRUE(v.has_value());
    const QuantScheme& s = (*v)->scheme;
    for (const char* kept : {"model.language_model.layers.*.linear_attn.in_proj_a", "model.language_model.layers.*.linear_attn.in_proj_b",
                             "model.layers.*.linear_attn.in_proj_ba", "model.language_model.layers.*.linear_attn.conv1d"})
      EXPECT_EQ(module_format(s, kept, false), WeightFormat::native) << kept;
    for (const char* quantized : {"model.language_model.layers.*.linear_attn.in_proj_qkv", "model.language_model.layers.*.linear_attn.in_proj_z",
                                  "model.language_model.layers.*.linear_attn.out_proj", "model.layers.*.linear_attn.in_proj_qkvz",
                                  "model.language_model.layers.*.self_attn.q_proj", "model.language_model.layers.*.mlp.gate_proj"})
      EXPECT_EQ(module_format(s, quantized, false), row.quantized) << quantized;
  }
  auto blk = find_variant(pftest::shipped_variants(), "fp8_block");
  ASSERT_TRUE(blk.has_value());
  const QuantScheme& s = (*blk)->scheme;
  EXPECT_DOUBLE_EQ(48 * 2 * linear_weight_bytes(module_format(s, "model.language_model.layers.*.linear_attn.in_proj_a", false), 48, 5120, s, 2), 47185920.0);
  EXPECT_DOUBLE_EQ(linear_weight_bytes(WeightFormat::fp8_block, 48, 5120, s, 2), 245920.0);
}

// Issue 19 (round 11): the engine version is read by hand (it was sscanf's "%d.%d.%d", once per plan candidate); it
// reads what that format read. Range [0.9.2, 0.10.0) as above; each version with what "%d.%d.%d" makes of it.
TEST(QuantVariant, Issue19_VersionsReadAsScanfReadThem) {
  QuantVariant v;
  VariantRule range{"vllm-ascend", {}, "0.10.0", "", "rejected", "in range"};
  range.from_version = "0.9.2";
  v.rules.push_back(range);
  const struct {
    const char* version;
    bool in_range;
  } cases[] = {
      {"0.9.2rc1", true},    // 0, 9, 2 then text
      {"0.9", false},        // 0, 9, 0: below 0.9.2
      {"0.10", false},       // 0, 10, 0: the bound itself
      {" 0.9.5", true},      // white space before a number is skipped
      {"0. 9.5", true},      // also after the '.'
      {"+0.9.3", true},      // a sign
      {"0.9.-1", false},     // 0, 9, -1
      {"0 .9.5", false},     // the '.' must follow the number: one number read, no version
      {"v0.9.5", false},     // does not start with a number
      {"0.9.", false},       // 0, 9, 0
      {"0.9.99999999999", true},  // the third number capped, still under 0.10
      {"", false},
  };
  for (const auto& k : cases) EXPECT_EQ(variant_rule(v, "rejected", "vllm-ascend", k.version, "ascend-a2", false) != nullptr, k.in_range) << "'" << k.version << "'";
}

// Issue 16 (h-quant25): a bare scheme word means what the case's engine means by it. On vLLM, "W8A8" / "INT8" are
// compressed-tensors' INT8_W8A8 preset (PRESET_SCHEMES, neuralmagic/compressed-tensors 016da27b), which llm-compressor
// exports and vLLM serves; read as msModelSlim's W8A8 they predicted vLLM's "Unknown quantization method: ascend". On
// vLLM-Ascend the same words stay msModelSlim's; a bare "W4A16" likewise (compressed-tensors' W4A16 preset on vLLM).
// Without an engine the reading is the one the table above checks.
TEST(QuantVariant, Issue16_EngineAliasesReadWordsAsTheEngineMeansThem) {
  const auto& c = pftest::shipped_variants();
  struct Row {
    std::string text, engine, id;
  };
  const std::vector<Row> rows = {
      {"W8A8", "vllm", "ct_w8a8_int8"},
      {"INT8", "vllm", "ct_w8a8_int8"},
      {"W8A8_DYNAMIC", "vllm", "ct_w8a8_int8"},
      {"W8A8", "vllm-ascend", "w8a8"},
      {"W8A8", "", "w8a8"},
      {"W8A8_DYNAMIC", "vllm-ascend", "w8a8_dynamic"},
      {"W4A16", "vllm-ascend", "w4a16"},
      {"W4A16", "vllm", "ct_w4a16"},
      {"W4A16", "", "w4a16"},
      // longer words still win on either engine
      {"GPTQ-Int8", "vllm", "gptq_int8"},
      {"ascend (W8A8)", "vllm-ascend", "w8a8"},
      {"int8 weight-only", "vllm", "ct_w8a16"},
      {"msModelSlim W4A16", "vllm", "w4a16"},
  };
  for (const auto& row : rows) {
    const QuantVariant* v = variant_from_text(c, row.text, row.engine);
    ASSERT_NE(v, nullptr) << row.text << " on " << row.engine;
    EXPECT_EQ(v->id, row.id) << row.text << " on " << row.engine;
  }
  // A record naming an engine the list does not know is refused with the record.
  auto root = parse_json(pftest::read_all(std::string(PREFLIGHT_SOURCE_DIR) + "/data/variants/quant_variants.json"), "quant_variants.json");
  ASSERT_TRUE(root.has_value());
  for (auto& v : (*root)["variants"])
    if (v["id"] == "ct_w8a8_int8") v["engine_aliases"] = {{"sglang", {"w8a8"}}};
  auto parsed = parse_variant_catalog(*root, "quant_variants.json");
  ASSERT_FALSE(parsed.has_value());
  EXPECT_NE(parsed.error().message.find("variants[ct_w8a8_int8]: engine_aliases: unknown engine 'sglang'"), std::string::npos) << parsed.error().message;
}

// validate on a vLLM line that writes "W8A8": the compressed-tensors variant is applied, no refusal predicted.
TEST(QuantVariant, Issue16_ValidateReadsW8A8OnVllmAsCompressedTensors) {
  std::ifstream in(pftest::shared_path("validation/vllm-startup.dev.jsonl"));
  std::string line;
  ASSERT_TRUE(static_cast<bool>(std::getline(in, line)));
  auto base = parse_json(line, "vllm-startup.dev.jsonl");
  ASSERT_TRUE(base.has_value());
  ASSERT_EQ((*base)["engine"], "vllm");
  const std::string dir = pftest::scratch_dir("validate-w8a8");
  {
    std::ofstream out(dir + "/cases.jsonl");
    for (const char* engine : {"vllm"}) {
      Json c = *base;
      c["id"] = std::string("w8a8-on-") + engine;
      c["quantization"] = "W8A8";
      c["engine"] = engine;
      out << c.dump() << "\n";
    }
  }
  const auto r = pftest::run_cli("validate " + dir + "/cases.jsonl --json", {.with_stderr = false});
  ASSERT_EQ(r.code, 0) << r.out.substr(0, 400);
  auto j = parse_json(r.out, "stdout");
  ASSERT_TRUE(j.has_value());
  int seen = 0;
  for (const auto& row : (*j)["rows"]) {
    const std::string assumptions = row["assumptions"].dump();
    const std::string failure = row["predicted_failure"].is_string() ? row["predicted_failure"].get<std::string>() : std::string();
    if (row["id"] == "w8a8-on-vllm") {
      ++seen;
      EXPECT_NE(assumptions.find("read as variant ct_w8a8_int8"), std::string::npos) << assumptions;
      EXPECT_NE(failure, "unsupported_quantization") << row.dump();
    }
  }
  EXPECT_EQ(seen, 1);
}

// Issue 16 (quant33): NVIDIA's published NVFP4 exports of the Qwen3.5 / 3.6 hybrid models, read from their real
// descriptors (tests/fixtures/quant, files as published, sources in its README), against the repository size and
// against the variant that names that layout on the base config.
// - nvidia/Qwen3.6-35B-A3B-NVFP4 (ModelOpt MIXED_PRECISION): its hf_quant_config.json excludes "mtp*", so the MTP layer
//   is stored in bf16: 2 bytes per MTP parameter (before the fix its groups took the decoder layers' NVFP4 and FP8
//   formats, 499,874,872 B instead of 1,689,281,536 B). Repository 23.5 GB (page rounding 0.05 GB) less the 4.75 MB
//   .quant_summary.txt; tensors and MTP within 1%.
// - The variant modelopt_nvfp4_fp8_attn (ModelOpt's qwen3_5_moe recipe w4a16_nvfp4-fp8_attn-kv_fp8_cast) on
//   ../shared/models/Qwen__Qwen3.6-35B-A3B stores each format's bytes as that export does (0.1%), and
//   modelopt_nvfp4_experts on Qwen__Qwen3.5-122B-A10B as nvidia/Qwen3.5-122B-A10B-NVFP4's exclude list does.
TEST(QuantVariant, Issue16_ModelOptMixedExportSizedAsPublished) {
  const std::string fixtures = std::string(PREFLIGHT_SOURCE_DIR) + "/tests/fixtures/quant/";
  auto published = load_model_directory(fixtures + "nvidia__Qwen3.6-35B-A3B-NVFP4");
  ASSERT_TRUE(published.has_value()) << published.error().describe();
  const WeightBytes held = compute_weight_bytes(*published);
  EXPECT_DOUBLE_EQ(held.mtp, 2.0 * static_cast<double>(count_params(*published).mtp));
  const double repository_bytes = 23.5e9 - 4.75e6;
  EXPECT_NEAR(held.total + held.mtp, repository_bytes, 0.01 * repository_bytes) << (held.total + held.mtp) / 1e9 << " GB";

  const std::vector<std::tuple<std::string, std::string, std::string>> pairs = {
      {"Qwen__Qwen3.6-35B-A3B", "modelopt_nvfp4_fp8_attn", "nvidia__Qwen3.6-35B-A3B-NVFP4"},
      {"Qwen__Qwen3.5-122B-A10B", "modelopt_nvfp4_experts", "nvidia__Qwen3.5-122B-A10B-NVFP4"},
  };
  for (const auto& [base_dir, id, export_dir] : pairs) {
    auto base = load_hf_config(pftest::shared_path("models/" + base_dir + "/config.json"));
    ASSERT_TRUE(base.has_value()) << base_dir;
    auto exported = load_model_directory(fixtures + export_dir);
    ASSERT_TRUE(exported.has_value()) << export_dir << ": " << exported.error().describe();
    auto v = find_variant(pftest::shipped_variants(), id);
    ASSERT_TRUE(v.has_value()) << id;
    ModelSpec sized = *base;
    sized.quant = (*v)->scheme;
    const WeightBytes want = compute_weight_bytes(*exported), got = compute_weight_bytes(sized);
    ASSERT_EQ(got.by_format.size(), want.by_format.size()) << id;
    for (const auto& [format, bytes] : want.by_format) {
      ASSERT_TRUE(got.by_format.count(format)) << id << ": no " << format;
      EXPECT_NEAR(got.by_format.at(format), bytes, 0.001 * bytes) << id << " " << format;
    }
    EXPECT_NEAR(got.mtp, want.mtp, 0.001 * want.mtp) << id << " MTP";
  }
}

// Issue 16 (quant33): nvidia/Qwen3-Next-80B-A3B-Thinking-NVFP4 (repository 50.8 GB after its "Add MTP" commit, listing
// https://huggingface.co/nvidia/Qwen3-Next-80B-A3B-Thinking-NVFP4/tree/main) is an experts-only NVFP4 export (bf16
// attention and shared experts, FlashML-org/FreeToken PR #212). The base config in ../shared/models names no MTP layer
// (vLLM's qwen3_next_mtp.py takes num_nextn_predict_layers, default 1): the test adds mtp_num_hidden_layers 1, and the
// MTP layer is bf16 as the variant keeps "mtp". Within 1.5%: the exclude list itself (12.3 kB) was not readable, and
// experts-only with a bf16 MTP layer is the layout closest to the listing (+1.4%).
TEST(QuantVariant, Issue16_ExpertsOnlyNvfp4SizesTheQwen3NextExport) {
  auto text = load_json_file(pftest::shared_path("models/Qwen__Qwen3-Next-80B-A3B-Thinking/config.json"));
  ASSERT_TRUE(text.has_value());
  Json with_mtp = *text;
  with_mtp["mtp_num_hidden_layers"] = 1;
  const std::string dir = pftest::scratch_dir("quant33-qwen3-next");
  { std::ofstream(dir + "/config.json") << with_mtp.dump(2); }
  auto base = load_hf_config(dir + "/config.json");
  ASSERT_TRUE(base.has_value()) << base.error().describe();
  auto v = find_variant(pftest::shipped_variants(), "modelopt_nvfp4_experts");
  ASSERT_TRUE(v.has_value());
  ModelSpec sized = *base;
  sized.quant = (*v)->scheme;
  const WeightBytes got = compute_weight_bytes(sized);
  EXPECT_DOUBLE_EQ(got.mtp, 2.0 * static_cast<double>(count_params(sized).mtp));
  EXPECT_NEAR(got.total + got.mtp, 50.8e9, 0.015 * 50.8e9) << (got.total + got.mtp) / 1e9 << " GB";
}
