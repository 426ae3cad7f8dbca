// Issue 15 (vis28): vLLM's encoder pass tensor by tensor (src/estimate/vision_pass.cpp), worked by hand from the
// configs in shared/models and the forward read in vLLM's code (qwen2_5_vl.py / qwen3_vl.py, vLLM main 2025-12 to
// 2026-06): per patch, per rank, values in bf16 unless named.
#include <gtest/gtest.h>

#include "estimate/fit.hpp"
#include "estimate/vision_pass.hpp"
#include "fit_setup.hpp"

using namespace preflight;

namespace {
const estimate::MemoryTerm& vision_term(const estimate::FitEstimate& e) { return e.ranks.front().activation.vision_encoder; }
}  // namespace

// Qwen3-VL-8B (vision_config: hidden 1,152, intermediate 4,304, patch 16, temporal patch 2, merge 2, deepstack
// [8, 16, 24]; text hidden 4,096) on an H100 with vLLM 0.23, TP 1, max_model_len 32,768: one 16,384-token image,
// 65,536 patches.
//  attention: block input + norm1 output 2 x 1,152 = 2,304; qkv 3,456; q/k rearranged copy 2,304; rotated q/k 2,304;
//             the kernel's output 1,152 (FlashAttention: the final rearrange is a view, no copy): 2,304 + 8 x 1,152 = 11,520
//  MLP:       2 x 1,152 + 2 x 4,304 = 10,912, so the attention is the peak
//  whole:     position embeddings 1,152; deepstack 3 x 4,096 / 4 = 3,072
//  (11,520 + 1,152 + 3,072) x 2 B = 31,488 B; pixels 3 x 2 x 16 x 16 = 1,536 x (4 + 2) B = 9,216 B; 40,704 B a patch
//  65,536 x 40,704 B = 2,667,577,344 B (2.484 GiB; the fitted 1.8 x (4,304 + 4 x 1,152) x 2 + 9,216 gave 41,299 B a patch).
// At TP 2: attention 2,304 + 8 x 576 = 6,912 against MLP 2,304 + 4,304 = 6,608; (6,912 + 4,224) x 2 + 9,216 = 31,488 B.
TEST(VisionPass, Issue15_Qwen3VlEncoderPassWorkedByHand) {
  auto s = pftest::fit_setup("Qwen/Qwen3-VL-8B-Instruct", "H100-SXM", "vllm", "0.23.0");
  const auto tp1 = estimate::terms::vision_pass_per_patch(s.model, 1, 1536, 2.0);
  ASSERT_TRUE(tp1.has_value());
  EXPECT_EQ(tp1->kind, estimate::terms::VisionBlockKind::qwen3_vl);
  EXPECT_DOUBLE_EQ(tp1->attention_values, 11520.0);
  EXPECT_DOUBLE_EQ(tp1->mlp_values, 10912.0);
  EXPECT_DOUBLE_EQ(tp1->position_values, 1152.0);
  EXPECT_DOUBLE_EQ(tp1->deepstack_values, 3072.0);
  EXPECT_DOUBLE_EQ(tp1->pixel_bytes, 9216.0);
  EXPECT_DOUBLE_EQ(tp1->bytes, 40704.0);
  const auto tp2 = estimate::terms::vision_pass_per_patch(s.model, 2, 1536, 2.0);
  ASSERT_TRUE(tp2.has_value());
  EXPECT_DOUBLE_EQ(tp2->attention_values, 6912.0);
  EXPECT_DOUBLE_EQ(tp2->mlp_values, 6608.0);
  EXPECT_DOUBLE_EQ(tp2->bytes, 31488.0);

  estimate::Deployment d;
  d.max_model_len = 32768;
  const auto e = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
  EXPECT_DOUBLE_EQ(e.activation_vision_bytes, 2667577344.0);
  EXPECT_DOUBLE_EQ(e.activation_vision_pixel_bytes, 65536.0 * 9216.0);
  EXPECT_DOUBLE_EQ(e.activation_vision_unit_bytes, 0.0);  // no fitted unit: the factor does not scale this pass
  // The provenance names the terms.
  const std::string& rule = vision_term(e).rule;
  for (const char* part : {"attention peak", "Qwen3-VL tower", "2 x hidden + 8 x hidden / TP = 11520", "position embeddings 1152",
                           "deepstack features 3 x 4096 / 4 = 3072", "1536 pixel values x (4 + 2) B = 40704 B"})
    EXPECT_NE(rule.find(part), std::string::npos) << part << " in: " << rule;
}

// Qwen2.5-VL-7B (hidden 1,280, intermediate 3,420, patch 14: 3 x 2 x 14 x 14 = 1,176 pixel values a patch), TP 1:
//  attention 2 x 1,280 + 8 x 1,280 = 12,800
//  MLP: block input, the attention output, the fused norm's output and residual 4 x 1,280 = 5,120, gate_up 6,840 and
//       act_and_mul 3,420: 15,380, the peak
//  15,380 x 2 B = 30,760 B + 1,176 x 6 B = 7,056 B: 37,816 B a patch. Its 16,384-token image at max_model_len 16,384 is
//  65,536 patches: 2,478,309,376 B.
TEST(VisionPass, Issue15_Qwen25VlPeakIsTheGatedMlp) {
  auto s = pftest::fit_setup("Qwen/Qwen2.5-VL-7B-Instruct", "A100-80G-SXM", "vllm", "0.23.0");
  const auto p = estimate::terms::vision_pass_per_patch(s.model, 1, 1176, 2.0);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->kind, estimate::terms::VisionBlockKind::qwen2_5_vl);
  EXPECT_DOUBLE_EQ(p->attention_values, 12800.0);
  EXPECT_DOUBLE_EQ(p->mlp_values, 15380.0);
  EXPECT_DOUBLE_EQ(p->position_values, 0.0);
  EXPECT_DOUBLE_EQ(p->deepstack_values, 0.0);
  EXPECT_DOUBLE_EQ(p->bytes, 37816.0);
  estimate::Deployment d;
  d.max_model_len = 16384;
  const auto e = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
  EXPECT_DOUBLE_EQ(e.activation_vision_bytes, 65536.0 * 37816.0);
  EXPECT_NE(vision_term(e).rule.find("MLP peak (Qwen2.5-VL tower)"), std::string::npos) << vision_term(e).rule;
}

// Where the pass is not derived, the platform's fitted factor stays: vLLM-Ascend (its padded attention makes the
// same count 4.88 GiB for a run that printed a 3.86 GiB peak: docs/memory-model.md) and a generic ViT tower
// (LLaVA-1.6's CLIP) on vLLM.
TEST(VisionPass, Issue15_FactorStaysWhereThePassIsNotDerived) {
  auto npu = pftest::fit_setup("Qwen/Qwen3-VL-8B-Instruct", "910B3", "vllm-ascend", "0.23.0");
  estimate::Deployment d;
  d.max_model_len = 32768;
  const auto n = estimate::estimate_fit(npu.model, npu.device, npu.engine, npu.overheads, d);
  EXPECT_DOUBLE_EQ(n.activation_vision_unit_bytes, 65536.0 * (4304 + 4 * 1152) * 2);
  EXPECT_DOUBLE_EQ(n.activation_vision_bytes, npu.overheads.vision_activation_factor * n.activation_vision_unit_bytes);
  auto llava = pftest::fit_setup("llava-hf/llava-v1.6-mistral-7b-hf", "H100-SXM", "vllm", "0.10.2");
  EXPECT_EQ(estimate::terms::vision_block_kind(llava.model), estimate::terms::VisionBlockKind::not_derived);
  EXPECT_FALSE(estimate::terms::vision_pass_per_patch(llava.model, 1, 588, 2.0).has_value());
  auto text = pftest::fit_setup("Qwen/Qwen3-8B", "H100-SXM", "vllm", "0.23.0");
  EXPECT_EQ(estimate::terms::vision_block_kind(text.model), estimate::terms::VisionBlockKind::not_derived);
}
