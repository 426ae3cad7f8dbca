// Session 36's new-user pass (issues 15, 16): the catalogue used as a new user would, each promise of the issues checked
// against what the real binary prints. Each test failed before its fix.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <string>

#include "../test_support.hpp"

namespace {

nlohmann::json json_of(const pftest::CliRun& r) {
  const auto j = nlohmann::json::parse(r.out, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << r.out.substr(0, 400);
  return j;
}

}  // namespace

// Issue 15 ("a speculative config naming an unknown method gets the engine's own validation message, exit 2") and 16
// (fit and plan agree on the same deployment): Qwen3-8B's config.json (../shared/models/Qwen__Qwen3-8B) has no
// num_nextn_predict_layers, so vLLM's SpeculativeConfig finds model_type "qwen3" in no MTP type and raises
// "NotImplementedError: Unsupported speculative method: 'mtp'". plan refused it (exit 2); fit said "the config has no MTP
// layers: nothing sized" and "fits", exit 0. Both now refuse it with vLLM's words.
TEST(User36, Issue15_FitRefusesMtpOnAModelWithoutMtpLayersAsPlanDoes) {
  const std::string spec = R"( --speculative-config '{"method": "mtp", "num_speculative_tokens": 2}')";
  const auto plan = pftest::run_cli("plan Qwen/Qwen3-8B --devices H100-SXM" + spec);
  EXPECT_EQ(plan.code, 2) << plan.out.substr(0, 400);
  EXPECT_NE(plan.out.find("NotImplementedError: Unsupported speculative method: 'mtp'"), std::string::npos) << plan.out.substr(0, 400);
  const auto fit = pftest::run_cli("fit Qwen/Qwen3-8B --device H100-SXM" + spec);
  EXPECT_EQ(fit.code, 2) << fit.out.substr(0, 600);
  EXPECT_NE(fit.out.find("--speculative-config: NotImplementedError: Unsupported speculative method: 'mtp'"), std::string::npos) << fit.out.substr(0, 600);
  EXPECT_EQ(fit.out.find("nothing sized"), std::string::npos) << fit.out.substr(0, 600);
  // A model with MTP layers still takes it: Qwen3.5-27B's config has mtp_num_hidden_layers 1 (inspect: "MTP layers 1").
  const auto mtp = pftest::run_cli("fit Qwen/Qwen3.5-27B --device 910B3 --max-model-len 4096 --skip-mm-profiling" + spec);
  EXPECT_NE(mtp.out.find("1 MTP layer(s) from the config"), std::string::npos) << mtp.out.substr(0, 600);
}

