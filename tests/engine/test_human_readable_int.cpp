// Issue 16 (arch31): --max-model-len 32k was "expected an integer". vLLM's human_readable_int (PR #16181, first in
// v0.8.4; --max-num-batched-tokens from PR #18968, v0.9.1): lower-case suffixes decimal, upper-case binary, decimals only
// with decimal suffixes. Expected values are the PR's and the docstring's examples ('1k' -> 1,000, '1K' -> 1,024,
// '25.6k' -> 25,600; the PR's test: '10k' -> 10,000) and the suffixes' definitions (K = 2^10, M = 2^20, m = 10^6).
#include <gtest/gtest.h>

#include <string>

#include "base/json_util.hpp"
#include "engine/human_readable_int.hpp"
#include "../test_support.hpp"

using namespace preflight;

namespace {

int64_t value_of(const std::string& text) {
  auto v = engine::parse_human_readable_int("--max-model-len", text);
  EXPECT_TRUE(v.has_value()) << text;
  EXPECT_TRUE(v && v->has_value()) << text;
  return v && *v ? **v : -1;
}

}  // namespace

TEST(HumanReadableInt, Issue16_SuffixesMeanWhatVllmMeans) {
  EXPECT_EQ(value_of("1k"), 1000);
  EXPECT_EQ(value_of("1K"), 1024);
  EXPECT_EQ(value_of("10k"), 10000);
  EXPECT_EQ(value_of("25.6k"), 25600);
  EXPECT_EQ(value_of("32k"), 32000);
  EXPECT_EQ(value_of("32K"), 32768);
  EXPECT_EQ(value_of("1m"), 1000000);
  EXPECT_EQ(value_of("1M"), 1048576);
  EXPECT_EQ(value_of(" 128K "), 131072);
  // Plain integers and texts the regular expression does not match are the caller's.
  for (const char* plain : {"32768", "k", "K", "32kb", "3.k", "-1k", "32x"}) {
    auto v = engine::parse_human_readable_int("--max-model-len", plain);
    ASSERT_TRUE(v.has_value()) << plain;
    EXPECT_FALSE(v->has_value()) << plain;
  }
  auto decimal_binary = engine::parse_human_readable_int("--max-model-len", "1.5K");
  ASSERT_FALSE(decimal_binary.has_value());
  EXPECT_EQ(decimal_binary.error().message,
            "vllm serve: error: argument --max-model-len: Decimals are not allowed with binary suffixes like K. Did you mean to use 1.5k instead?");
  EXPECT_FALSE(engine::parse_human_readable_int("--max-model-len", "99999999999999G").has_value());  // past int64: refused, not wrapped
}

TEST(HumanReadableInt, Issue16_OnlyVersionsWithTheParserTakeSuffixes) {
  EXPECT_NE(engine::human_readable_refusal("vllm", *engine::parse_version("0.8.3"), "--max-model-len", "32k").find("invalid int value: '32k'"), std::string::npos);
  EXPECT_EQ(engine::human_readable_refusal("vllm", *engine::parse_version("0.8.4"), "--max-model-len", "32k"), "");
  EXPECT_NE(engine::human_readable_refusal("vllm-ascend", *engine::parse_version("0.7.3"), "--max-model-len", "32k"), "");
  EXPECT_NE(engine::human_readable_refusal("vllm", *engine::parse_version("0.9.0"), "--max-num-batched-tokens", "4K"), "");
  EXPECT_EQ(engine::human_readable_refusal("vllm", *engine::parse_version("0.9.1"), "--max-num-batched-tokens", "4K"), "");
}

TEST(HumanReadableIntCli, Issue16_FitTakesMaxModelLen32kAsVllmDoesAndOlderVersionsRefuseIt) {
  for (const auto& [flag, tokens] : {std::pair{"32k", 32000}, std::pair{"32K", 32768}}) {
    const auto r = pftest::run_cli(std::string("fit meta-llama/Meta-Llama-3.1-8B --device H100 --json --max-model-len ") + flag, {.with_stderr = false});
    EXPECT_EQ(r.code, 0) << r.out.substr(0, 300);
    auto j = parse_json(r.out, "stdout");
    ASSERT_TRUE(j.has_value()) << r.out.substr(0, 300);
    EXPECT_NE(j->dump().find("\"max_model_len\":" + std::to_string(tokens)), std::string::npos) << flag;
  }
  const auto old = pftest::run_cli("fit meta-llama/Meta-Llama-3.1-8B --device H100 --engine vllm@0.8.3 --max-model-len 16k");
  EXPECT_EQ(old.code, 2) << old.out;
  EXPECT_NE(old.out.find("vllm serve: error: argument --max-model-len: invalid int value: '16k'"), std::string::npos) << old.out;
  const auto plain = pftest::run_cli("fit meta-llama/Meta-Llama-3.1-8B --device H100 --engine vllm@0.8.3 --max-model-len 16000");
  EXPECT_EQ(plain.code, 0) << plain.out;
  const auto batched = pftest::run_cli("fit meta-llama/Meta-Llama-3.1-8B --device H100 --engine vllm@0.9.0 --max-model-len 8192 --max-num-batched-tokens 4K");
  EXPECT_EQ(batched.code, 2) << batched.out;
  EXPECT_NE(batched.out.find("argument --max-num-batched-tokens: invalid int value: '4K'"), std::string::npos) << batched.out;
  // plan with a named version: the same refusal before any row; from 0.9.1 the rows are sized.
  const auto plan_old = pftest::run_cli("plan meta-llama/Meta-Llama-3.1-8B --devices H100 --engine vllm@0.9.0 --max-num-batched-tokens 4K --max-devices 1");
  EXPECT_EQ(plan_old.code, 2) << plan_old.out.substr(0, 300);
  EXPECT_NE(plan_old.out.find("invalid int value: '4K'"), std::string::npos) << plan_old.out.substr(0, 300);
  EXPECT_EQ(pftest::run_cli("plan meta-llama/Meta-Llama-3.1-8B --devices H100 --engine vllm@0.9.1 --max-num-batched-tokens 4K --max-devices 1").code, 0);
}

// Issue 19 (hard32): leading zeros carry no size (Python's int("0000000000001") is 1), but 13 digits before a binary
// suffix were refused as "past the largest integer"; and the text of that refusal was quoted whole (100 KB of digits).
TEST(HumanReadableInt, Issue19_LeadingZerosAndLongTextsAreReadAsVllmDoes) {
  EXPECT_EQ(value_of("0000000000001K"), 1024);
  EXPECT_EQ(value_of(std::string(5000, '0') + "2K"), 2048);
  EXPECT_EQ(value_of("0K"), 0);  // the caller refuses 0 as it refuses a plain 0
  const auto big = engine::parse_human_readable_int("--max-model-len", std::string(100000, '9') + "K");
  ASSERT_FALSE(big.has_value());
  EXPECT_EQ(big.error().message.rfind("--max-model-len: '99999", 0), 0u) << big.error().message.substr(0, 200);
  EXPECT_NE(big.error().message.find("(100001 bytes in all)' is past the largest integer preflight takes"), std::string::npos) << big.error().message.substr(0, 300);
  EXPECT_LT(big.error().message.size(), 200u);
}
