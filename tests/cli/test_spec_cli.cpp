// Issue 15: fit with a speculative drafter that is its own checkpoint, through the real binary.
#include <gtest/gtest.h>

#include <string>

#include "base/json_util.hpp"
#include "../test_support.hpp"

using namespace preflight;

// A DFlash drafter whose config is nowhere offline cannot be sized: exit 2 naming the drafter, not a silent 0.
TEST(SpecCli, Issue15_UnreadableDflashDrafterExits2) {
  const auto r = pftest::run_cli(R"(fit Qwen/Qwen3-8B --device H200 --speculative-config '{"method": "dflash", "model": "z-lab/NoSuch-DFlash", "num_speculative_tokens": 5}')");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("drafter 'z-lab/NoSuch-DFlash' (method dflash)"), std::string::npos) << r.out;
}

// Qwen3-0.6B as the draft model of Qwen3-8B, found with --models: the --json layout carries the drafter's 28
// attention layers and its whole checkpoint, 596,049,920 params x 2 B = 1,192,099,840 B (tests/estimate/test_fit_spec.cpp).
TEST(SpecCli, Issue15_DraftModelFromModelsDirInJson) {
  const auto r = pftest::run_cli("fit Qwen/Qwen3-8B --device H200 --max-model-len 32768 --models " + pftest::shared_path("models") +
                                     R"( --speculative-config '{"method": "draft_model", "model": "Qwen/Qwen3-0.6B", "num_speculative_tokens": 3}' --json)",
                                 {"", false});
  ASSERT_EQ(r.code, 0) << r.out;
  auto j = parse_json(r.out, "fit --json");
  ASSERT_TRUE(j.has_value());
  EXPECT_EQ((*j)["layout"]["drafter"]["attention_layers"].get<int64_t>(), 28);
  EXPECT_DOUBLE_EQ((*j)["layout"]["drafter"]["weights_bytes"].get<double>(), 1192099840.0);
}
