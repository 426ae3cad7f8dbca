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
