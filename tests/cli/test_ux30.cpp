// Session 30's user journeys as a new user types them: the two forms of plan mixed up. Each test runs the real binary.
#include <gtest/gtest.h>

#include <string>

#include "../test_support.hpp"

// Issue 16 ("Plan as a user reads it": `plan --device 910B4 --model 'Qwen/Qwen3*'`): a user who writes --devices for
// the card form got the two usage lines and no word on which flag was wrong; --device with --devices silently dropped
// one of them (plan MODEL took --devices, plan --device took --device).
TEST(Ux30, Issue16_PlanFormsMixedUpSayWhichFlagBelongsWhere) {
  const auto devices_for_card = pftest::run_cli("plan --devices 910B4 --model 'Qwen/Qwen3*' --context 32768");
  EXPECT_EQ(devices_for_card.code, 2) << devices_for_card.out;
  EXPECT_NE(devices_for_card.out.find("--devices sizes one MODEL on several cards"), std::string::npos) << devices_for_card.out;
  EXPECT_NE(devices_for_card.out.find("plan --device D"), std::string::npos) << devices_for_card.out;

  const auto two_models = pftest::run_cli("plan Qwen/Qwen3-8B Qwen/Qwen3-14B --devices 910B4");
  EXPECT_EQ(two_models.code, 2) << two_models.out;
  EXPECT_NE(two_models.out.find("plan takes one MODEL, found 2 (Qwen/Qwen3-8B Qwen/Qwen3-14B)"), std::string::npos) << two_models.out;

  const auto both_model_form = pftest::run_cli("plan Qwen/Qwen3-8B --device 910B4 --devices H100");
  EXPECT_EQ(both_model_form.code, 2) << both_model_form.out;
  EXPECT_EQ(both_model_form.out.find("H100-SXM"), std::string::npos) << both_model_form.out;  // no plan ran on one of them

  const auto both_card_form = pftest::run_cli("plan --device 910B4 --devices H100");
  EXPECT_EQ(both_card_form.code, 2) << both_card_form.out;
  EXPECT_NE(both_card_form.out.find("--devices belongs to plan MODEL"), std::string::npos) << both_card_form.out;

  // The forms as documented still run.
  EXPECT_EQ(pftest::run_cli("plan --device 910B4 --model Qwen/Qwen3-8B --context 8192").code, 0);
  EXPECT_EQ(pftest::run_cli("plan Qwen/Qwen3-8B --devices 910B4 --context 8192").code, 0);
}

// Issue 16 ("one variant list, used by fit, plan, validate"; "fit MODEL --variant NAME ... the same in every command"):
// inspect had no --variant, so "how big is the W4A8 version of Qwen3-32B" needed a device. With it, the weights are
// sized in the variant's formats: msModelSlim W4A8 keeps the embedding and the untied head in bf16 (keep_high_precision),
// 2 x 151,936 x 5,120 x 2 B = 3.11 GB = 2.90 GiB (norms add 1.4 MB), the MLP int4 and attention int8. A GGUF variant
// sized from a config is "computed", not "exact (GGUF tensor bytes)", which only a read GGUF file is.
TEST(Ux30, Issue16_InspectSizesAVariantAsFitDoes) {
  const auto w4a8 = pftest::run_cli("inspect Qwen/Qwen3-32B --variant w4a8_dynamic");
  ASSERT_EQ(w4a8.code, 0) << w4a8.out;
  EXPECT_NE(w4a8.out.find("GiB computed (msModelSlim W4A8_DYNAMIC"), std::string::npos) << w4a8.out;
  EXPECT_NE(w4a8.out.find("    bf16                   2.90 GiB"), std::string::npos) << w4a8.out;
  EXPECT_NE(w4a8.out.find("    modelslim_w4a8_dynamic "), std::string::npos) << w4a8.out;
  EXPECT_NE(w4a8.out.find("    modelslim_w8a8_dynamic "), std::string::npos) << w4a8.out;
  EXPECT_NE(w4a8.out.find("variant w4a8_dynamic: msModelSlim W4A8_DYNAMIC"), std::string::npos) << w4a8.out;

  const auto gguf = pftest::run_cli("inspect Qwen/Qwen3-8B --variant gguf_q4_k_m");
  ASSERT_EQ(gguf.code, 0) << gguf.out;
  EXPECT_EQ(gguf.out.find("exact (GGUF tensor bytes)"), std::string::npos) << gguf.out;
  EXPECT_NE(gguf.out.find("GiB computed (GGUF Q4_K_M)"), std::string::npos) << gguf.out;

  const auto unknown = pftest::run_cli("inspect Qwen/Qwen3-8B --variant w3a9");
  EXPECT_EQ(unknown.code, 2) << unknown.out;
  EXPECT_NE(unknown.out.find("unknown variant 'w3a9'"), std::string::npos) << unknown.out;
}

// Issue 16 (quant30's finding): vLLM-Ascend's platform refuses GGUF like any method outside its list
// (NPUPlatform.supported_quantization; engines.json quantization_rejection), and fit --quantization gguf on a 910B4 said
// "fits" because GGUF was let through for vLLM's CUDA loader on every platform. fit --variant gguf_q4_k_m already refused.
TEST(Ux30, Issue16_GgufOnAnNpuIsRefusedAsTheVariantIs) {
  const auto flag = pftest::run_cli("fit Qwen/Qwen3-8B --device 910B4 --quantization gguf");
  EXPECT_EQ(flag.code, 1) << flag.out;
  EXPECT_NE(flag.out.find("gguf quantization is currently not supported in npu."), std::string::npos) << flag.out;
  const auto variant = pftest::run_cli("fit Qwen/Qwen3-8B --device 910B4 --variant gguf_q4_k_m");
  EXPECT_EQ(variant.code, 1) << variant.out;
  EXPECT_NE(variant.out.find("gguf quantization is currently not supported in npu."), std::string::npos) << variant.out;
}
