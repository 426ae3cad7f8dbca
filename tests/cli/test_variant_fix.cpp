// Issue 16 (seeds 000/001: a BF16 MoE whose experts all load does not fit one 910B3): `fit` on a model published
// unquantized whose weights exceed its cards offers, first among its fixes, the highest-precision quantized variant the
// engine serves there with which the same deployment fits. Checked through the real binary against `fit --variant`.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "base/json_util.hpp"
#include "../variant_support.hpp"

using namespace preflight;
using pftest::json_of;

namespace {
// "--variant ID (...): weights W GiB per device, T KV tokens, ..." -> ID, W, T.
struct VariantFix {
  std::string id;
  double weights_gib = 0;
  long long tokens = 0;
};
VariantFix parse_fix(const std::string& fix) {
  VariantFix v;
  if (fix.rfind("--variant ", 0) != 0) return v;
  v.id = fix.substr(10, fix.find(' ', 10) - 10);
  const size_t w = fix.find("): weights ");
  if (w == std::string::npos) return v;
  v.weights_gib = std::stod(fix.substr(w + 11));
  const size_t t = fix.find("per device, ", w);
  if (t == std::string::npos) return v;
  std::string digits;
  for (size_t i = t + 12; i < fix.size() && (std::isdigit(static_cast<unsigned char>(fix[i])) || fix[i] == ','); ++i)
    if (fix[i] != ',') digits += fix[i];
  v.tokens = digits.empty() ? 0 : std::stoll(digits);
  return v;
}
}  // namespace

// Qwen3.6-35B-A3B in BF16 on one 910B3 (64 GB): its 65.5 GiB of weights do not load. The fix names msModelSlim W8A8, and
// `fit --variant w8a8` on the same card prints the weights and KV tokens the fix states and fits. W4A8_DYNAMIC fits too,
// but the eight-bit variant comes first (the higher precision at the same card count).
TEST(VariantFix, Issue16_WeightsOomOffersTheVariantThatFitsTheSameCards) {
  const auto fit = pftest::run_cli("fit Qwen/Qwen3.6-35B-A3B --device 910B3 --json", {.with_stderr = false});
  ASSERT_EQ(fit.code, 1) << fit.out;
  const Json f = json_of(fit);
  ASSERT_EQ(f["failure"], "weights_oom") << f["failure"].dump();
  ASSERT_FALSE(f["fixes"].empty());
  const VariantFix v = parse_fix(f["fixes"][0].get<std::string>());
  ASSERT_EQ(v.id, "w8a8") << f["fixes"].dump();
  EXPECT_NE(f["fixes"][0].get<std::string>().find("1 x 910B3"), std::string::npos) << f["fixes"][0];

  const auto with = pftest::run_cli("fit Qwen/Qwen3.6-35B-A3B --device 910B3 --variant w8a8 --json", {.with_stderr = false});
  ASSERT_EQ(with.code, 0) << with.out;
  const Json w = json_of(with);
  EXPECT_NEAR(pftest::term_gib(w, "weights"), v.weights_gib, 0.005);
  EXPECT_EQ(w["kv_cache"]["tokens"].get<long long>(), v.tokens);

  const auto four = pftest::run_cli("fit Qwen/Qwen3.6-35B-A3B --device 910B3 --variant w4a8_dynamic --json", {.with_stderr = false});
  EXPECT_EQ(four.code, 0) << four.out;  // it fits as well: the order, not the size, put w8a8 first
  EXPECT_NE(f["fixes"][0].get<std::string>().find("`preflight plan Qwen/Qwen3.6-35B-A3B --devices 910B3 --variant w8a8 --commands`"), std::string::npos);

  // A card given only by its memory has no catalogue record for `plan --devices`: the fix names the flag alone.
  const auto generic = pftest::run_cli("fit Qwen/Qwen3-30B-A3B --device-memory 24GiB --json", {.with_stderr = false});
  ASSERT_EQ(generic.code, 1) << generic.out;
  const std::string first = json_of(generic)["fixes"][0].get<std::string>();
  EXPECT_EQ(first.rfind("--variant ", 0), 0u) << first;
  EXPECT_EQ(first.find("preflight plan"), std::string::npos) << first;
}

// No variant fix where it does not apply: a checkpoint already quantized (its own format is what loads), a --variant
// already given, and a failure other than the weights (a context the KV cache cannot hold).
TEST(VariantFix, Issue16_NoVariantFixWhereItDoesNotApply) {
  const auto has_variant_fix = [](const std::string& args) {
    const auto r = pftest::run_cli(args + " --json", {.with_stderr = false});
    EXPECT_NE(r.code, 0) << args << "\n" << r.out;
    const Json j = json_of(r);
    for (const auto& fix : j["fixes"])
      if (fix.get<std::string>().rfind("--variant ", 0) == 0) return true;
    return false;
  };
  EXPECT_FALSE(has_variant_fix("fit Qwen/Qwen3-235B-A22B-FP8 --device H100"));
  EXPECT_FALSE(has_variant_fix("fit Qwen/Qwen3-235B-A22B --device H100 --variant fp8_tensor"));
  EXPECT_FALSE(has_variant_fix("fit Qwen/Qwen3-8B --device 910B4 --max-model-len 40960 --gpu-memory-utilization 0.35"));
  EXPECT_TRUE(has_variant_fix("fit Qwen/Qwen3-235B-A22B --device H100 --tensor-parallel-size 4"));
}
