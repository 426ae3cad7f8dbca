// Issue 15 (fitcons27): every figure of one `fit` output describes the same deployment. Where fit shortens the context
// itself (no --max-model-len, and the model's full context does not fit: vLLM's `--max-model-len auto`), the band over
// engine versions is sized at that shorter context too, and says which context it is at.
#include <gtest/gtest.h>

#include <string>

#include "base/json_util.hpp"
#include "base/units.hpp"
#include "../variant_support.hpp"

using namespace preflight;
using pftest::json_of;

// Qwen3-32B (../shared/models/Qwen__Qwen3-32B/config.json: 64 layers, 8 KV heads, head_dim 128, max_position_embeddings
// 40,960) as FP8 block weights on one L40S, no engine version given (the newest profile, and the band over the nine
// vLLM profiles). KV in bf16: K + V per token per layer = 8 x 128 x 2 x 2 B = 4,096 B; a 16-token block of all 64
// layers = 16 x 64 x 4,096 B = 4 MiB. A profile's KV tokens = floor(available KV / 4 MiB) x 16; one request at
// max_model_len L fits where those tokens are at least L (one attention group, L a whole number of blocks).
// The newest profile's budget holds fewer than 40,960 tokens, so fit chose L = its KV tokens. Before: the band was
// sized at 40,960 and said "fits on 0 of 9 versions" under a verdict that fits.
TEST(FitConsistency, Issue15_VersionBandIsAtTheContextFitChose) {
  const auto r = pftest::run_cli("fit Qwen/Qwen3-32B --device L40S --variant fp8_block --json", {.with_stderr = false});
  ASSERT_EQ(r.code, 0) << r.out.substr(0, 400);
  const Json f = json_of(r);
  const long long block_bytes = 16LL * 64 * (8 * 128 * 2 * 2);  // 4 MiB
  const long long len = f["settings"]["max_model_len"].get<long long>();
  const long long by_hand = static_cast<long long>(pftest::term_gib(f, "available KV") * 1073741824.0) / block_bytes * 16;
  EXPECT_EQ(len, by_hand);
  EXPECT_LT(len, 40960) << "the model's full context fits: nothing to shorten";
  EXPECT_EQ(f["kv_cache"]["tokens"].get<long long>(), len);

  ASSERT_TRUE(f.contains("version_band")) << "no version given: the band is printed";
  const Json& band = f["version_band"];
  EXPECT_EQ(band["max_model_len"].get<long long>(), len);
  int fitting = 0;
  for (const auto& p : band["versions"]) {
    const long long tokens = p["kv_tokens"].get<long long>();
    EXPECT_EQ(tokens, static_cast<long long>(p["available_kv_gib"].get<double>() * 1073741824.0) / block_bytes * 16) << p.dump();
    const bool holds = tokens >= len;
    EXPECT_EQ(p["fits"].get<bool>(), holds) << p.dump();
    EXPECT_EQ(p["failure"], holds ? "none" : "max_model_len_too_large") << p.dump();
    fitting += holds ? 1 : 0;
  }
  EXPECT_EQ(band["fitting"].get<int>(), fitting);
  EXPECT_GE(fitting, 1) << "the newest profile, whose numbers the verdict gives, fits";
  EXPECT_EQ(band["versions"].back()["kv_tokens"].get<long long>(), len);

  // The text says the context the band is at.
  const auto text = pftest::run_cli("fit Qwen/Qwen3-32B --device L40S --variant fp8_block", {.with_stderr = false});
  ASSERT_EQ(text.code, 0);
  EXPECT_NE(text.out.find("max_model_len " + with_thousands(len) + ")\n  KV cache"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("fits on " + std::to_string(fitting) + " of " + std::to_string(band["versions"].size()) + " versions"), std::string::npos)
      << text.out;

  // A context the user gives is the band's context as it stands: at 40,960 no profile holds one request.
  const auto full = pftest::run_cli("fit Qwen/Qwen3-32B --device L40S --variant fp8_block --max-model-len 40960 --json", {.with_stderr = false});
  ASSERT_EQ(full.code, 1);
  const Json g = json_of(full);
  EXPECT_EQ(g["version_band"]["max_model_len"].get<long long>(), 40960);
  for (const auto& p : g["version_band"]["versions"]) EXPECT_LT(p["kv_tokens"].get<long long>(), 40960) << p.dump();
  EXPECT_EQ(g["version_band"]["fitting"].get<int>(), 0);
}

// The band over interconnects likewise. Qwen3-235B-A22B-FP8 (../shared/models: 94 layers, 4 KV heads, head_dim 128) on
// 4 x H100 SXM at TP 4 (the id: "H100" alone also names the PCIe card, whose pcie would join the band, issue 15 acc28),
// vllm@0.10.1, utilization 0.80, interconnect not given (NVSwitch assumed, NVLink direct the alternative). One KV head per rank: K + V per token per layer = 1 x 128 x 2 x 2 B = 512 B; a 16-token block of all
// 94 layers = 16 x 94 x 512 B = 770,048 B. The assumed NVSwitch's NCCL buffers leave a budget short of 40,960, so fit
// chose L = its KV tokens; each point is sized at L and fits where its tokens are at least L. Before, both points were
// sized at 40,960 and the band said "fits on 0 of 2" under a verdict that fits.
TEST(FitConsistency, Issue15_InterconnectBandIsAtTheContextFitChose) {
  const std::string args = "fit Qwen/Qwen3-235B-A22B-FP8 --device H100-SXM --tensor-parallel-size 4 --engine vllm@0.10.1 --gpu-memory-utilization 0.8";
  const auto r = pftest::run_cli(args + " --json", {.with_stderr = false});
  ASSERT_EQ(r.code, 0) << r.out.substr(0, 400);
  const Json f = json_of(r);
  const long long block_bytes = 16LL * 94 * (1 * 128 * 2 * 2);  // 770,048 B
  const long long len = f["settings"]["max_model_len"].get<long long>();
  EXPECT_LT(len, 40960);
  EXPECT_EQ(len, static_cast<long long>(pftest::term_gib(f, "available KV") * 1073741824.0) / block_bytes * 16);
  ASSERT_TRUE(f.contains("interconnect_band")) << "the interconnect is assumed: the band is printed";
  const Json& band = f["interconnect_band"];
  EXPECT_EQ(band["max_model_len"].get<long long>(), len);
  ASSERT_EQ(band["interconnects"].size(), 2u) << band.dump();
  int fitting = 0;
  for (const auto& p : band["interconnects"]) {
    const long long tokens = p["kv_tokens"].get<long long>();
    EXPECT_EQ(tokens, static_cast<long long>(p["available_kv_gib"].get<double>() * 1073741824.0) / block_bytes * 16) << p.dump();
    EXPECT_EQ(p["fits"].get<bool>(), tokens >= len) << p.dump();
    fitting += tokens >= len ? 1 : 0;
  }
  EXPECT_EQ(band["fitting"].get<int>(), fitting);
  EXPECT_EQ(band["interconnects"][0]["kv_tokens"].get<long long>(), len) << "the assumed interconnect is fit's own estimate";
  const auto text = pftest::run_cli(args, {.with_stderr = false});
  EXPECT_NE(text.out.find("the assumed one first; max_model_len " + with_thousands(len) + ")"), std::string::npos) << text.out;
}
