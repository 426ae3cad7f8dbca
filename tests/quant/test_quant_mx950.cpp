// Issue 16 (h-q950): the Ascend 950 MX schemes (msModelSlim W8A8_MXFP8, W4A4_MXFP4, W4A16_MXFP4) and msModelSlim
// W8A16 in the one variant list: their storage from vLLM-Ascend's create_weights, the checkpoint recognized from its
// quant_model_description.json, and their acceptance per vLLM-Ascend version and card.
//
// Storage (vllm_ascend/quantization/methods at 182b75e, group_size 32 unless the description says otherwise):
//   W8A8_MXFP8 (w8a8_mxfp8.py): weight float8_e4m3fn [out, in] + weight_scale uint8 [out, cdiv(in, 32)]
//   W4A4_MXFP4 / W4A16_MXFP4 (w4a4_mxfp4.py, w4a16_mxfp4.py): weight uint8 [out, in / 2] + weight_scale uint8 [out, in / 32]
// Before: a W8A8_MXFP8 tensor read as fp8 with one fp32 scale per output channel (1 + 4 / in B per weight instead of
// 1 + 1 / 32), and no variant of the list was an MX scheme, so `fit --variant` could not size one and a published MX
// checkpoint matched no variant (its engine rules never applied).
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "base/json_util.hpp"
#include "model/quant_scheme.hpp"
#include "model/quant_variant.hpp"
#include "../variant_support.hpp"

using namespace preflight;
using namespace preflight::model;

namespace {


QuantScheme description(const std::string& text) {
  auto j = parse_json(text, "quant_model_description.json");
  EXPECT_TRUE(j.has_value());
  auto s = parse_modelslim_description(*j, "quant_model_description.json");
  EXPECT_TRUE(s.has_value()) << (s ? "" : s.error().describe());
  return s ? *s : QuantScheme();
}

// Qwen3-30B-A3B (../shared/models/Qwen__Qwen3-30B-A3B/config.json): hidden 2048, 48 layers, 32 x 128 query and
// 4 x 128 KV heads, 128 experts of moe_intermediate 768, vocab 151,936, untied, bf16. Per layer, out x in:
//   q 4096x2048, k 512x2048, v 512x2048, o 2048x4096; each expert gate/up 768x2048, down 2048x768; router 128x2048;
//   norms input/post 2048 + q_norm/k_norm 128 (bf16: 8,704 B). Embeddings and lm_head 2 x 151,936 x 2048 x 2 =
//   1,244,659,712 B; final norm 4,096 B; router 524,288 B per layer.
// MXFP8 (1 B + 1 B per 32 along `in`):
//   q 8,388,608 + 4096 x 64 = 8,650,752; k, v 1,048,576 + 512 x 64 = 1,081,344 each; o 8,388,608 + 2048 x 128 =
//   8,650,752 -> attention 19,464,192 per layer;
//   expert gate / up 1,572,864 + 768 x 64 = 1,622,016 each, down 1,572,864 + 2048 x 24 = 1,622,016 -> 4,866,048 per
//   expert, x 128 = 622,854,144 per layer.
// MXFP4 experts (0.5 B + 1 B per 32): gate / up 786,432 + 49,152 = 835,584, down 786,432 + 49,152 = 835,584 ->
//   2,506,752 per expert, x 128 = 320,864,256 per layer.
constexpr double k_attention_mxfp8 = 19464192.0;
constexpr double k_experts_mxfp8 = 622854144.0;
constexpr double k_experts_mxfp4 = 320864256.0;
constexpr double k_layer_bf16 = 524288.0 + 8704.0;           // router + norms
constexpr double k_outside = 1244659712.0 + 4096.0;          // embed_tokens, lm_head, final norm
constexpr double k_w8a8_mxfp8 = 48 * (k_attention_mxfp8 + k_experts_mxfp8 + k_layer_bf16) + k_outside;  // 32,101,527,552
constexpr double k_w4a4_mxfp4 = 48 * (k_attention_mxfp8 + k_experts_mxfp4 + k_layer_bf16) + k_outside;  // 17,606,012,928
// W4A8_MXFP (h-mx950p; vllm_ascend/quantization/methods/w4a8_mxfp4.py: every linear uint8 [out, in/2] + uint8 [out, in/32]):
//   q 4,194,304 + 4096 x 64 = 4,456,448; k, v 524,288 + 512 x 64 = 557,056 each; o 4,194,304 + 2048 x 128 = 4,456,448
//   -> attention 10,027,008 per layer; experts as W4A4_MXFP4's, 320,864,256 per layer;
//   48 x (10,027,008 + 320,864,256 + 532,992) = 48 x 331,424,256 = 15,908,364,288, + 1,244,663,808 outside = 17,153,028,096.
constexpr double k_attention_mxfp4 = 10027008.0;
constexpr double k_w4a8_mxfp = 48 * (k_attention_mxfp4 + k_experts_mxfp4 + k_layer_bf16) + k_outside;  // 17,153,028,096
// What vLLM-Ascend also holds at load, whatever the variant: the rotary caches, max_position_embeddings 40,960 x
// head_dim 128 x 8 B (data/engines/engines.json vllm-ascend rope_cache: the fp32 cos_sin_cache plus its copies) =
// 41,943,040 B.
constexpr double k_rope = 40960.0 * 128.0 * 8.0;

pftest::CliRun fit(const std::string& args) {
  return pftest::run_cli("fit " + args + " --max-model-len 4096 --json", {.with_stderr = false});
}

}  // namespace

TEST(QuantMx950, Issue16_MxLinearBytesByHand) {
  QuantScheme s;
  s.method = "ascend";
  s.group_size = 32;
  EXPECT_DOUBLE_EQ(linear_weight_bytes(WeightFormat::mxfp8, 4096, 2048, s, 2), 8650752.0);
  EXPECT_DOUBLE_EQ(linear_weight_bytes(WeightFormat::mxfp8, 2048, 768, s, 2), 1622016.0);
  EXPECT_DOUBLE_EQ(linear_weight_bytes(WeightFormat::mxfp4, 768, 2048, s, 2), 835584.0);
  // A ragged input dim: cdiv(100, 32) = 4 scales per row: 10 x 100 + 10 x 4.
  EXPECT_DOUBLE_EQ(linear_weight_bytes(WeightFormat::mxfp8, 10, 100, s, 2), 1040.0);
  EXPECT_STREQ(weight_format_name(WeightFormat::mxfp8), "mxfp8");
  EXPECT_DOUBLE_EQ(k_w8a8_mxfp8, 32101527552.0);
  EXPECT_DOUBLE_EQ(k_w4a4_mxfp4, 17606012928.0);
  EXPECT_DOUBLE_EQ(linear_weight_bytes(WeightFormat::mxfp4, 4096, 2048, s, 2), 4456448.0);
  EXPECT_DOUBLE_EQ(linear_weight_bytes(WeightFormat::mxfp4, 512, 2048, s, 2), 557056.0);
  EXPECT_DOUBLE_EQ(k_w4a8_mxfp, 17153028096.0);
}

// The descriptor msModelSlim's ascendv1 saver writes (save/ascendv1.py: "model_quant_type" = the export's lowest-bit
// type by QUANT_TYPE_PRIORITY, "<module>.weight" / ".weight_scale" = the module's type, kept modules "FLOAT"), for the
// glm_5_1_w4a4c8_mxfp4 recipe on a Qwen3-MoE layer (attention and MLP W8A8_MXFP8, experts W4A4_MXFP4, router FLOAT).
// Written by hand from that code: no published MX checkpoint's descriptor could be retrieved (ModelScope, where the
// Eco-Tech MX uploads live, is not in the search index).
TEST(QuantMx950, Issue16_DescriptorIsReadAsItsVariant) {
  const QuantScheme w4a4 = description(R"({
    "model_quant_type": "W4A4_MXFP4",
    "model.embed_tokens.weight": "FLOAT",
    "model.layers.0.self_attn.q_proj.weight": "W8A8_MXFP8",
    "model.layers.0.self_attn.q_proj.weight_scale": "W8A8_MXFP8",
    "model.layers.0.self_attn.o_proj.weight": "W8A8_MXFP8",
    "model.layers.0.mlp.gate.weight": "FLOAT",
    "model.layers.0.mlp.experts.0.gate_proj.weight": "W4A4_MXFP4",
    "model.layers.0.mlp.experts.0.gate_proj.weight_scale": "W4A4_MXFP4",
    "model.layers.0.mlp.experts.0.down_proj.weight": "W4A4_MXFP4",
    "lm_head.weight": "FLOAT"
  })");
  EXPECT_EQ(w4a4.linear_format, WeightFormat::mxfp8);
  EXPECT_EQ(w4a4.expert_format, WeightFormat::mxfp4);
  EXPECT_EQ(w4a4.group_size, 32);
  EXPECT_EQ(w4a4.modelslim_quant_type, "W4A4_MXFP4");
  EXPECT_EQ(module_format(w4a4, "model.layers.*.mlp.gate", false), WeightFormat::native);
  const QuantVariant* v = variant_of_checkpoint(pftest::shipped_variants(), w4a4);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->id, "w4a4_mxfp4");

  const QuantScheme w8a8 = description(R"({"model_quant_type": "W8A8_MXFP8", "model.layers.0.self_attn.q_proj.weight": "W8A8_MXFP8",
    "model.layers.0.mlp.experts.0.up_proj.weight": "W8A8_MXFP8", "lm_head.weight": "FLOAT"})");
  EXPECT_EQ(w8a8.linear_format, WeightFormat::mxfp8);
  v = variant_of_checkpoint(pftest::shipped_variants(), w8a8);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->id, "w8a8_mxfp8");

  // Same storage, another scheme: W4A16_MXFP4 experts (attention FLOAT) are told apart by the name only.
  const QuantScheme w4a16 = description(R"({"model_quant_type": "W4A16_MXFP4", "model.layers.0.self_attn.q_proj.weight": "FLOAT",
    "model.layers.0.mlp.experts.0.up_proj.weight": "W4A16_MXFP4"})");
  v = variant_of_checkpoint(pftest::shipped_variants(), w4a16);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->id, "w4a16_mxfp4");

  // W4A8_MXFP (h-mx950p): every linear fp4 + e8m0 per 32 (save/ascendv1.py on_w4a8_mx_dynamic_per_block).
  const QuantScheme w4a8 = description(R"({"model_quant_type": "W4A8_MXFP", "model.layers.0.self_attn.q_proj.weight": "W4A8_MXFP",
    "model.layers.0.mlp.experts.0.up_proj.weight": "W4A8_MXFP", "model.layers.0.mlp.gate.weight": "FLOAT"})");
  EXPECT_EQ(w4a8.linear_format, WeightFormat::mxfp4);
  v = variant_of_checkpoint(pftest::shipped_variants(), w4a8);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->id, "w4a8_mxfp");

  // A description with no model_quant_type, or one the list does not name, is no variant as before (per-module types).
  EXPECT_EQ(variant_of_checkpoint(pftest::shipped_variants(), description(R"({"model.layers.0.self_attn.q_proj.weight": "W8A8_MXFP8"})")), nullptr);
  EXPECT_EQ(variant_of_checkpoint(pftest::shipped_variants(), description(R"({"model_quant_type": "W4A4_MXFP4_DUALSCALE",
    "model.layers.0.mlp.experts.0.up_proj.weight": "W4A4_MXFP4"})")), nullptr);
}

TEST(QuantMx950, Issue16_TextAndIdsNameTheMxVariants) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"Eco-Tech/Qwen3.5-397B-A17B-w4a4-mxfp4", "w4a4_mxfp4"},
      {"Qwen3-VL-30B-A3B-Instruct-w8a8-mxfp8", "w8a8_mxfp8"},
      {"DeepSeek-V3.1-w8a8c8-mxfp8", "w8a8_mxfp8"},
      {"ascend w4a16_mxfp4", "w4a16_mxfp4"},
      {"w4a8-mxfp", "w4a8_mxfp"},
      {"ascend w4a8_mxfp4", "w4a8_mxfp"},
      {"w4a8 dynamic", "w4a8_dynamic"},  // the int4 W4A8 keeps its name
      {"msmodelslim w8a16", "w8a16_ascend"},
      {"w8a16", "ct_w8a16"},                   // the bare name stays compressed-tensors' (vLLM's own method)
      {"MXFP4 (checkpoint native)", "mxfp4"},  // gpt-oss
  };
  for (const auto& [text, id] : cases) {
    const QuantVariant* v = variant_from_text(pftest::shipped_variants(), text);
    ASSERT_NE(v, nullptr) << text;
    EXPECT_EQ(v->id, id) << text;
  }
}

// fit --variant sizes the variant of the published BF16 config (hand bytes above) on an Ascend 950DT.
TEST(QuantMx950, Issue16_FitVariantOfQwen3MoeByHand) {
  const std::string model = pftest::shared_path("models/Qwen__Qwen3-30B-A3B");
  for (const auto& [variant, bytes] : std::vector<std::pair<std::string, double>>{{"w8a8_mxfp8", k_w8a8_mxfp8}, {"w4a4_mxfp4", k_w4a4_mxfp4}, {"w4a8_mxfp", k_w4a8_mxfp}}) {
    SCOPED_TRACE(variant);
    const auto r = fit(model + " --device 950DT --engine vllm-ascend --variant " + variant);
    // quant30: fit refuses a variant no start command serves, as plan does (W4A8_MXFP: no practice, no checkpoint), its
    // sizes kept; the other two are written by the catalogued msModelSlim recipes.
    const bool servable = variant != "w4a8_mxfp";
    EXPECT_EQ(r.code, servable ? 0 : 1) << r.out.substr(0, 300);
    if (!servable) EXPECT_EQ(pftest::json_of(r).value("failure_message", std::string()).rfind("no start command: ", 0), 0u);
    EXPECT_NEAR(pftest::term_gib(pftest::json_of(r), "weights") * 1073741824.0, bytes + k_rope, 1.0);
  }
}

// The engine's rules: a scheme the installed vLLM-Ascend does not register raises its own message (exit 1, verdict
// unsupported_quantization); on a card without the A5 MX kernels the rule says so with its sources.
TEST(QuantMx950, Issue16_RejectedByVersionCardAndLayer) {
  struct Case {
    std::string args, message;
  };
  const std::string moe = "Qwen/Qwen3-30B-A3B", dense = "Qwen/Qwen3-8B";
  const std::vector<Case> rejected = {
      {moe + " --device 910B4 --engine vllm-ascend --variant w8a8_mxfp8", "W8A8_MXFP8 runs on Ascend 950 (A5) only"},
      {moe + " --device 910C --engine vllm-ascend --variant w4a4_mxfp4", "W4A4_MXFP4 runs on Ascend 950 (A5) only"},
      // 310P builds its layers from its own registry (W8A8, W8A8_DYNAMIC, W8A8S, W8A8SC) from v0.15.0rc1.
      {moe + " --device 300I-Duo --engine vllm-ascend --variant w8a8_mxfp8", "NotImplementedError: Unsupported quant_type=W8A8_MXFP8 for layer_type=linear."},
      // v0.12.0rc1's quantizer table has no W8A8_MXFP8 (it enters with v0.13.0rc2, #5723).
      {moe + " --device 950DT --engine vllm-ascend@0.12.0 --variant w8a8_mxfp8",
       "NotImplementedError: Currently, vLLM Ascend only supports following quant types:['W4A16', 'W4A8_DYNAMIC', 'W4A4_FLATQUANT_DYNAMIC', 'W8A8', "
       "'W8A8_DYNAMIC', 'W8A8_MIX', 'C8']"},
      // MXFP8 MoE enters with v0.16.0rc1 (#6670): v0.15 registers the linear scheme only.
      {moe + " --device 950DT --engine vllm-ascend@0.15.0 --variant w8a8_mxfp8", "NotImplementedError: Currently, vLLM Ascend doesn't support W8A8_MXFP8 for moe."},
      {moe + " --device 950DT --engine vllm-ascend@0.18.0 --variant w4a4_mxfp4", "NotImplementedError: Currently, vLLM Ascend doesn't support W4A4_MXFP4 for moe."},
      // W4A16_MXFP4 is a MoE scheme only (#11014); W8A16 a linear one only (#4541).
      {dense + " --device 950DT --engine vllm-ascend --variant w4a16_mxfp4",
       "NotImplementedError: Currently, vLLM Ascend doesn't support quant_type=W4A16_MXFP4 for layer_type=linear. Please use a supported quantization "
       "format or load the model with its original float weights."},
      {moe + " --device 950DT --engine vllm-ascend@0.22.1 --variant w4a16_mxfp4",
       "NotImplementedError: Currently, vLLM Ascend doesn't support quant_type=W4A16_MXFP4 for layer_type=moe."},
      {moe + " --device 910B3 --engine vllm-ascend --variant w8a16_ascend",
       "NotImplementedError: Currently, vLLM Ascend doesn't support quant_type=W8A16 for layer_type=moe. Please use a supported quantization format or "
       "load the model with its original float weights."},
      // quant29: vLLM refuses --quantization ascend before any variant rule (from 0.13 in ModelConfig, quant32).
      {dense + " --device H100-SXM --engine vllm --variant w8a8_mxfp8", "Value error, Unknown quantization method: ascend. Must be one of ['awq', "},
      // W4A8_MXFP enters with v0.21.0rc1 (#8265), linear and moe; before, the first layer met is an attention linear.
      {moe + " --device 950DT --engine vllm-ascend@0.20.2 --variant w4a8_mxfp",
       "NotImplementedError: Currently, vLLM Ascend doesn't support quant_type=W4A8_MXFP for layer_type=linear."},
      {dense + " --device 910B3 --engine vllm-ascend --variant w4a8_mxfp", "W4A8_MXFP runs on Ascend 950 (A5) only"},
      {dense + " --device 300I-Duo --engine vllm-ascend --variant w4a8_mxfp", "NotImplementedError: Unsupported quant_type=W4A8_MXFP for layer_type=linear."},
  };
  for (const auto& c : rejected) {
    SCOPED_TRACE(c.args);
    const auto r = fit(c.args);
    EXPECT_EQ(r.code, 1) << r.out.substr(0, 300);
    const Json j = pftest::json_of(r);
    EXPECT_EQ(j["failure"], "unsupported_quantization");
    EXPECT_NE(j["failure_message"].get<std::string>().find(c.message), std::string::npos) << j["failure_message"];
  }
  // Accepted: the same schemes where the engine registers them. quant30: W4A16_MXFP4, W8A16 and W4A8_MXFP have no
  // published checkpoint and no recipe, so fit refuses them as plan does ("no start command: ..."), no engine message.
  for (const std::string args : {moe + " --device 950DT --engine vllm-ascend --variant w4a16_mxfp4", moe + " --device 950DT --engine vllm-ascend@0.19.1 --variant w4a4_mxfp4",
                                 dense + " --device 910B4 --engine vllm-ascend --variant w8a16_ascend", dense + " --device 950DT --engine vllm-ascend@0.13.0 --variant w8a8_mxfp8",
                                 dense + " --device 950DT --engine vllm-ascend@0.21.0 --variant w4a8_mxfp"}) {
    SCOPED_TRACE(args);
    const auto r = fit(args);
    const Json j = pftest::json_of(r);
    const bool servable = args.find("w4a4_mxfp4") != std::string::npos || args.find("w8a8_mxfp8") != std::string::npos;
    EXPECT_EQ(r.code, servable ? 0 : 1) << r.out.substr(0, 300);
    EXPECT_EQ(j["failure"], servable ? "none" : "unsupported_quantization") << j["failure_message"];
    if (servable) EXPECT_EQ(j["failure_message"], "");
    else EXPECT_EQ(j["failure_message"].get<std::string>().rfind("no start command: no published checkpoint of ", 0), 0u) << j["failure_message"];
  }
}

// plan --variant never recommends an MX scheme on a card that rejects it, and on the 950 it serves the published
// checkpoint of that format (data/engines/quantized_checkpoints.json: the Eco-Tech upload of the vLLM-Ascend tutorial).
TEST(QuantMx950, Issue16_PlanServesThePublishedMxCheckpointOnlyOn950) {
  const auto r = pftest::run_cli("plan Qwen/Qwen3.5-397B-A17B --devices 910B4,950DT --num-devices 8 --variant w4a4_mxfp4 --json", {.with_stderr = false});
  const Json p = pftest::json_of(r);
  size_t on_950 = 0;
  for (const auto& row : p["recommended"]) {
    EXPECT_EQ(row["device"], "950DT") << row.dump().substr(0, 300);
    EXPECT_EQ(row["variant_id"], "w4a4_mxfp4");
    EXPECT_EQ(row["launch"]["checkpoint"], "Eco-Tech/Qwen3.5-397B-A17B-w4a4-mxfp4") << row["launch"].dump();
    EXPECT_NE(row["launch"]["serve"].get<std::string>().find("--quantization ascend"), std::string::npos) << row["launch"]["serve"];
    ++on_950;
  }
  EXPECT_GT(on_950, 0u) << r.out.substr(0, 600);
  size_t on_910b4 = 0;
  for (const auto& row : p["rejected"])
    if (row["device"] == "910B4") {
      EXPECT_NE(row["reason"].get<std::string>().find("W4A4_MXFP4 runs on Ascend 950 (A5) only"), std::string::npos) << row["reason"];
      ++on_910b4;
    }
  EXPECT_GT(on_910b4, 0u);
}

// Bad input in a variant list: modelslim_quant_type names a quant_model_description.json scheme, so only a variant
// served with --quantization ascend may carry it (corrupt, naming the file and the record).
TEST(QuantMx950, Issue16_ModelslimQuantTypeNeedsTheAscendMethod) {
  auto root = parse_json(R"({"schema_version": 1, "variants": [{"id": "x_mx", "name": "x", "tool": "t", "engine_quantization": "fp8",
    "modelslim_quant_type": "W8A8_MXFP8", "aliases": [], "weights": {"linear": "mxfp8", "experts": "mxfp8"}, "keep_high_precision": [],
    "layout": "l", "descriptor": "d", "rules": [], "source": "s"}]})", "v.json");
  ASSERT_TRUE(root.has_value());
  auto bad = parse_variant_catalog(*root, "v.json");
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().kind, ErrorKind::corrupt);
  EXPECT_NE(bad.error().message.find("v.json: variants[x_mx]: modelslim_quant_type needs engine_quantization 'ascend', found 'fp8'"), std::string::npos)
      << bad.error().message;
  (*root)["variants"][0]["engine_quantization"] = "ascend";
  auto good = parse_variant_catalog(*root, "v.json");
  ASSERT_TRUE(good.has_value()) << good.error().describe();
  EXPECT_EQ(good->variants[0].scheme.modelslim_quant_type, "W8A8_MXFP8");
  EXPECT_EQ(good->variants[0].scheme.linear_format, WeightFormat::mxfp8);
}

// Issue 16 (h-mx950p): the default plan (no --variant) on an Ascend 950 tries the MX schemes the engine takes there, and
// every MX row starts as written: the Eco-Tech upload where data/engines/quantized_checkpoints.json lists one for the
// model, else msModelSlim's MX config written beside the output and `msmodelslim quant --config_path` on it first.
// Before: the sweep's list was w8a8, w4a8_dynamic, w4a16, fp8_tensor, awq on every NPU, so no MX row was ever offered,
// and `plan --variant w8a8_mxfp8` of a model without an Eco-Tech upload was "no start command: ... no conversion recipe".
TEST(QuantMx950, Issue16_DefaultPlanOn950OffersMxRowsThatStartAsWritten) {
  const auto r = pftest::run_cli("plan --device 950DT --num-devices 8 --json", {.with_stderr = false});
  ASSERT_EQ(r.code, 0) << r.out.substr(0, 300);
  const Json p = pftest::json_of(r);
  std::map<std::string, size_t> rows;  // variant id -> recommended rows
  bool vl_published = false, qwen3_moe_converted = false;
  for (const auto& row : p["recommended"]) {
    const std::string id = row["variant_id"].get<std::string>();
    if (id != "w8a8_mxfp8" && id != "w4a4_mxfp4" && id != "w4a16_mxfp4") continue;
    ++rows[id];
    const Json& l = row["launch"];
    const std::string model = row["model"].get<std::string>(), serve = l["serve"].get<std::string>(), checkpoint = l["checkpoint"].get<std::string>();
    SCOPED_TRACE(model + " " + id);
    EXPECT_NE(serve.find("--quantization ascend"), std::string::npos) << serve;
    EXPECT_NE(serve.find("vllm serve " + checkpoint + " "), std::string::npos) << serve;
    if (checkpoint.rfind("Eco-Tech/", 0) == 0) {
      EXPECT_NE(l["env"].dump().find("VLLM_USE_MODELSCOPE=true"), std::string::npos);
      vl_published |= model == "Qwen/Qwen3-VL-30B-A3B-Instruct" && checkpoint == "Eco-Tech/Qwen3-VL-30B-A3B-Instruct-w8a8-mxfp8";
      continue;
    }
    // The conversion: the output directory is /models/NAME + the recipe's suffix (NAME: the model, or the BF16 original of
    // a catalogued FP8 / NVFP4 release), the config is written at that path + .yaml before msmodelslim reads it, and the
    // config's quantized dtypes are the variant's.
    const std::string out = checkpoint, suffix = id == "w8a8_mxfp8" ? "-W8A8-MXFP8" : "-W4A4-MXFP4";
    EXPECT_EQ(out.rfind("/models/", 0), 0u) << out;
    EXPECT_EQ(out.substr(out.size() - suffix.size()), suffix) << out;
    const std::string prepare = l["prepare"].dump();
    const size_t written = prepare.find("> " + out + ".yaml"), read = prepare.find("--config_path " + out + ".yaml");
    EXPECT_NE(written, std::string::npos) << prepare.substr(0, 600);
    EXPECT_NE(read, std::string::npos) << prepare.substr(0, 600);
    EXPECT_LT(written, read);
    EXPECT_NE(prepare.find("--save_path " + out + " "), std::string::npos);
    EXPECT_NE(prepare.find("dtype: mxfp8"), std::string::npos);
    EXPECT_EQ(prepare.find("dtype: mxfp4") != std::string::npos, id == "w4a4_mxfp4");
    qwen3_moe_converted |= model == "Qwen/Qwen3-30B-A3B";
  }
  EXPECT_GT(rows["w8a8_mxfp8"], 0u) << r.out.substr(0, 300);
  EXPECT_GT(rows["w4a4_mxfp4"], 0u);
  EXPECT_TRUE(vl_published);
  EXPECT_TRUE(qwen3_moe_converted);
  // W4A4_MXFP4 is tried on MoE models only: on a dense one its recipe writes no W4A4_MXFP4 layer (W8A8_MXFP8's bytes).
  // Dense catalogue models (config.json without experts): a W8A8_MXFP8 row, no W4A4_MXFP4 row, recommended or rejected.
  // quant29: not Llama-3.3-70B-Instruct: msModelSlim registers no Llama adapter (config/config.ini at 3de0a3c), so no
  // msModelSlim row of it is tried at all.
  for (const std::string dense : {"Qwen/Qwen3-32B"}) {
    size_t w8 = 0, w4 = 0;
    for (const auto* list : {&p["recommended"], &p["rejected"]})
      for (const auto& row : *list)
        if (row["model"] == dense) {
          w8 += row["variant_id"] == "w8a8_mxfp8";
          w4 += row["variant_id"] == "w4a4_mxfp4";
        }
    EXPECT_GT(w8, 0u) << dense;
    EXPECT_EQ(w4, 0u) << dense;
  }
}

// The MX variants are never tried on the cards the engine cannot run them on (910, A2, A3, 310P): no row of them,
// recommended or rejected, in the default plan (before this change there were none either; the rule's text stays
// the answer of `plan --variant w8a8_mxfp8` there, Issue16_PlanServesThePublishedMxCheckpointOnlyOn950).
TEST(QuantMx950, Issue16_DefaultPlanTriesNoMxVariantOffThe950) {
  for (const std::string device : {"910A", "910B3", "910C", "300I-Duo"}) {
    SCOPED_TRACE(device);
    const auto r = pftest::run_cli("plan --device " + device + " --num-devices 8 --json", {.with_stderr = false});
    ASSERT_EQ(r.code, 0) << r.out.substr(0, 300);
    const Json p = pftest::json_of(r);
    size_t rows = 0;
    for (const auto* list : {&p["recommended"], &p["rejected"]})
      for (const auto& row : *list) {
        ++rows;
        EXPECT_EQ(row["variant_id"].get<std::string>().find("mxfp"), std::string::npos) << row["model"] << " " << row["variant_id"];
      }
    EXPECT_GT(rows, 0u);
  }
  // An engine version that registers no MX scheme (v0.12: the quantizer table of that tag) tries none on the 950 either.
  const auto old = pftest::run_cli("plan --device 950DT --num-devices 8 --engine vllm-ascend@0.12.0 --json", {.with_stderr = false});
  const Json p = pftest::json_of(old);
  for (const auto* list : {&p["recommended"], &p["rejected"]})
    for (const auto& row : *list) EXPECT_EQ(row["variant_id"].get<std::string>().find("mxfp"), std::string::npos) << row["model"];
}

// fit --variant = the default plan's row = validate, on one 950DT deployment of Qwen3-30B-A3B (both MX variants, 1 card,
// 16,384 tokens), against the bytes worked out by hand at the top of this file (+ the rotary caches).
TEST(QuantMx950, Issue16_FitPlanAndValidateAgreeOnThe950MxRows) {
  const auto r = pftest::run_cli("plan --device 950DT --num-devices 1 --context 16384 --json", {.with_stderr = false});
  const Json p = pftest::json_of(r);
  const std::string dir = pftest::scratch_dir("mx950p");
  for (const auto& [variant, bytes] : std::vector<std::pair<std::string, double>>{{"w8a8_mxfp8", k_w8a8_mxfp8}, {"w4a4_mxfp4", k_w4a4_mxfp4}}) {
    SCOPED_TRACE(variant);
    const Json* row = nullptr;
    for (const auto& x : p["recommended"])
      if (x["model"] == "Qwen/Qwen3-30B-A3B" && x["variant_id"] == variant) row = &x;
    ASSERT_NE(row, nullptr) << r.out.substr(0, 300);
    EXPECT_NEAR((*row)["weights_gib_per_device"].get<double>() * 1073741824.0, bytes + k_rope, 1.0);
    const auto f = pftest::run_cli("fit Qwen/Qwen3-30B-A3B --device 950DT --engine vllm-ascend --max-model-len 16384 --variant " + variant + " --json",
                                   {.with_stderr = false});
    ASSERT_EQ(f.code, 0) << f.out.substr(0, 300);
    const Json fj = pftest::json_of(f);
    EXPECT_DOUBLE_EQ(pftest::term_gib(fj, "weights"), (*row)["weights_gib_per_device"].get<double>());
    EXPECT_DOUBLE_EQ(pftest::term_gib(fj, "available KV"), (*row)["available_kv_gib"].get<double>());
    EXPECT_EQ(fj["kv_cache"]["tokens"].get<int64_t>(), (*row)["kv_cache_tokens"].get<int64_t>());
    const std::string file = dir + "/" + variant + ".jsonl";
    std::ofstream(file) << Json({{"id", "mx950p-" + variant}, {"engine", "vllm-ascend"}, {"device", "950DT"}, {"num_devices", 1}, {"model", "Qwen/Qwen3-30B-A3B"},
                                 {"quantization", "ascend " + variant}, {"tensor_parallel_size", 1}, {"max_model_len", 16384}, {"weights_gib", 1.0},
                                 {"available_kv_gib", 1.0}, {"kv_cache_tokens", 1}})
                                  .dump()
                           << "\n";
    const Json v = pftest::json_of(pftest::run_cli("validate " + file + " --json", {.with_stderr = false}));
    ASSERT_FALSE(v["rows"].empty());
    EXPECT_DOUBLE_EQ(v["rows"][0]["fields"]["weights_gib"]["predicted"].get<double>(), (*row)["weights_gib_per_device"].get<double>());
    EXPECT_DOUBLE_EQ(v["rows"][0]["fields"]["available_kv_gib"]["predicted"].get<double>(), (*row)["available_kv_gib"].get<double>());
  }
}
