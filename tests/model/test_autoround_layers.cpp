// Issue 16 (h-quant25): AutoRound's per-layer settings, "extra_config" and "block_name_to_quantize", read from a real
// descriptor and sized by hand. vLLM (vllm/model_executor/layers/quantization/auto_round.py, AutoRoundConfig.from_config
// and get_layer_config, vllm-project/vllm commit 04aa528e): an extra_config entry applies to the layer of exactly that
// name ("bits" / "group_size" default to the checkpoint's); other layers are quantized only when a listed block begins
// their name; a fused qkv_proj / gate_up_proj takes its shards' settings, which must agree ("Fused module ... requires
// consistent quant config"); 16 bits or more is UnquantizedLinearMethod.
//
// The descriptor: tests/fixtures/quant/Intel__Qwen3.5-397B-A17B-int4-AutoRound/quantization_config.json, cut after the
// 11th of its extra_config entries (sources in tests/fixtures/quant/README.md); the model around it:
// ../shared/models/Qwen__Qwen3.5-397B-A17B/config.json.
// Before: neither key was read; the vision tower was sized at 4 bits and extra_config overrides were ignored.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "base/json_util.hpp"
#include "model/hf_config.hpp"
#include "model/model_spec.hpp"
#include "model/quant_scheme.hpp"
#include "../test_support.hpp"
#include "../variant_support.hpp"

using namespace preflight;
using namespace preflight::model;

namespace {

const char* k_fixture = "Intel__Qwen3.5-397B-A17B-int4-AutoRound/quantization_config.json";

Json load(const std::string& path) {
  auto j = parse_json(pftest::read_all(path), path);
  EXPECT_TRUE(j.has_value()) << path;
  return j ? *j : Json{};
}

double total_bytes(const ModelSpec& spec) {
  double total = 0;
  for (const auto& g : spec.weights)
    if (g.part != Part::mtp) total += weight_group_bytes(spec, g);
  return total;
}

// The GPTQ layout (auto_round:auto_gptq) of an r x c linear at 4 bits, group 128, written out: qweight r*c/2, fp16
// scales [c/128, r], int32 qzeros [c/128, r/8] (r/2 bytes a group), int32 g_idx [c].
double gptq4_g128(double r, double c) {
  const double groups = std::ceil(c / 128.0);
  return r * c / 2.0 + groups * r * 2.0 + groups * r / 2.0 + 4.0 * c;
}

// TinyLlama's config (the ModelCloud export's) with an AutoRound quantization_config.
Json tinyllama(const Json& quant) {
  Json config = load(pftest::quant_fixture("ModelCloud__TinyLlama-1.1B-Chat-v1.0-GPTQ-4bit-10-25-2024/config.json"));
  config["quantization_config"] = quant;
  return config;
}

Json autoround_int4() {
  return Json{{"bits", 4}, {"group_size", 128}, {"sym", true}, {"data_type", "int"}, {"quant_method", "auto-round"},
              {"packing_format", "auto_round:auto_gptq"}};
}

}  // namespace

TEST(AutoRoundLayers, Issue16_RealDescriptorIsRead) {
  auto s = parse_quantization_config(load(pftest::quant_fixture(k_fixture)), "quantization_config.json");
  ASSERT_TRUE(s.has_value()) << s.error().describe();
  EXPECT_EQ(s->linear_format, WeightFormat::int4_group);
  EXPECT_EQ(s->group_size, 128);
  EXPECT_EQ(s->autoround_blocks, std::vector<std::string>{"model.layers"});
  ASSERT_EQ(s->autoround_layers.size(), 11u);
  const auto gate = s->autoround_layers.find("model.layers.0.mlp.shared_expert_gate");
  ASSERT_NE(gate, s->autoround_layers.end());
  EXPECT_EQ(gate->second.bits, 16);
  EXPECT_NE(s->detail.find("11 extra_config layers"), std::string::npos) << s->detail;
  EXPECT_NE(s->detail.find("quantized blocks model.layers"), std::string::npos) << s->detail;
}

// Qwen3.5-397B-A17B under the descriptor: the text layers (the block "model.language_model.layers") at 4 bits, the
// vision tower outside the block in bf16, the shared-expert gates the extra_config names in bf16.
TEST(AutoRoundLayers, Issue16_BlocksLeaveTheVisionTowerInBf16) {
  Json config = load(pftest::shared_path("models/Qwen__Qwen3.5-397B-A17B/config.json"));
  const Json quant = load(pftest::quant_fixture(k_fixture));
  config["quantization_config"] = quant;
  auto spec = parse_hf_config(config, "config.json");
  ASSERT_TRUE(spec.has_value()) << spec.error().describe();
  Json no_blocks = quant;
  no_blocks.erase("block_name_to_quantize");
  config["quantization_config"] = no_blocks;
  auto before = parse_hf_config(config, "config.json");
  ASSERT_TRUE(before.has_value());

  // One vision module by hand: the 27 blocks' fused qkv, 3 x 1152 = 3456 rows of 1152:
  //   bf16 3456 x 1152 x 2 x 27 = 214,990,848; 4 bits g128 (9 groups): (1,990,656 + 62,208 + 15,552 + 4,608) x 27
  //   = 55,971,648
  bool seen_qkv = false;
  double vision_bf16 = 0, vision_int4 = 0;
  for (const auto& g : spec->weights) {
    if (g.part != Part::vision || !g.linear) continue;
    const double bf16 = static_cast<double>(g.rows) * static_cast<double>(g.cols) * 2.0 * static_cast<double>(g.count);
    const double int4 = gptq4_g128(static_cast<double>(g.rows), static_cast<double>(g.cols)) * static_cast<double>(g.count);
    EXPECT_DOUBLE_EQ(weight_group_bytes(*spec, g), bf16) << g.module;
    if (g.module == "model.visual.blocks.*.attn.qkv") {
      seen_qkv = true;
      EXPECT_DOUBLE_EQ(bf16, 214990848.0);
      EXPECT_DOUBLE_EQ(int4, 55971648.0);
    }
    vision_bf16 += bf16;
    vision_int4 += int4;
  }
  EXPECT_TRUE(seen_qkv);
  ASSERT_GT(vision_bf16, 0.0);
  // Every text group sizes the same with or without the block list (all inside it); the difference is the vision tower.
  for (size_t i = 0; i < spec->weights.size(); ++i)
    if (spec->weights[i].part == Part::text)
      EXPECT_DOUBLE_EQ(weight_group_bytes(*spec, spec->weights[i]), weight_group_bytes(*before, before->weights[i])) << spec->weights[i].module;
  EXPECT_NEAR(total_bytes(*spec) - total_bytes(*before), vision_bf16 - vision_int4, 1.0);
  // The shared-expert gates ([1, 4096] a layer, 60 layers): bf16, 491,520 B.
  double gates = 0;
  for (const auto& g : spec->weights)
    if (g.part == Part::text && g.module == "model.layers.*.mlp.shared_expert_gate") gates += weight_group_bytes(*spec, g);
  EXPECT_DOUBLE_EQ(gates, 4096.0 * 2 * 60);
}

// extra_config overrides, as the published mixed exports write them: Intel/GLM-4.7-int4-mixed-AutoRound lists layer 0's
// seven linear layers at {"bits": 8, "group_size": 128, "sym": true, "data_type": "int", "act_bits": 16};
// YCWTG/Qwen3-Coder-Next-int2-mixed-AutoRound keeps layers at {"bits": 16}. On TinyLlama (shapes in
// test_gptq_dynamic.cpp), layer 0 at 8 bits g128 and layer 1's MLP at 16 bits:
//   layer 0: qweight 44,040,192 + scales 688,128 + qzeros (8 bits, [in/128, out/4] int32) 344,064 + g_idx 71,680
//     = 45,144,064
//   layer 1: attention at 4 bits g128 4,935,680 + MLP bf16 3 x 5632 x 2048 x 2 = 69,206,016 -> 74,141,696
//   layers 2..21 at 4 bits g128: 20 x 22,951,936 = 459,038,720; embed + lm_head + norms 262,328,320
//   = 840,652,800 (every layer at 4 bits: 22 x 22,951,936 + 262,328,320 = 767,270,912)
TEST(AutoRoundLayers, Issue16_ExtraConfigOverridesSizedByHand) {
  Json quant = autoround_int4();
  const Json eight = {{"bits", 8}, {"group_size", 128}, {"sym", true}, {"data_type", "int"}, {"act_bits", 16}};
  for (const char* m : {"self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj", "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj"})
    quant["extra_config"][std::string("model.layers.0.") + m] = eight;
  for (const char* m : {"mlp.gate_proj", "mlp.up_proj", "mlp.down_proj"}) quant["extra_config"][std::string("model.layers.1.") + m] = {{"bits", 16}};
  auto spec = parse_hf_config(tinyllama(quant), "config.json");
  ASSERT_TRUE(spec.has_value()) << spec.error().describe();
  EXPECT_NEAR(total_bytes(*spec), 840652800.0, 1.0);
  auto plain = parse_hf_config(tinyllama(autoround_int4()), "config.json");
  ASSERT_TRUE(plain.has_value());
  EXPECT_NEAR(total_bytes(*plain), 767270912.0, 1.0);

  // fit on the directory: the same tensors plus vLLM's rotary cache ([2048, 64] x 2 B).
  const std::string dir = pftest::scratch_dir("autoround-extra-config");
  std::ofstream(dir + "/config.json") << tinyllama(quant).dump(2);
  const double weights = pftest::fit_weights_bytes(dir);
  EXPECT_NEAR(weights, 840652800.0 + 2048.0 * 64 * 2, 1e-6 * 840652800.0);
}

// Block lists as exports write them: a comma-separated string, a list, a list of lists (to_quant_block_names).
// "model.layers.0,model.layers.1": layers 0, 1 and 10..19 at 4 bits ("model.layers.1" begins "model.layers.10" ..
// "model.layers.19" too, as Python's startswith does), 2..9, 20 and 21 in bf16: 12 layers at 4 bits, 10 in bf16:
//   12 x 22,951,936 + 10 x 88,080,384 (44,040,192 x 2) + 262,328,320 = 1,418,555,392
TEST(AutoRoundLayers, Issue16_BlockListsAsWritten) {
  const double expected = 12 * 22951936.0 + 10 * 88080384.0 + 262328320.0;
  for (const Json& blocks : {Json("model.layers.0,model.layers.1"), Json::array({"model.layers.0", "model.layers.1"}),
                             Json::array({Json::array({"model.layers.0", "model.layers.1"})})}) {
    SCOPED_TRACE(blocks.dump());
    for (const char* key : {"block_name_to_quantize", "to_quant_block_names"}) {
      Json quant = autoround_int4();
      quant[key] = blocks;
      auto spec = parse_hf_config(tinyllama(quant), "config.json");
      ASSERT_TRUE(spec.has_value()) << spec.error().describe();
      EXPECT_NEAR(total_bytes(*spec), expected, 1.0) << key;
    }
  }
}

// Bad entries name the file and the key; shards of one fused layer that differ are refused with vLLM's reason.
TEST(AutoRoundLayers, Issue16_BadEntriesAreRefused) {
  struct Row {
    std::function<void(Json&)> patch;
    std::string fragment;
  };
  const std::vector<Row> rows = {
      {[](Json& q) { q["extra_config"] = Json::array(); }, "quantization_config.extra_config: expected an object"},
      {[](Json& q) { q["extra_config"] = {{"model.layers.0.mlp.down_proj", 8}}; }, "extra_config.model.layers.0.mlp.down_proj: expected an object"},
      {[](Json& q) { q["extra_config"] = {{"model.layers.0.mlp.down_proj", {{"bits", 5}}}}; }, "bits 5: AutoRound layers take 2, 3, 4 or 8 bits"},
      {[](Json& q) { q["extra_config"] = {{"model.layers.0.mlp.down_proj", {{"group_size", 0}}}}; }, "group_size 0: expected a positive size or -1"},
      {[](Json& q) { q["block_name_to_quantize"] = 3; }, "block_name_to_quantize: expected a string or a list of block names"},
      {[](Json& q) { q["extra_config"] = {{"model.layers.0.self_attn.q_proj", {{"bits", 8}}}}; },
       "requires consistent quant config"},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.fragment);
    Json quant = autoround_int4();
    row.patch(quant);
    const std::string dir = pftest::scratch_dir("autoround-bad");
    std::ofstream(dir + "/config.json") << tinyllama(quant).dump(2);
    const auto r = pftest::run_cli("fit " + dir + " --device H100-SXM --max-model-len 2048");
    EXPECT_EQ(r.code, 2) << r.out.substr(0, 300);
    EXPECT_NE(r.out.find(row.fragment), std::string::npos) << r.out.substr(0, 400);
    EXPECT_NE(r.out.find("config.json"), std::string::npos) << r.out.substr(0, 300);
  }
}
