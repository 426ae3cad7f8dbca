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

// Qwen3.5-35B-A3B in BF16 on one 910B3 (64 GB): its weights do not load. The fix names msModelSlim W8A8, and
// `fit --variant w8a8` on the same card prints the weights and KV tokens the fix states and fits. W4A8_DYNAMIC fits too,
// but the eight-bit variant comes first (the higher precision at the same card count).
TEST(VariantFix, Issue16_WeightsOomOffersTheVariantThatFitsTheSameCards) {
  const auto fit = pftest::run_cli("fit Qwen/Qwen3.5-35B-A3B --device 910B3 --json", {.with_stderr = false});
  ASSERT_EQ(fit.code, 1) << fit.out;
  const Json f = json_of(fit);
  ASSERT_EQ(f["failure"], "weights_oom") << f["failure"].dump();
  ASSERT_FALSE(f["fixes"].empty());
  const VariantFix v = parse_fix(f["fixes"][0].get<std::string>());
  ASSERT_EQ(v.id, "w8a8") << f["fixes"].dump();
  EXPECT_NE(f["fixes"][0].get<std::string>().find("1 x 910B3"), std::string::npos) << f["fixes"][0];

  const auto with = pftest::run_cli("fit Qwen/Qwen3.5-35B-A3B --device 910B3 --variant w8a8 --json", {.with_stderr = false});
  ASSERT_EQ(with.code, 0) << with.out;
  const Json w = json_of(with);
  EXPECT_NEAR(pftest::term_gib(w, "weights"), v.weights_gib, 0.005);
  EXPECT_EQ(w["kv_cache"]["tokens"].get<long long>(), v.tokens);

  const auto four = pftest::run_cli("fit Qwen/Qwen3.5-35B-A3B --device 910B3 --variant w4a8_dynamic --json", {.with_stderr = false});
  EXPECT_EQ(four.code, 0) << four.out;  // it fits as well: the order, not the size, put w8a8 first
  EXPECT_NE(f["fixes"][0].get<std::string>().find("`preflight plan Qwen/Qwen3.5-35B-A3B --devices 910B3 --variant w8a8 --commands`"), std::string::npos);

  // quant29 found that config/config.ini [ModelAdapter] at 3de0a3c lists no name for Qwen3.6-35B-A3B (Qwen3.6-27B and
  // Qwen3.5-35B-A3B, not it), and gave it no msModelSlim fix. quant30: its model_type (qwen3_5_moe) is the family of the
  // qwen3_5_moe adapter, which every name of the group loads, so W8A8 is its fix again, with that adapter's name.
  // (The document is held by name: a range-for over a temporary's member reads freed memory, which ASan found here.)
  const Json family = json_of(pftest::run_cli("fit Qwen/Qwen3.6-35B-A3B --device 910B3 --json", {.with_stderr = false}));
  ASSERT_FALSE(family["fixes"].empty());
  EXPECT_EQ(parse_fix(family["fixes"][0].get<std::string>()).id, "w8a8") << family["fixes"].dump();

  // A card given only by its memory has no catalogue record for `plan --devices`: the fix names the flag alone.
  const auto generic = pftest::run_cli("fit Qwen/Qwen3-30B-A3B --device-memory 24GiB --json", {.with_stderr = false});
  ASSERT_EQ(generic.code, 1) << generic.out;
  const std::string first = json_of(generic)["fixes"][0].get<std::string>();
  EXPECT_EQ(first.rfind("--variant ", 0), 0u) << first;
  EXPECT_EQ(first.find("preflight plan"), std::string::npos) << first;
}

// No variant fix where it does not apply: a checkpoint already quantized (its own format is what loads), a --variant or
// --quantization already given, whether the weights do not load or the KV cache cannot hold one request (issue 16,
// fitcons27: before, a KV failure never got a variant fix; now it does on BF16 weights, the last case).
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
  EXPECT_FALSE(has_variant_fix("fit Qwen/Qwen3-30B-A3B-FP8 --device L40S --max-model-len 40960 --gpu-memory-utilization 0.7"));  // KV
  EXPECT_FALSE(has_variant_fix("fit Qwen/Qwen3-32B --device H100 --max-model-len 40960 --quantization fp8 --gpu-memory-utilization 0.5"));  // KV
  EXPECT_FALSE(has_variant_fix("fit Qwen/Qwen3-32B --device RTX5090 --variant awq --max-model-len 40960"));  // KV
  EXPECT_TRUE(has_variant_fix("fit Qwen/Qwen3-235B-A22B --device H100 --tensor-parallel-size 4"));
  EXPECT_TRUE(has_variant_fix("fit Qwen/Qwen3-8B --device 910B4 --max-model-len 40960 --gpu-memory-utilization 0.35"));  // KV
}

// Issue 16 (quant27): Qwen3-32B in BF16 on one RTX 5090 (32 GB): 61 GiB of weights do not load, and no variant fits at
// its 40,960-token default context either: the FP8 / INT8 variants' 32 GiB of weights do not load, and AWQ's 18.01 GiB
// leave a KV budget that holds 39,680 tokens for one request, not 40,960. The fix is AWQ with the largest context it
// holds, worked out by hand from the available KV that `fit --variant awq` prints at 40,960:
//   Qwen3-32B (../shared/models/Qwen__Qwen3-32B/config.json): 64 layers, 8 KV heads, head_dim 128, bf16 KV:
//   K + V per token per layer = 8 x 128 x 2 x 2 B = 4,096 B; a 16-token block of all 64 layers = 16 x 64 x 4,096 B = 4 MiB;
//   available KV 9.69 GiB -> floor(9.69 GiB / 4 MiB) = 2,480 blocks -> 2,480 x 16 = 39,680 tokens, 2,480 / 2,480 = 1.00x
//   (a whole number of blocks, below max_position_embeddings 40,960: a --max-model-len vLLM accepts).
// `fit --variant awq --max-model-len 39680` then fits with those tokens, and one block more (39,696) does not.
TEST(VariantFix, Issue16_NoVariantFitsAtTheContextButOneDoesAtAShorterOne) {
  const auto at_default = pftest::run_cli("fit Qwen/Qwen3-32B --device RTX5090 --variant awq --max-model-len 40960 --json", {.with_stderr = false});
  ASSERT_EQ(at_default.code, 1) << at_default.out;
  const Json a = json_of(at_default);
  ASSERT_EQ(a["failure"], "max_model_len_too_large");
  const double available_bytes = pftest::term_gib(a, "available KV") * 1073741824.0;
  const long long block_bytes = 16LL * 64 * (8 * 128 * 2 * 2);  // 4 MiB
  const long long blocks = static_cast<long long>(available_bytes) / block_bytes;
  const long long by_hand = blocks * 16;
  EXPECT_EQ(by_hand, 39680) << "available KV " << available_bytes / 1073741824.0 << " GiB";

  const auto fit = pftest::run_cli("fit Qwen/Qwen3-32B --device RTX5090 --json", {.with_stderr = false});
  ASSERT_EQ(fit.code, 1) << fit.out;
  const Json f = json_of(fit);
  ASSERT_EQ(f["failure"], "weights_oom");
  ASSERT_FALSE(f["fixes"].empty());
  const std::string first = f["fixes"][0].get<std::string>();
  const std::string len = std::to_string(by_hand);
  EXPECT_EQ(first.rfind("--variant awq --max-model-len " + len + " (", 0), 0u) << first;
  EXPECT_NE(first.find("39,680 KV tokens, 1.00x on the same 1 x RTX5090"), std::string::npos) << first;
  EXPECT_NE(first.find("(40,960 tokens do not fit)"), std::string::npos) << first;
  EXPECT_NE(first.find("`preflight plan Qwen/Qwen3-32B --devices RTX5090 --variant awq --context " + len + " --commands`"), std::string::npos) << first;
  for (size_t i = 1; i < f["fixes"].size(); ++i) EXPECT_NE(f["fixes"][i].get<std::string>().rfind("--variant ", 0), 0u) << f["fixes"].dump();

  const VariantFix v = parse_fix(first);
  const auto with = pftest::run_cli("fit Qwen/Qwen3-32B --device RTX5090 --variant awq --max-model-len " + len + " --json", {.with_stderr = false});
  ASSERT_EQ(with.code, 0) << with.out;
  const Json w = json_of(with);
  EXPECT_NEAR(pftest::term_gib(w, "weights"), v.weights_gib, 0.005);
  EXPECT_EQ(w["kv_cache"]["tokens"].get<long long>(), by_hand);
  const auto one_block_more = pftest::run_cli("fit Qwen/Qwen3-32B --device RTX5090 --variant awq --max-model-len " + std::to_string(by_hand + 16) + " --json",
                                              {.with_stderr = false});
  EXPECT_EQ(one_block_more.code, 1) << one_block_more.out;
  EXPECT_EQ(json_of(one_block_more)["failure"], "max_model_len_too_large");
}

// Issue 16 (quant27): a same-context variant comes first; a variant of higher precision that fits only at a shorter
// context follows it. Qwen3-32B BF16 on one L40S (48 GB) at 40,960: AWQ fits (18.01 GiB of weights), the eight-bit
// variants' 32 GiB leave a budget of about 31,500 tokens for one request, so the first eight-bit one follows with that
// context; four-bit variants other than the first are not listed.
TEST(VariantFix, Issue16_SameContextVariantComesBeforeAShorterContextOne) {
  const auto fit = pftest::run_cli("fit Qwen/Qwen3-32B --device L40S --json", {.with_stderr = false});
  ASSERT_EQ(fit.code, 1) << fit.out;
  const Json f = json_of(fit);
  ASSERT_GE(f["fixes"].size(), 2u) << f["fixes"].dump();
  const std::string same = f["fixes"][0].get<std::string>(), shorter = f["fixes"][1].get<std::string>();
  EXPECT_EQ(same.rfind("--variant awq (", 0), 0u) << same;
  ASSERT_EQ(shorter.rfind("--variant fp8", 0), 0u) << shorter;
  const size_t at = shorter.find("--max-model-len ");
  ASSERT_NE(at, std::string::npos) << shorter;
  const long long len = std::stoll(shorter.substr(at + 16));
  EXPECT_GT(len, 30000);
  EXPECT_LT(len, 40960);
  EXPECT_EQ(len % 16, 0) << "a whole number of 16-token blocks";
  const std::string id = shorter.substr(10, shorter.find(' ', 10) - 10);
  EXPECT_EQ(pftest::run_cli("fit Qwen/Qwen3-32B --device L40S --variant " + id + " --max-model-len " + std::to_string(len), {.with_stderr = false}).code, 0);
  EXPECT_EQ(pftest::run_cli("fit Qwen/Qwen3-32B --device L40S --variant " + id + " --max-model-len " + std::to_string(len + 16), {.with_stderr = false}).code, 1);
}

// Issue 16 (quant27): Qwen3.6-27B in BF16 on one 910B4 (29.49 GiB the engine sees) gets no variant fix at any context,
// because none is a matter of context: W8A8 and W8A8_DYNAMIC do not load (33.6 GiB of weights: the vision tower,
// embeddings and lm_head stay bf16), W4A8_DYNAMIC (25.6 GiB) and msModelSlim W8A16 (28.4 GiB) leave no memory for any
// KV block even at 1,024 tokens (the engine's "No available memory for the cache blocks"), and vLLM-Ascend rejects
// W4A16 on a dense model's linear layers. Each is checked at a 1,024-token context, where a context fix would show.
TEST(VariantFix, Issue16_NoVariantAtAnyContextGetsNone) {
  const auto fit = pftest::run_cli("fit Qwen/Qwen3.6-27B --device 910B4 --json", {.with_stderr = false});
  ASSERT_EQ(fit.code, 1) << fit.out;
  const Json f = json_of(fit);
  ASSERT_EQ(f["failure"], "weights_oom");
  for (const auto& fix : f["fixes"]) EXPECT_NE(fix.get<std::string>().rfind("--variant ", 0), 0u) << fix;
  const std::pair<const char*, const char*> why[] = {{"w8a8", "weights_oom"},
                                                     {"w8a8_dynamic", "weights_oom"},
                                                     {"w4a8_dynamic", "kv_negative"},
                                                     {"w8a16_ascend", "kv_negative"},
                                                     {"w4a16", "unsupported_quantization"}};
  for (const auto& [variant, failure] : why) {
    const auto r = pftest::run_cli(std::string("fit Qwen/Qwen3.6-27B --device 910B4 --max-model-len 1024 --json --variant ") + variant, {.with_stderr = false});
    EXPECT_EQ(r.code, 1) << variant << "\n" << r.out.substr(0, 300);
    EXPECT_EQ(json_of(r)["failure"], failure) << variant;
  }
}

// Issue 16 (fitcons27): BF16 weights that load but whose KV cache cannot hold one request at the context
// (max_model_len_too_large) get a quantized variant among the fixes, after the fixes that only change the engine's
// flags on the same weights and cards (a lower --max-model-len first: no conversion, no card), before the first one
// that adds cards. Qwen3-32B (64 layers, 8 KV heads, head_dim 128: 4,096 B per token per layer in bf16, a 16-token
// block of all layers 4 MiB) on one H100 at 40,960: one request needs 40,960 x 64 x 4,096 B = 10.00 GiB, the budget
// after 61.03 GiB of BF16 weights is under 9 GiB; --max-model-len floor(available / 4 MiB) x 16 is the first fix. An FP8
// variant's 32 GiB of weights leave room for 40,960 at the same context: `fit --variant` on the same card fits with the
// weights and KV tokens the fix states, and its tokens are its own available KV in whole 4 MiB blocks.
TEST(VariantFix, Issue16_KvFailureOffersTheVariantAfterTheFlagsOnTheSameWeights) {
  const auto fit = pftest::run_cli("fit Qwen/Qwen3-32B --device H100 --max-model-len 40960 --json", {.with_stderr = false});
  ASSERT_EQ(fit.code, 1) << fit.out.substr(0, 400);
  const Json f = json_of(fit);
  ASSERT_EQ(f["failure"], "max_model_len_too_large");
  const long long block_bytes = 16LL * 64 * (8 * 128 * 2 * 2);  // 4 MiB
  const long long largest = static_cast<long long>(pftest::term_gib(f, "available KV") * 1073741824.0) / block_bytes * 16;
  ASSERT_GT(largest, 0);
  ASSERT_LT(largest, 40960);
  const auto& fixes = f["fixes"];
  ASSERT_GE(fixes.size(), 3u) << fixes.dump();
  EXPECT_EQ(fixes[0].get<std::string>().rfind("--max-model-len " + std::to_string(largest) + " (", 0), 0u) << fixes.dump();
  size_t variant_at = fixes.size(), more_cards_at = fixes.size();
  for (size_t i = 0; i < fixes.size(); ++i) {
    const std::string fix = fixes[i].get<std::string>();
    if (fix.rfind("--variant ", 0) == 0 && variant_at == fixes.size()) variant_at = i;
    if (fix.find(" on 2 x H100") != std::string::npos && more_cards_at == fixes.size()) more_cards_at = i;
  }
  ASSERT_LT(variant_at, fixes.size()) << fixes.dump();
  EXPECT_GT(variant_at, 0u);
  EXPECT_LT(variant_at, more_cards_at) << "a conversion on the same card comes before more cards";
  for (size_t i = 0; i < variant_at; ++i) EXPECT_EQ(fixes[i].get<std::string>().find(" on "), std::string::npos) << fixes[i];

  const std::string fix = fixes[variant_at].get<std::string>();
  EXPECT_EQ(fix.find("--max-model-len"), std::string::npos) << "the same context: " << fix;
  const VariantFix v = parse_fix(fix);
  ASSERT_EQ(v.id.rfind("fp8", 0), 0u) << fix;  // eight-bit before four-bit
  const auto with = pftest::run_cli("fit Qwen/Qwen3-32B --device H100 --max-model-len 40960 --variant " + v.id + " --json", {.with_stderr = false});
  ASSERT_EQ(with.code, 0) << with.out.substr(0, 400);
  const Json w = json_of(with);
  EXPECT_NEAR(pftest::term_gib(w, "weights"), v.weights_gib, 0.005);
  EXPECT_EQ(w["kv_cache"]["tokens"].get<long long>(), v.tokens);
  EXPECT_EQ(v.tokens, static_cast<long long>(pftest::term_gib(w, "available KV") * 1073741824.0) / block_bytes * 16);
  EXPECT_GE(v.tokens, 40960);
}

// Issue 16 (fitcons27): a budget negative before any KV (kv_negative) on BF16 weights: no context holds one request on
// these weights, so the variant whose KV cache holds a shorter context is offered with that context. Qwen3-8B
// (36 layers, 8 KV heads, head_dim 128: 4,096 B per token per layer) on one 910B4 at utilization 0.35; vLLM-Ascend's
// 128-token block of all 36 layers = 128 x 36 x 4,096 B = 18 MiB. The W8A8 variant at 40,960 fails the context check;
// the largest context it holds is floor(its available KV / 18 MiB) x 128, and one block more does not fit.
TEST(VariantFix, Issue16_KvNegativeOffersTheVariantAtTheContextItHolds) {
  const std::string base = "fit Qwen/Qwen3-8B --device 910B4 --gpu-memory-utilization 0.35";
  const auto fit = pftest::run_cli(base + " --max-model-len 40960 --json", {.with_stderr = false});
  ASSERT_EQ(fit.code, 1) << fit.out.substr(0, 400);
  const Json f = json_of(fit);
  ASSERT_EQ(f["failure"], "kv_negative");
  std::string fix;
  for (const auto& x : f["fixes"])
    if (x.get<std::string>().rfind("--variant ", 0) == 0) fix = x.get<std::string>();
  ASSERT_FALSE(fix.empty()) << f["fixes"].dump();
  EXPECT_NE(f["fixes"][0].get<std::string>().rfind("--variant ", 0), 0u) << "a flag on the same weights comes first: " << f["fixes"].dump();
  const VariantFix v = parse_fix(fix);
  const auto at_full = pftest::run_cli(base + " --max-model-len 40960 --json --variant " + v.id, {.with_stderr = false});
  ASSERT_EQ(at_full.code, 1);
  ASSERT_EQ(json_of(at_full)["failure"], "max_model_len_too_large");
  const long long block_bytes = 128LL * 36 * (8 * 128 * 2 * 2);  // 18 MiB
  const long long by_hand = static_cast<long long>(pftest::term_gib(json_of(at_full), "available KV") * 1073741824.0) / block_bytes * 128;
  ASSERT_GT(by_hand, 0);
  EXPECT_EQ(fix.rfind("--variant " + v.id + " --max-model-len " + std::to_string(by_hand) + " (", 0), 0u) << fix;
  EXPECT_NE(fix.find("(40,960 tokens do not fit)"), std::string::npos) << fix;
  EXPECT_EQ(pftest::run_cli(base + " --variant " + v.id + " --max-model-len " + std::to_string(by_hand), {.with_stderr = false}).code, 0);
  EXPECT_EQ(pftest::run_cli(base + " --variant " + v.id + " --max-model-len " + std::to_string(by_hand + 128), {.with_stderr = false}).code, 1);
}
