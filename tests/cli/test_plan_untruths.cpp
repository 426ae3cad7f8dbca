// Issue 16 (arch31, found by ux31): plan's and fit's small untruths. "nothing meets the targets" named no count that
// would; a DP+EP row read "at 1 streams per replica"; fit quoted a 1,024-token prefill where max_model_len is 512 (vLLM
// refuses a prompt longer than max_model_len); the plan table printed 32768 where fit prints 32,768.
#include <gtest/gtest.h>

#include <string>

#include "../test_support.hpp"

TEST(PlanUntruths, Issue16_NothingMeetsNamesTheFewestDevicesThatWould) {
  // DeepSeek-V3 (671B parameters, FP8 checkpoint: about 640 GiB of weights) cannot fit in two 80 GB cards; the sentence
  // names a larger count and the flag that reaches it, and that count really is a row of a plan allowed it.
  const auto r = pftest::run_cli("plan deepseek-ai/DeepSeek-V3 --devices H100 --max-devices 2");
  EXPECT_EQ(r.code, 1) << r.out.substr(0, 400);
  const std::string key = "nothing meets the targets within --max-devices; ";
  const size_t at = r.out.find(key);
  ASSERT_NE(at, std::string::npos) << r.out.substr(0, 400);
  const size_t flag = r.out.find("(--max-devices ", at);
  ASSERT_NE(flag, std::string::npos);
  const std::string n = r.out.substr(flag + 15, r.out.find(')', flag) - flag - 15);
  EXPECT_GT(std::stoi(n), 8);  // 8 x 80 GB cannot hold 640 GiB of weights and a KV cache
  const auto wider = pftest::run_cli("plan deepseek-ai/DeepSeek-V3 --devices H100 --max-devices " + n);
  EXPECT_EQ(wider.code, 0) << wider.out.substr(0, 400);
}

TEST(PlanUntruths, Issue16_OneStreamIsSingular) {
  const auto r = pftest::run_cli("plan Qwen/Qwen3-235B-A22B --devices H100 --max-devices 16 --json", {.with_stderr = false});
  EXPECT_EQ(r.out.find("at 1 streams per replica"), std::string::npos);
  EXPECT_NE(r.out.find("at 1 stream per replica"), std::string::npos) << "no DP+EP row at concurrency 1";
}

TEST(PlanUntruths, Issue16_FitPrefillIsNoLongerThanMaxModelLen) {
  const auto r = pftest::run_cli("fit Qwen/Qwen3-8B --device H100 --max-model-len 512");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("prefill         512 tokens: TTFT"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("1,024 tokens: TTFT"), std::string::npos) << r.out;
  const auto longer = pftest::run_cli("fit Qwen/Qwen3-8B --device H100 --max-model-len 4096");
  EXPECT_NE(longer.out.find("prefill         1,024 tokens: TTFT"), std::string::npos) << longer.out;
}

TEST(PlanUntruths, Issue16_PlanTableUsesThousandsSeparatorsAsFitDoes) {
  const auto r = pftest::run_cli("plan Qwen/Qwen3-8B --devices H100 --max-devices 1 --context 32768");
  EXPECT_EQ(r.code, 0) << r.out.substr(0, 400);
  const size_t row = r.out.find("\nQwen/Qwen3-8B ");
  ASSERT_NE(row, std::string::npos) << r.out.substr(0, 600);
  const std::string line = r.out.substr(row + 1, r.out.find('\n', row + 1) - row - 1);
  EXPECT_NE(line.find("   32,768 "), std::string::npos) << line;
  EXPECT_EQ(line.find(" 32768 "), std::string::npos) << line;  // the start command keeps vLLM's plain integer
}
