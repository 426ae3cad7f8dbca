// Issue 16 / 15: which Gated-DeltaNet modules the msModelSlim variants keep in the model dtype.
// Source: every msModelSlim practice for the Qwen3.5 family (model_type qwen3_5 / qwen3_5_moe) quantizes
// only '*self_attn*' and '*mlp*' ('*mlp.experts*' for the MoE models), so the split GDN projections
// in_proj_qkv, in_proj_z, in_proj_b, in_proj_a and out_proj stay bf16 (lab_practice/qwen3_5_moe/
// qwen3_5_dense_w8a8.yaml for Qwen3.5-27B, qwen3_6_dense_w8a8.yaml for Qwen3.6-27B, Ascend/msmodelslim
// at 3de0a3c). The Qwen3-Next practice quantizes its fused in_proj_qkvz (qwen3-next-80b-a3b-w8a8.yaml).
#include <gtest/gtest.h>

#include <cstdint>

#include "model/hf_config.hpp"
#include "model/model_spec.hpp"
#include "model/quant_variant.hpp"
#include "../test_support.hpp"

using namespace preflight;
using namespace preflight::model;

namespace {
const QuantVariant& variant(const char* id) {
  static const auto& c = load_variant_catalog();
  EXPECT_TRUE(c.has_value());
  auto v = find_variant(*c, id);
  EXPECT_TRUE(v.has_value()) << id;
  return **v;
}
}  // namespace

TEST(QuantGdn, Issue16_Qwen35SplitGdnProjectionsStayInModelDtype) {
  const struct {
    const char* id;
    WeightFormat attention;  // what self_attn / the Qwen3-Next fused projection get
    WeightFormat mlp;
  } cases[] = {{"w8a8", WeightFormat::modelslim_w8a8, WeightFormat::modelslim_w8a8},
               {"w8a8_dynamic", WeightFormat::modelslim_w8a8_dynamic, WeightFormat::modelslim_w8a8_dynamic},
               {"w4a8_dynamic", WeightFormat::modelslim_w8a8_dynamic, WeightFormat::modelslim_w4a8_dynamic}};
  for (const auto& c : cases) {
    const QuantScheme& s = variant(c.id).scheme;
    for (const char* m : {"in_proj_qkv", "in_proj_z", "in_proj_b", "in_proj_a", "out_proj"})
      EXPECT_EQ(module_format(s, std::string("model.language_model.layers.*.linear_attn.") + m, false), WeightFormat::native) << c.id << " " << m;
    // The full-attention layers and the MLP are quantized as before.
    EXPECT_EQ(module_format(s, "model.language_model.layers.*.self_attn.q_proj", false), c.attention) << c.id;
    EXPECT_EQ(module_format(s, "model.language_model.layers.*.self_attn.o_proj", false), c.attention) << c.id;
    EXPECT_EQ(module_format(s, "model.language_model.layers.*.mlp.down_proj", false), c.mlp) << c.id;
  }
  // Qwen3-Next's fused input projection is not caught by the Qwen3.5 names: its practice quantizes it.
  EXPECT_EQ(module_format(variant("w8a8").scheme, "model.layers.*.linear_attn.in_proj_qkvz", false), WeightFormat::modelslim_w8a8);
  EXPECT_EQ(module_format(variant("w8a8_dynamic").scheme, "model.layers.*.linear_attn.in_proj_qkvz", false), WeightFormat::modelslim_w8a8_dynamic);
  EXPECT_EQ(module_format(variant("w8a8").scheme, "model.layers.*.linear_attn.in_proj_ba", false), WeightFormat::native);
}

// Qwen/Qwen3.5-27B (../shared/models): the bytes the W8A8 variants save against bf16, derived by hand from
// the config: 16 full-attention layers (q_proj 5120 -> 2 x 24 x 256 with the output gate, k_proj and v_proj
// 5120 -> 4 x 256, o_proj 6144 -> 5120) and 64 MLPs (gate/up 5120 -> 17408, down 17408 -> 5120) are
// quantized; nothing of the 48 GDN layers is. A quantized [r, c] linear stores r x c int8 bytes plus
// `per_row` bytes per output channel and `per_tensor` bytes once, instead of 2 r c bf16 bytes.
TEST(QuantGdn, Issue16_Qwen35_27BW8A8SavesOnlyAttentionAndMlpBytes) {
  auto base = load_hf_config(pftest::shared_path("models/Qwen__Qwen3.5-27B/config.json"));
  ASSERT_TRUE(base.has_value()) << base.error().describe();
  const struct {
    const char* id;
    int64_t per_row, per_tensor;
  } cases[] = {
      // Static W8A8: weight_scale + weight_offset (bf16), quant_bias int32, deq_scale fp32 per row; input_scale + input_offset (bf16).
      {"w8a8", 2 + 2 + 4 + 4, 2 + 2},
      // W8A8_DYNAMIC: weight_scale + weight_offset (bf16) per row.
      {"w8a8_dynamic", 2 + 2, 0},
  };
  for (const auto& c : cases) {
    auto saved = [&](int64_t r, int64_t cols) { return 2 * r * cols - (r * cols + r * c.per_row + c.per_tensor); };
    const int64_t attention = saved(12288, 5120) + 2 * saved(1024, 5120) + saved(5120, 6144);
    const int64_t mlp = 2 * saved(17408, 5120) + saved(5120, 17408);
    const int64_t want = 16 * attention + 64 * mlp;
    ModelSpec bf16 = *base, quant = *base;
    quant.quant = variant(c.id).scheme;
    const double got = compute_weight_bytes(bf16).total - compute_weight_bytes(quant).total;
    EXPECT_DOUBLE_EQ(got, static_cast<double>(want)) << c.id << ": saves " << got / 1073741824.0 << " GiB, hand " << want / 1073741824.0 << " GiB";
  }
  // The static W8A8 figure: 18,756,074,496 bytes (17.47 GiB); quantizing in_proj_qkv and in_proj_z as well
  // (the later qwen3_6_27B_w8a8.yaml practice) would save 48 x (52,305,916 + 31,383,548) = 4,017,094,272 more.
  EXPECT_EQ(16 * (62767100LL + 2 * 5230588LL + 31395836LL) + 64 * (2 * 88920060LL + 89067516LL), 18756074496LL);
}
