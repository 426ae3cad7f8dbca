#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include "base/units.hpp"

#include "device/device_spec.hpp"
#include "engine/engine_profile.hpp"
#include "estimate/fit.hpp"
#include "model/model_source.hpp"
#include "model/quant_variant.hpp"
#include "plan/fit_search.hpp"

using namespace preflight;

namespace {

struct Case {
  model::ModelSpec model;
  device::DeviceSpec device;
  engine::EngineProfile engine;
  engine::Overheads overheads;
};

Case make(const std::string& model, const std::string& device, const std::string& engine, const std::string& version) {
  Case c;
  c.model = *model::resolve_model(model);
  c.device = *device::find_device(*device::load_device_catalog(), device);
  auto engines = engine::load_engine_catalog();
  c.engine = *engine::select_engine(*engines, engine, version);
  c.overheads = *engines->overheads_for(c.engine.platform);
  return c;
}

bool has_flag(const plan::FitSearch& s, const std::string& flag) {
  return std::find(s.fix_flags.begin(), s.fix_flags.end(), flag) != s.fix_flags.end();
}

}  // namespace

// Every fix is found by re-running the estimate with it, so each one listed must make the deployment fit.
// gpt-oss-120b on one H100 with vLLM 0.10.1 fails at start-up (vllm#23278: -2.14 GiB available): the
// profile's sampler run over 1024 sequences of 201,088-wide fp32 logits is the peak, so fewer sequences is
// a fix that needs no second card, alongside a higher utilization and TP 2.
TEST(FitSearch, EveryFixIsVerifiedAndTheSamplerFixIsFound) {
  auto c = make("openai/gpt-oss-120b", "H100-SXM", "vllm", "0.10.1");
  estimate::Deployment d;
  d.max_model_len = 32768;
  const auto base = estimate::estimate_fit(c.model, c.device, c.engine, c.overheads, d);
  ASSERT_FALSE(base.fits);
  const auto s = plan::search_fixes(c.model, c.device, c.engine, c.overheads, d, base);
  ASSERT_EQ(s.fixes.size(), s.fix_flags.size());
  bool seqs = false;
  for (const auto& f : s.fix_flags) seqs |= f.rfind("--max-num-seqs ", 0) == 0;
  EXPECT_TRUE(seqs);
  EXPECT_TRUE(has_flag(s, "--tensor-parallel-size 2"));
  for (const auto& flag : s.fix_flags) {
    auto fixed = d;
    const auto value = flag.substr(flag.find(' ') + 1);
    if (flag.rfind("--max-num-seqs", 0) == 0) fixed.max_num_seqs = std::stoll(value);
    else if (flag.rfind("--gpu-memory-utilization", 0) == 0) fixed.gpu_memory_utilization = std::stod(value);
    else if (flag.rfind("--tensor-parallel-size", 0) == 0) fixed.tensor_parallel_size = std::stoll(value);
    else if (flag.rfind("--max-model-len", 0) == 0) fixed.max_model_len = std::stoll(value);
    else if (flag == "--kv-cache-dtype fp8") fixed.kv_cache_dtype = "fp8";
    else continue;
    EXPECT_TRUE(estimate::estimate_fit(c.model, c.device, c.engine, c.overheads, fixed).fits) << flag;
  }
  // A deployment that fits has no fixes, only its largest context.
  d.max_num_seqs = 256;
  const auto ok = estimate::estimate_fit(c.model, c.device, c.engine, c.overheads, d);
  ASSERT_TRUE(ok.fits);
  const auto none = plan::search_fixes(c.model, c.device, c.engine, c.overheads, d, ok);
  EXPECT_TRUE(none.fixes.empty());
  EXPECT_GE(none.largest_context, 32768);
}

// An unsupported quantization is fixed by a scheme the engine accepts, never by more cards
// (seeds/000: fp8 on vLLM-Ascend 0.18 -> a ModelSlim W8A8 export).
TEST(FitSearch, UnsupportedQuantizationSuggestsAnAcceptedScheme) {
  auto c = make("Qwen/Qwen3-32B-FP8", "910B3", "vllm-ascend", "0.18.0");
  estimate::Deployment d;
  d.max_model_len = 4096;
  const auto base = estimate::estimate_fit(c.model, c.device, c.engine, c.overheads, d);
  ASSERT_EQ(base.failure, estimate::Failure::unsupported_quantization);
  const auto s = plan::search_fixes(c.model, c.device, c.engine, c.overheads, d, base);
  EXPECT_TRUE(has_flag(s, "--quantization ascend"));
  for (const auto& f : s.fix_flags) EXPECT_EQ(f.rfind("--tensor-parallel-size", 0), std::string::npos) << f;
}

// Issue 16 (ux28), seeds/000 4.3.5: Qwen3-14B bf16 on one 910B4 is "extreme, max_model_len within 2048". At 2,048 tokens
// and the default utilization it does not fit, and the fix "--gpu-memory-utilization 0.98" said nothing of what it holds,
// unlike every other fix. It now gives the KV tokens and concurrency that a fit at that utilization gives, and says
// "marginal" exactly when that fit's band reaches under one request.
TEST(FitSearch, Issue16_UtilizationFixSaysWhatItHoldsAndWhenItIsMarginal) {
  auto c = make("Qwen/Qwen3-14B", "910B4", "vllm-ascend", "0.18.0");
  estimate::Deployment d;
  d.max_model_len = 2048;
  const auto base = estimate::estimate_fit(c.model, c.device, c.engine, c.overheads, d);
  ASSERT_FALSE(base.fits);
  const auto s = plan::search_fixes(c.model, c.device, c.engine, c.overheads, d, base);
  const auto at = std::find_if(s.fix_flags.begin(), s.fix_flags.end(), [](const std::string& f) { return f.rfind("--gpu-memory-utilization ", 0) == 0; });
  ASSERT_NE(at, s.fix_flags.end());
  const std::string& text = s.fixes[static_cast<size_t>(at - s.fix_flags.begin())];
  auto fixed = d;
  fixed.gpu_memory_utilization = std::stod(at->substr(at->find(' ') + 1));
  const auto r = estimate::estimate_fit(c.model, c.device, c.engine, c.overheads, fixed);
  ASSERT_TRUE(r.fits);
  char expect[160];
  std::snprintf(expect, sizeof expect, "%s: %s KV tokens, %.2fx", at->c_str(), with_thousands(r.kv_tokens).c_str(), r.max_concurrency);
  EXPECT_EQ(text.rfind(expect, 0), 0u) << text << " / " << expect;
  EXPECT_EQ(text.find("marginal") != std::string::npos, r.kv_tokens_low < 2048) << text;
}

// Qwen2.5-VL-7B on one L4 (22 GiB) at 32K: the profile run encodes a 32,768-token dummy video and leaves no
// KV budget. Cheapest fixes that keep one card: no video (the largest image is profiled instead), a context
// short enough that the dummy video is no larger than an image, or no encoder profiling at all; each one fits.
TEST(FitSearch, DummyVideoFixesAreFoundAndVerified) {
  auto c = make("Qwen/Qwen2.5-VL-7B-Instruct", "L4", "vllm", "0.23.0");
  estimate::Deployment d;
  d.max_model_len = 32768;
  const auto base = estimate::estimate_fit(c.model, c.device, c.engine, c.overheads, d);
  ASSERT_FALSE(base.fits);
  ASSERT_TRUE(base.encoder_profiles_video);
  const auto s = plan::search_fixes(c.model, c.device, c.engine, c.overheads, d, base);
  ASSERT_TRUE(has_flag(s, "--limit-mm-per-prompt '{\"video\": 0}'"));
  ASSERT_TRUE(has_flag(s, "--max-model-len 16384"));
  ASSERT_TRUE(has_flag(s, "--skip-mm-profiling"));
  auto no_video = d;
  no_video.no_video = true;
  const auto nv = estimate::estimate_fit(c.model, c.device, c.engine, c.overheads, no_video);
  EXPECT_TRUE(nv.fits);
  EXPECT_FALSE(nv.encoder_profiles_video);
  EXPECT_LT(nv.activation_vision_bytes, base.activation_vision_bytes / 1.9);  // 16,384 image tokens instead of 32,768
  auto shorter = d;
  shorter.max_model_len = 16384;
  EXPECT_TRUE(estimate::estimate_fit(c.model, c.device, c.engine, c.overheads, shorter).fits);
}

// Issue 15, vllm#32105: GLM-4.7-FP8 (GLM-4.5's shape) on 8 x A100 80GB, PP 8, 202,752 tokens, vLLM 0.15: the whole-model
// KV check refuses it (71.16 GiB against one stage's ~28.6 GiB). The fixes: the largest length that check passes
// (below the model's 202,752), and TP 8 instead of PP 8, each re-estimated and fitting.
TEST(FitSearch, Issue15_PpWholeModelCheckOffersShorterContextOrTp) {
  auto c = make("zai-org/GLM-4.5", "A100-80G-SXM", "vllm", "0.15.0");
  estimate::Deployment d;
  d.pipeline_parallel_size = 8;
  d.max_model_len = 202752;
  d.gpu_memory_utilization = 0.925;
  d.quantization = "fp8";
  const auto base = estimate::estimate_fit(c.model, c.device, c.engine, c.overheads, d);
  ASSERT_FALSE(base.fits);
  ASSERT_TRUE(base.pp_whole_model_check);
  const auto s = plan::search_fixes(c.model, c.device, c.engine, c.overheads, d, base);
  EXPECT_TRUE(has_flag(s, "--tensor-parallel-size 8 --pipeline-parallel-size 1"));
  ASSERT_GT(s.largest_context, 0);
  EXPECT_LT(s.largest_context, 202752 / 2);  // 28.6 / 71.16 of the length, not the one stage's 8x more
  auto shorter = d;
  shorter.max_model_len = s.largest_context;
  EXPECT_TRUE(estimate::estimate_fit(c.model, c.device, c.engine, c.overheads, shorter).fits);
  shorter.max_model_len = s.largest_context + 16;
  EXPECT_FALSE(estimate::estimate_fit(c.model, c.device, c.engine, c.overheads, shorter).fits);
}

// Session 30: Qwen3.5-27B in msModelSlim W8A8 on 910B4 (32 GB) at its 262,144-token default was offered TP 4 only;
// TP 2 loads the weights (about 17 GiB each) and its KV cache holds a shorter context. That layout is now offered
// with --max-model-len N after the full-context one, and N is verified: TP 2 fits at N and not at the default.
TEST(FitSearch, Session30_FewerDevicesAtAShorterContextAfterTheFullContextLayout) {
  auto c = make("Qwen/Qwen3.5-27B", "910B4", "vllm-ascend", "");
  const auto* v = *model::find_variant(*model::load_variant_catalog(), "w8a8");
  estimate::Deployment d;
  d.quant_scheme = v->scheme;
  d.quantization = v->engine_quantization;
  const auto base = estimate::estimate_fit(c.model, c.device, c.engine, c.overheads, d);
  ASSERT_FALSE(base.fits);
  ASSERT_EQ(base.max_model_len, 262144);
  const auto s = plan::search_fixes(c.model, c.device, c.engine, c.overheads, d, base);
  ASSERT_EQ(s.fixes.size(), s.fix_flags.size());
  const auto full = std::find(s.fix_flags.begin(), s.fix_flags.end(), "--tensor-parallel-size 4");
  ASSERT_NE(full, s.fix_flags.end());
  const auto shorter = std::find_if(s.fix_flags.begin(), s.fix_flags.end(), [](const std::string& f) { return f.rfind("--tensor-parallel-size 2 --max-model-len ", 0) == 0; });
  ASSERT_NE(shorter, s.fix_flags.end());
  EXPECT_LT(full - s.fix_flags.begin(), shorter - s.fix_flags.begin());
  const int64_t len = std::stoll(shorter->substr(std::string("--tensor-parallel-size 2 --max-model-len ").size()));
  EXPECT_GT(len, 32768);
  EXPECT_LT(len, 262144);
  auto tp2 = d;
  tp2.tensor_parallel_size = 2;
  EXPECT_FALSE(estimate::estimate_fit(c.model, c.device, c.engine, c.overheads, tp2).fits);
  tp2.max_model_len = len;
  EXPECT_TRUE(estimate::estimate_fit(c.model, c.device, c.engine, c.overheads, tp2).fits);
}
