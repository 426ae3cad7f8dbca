// Issue 19 (llamacpp33, hard32's review leftovers): llama.cpp's context rule is answered in one place
// (plan::refuses_long_context, read by plan's --context check and by candidate_context for every row, the TP/PP and the
// DP+EP ones), and plan_for_model / plan_for_device say the V0 engine of the engines they resolved (the CLI resolved
// every card's engine a second time for it). The output is the same as before (bench/plan_identical.sh's commands).
#include <gtest/gtest.h>

#include <string>

#include "../test_support.hpp"
#include "base/json_util.hpp"
#include "plan/planner.hpp"

using namespace preflight;

namespace {

Json plan33(const std::string& args) {
  const auto run = pftest::run_cli("plan " + args + " --json", {.with_stderr = false});
  EXPECT_EQ(run.code, 0) << args << "\n" << run.out;
  return run.code == 0 ? Json::parse(run.out) : Json::object();
}

int rows_refused_for_length(const Json& j) {
  int n = 0;
  for (const auto& r : j["rejected"]) n += r["reason"].get<std::string>().find("max_model_len") != std::string::npos;
  return n;
}

}  // namespace

TEST(PlanEngines33, Issue19_LongContextRuleAnsweredOnce) {
  EXPECT_FALSE(plan::refuses_long_context("llama.cpp"));
  EXPECT_TRUE(plan::refuses_long_context("vllm"));
  EXPECT_TRUE(plan::refuses_long_context("vllm-ascend"));
  // Every catalogue model on an A100 at 200,000 tokens: vLLM's rows above a model's length carry its ValueError,
  // llama.cpp's none (it warns and starts).
  const Json vllm = plan33("--device A100-80G --num-devices 1 --context 200000");
  const Json llama = plan33("--device A100-80G --num-devices 1 --context 200000 --engine llama.cpp");
  EXPECT_GT(rows_refused_for_length(vllm), 0) << vllm.dump().substr(0, 2000);
  EXPECT_EQ(rows_refused_for_length(llama), 0) << llama.dump().substr(0, 2000);
  // plan MODEL: the front-door check refuses for vLLM (exit 2) and sizes llama.cpp's row at the target.
  const auto refused = pftest::run_cli("plan Qwen/Qwen3-0.6B --device A100-80G --max-devices 1 --context 200000");
  EXPECT_EQ(refused.code, 2) << refused.out;
  EXPECT_NE(refused.out.find("greater than the derived max_model_len"), std::string::npos) << refused.out;
  const Json row = plan33("Qwen/Qwen3-0.6B --engine llama.cpp --device A100-80G --max-devices 1 --context 200000");
  ASSERT_FALSE(row["recommended"].empty()) << row.dump().substr(0, 2000);
  EXPECT_EQ(row["recommended"][0]["context_tokens"], 200000);
}

// vLLM 0.9.1's V1 oracle sends Volta and Turing back to V0: plan MODEL says so once per card, plan --device once.
TEST(PlanEngines33, Issue19_V0NotesFromTheEnginesThePlanResolved) {
  auto v0_notes = [](const Json& j) {
    std::vector<std::string> out;
    for (const auto& a : j["assumptions"])
      if (a.get<std::string>().rfind("V0 engine", 0) == 0) out.push_back(a.get<std::string>());
    return out;
  };
  const auto model = v0_notes(plan33("Qwen/Qwen3-8B --devices V100,T4,A100-80G --engine vllm@0.9.1"));
  ASSERT_EQ(model.size(), 2u);
  EXPECT_NE(model[0].find("vllm 0.9.1 on V100-SXM2-32G, volta"), std::string::npos) << model[0];
  EXPECT_NE(model[1].find("vllm 0.9.1 on T4, turing"), std::string::npos) << model[1];
  const auto device = v0_notes(plan33("--device T4 --num-devices 1 --engine vllm@0.9.1"));
  ASSERT_EQ(device.size(), 1u);
  EXPECT_NE(device[0].find("vllm 0.9.1 on T4, turing"), std::string::npos) << device[0];
  EXPECT_TRUE(v0_notes(plan33("--device A100-80G --num-devices 1 --engine vllm@0.9.1")).empty());
}
