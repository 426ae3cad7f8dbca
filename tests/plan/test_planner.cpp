#include <gtest/gtest.h>

#include "model/quant_variant.hpp"

#include <algorithm>
#include <optional>

#include "device/device_spec.hpp"
#include "engine/engine_profile.hpp"
#include "engine/launch_rules.hpp"
#include "engine/speed_profile.hpp"
#include "model/model_catalog.hpp"
#include "plan_test_models.hpp"
#include "model/model_source.hpp"
#include "plan/launch.hpp"
#include "plan/planner.hpp"
#include "plan_catalogs.hpp"
#include "report/render_plan.hpp"

using namespace preflight;

namespace {

using test::catalogs;
using test::dev;

// One candidate: `model` on one 910B3 at `context` tokens, with the default engine.
plan::Candidate on_one(const std::string& device, const std::string& model, int64_t context, std::optional<double> min_tokens_per_s = std::nullopt) {
  auto m = model::resolve_model(model);
  EXPECT_TRUE(m.has_value()) << model;
  plan::PlanTargets t;
  t.context_tokens = context;
  t.min_tokens_per_s = min_tokens_per_s;
  return plan::evaluate_candidate(*m, dev(device), catalogs().inputs(), "", 1, t);
}

plan::Candidate on_910b3(const std::string& model, int64_t context, std::optional<double> min_tokens_per_s = std::nullopt) {
  return on_one("910B3", model, context, min_tokens_per_s);
}

}  // namespace

// seeds/000: a 27B W8A8 model never fits one 32 GB 910B4 (weights ~34 GB); the plan must say so for
// BF16 and W8A8. Issue 16: the 4-bit msModelSlim variant (W4A8_DYNAMIC) leaves no KV room on one card either
// (its GDN projections stay bf16), so W8A8 on two cards is the recommended start.
TEST(Planner, Qwen36On910B4NeedsTwoCards) {
  auto m = model::resolve_model("Qwen/Qwen3.6-27B");
  ASSERT_TRUE(m.has_value());
  plan::PlanTargets t;
  t.context_tokens = 4096;
  const auto r = plan::plan_for_model(*m, {dev("910B4")}, catalogs().inputs(), t, 16);
  // Issue 16 (h-gdnw8): msModelSlim keeps Qwen3.5/3.6's Gated-DeltaNet projections in bf16 in every practice of the
  // family (docs/quant-variants.md), so W4A8_DYNAMIC's weights leave no KV room on one card either: two cards.
  ASSERT_EQ(r.recommended.size(), 1u);
  EXPECT_EQ(r.recommended[0].num_devices, 2);
  EXPECT_EQ(r.recommended[0].variant_id, "w8a8");
  int one_card_rejections = 0;
  for (const auto& c : r.rejected) {
    if (c.num_devices != 1) continue;
    ++one_card_rejections;
    const bool w4a8 = c.variant_id == "w4a8_dynamic";
    EXPECT_NE(c.reason.find(w4a8 ? "no memory left for the KV cache" : "exceed"), std::string::npos) << c.variant << ": " << c.reason;
    EXPECT_FALSE(c.meets);
  }
  EXPECT_EQ(one_card_rejections, 3);  // BF16 as published, W8A8 and W4A8_DYNAMIC
  EXPECT_NE(r.recommended[0].launch->serve.find("--tensor-parallel-size 2"), std::string::npos);
}

// ux28: the assumption names the counts plan_for_model tried; --max-devices 2 said "1, 2, 4, 8, 16 (up to 2)".
TEST(Planner, Issue16_AssumptionNamesTheDeviceCountsTried) {
  auto m = model::resolve_model("Qwen/Qwen3-8B");
  ASSERT_TRUE(m.has_value());
  plan::PlanTargets t;
  t.context_tokens = 4096;
  auto line = [&](int64_t max_devices) {
    const auto r = plan::plan_for_model(*m, {dev("910B3")}, catalogs().inputs(), t, max_devices);
    for (const auto& a : r.assumptions)
      if (a.rfind("device counts ", 0) == 0) return a;
    return std::string("(none)");
  };
  EXPECT_EQ(line(2).rfind("device counts 1, 2 (--max-devices 2);", 0), 0u) << line(2);
  EXPECT_EQ(line(16).rfind("device counts 1, 2, 4, 8, 16 (--max-devices 16);", 0), 0u) << line(16);
  EXPECT_EQ(line(5).rfind("device counts 1, 2, 4 (--max-devices 5);", 0), 0u) << line(5);
}

// seeds/001: one 910B3 runs the 27B hybrid in BF16 because only 16 of 64 layers keep a KV cache.
TEST(Planner, WhatOne910B3RunsIncludesTheHybrid27B) {
  std::vector<model::ModelSpec> models;
  for (const auto& e : model::builtin_model_catalog().models) {
    auto spec = model::model_spec_from_catalog(e);
    if (spec) models.push_back(*spec);
  }
  ASSERT_GT(models.size(), 30u);
  plan::PlanTargets t;
  t.context_tokens = 32768;
  const auto r = plan::plan_for_device(models, dev("910B3"), 1, catalogs().inputs(), t);
  const plan::Candidate* hybrid = nullptr;
  for (const auto& c : r.recommended)
    if (c.model_id == "Qwen/Qwen3.5-27B" && c.quantization_flag.empty()) hybrid = &c;
  ASSERT_NE(hybrid, nullptr);
  EXPECT_NE(hybrid->reason.find("16 of 64 layers"), std::string::npos) << hybrid->reason;
  EXPECT_NEAR(hybrid->tokens_per_s, 19.3, 19.3 * 0.10);
  // Dense BF16 32B does not fit: 61 GiB of weights.
  bool dense32_rejected = false;
  for (const auto& c : r.rejected)
    if (c.model_id == "Qwen/Qwen3-32B" && c.quantization_flag.empty()) dense32_rejected = c.reason.find("exceed") != std::string::npos;
  EXPECT_TRUE(dense32_rejected);
  // Ranked biggest first among those that meet the targets.
  for (size_t i = 1; i < r.recommended.size(); ++i) EXPECT_GE(r.recommended[i - 1].params, r.recommended[i].params);
}

TEST(Planner, MinimumSpeedRejectsWithTheMeasuredReason) {
  const auto c = on_910b3("Qwen/Qwen3.5-27B", 8192, 40.0);
  EXPECT_FALSE(c.meets);
  EXPECT_NE(c.reason.find("below the 40.0 wanted"), std::string::npos) << c.reason;
}

TEST(Launch, VisionModelOnAscendGetsTheFlashCommWorkaroundAndEnvironment) {
  const auto c = on_910b3("Qwen/Qwen3-VL-8B-Instruct", 32768);
  ASSERT_TRUE(c.meets) << c.reason;
  const auto& env = c.launch->env;
  EXPECT_NE(std::find(env.begin(), env.end(), "VLLM_ASCEND_ENABLE_FLASHCOMM1=0"), env.end());
  bool atb = false;
  for (const auto& l : c.launch->shell) atb |= l.find("nnal/atb/set_env.sh --cxx_abi=") != std::string::npos;
  EXPECT_TRUE(atb);
  EXPECT_NE(c.launch->serve.find("vllm serve Qwen/Qwen3-VL-8B-Instruct"), std::string::npos);
  EXPECT_NE(c.launch->serve.find("--max-model-len 32768"), std::string::npos);
  EXPECT_TRUE(c.launch->multi_node.empty());
  // 37 GiB of KV: even the encoder's full profiling pass leaves far more than one 32K request needs.
  EXPECT_EQ(c.launch->serve.find("--skip-mm-profiling"), std::string::npos);
}

// The 27B hybrid on one 910B3 has ~4 GiB for KV without the encoder's profiling pass; the pass over one
// 4096x4096 image (~3.4 GiB on NPU) leaves less than one 32K request and the engine would not start, so the
// candidate starts with --skip-mm-profiling and the note says why and what it costs (the Qwen3-VL-8B above,
// with room to spare, keeps the profiling).
TEST(Launch, TightVisionModelSkipsEncoderProfiling) {
  const auto c = on_910b3("Qwen/Qwen3.5-27B", 32768);
  ASSERT_TRUE(c.meets) << c.reason;
  EXPECT_TRUE(c.skip_mm_profiling);
  EXPECT_GT(c.fit_with_encoder_pass_tokens, 0);
  EXPECT_LT(c.fit_with_encoder_pass_tokens, 32768);
  EXPECT_GE(c.fit.kv_tokens, 32768);
  EXPECT_EQ(c.fit.activation_vision_bytes, 0.0);  // the fit the command runs is the one without the pass
  EXPECT_NE(c.launch->serve.find("--skip-mm-profiling"), std::string::npos) << c.launch->serve;
  bool noted = false;
  for (const auto& n : c.launch->notes) noted |= n.rfind("--skip-mm-profiling:", 0) == 0;
  EXPECT_TRUE(noted);
}

// Qwen2.5-VL-7B on one L4 at 32K: the profile run's 32,768-token dummy video leaves no KV budget; without
// video input it profiles the largest image and fits, so the command limits video to 0 and says why (on an
// L40S there is room and no flag). Images stay enabled: no --skip-mm-profiling.
TEST(Launch, DummyVideoTooLargeServesImagesOnly) {
  const auto c = on_one("L4", "Qwen/Qwen2.5-VL-7B-Instruct", 32768);
  ASSERT_TRUE(c.meets) << c.reason;
  EXPECT_TRUE(c.no_video);
  EXPECT_FALSE(c.skip_mm_profiling);
  EXPECT_FALSE(c.fit.encoder_profiles_video);
  EXPECT_NE(c.launch->serve.find("--limit-mm-per-prompt '{\"video\": 0}'"), std::string::npos) << c.launch->serve;
  EXPECT_EQ(c.launch->serve.find("--skip-mm-profiling"), std::string::npos);
  const auto big = on_one("L40S", "Qwen/Qwen2.5-VL-7B-Instruct", 32768);
  ASSERT_TRUE(big.meets) << big.reason;
  EXPECT_FALSE(big.no_video);
  EXPECT_TRUE(big.fit.encoder_profiles_video);
  EXPECT_EQ(big.launch->serve.find("--limit-mm-per-prompt"), std::string::npos);
}

TEST(Launch, SixteenDevicesSpanTwoNodesWithRay) {
  auto m = model::resolve_model("Qwen/Qwen3-235B-A22B");
  ASSERT_TRUE(m.has_value());
  plan::PlanTargets t;
  t.context_tokens = 8192;
  const auto c = plan::evaluate_candidate(*m, dev("910B3"), catalogs().inputs(), "", 16, t);
  ASSERT_TRUE(c.meets) << c.reason;
  EXPECT_EQ(c.tensor_parallel_size, 8);
  EXPECT_EQ(c.pipeline_parallel_size, 2);
  EXPECT_NE(c.launch->serve.find("--pipeline-parallel-size 2"), std::string::npos);
  EXPECT_NE(c.launch->serve.find("--distributed-executor-backend ray"), std::string::npos);
  bool head = false, worker = false;
  for (const auto& l : c.launch->multi_node) {
    head |= l == "ray start --head --port=6379";
    worker |= l.find("ray start --address=") == 0;
  }
  EXPECT_TRUE(head && worker);
  EXPECT_TRUE(c.speed.cross_node);
}

TEST(LaunchRules, RejectsBadRecords) {
  const auto ok = Json::parse(R"({"schema_version":1,"rules":[{"id":"a","engine":"vllm","version_min":"0.1.0","version_max":"1.0.0",
      "when":{"vision":true},"shell":[],"env":{"A":"1"},"flags":[],"note":"n","source":"s"}]})");
  EXPECT_TRUE(engine::parse_launch_rules(ok, "launch.json", {}).has_value());
  Json no_when = ok;
  no_when["rules"][0]["when"] = Json::object();
  auto r1 = engine::parse_launch_rules(no_when, "launch.json", {});
  ASSERT_FALSE(r1.has_value());
  EXPECT_NE(r1.error().describe().find("no condition"), std::string::npos);
  Json dup = ok;
  dup["rules"].push_back(ok["rules"][0]);
  auto r2 = engine::parse_launch_rules(dup, "launch.json", {});
  ASSERT_FALSE(r2.has_value());
  EXPECT_NE(r2.error().describe().find("duplicate"), std::string::npos);
  Json bad_env = ok;
  bad_env["rules"][0]["env"]["A"] = 1;
  EXPECT_FALSE(engine::parse_launch_rules(bad_env, "launch.json", {}).has_value());
}

// #19 start-up time: the whole-catalogue plan (shared parameter counts and engine, several threads) gives,
// for every (device, count) pair, the candidates that evaluate_candidate gives one at a time: none
// dropped, none added, same verdict, reason, numbers and launch line.
TEST(Planner, Issue19_PlanForDevicesMatchesCandidateByCandidate) {
  std::vector<model::ModelSpec> models;
  for (const auto& e : model::builtin_model_catalog().models) {
    auto s = model::model_spec_from_catalog(e);
    ASSERT_TRUE(s.has_value()) << e.id;
    models.push_back(*s);
  }
  const std::vector<device::DeviceSpec> devices = {dev("910B3"), dev("910B4"), dev("H100-SXM"), dev("A100-80G")};
  const std::vector<int64_t> counts = {1, 2, 16};
  plan::PlanTargets t;
  t.context_tokens = 32768;
  const auto plans = plan::plan_for_devices(models, devices, counts, catalogs().inputs(), t, 2);
  ASSERT_EQ(plans.size(), devices.size() * counts.size());
  size_t fitting = 0;
  for (size_t i = 0; i < plans.size(); ++i) {
    const auto& d = devices[i / counts.size()];
    const int64_t n = counts[i % counts.size()];
    EXPECT_EQ(plans[i].device_id, d.id);
    EXPECT_EQ(plans[i].num_devices, n);
    auto eng = engine::select_engine(catalogs().engines, engine::default_engine_for(d.platform), "");
    ASSERT_TRUE(eng.has_value());
    std::vector<const plan::Candidate*> got;
    for (const auto& c : plans[i].result.recommended) got.push_back(&c);
    for (const auto& c : plans[i].result.rejected) got.push_back(&c);
    size_t expected_count = 0;
    // The variants of the run: each model's, less a release's conversion rows its BF16 original lists (issue 16, quant26).
    std::vector<std::vector<std::string>> lists;
    for (const auto& m : models) lists.push_back(plan::quantization_variants(m, *eng));
    plan::drop_release_conversions(models, catalogs().inputs(), lists);
    for (size_t mi = 0; mi < models.size(); ++mi) {
      const auto& m = models[mi];
      for (const auto& q : lists[mi]) {
        ++expected_count;
        const auto one = plan::evaluate_candidate(m, d, catalogs().inputs(), q, n, t);
        const plan::Candidate* match = nullptr;
        for (const auto* c : got)
          if (c->model_id == one.model_id && c->variant_id == one.variant_id) match = c;
        ASSERT_NE(match, nullptr) << d.id << " x" << n << " " << m.id << " " << q;
        EXPECT_EQ(match->meets, one.meets) << m.id;
        EXPECT_EQ(match->reason, one.reason) << m.id;
        EXPECT_EQ(match->fit.kv_tokens, one.fit.kv_tokens) << m.id;
        EXPECT_EQ(match->params, one.params) << m.id;
        EXPECT_EQ(match->tokens_per_s, one.tokens_per_s) << m.id;
        EXPECT_EQ(match->launch->serve, one.launch->serve) << m.id;
        fitting += one.meets ? 1 : 0;
      }
    }
    EXPECT_EQ(got.size(), expected_count) << d.id << " x" << n;
  }
  EXPECT_GT(fitting, 100u);  // the comparison covers fitting candidates, not only rejections
}

// Issue 19 (start-up time): the plan builds no explanatory text for its fits (it prints none), and each
// candidate's fit has exactly the numbers and verdict estimate_fit gives for its deployment.
TEST(Planner, Issue19_CandidatesFitWithoutTextSameNumbers) {
  plan::PlanTargets t;
  t.context_tokens = 8192;
  const auto d = dev("910B3");
  std::vector<model::ModelSpec> models;
  for (const char* id : {"Qwen/Qwen3-VL-8B-Instruct", "Qwen/Qwen3.5-27B", "Qwen/Qwen3-0.6B", "deepseek-ai/DeepSeek-V3"}) {
    auto m = model::resolve_model(id);
    ASSERT_TRUE(m.has_value()) << id;
    models.push_back(*m);
  }
  const auto r = plan::plan_for_device(models, d, 2, catalogs().inputs(), t);
  ASSERT_FALSE(r.recommended.empty());
  ASSERT_FALSE(r.rejected.empty());
  auto eng = engine::select_engine(catalogs().engines, engine::default_engine_for(d.platform), "");
  ASSERT_TRUE(eng.has_value());
  const engine::Overheads* oh = catalogs().engines.overheads_for(*eng, d.platform);
  ASSERT_NE(oh, nullptr);
  std::vector<const plan::Candidate*> all;
  for (const auto& c : r.recommended) all.push_back(&c);
  for (const auto& c : r.rejected) all.push_back(&c);
  for (const auto* cp : all) {
    const auto& c = *cp;
    const model::ModelSpec* m = nullptr;
    for (const auto& x : models) if (x.id == c.model_id) m = &x;
    ASSERT_NE(m, nullptr);
    estimate::Deployment dep;
    dep.tensor_parallel_size = c.tensor_parallel_size;
    dep.pipeline_parallel_size = c.pipeline_parallel_size;
    dep.max_model_len = c.context_tokens;
    dep.quantization = c.quantization_flag;
    if (!c.variant_id.empty()) dep.quant_scheme = (*model::find_variant(*model::load_variant_catalog(), c.variant_id))->scheme;
    dep.no_video = c.no_video;
    dep.skip_mm_profiling = c.skip_mm_profiling;
    const auto want = estimate::estimate_fit(*m, d, *eng, *oh, dep);
    const std::string at = c.model_id.str() + " [" + c.quantization_flag.str() + "]";
    EXPECT_FALSE(want.assumptions.empty()) << at;
    EXPECT_EQ(c.fit.fits, want.fits) << at;
    EXPECT_EQ(c.fit.failure, want.failure) << at;
    EXPECT_EQ(c.fit.failure_message, want.failure_message) << at;
    EXPECT_EQ(c.fit.weights_bytes, want.weights_bytes) << at;
    EXPECT_EQ(c.fit.available_kv_bytes, want.available_kv_bytes) << at;
    EXPECT_EQ(c.fit.kv_tokens, want.kv_tokens) << at;
    EXPECT_EQ(c.fit.max_concurrency, want.max_concurrency) << at;
  }
}

// Issue 20: the seed's own card (910B4) has no measured or datasheet bandwidth; the plan still quotes tok/s, from
// the catalogue prior (800 GB/s peak x 0.80 copy fraction = 640 GB/s, band 640 - 1,280 GB/s), and says so.
TEST(Planner, Issue20_910B4PlanQuotesSpeedFromABandwidthPrior) {
  const auto c = on_one("910B4", "Qwen/Qwen3-8B", 4096);
  ASSERT_TRUE(c.meets) << c.reason;
  EXPECT_GT(c.tokens_per_s, 0.0);
  EXPECT_EQ(c.reason.find("speed unknown"), std::string::npos) << c.reason;
  auto m = model::resolve_model("Qwen/Qwen3-8B");
  ASSERT_TRUE(m.has_value());
  plan::PlanTargets t;
  t.context_tokens = 4096;
  const auto r = plan::plan_for_device({*m}, dev("910B4"), 1, catalogs().inputs(), t);
  bool says = false;
  for (const auto& a : r.assumptions) says |= a.find("bandwidth prior (640 GB/s copy, band 640 - 1280 GB/s), until `preflight bw --save --device 910B4`") != std::string::npos;
  EXPECT_TRUE(says);
}

// Issue 20: without --decode-context, plan quotes speed at each row's context target (here 32,768), where the KV
// cache read per step is 32x the 1,024-token one; --decode-context still overrides it.
TEST(Planner, Issue20_SpeedAtTheContextTarget) {
  const auto at_target = on_one("H100", "Qwen/Qwen3-8B", 32768);
  ASSERT_TRUE(at_target.meets) << at_target.reason;
  EXPECT_EQ(at_target.speed.context_tokens, 32768);
  auto m = model::resolve_model("Qwen/Qwen3-8B");
  ASSERT_TRUE(m.has_value());
  plan::PlanTargets t;
  t.context_tokens = 32768;
  t.decode_context_tokens = 1024;
  const auto short_ctx = plan::evaluate_candidate(*m, dev("H100"), catalogs().inputs(), "", 1, t);
  EXPECT_EQ(short_ctx.speed.context_tokens, 1024);
  EXPECT_LT(at_target.tokens_per_s, short_ctx.tokens_per_s * 0.85);
}

// Issue 20: `plan MODEL --devices ...` (plan_for_model) says, once per device, which tok/s rest on a bandwidth prior:
// the 910B4's catalogue prior with its one-sided band, the H100's datasheet peak x 0.80 (3,350 x 0.80 = 2,680 GB/s).
TEST(Planner, Issue20_PlanForModelNamesEachDevicesBandwidthPrior) {
  auto m = model::resolve_model("Qwen/Qwen3-8B");
  ASSERT_TRUE(m.has_value());
  plan::PlanTargets t;
  t.context_tokens = 4096;
  const auto r = plan::plan_for_model(*m, {dev("910B4"), dev("H100-SXM")}, catalogs().inputs(), t, 2);
  int b4 = 0, h100 = 0;
  for (const auto& a : r.assumptions) {
    b4 += a.find("tok/s on 910B4 from a bandwidth prior (640 GB/s copy, band 640 - 1280 GB/s)") != std::string::npos;
    h100 += a.find("tok/s on H100-SXM from a bandwidth prior (2680 GB/s copy = datasheet peak x copy fraction)") != std::string::npos;
  }
  EXPECT_EQ(b4, 1);
  EXPECT_EQ(h100, 1);
}

// Issue 16: a --context above the model's derived max_model_len (here max_position_embeddings) is not met by a row at the model's
// maximum: every candidate is rejected with the reason, none recommended.
TEST(Planner, Issue16_ContextAboveTheModelMaximumIsNeverLoweredSilently) {
  auto m = model::resolve_model("Qwen/Qwen3-8B");
  ASSERT_TRUE(m.has_value());
  ASSERT_EQ(m->max_position_embeddings, 40960);
  plan::PlanTargets t;
  t.context_tokens = 131072;
  const auto r = plan::plan_for_model(*m, {dev("H200")}, catalogs().inputs(), t, 8);
  EXPECT_TRUE(r.recommended.empty());
  ASSERT_FALSE(r.rejected.empty());
  for (const auto& c : r.rejected) {
    EXPECT_EQ(c.context_tokens, 131072) << c.variant;
    // Issue 16 (plan28): vLLM's own ValueError for a length above the derived one, as fit refuses --max-model-len.
    EXPECT_NE(c.reason.find("--context: ValueError: User-specified max_model_len (131072) is greater than the derived max_model_len "
                            "(max_position_embeddings=40960 or model_max_length=None in model's config.json)"),
              std::string::npos)
        << c.reason;
  }
  // Without --context the default (min(32768, model max)) is a target the model can meet.
  const auto d = plan::plan_for_model(*m, {dev("H200")}, catalogs().inputs(), {}, 8);
  ASSERT_FALSE(d.recommended.empty());
  EXPECT_EQ(d.recommended[0].context_tokens, 32768);
}

// Issue 16: 8 x 32 GB 910B4 have a real answer for the big MoE models: the 4-bit msModelSlim variant.
TEST(Planner, Issue16_Eight910B4RunQwen3_235BInFourBit) {
  auto m = model::resolve_model("Qwen/Qwen3-235B-A22B");
  ASSERT_TRUE(m.has_value());
  plan::PlanTargets t;
  t.context_tokens = 8192;
  const auto r = plan::plan_for_device({*m}, dev("910B4"), 8, catalogs().inputs(), t);
  ASSERT_FALSE(r.recommended.empty());
  EXPECT_EQ(r.recommended.front().variant_id, "w4a8_dynamic") << r.recommended.front().variant;
  EXPECT_EQ(r.recommended.front().quantization_flag, "ascend");
  bool w8a8_rejected = false;
  for (const auto& c : r.rejected) w8a8_rejected |= c.variant_id == "w8a8" && !c.meets;
  EXPECT_TRUE(w8a8_rejected);  // W8A8 leaves no KV cache on 8 x 32 GB
}

namespace {

// The rows of two plans are the same rows in the same order with the same verdicts, reasons and numbers.
void expect_same_rows(const plan::PlanResult& a, const plan::PlanResult& b, const std::string& at) {
  ASSERT_EQ(a.recommended.size(), b.recommended.size()) << at;
  ASSERT_EQ(a.rejected.size(), b.rejected.size()) << at;
  EXPECT_EQ(a.assumptions, b.assumptions) << at;
  auto same = [&](const plan::Candidate& x, const plan::Candidate& y, size_t i) {
    const std::string where = at + " row " + std::to_string(i) + " " + x.model_id.str() + " [" + x.quantization_flag.str() + "]";
    EXPECT_EQ(x.model_id, y.model_id) << where;
    EXPECT_EQ(x.quantization_flag, y.quantization_flag) << where;
    EXPECT_EQ(x.num_devices, y.num_devices) << where;
    EXPECT_EQ(x.meets, y.meets) << where;
    EXPECT_EQ(x.reason, y.reason) << where;
    EXPECT_EQ(x.fit.fits, y.fit.fits) << where;
    EXPECT_EQ(x.fit.weights_bytes, y.fit.weights_bytes) << where;
    EXPECT_EQ(x.fit.available_kv_bytes, y.fit.available_kv_bytes) << where;
    EXPECT_EQ(x.fit.kv_tokens, y.fit.kv_tokens) << where;
    EXPECT_EQ(x.fit.max_concurrency, y.fit.max_concurrency) << where;
    EXPECT_EQ(x.tokens_per_s, y.tokens_per_s) << where;
    EXPECT_EQ(x.aggregate_tokens_per_s, y.aggregate_tokens_per_s) << where;
    EXPECT_EQ(x.speed.ttft_s, y.speed.ttft_s) << where;
    EXPECT_EQ(x.speed.points.size(), y.speed.points.size()) << where;
  };
  for (size_t i = 0; i < a.recommended.size(); ++i) same(a.recommended[i], b.recommended[i], i);
  for (size_t i = 0; i < a.rejected.size(); ++i) same(a.rejected[i], b.rejected[i], i);
}

}  // namespace

// #19 start-up time: the table's plan (RowDetail::table) builds no speed provenance and only the start
// commands of the first recommended row, the one the table prints; the rows, their order and numbers
// are those of the full plan (`--json`), and the rendered table is byte-identical.
TEST(Planner, Issue19_TableDetailSameRowsAsEveryRow) {
  const auto models = preflight::test::catalogue_model_specs();
  const std::vector<device::DeviceSpec> devices = {dev("910B3"), dev("H100-SXM"), dev("RTX4090")};
  const std::vector<int64_t> counts = {1, 8, 16};
  plan::PlanTargets t;
  t.context_tokens = 32768;
  plan::PlanInputs full = catalogs().inputs();
  plan::PlanInputs table = full;
  table.detail = plan::RowDetail::table;
  const auto a = plan::plan_for_devices(models, devices, counts, full, t, 2);
  const auto b = plan::plan_for_devices(models, devices, counts, table, t, 2);
  ASSERT_EQ(a.size(), b.size());
  size_t rows_with_text = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string at = a[i].device_id + " x" + std::to_string(a[i].num_devices);
    expect_same_rows(a[i].result, b[i].result, at);
    const auto& rec = b[i].result.recommended;
    for (size_t r = 0; r < rec.size(); ++r) {
      EXPECT_TRUE(rec[r].speed.provenance.empty()) << at << " " << rec[r].model_id;
      EXPECT_TRUE(rec[r].speed.bandwidth_source.empty()) << at << " " << rec[r].model_id;
      if (r > 0) EXPECT_TRUE(rec[r].launch->serve.empty()) << at << " " << rec[r].model_id;
    }
    for (const auto& c : a[i].result.recommended) {
      EXPECT_FALSE(c.launch->serve.empty()) << at << " " << c.model_id;
      rows_with_text += c.speed.provenance.empty() ? 0 : 1;
    }
    if (!rec.empty()) {
      EXPECT_EQ(rec.front().launch->serve, a[i].result.recommended.front().launch->serve) << at;
      EXPECT_EQ(rec.front().launch->notes, a[i].result.recommended.front().launch->notes) << at;
      EXPECT_EQ(rec.front().launch->prepare, a[i].result.recommended.front().launch->prepare) << at;
      EXPECT_EQ(rec.front().launch->multi_node, a[i].result.recommended.front().launch->multi_node) << at;
    }
    for (const auto format : {report::PlanFormat::text, report::PlanFormat::markdown})
      EXPECT_EQ(report::render_plan(a[i].result, "q", format, 15), report::render_plan(b[i].result, "q", format, 15)) << at;
  }
  EXPECT_GT(rows_with_text, 100u);  // the full plan does carry the text the table leaves out
}

// The plan of one (device, count) as a one-at-a-time loop makes it: every model x variant evaluated alone, the
// recommended rows ranked biggest first, then precision, then single-stream speed; the rejected in catalogue order.
static plan::PlanResult one_at_a_time(const std::vector<model::ModelSpec>& models, const device::DeviceSpec& d, const engine::EngineProfile& eng,
                                      int64_t count, const plan::PlanTargets& t) {
  plan::PlanResult naive;
  std::vector<std::vector<std::string>> lists;  // the run's variants (issue 16, quant26: a release's conversions left to its original)
  for (const auto& m : models) lists.push_back(plan::quantization_variants(m, eng));
  plan::drop_release_conversions(models, catalogs().inputs(), lists);
  for (size_t mi = 0; mi < models.size(); ++mi)
    for (const auto& q : lists[mi]) {
      const auto& m = models[mi];
      auto c = plan::evaluate_candidate(m, d, catalogs().inputs(), q, count, t);
      (c.meets ? naive.recommended : naive.rejected).push_back(std::move(c));
    }
  std::stable_sort(naive.recommended.begin(), naive.recommended.end(), [&](const plan::Candidate& a, const plan::Candidate& b) {
    if (a.params != b.params) return a.params > b.params;
    if (a.variant_rank != b.variant_rank) return a.variant_rank < b.variant_rank;
    return a.tokens_per_s > b.tokens_per_s;
  });
  return naive;
}

// #19: the planner's shared, reordered and parallel evaluation (plan_for_device on several workers,
// plan_for_devices one variant at a time over all counts) gives exactly the plan of a naive loop: every
// model and variant evaluated one at a time with evaluate_candidate, the meeting ones ranked biggest
// model first, then published before 8-bit before 4-bit, then faster (the order README states).
TEST(Planner, Issue19_ParallelPlanMatchesNaiveLoop) {
  const auto models = preflight::test::catalogue_model_specs();
  plan::PlanTargets t;
  t.context_tokens = 8192;
  for (const char* id : {"910B4", "A100-80G", "L4"}) {
    const auto d = dev(id);
    auto eng = engine::select_engine(catalogs().engines, engine::default_engine_for(d.platform), "");
    ASSERT_TRUE(eng.has_value());
    const std::vector<int64_t> counts = {1, 2, 4, 8, 16};
    plan::PlanInputs in = catalogs().inputs();
    in.threads = 2;
    const auto many = plan::plan_for_devices(models, {d}, counts, catalogs().inputs(), t, 2);
    ASSERT_EQ(many.size(), counts.size());
    for (size_t k = 0; k < counts.size(); ++k) {
      plan::PlanResult naive = one_at_a_time(models, d, *eng, counts[k], t);
      naive.assumptions = many[k].result.assumptions;  // the header line is not what this test checks
      const std::string at = std::string(id) + " x" + std::to_string(counts[k]);
      expect_same_rows(naive, many[k].result, at + " plan_for_devices");
      expect_same_rows(naive, plan::plan_for_device(models, d, counts[k], in, t), at + " plan_for_device on 2 workers");
      for (size_t i = 0; i < naive.recommended.size() && i < many[k].result.recommended.size(); ++i)
        EXPECT_EQ(naive.recommended[i].launch->serve, many[k].result.recommended[i].launch->serve) << at << " " << naive.recommended[i].model_id;
    }
  }
}

// Issue 19 (round 18): ranking keeps the larger of a (device, count)'s recommended and rejected rows in the candidates'
// own block (ranked in place, or closed up) and moves only the smaller out. Both ways must give the rows, their order and
// their texts as a one-at-a-time loop does (recommended: biggest first, then precision, then speed; rejected: catalogue
// order): L4 x1 rejects most of the catalogue, H100-SXM x16 recommends most, so both ways are taken.
TEST(Planner, Issue19_RankedInPlaceOrMovedOutSameRows) {
  const auto models = preflight::test::catalogue_model_specs();
  plan::PlanTargets t;
  t.context_tokens = 8192;
  size_t mostly_recommended = 0, mostly_rejected = 0;
  for (const char* id : {"L4", "H100-SXM"}) {
    const auto d = dev(id);
    auto eng = engine::select_engine(catalogs().engines, engine::default_engine_for(d.platform), "");
    ASSERT_TRUE(eng.has_value());
    const std::vector<int64_t> counts = {1, 16};
    const auto many = plan::plan_for_devices(models, {d}, counts, catalogs().inputs(), t, 1);
    ASSERT_EQ(many.size(), counts.size());
    for (size_t k = 0; k < counts.size(); ++k) {
      plan::PlanResult naive = one_at_a_time(models, d, *eng, counts[k], t);
      naive.assumptions = many[k].result.assumptions;  // the header line is not what this test checks
      const std::string at = std::string(id) + " x" + std::to_string(counts[k]);
      (naive.recommended.size() > naive.rejected.size() ? mostly_recommended : mostly_rejected) += 1;
      expect_same_rows(naive, many[k].result, at);
      for (size_t i = 0; i < naive.recommended.size() && i < many[k].result.recommended.size(); ++i) {
        EXPECT_EQ(naive.recommended[i].variant, many[k].result.recommended[i].variant) << at << " " << i;
        EXPECT_EQ(naive.recommended[i].launch->serve, many[k].result.recommended[i].launch->serve) << at << " " << i;
        EXPECT_FALSE(many[k].result.recommended[i].launch->serve.empty()) << at << " " << i;
      }
      for (size_t i = 0; i < naive.rejected.size() && i < many[k].result.rejected.size(); ++i)
        EXPECT_FALSE(many[k].result.rejected[i].meets) << at << " " << i;
    }
  }
  EXPECT_GT(mostly_recommended, 0u);
  EXPECT_GT(mostly_rejected, 0u);
}

// #19: a plan's candidates carry their fits' summary numbers only: Deployment::rank_tree = false leaves
// `ranks` empty and every other number and the verdict as estimate_fit gives them with the tree (TP 8 with
// PP 1 and PP 2, for a VL, a hybrid and a small dense model), and plan_for_device keeps no per-term
// breakdown either.
TEST(Planner, Issue19_CandidatesKeepNoRankTree) {
  const auto d = dev("910B3");
  auto eng = engine::select_engine(catalogs().engines, engine::default_engine_for(d.platform), "");
  ASSERT_TRUE(eng.has_value());
  const engine::Overheads* oh = catalogs().engines.overheads_for(*eng, d.platform);
  ASSERT_NE(oh, nullptr);
  for (const char* id : {"Qwen/Qwen3-VL-8B-Instruct", "Qwen/Qwen3.5-27B", "Qwen/Qwen3-0.6B"}) {
    auto m = model::resolve_model(id);
    ASSERT_TRUE(m.has_value()) << id;
    for (const int64_t pp : {1, 2}) {
      estimate::Deployment dep;
      dep.tensor_parallel_size = 8;
      dep.pipeline_parallel_size = pp;
      dep.max_model_len = 32768;
      const auto tree = estimate::estimate_fit(*m, d, *eng, *oh, dep);
      dep.rank_tree = false;
      const auto bare = estimate::estimate_fit(*m, d, *eng, *oh, dep);
      const std::string at = std::string(id) + " PP" + std::to_string(pp);
      EXPECT_EQ(tree.ranks.size(), static_cast<size_t>(pp)) << at;
      EXPECT_TRUE(bare.ranks.empty()) << at;
      EXPECT_EQ(bare.fits, tree.fits) << at;
      EXPECT_EQ(bare.failure_message, tree.failure_message) << at;
      EXPECT_EQ(bare.weights_bytes, tree.weights_bytes) << at;
      EXPECT_EQ(bare.activation_bytes, tree.activation_bytes) << at;
      EXPECT_EQ(bare.available_kv_bytes, tree.available_kv_bytes) << at;
      EXPECT_EQ(bare.num_blocks, tree.num_blocks) << at;
      EXPECT_EQ(bare.kv_tokens, tree.kv_tokens) << at;
      EXPECT_EQ(bare.max_concurrency, tree.max_concurrency) << at;
      EXPECT_EQ(bare.terms.size(), tree.terms.size()) << at;
      EXPECT_EQ(bare.lines, tree.lines) << at;
    }
  }
  std::vector<model::ModelSpec> models = {*model::resolve_model("Qwen/Qwen3-0.6B"), *model::resolve_model("Qwen/Qwen3.5-27B")};
  plan::PlanTargets t;
  t.context_tokens = 8192;
  const auto r = plan::plan_for_device(models, d, 2, catalogs().inputs(), t);
  ASSERT_FALSE(r.recommended.empty());
  for (const auto& c : r.recommended) {
    EXPECT_GT(c.fit.kv_tokens, 0) << c.model_id;
  }
}

// Issue 19 (planfast13): whether the quantization catalogue refuses a variant's start (engine::shipped_variant_refusal)
// is kept per thread by the engine's name, rule version, variant and flag, since each model asked it again. The answer
// moves with the version: vLLM-Ascend's `--quantization ascend` (msModelSlim W8A8, W4A8_DYNAMIC) is a plugin choice from
// vllm-ascend 0.9.0 on (data/engines/quantization_methods.json plugin_methods), so the variants of Qwen3-8B on each
// version are those `plan --device 910B3 --engine vllm-ascend@V` of the build before (9af88b8, one version per process)
// lists: 0.8.5 the checkpoint as published alone, 0.9.0 W8A8 too, 0.11.0 W8A8 and W4A8_DYNAMIC too. Asked in turn on
// one thread, twice over, each version gets its own list: keyed without the version, 0.8.5 after 0.11.0 took W8A8.
TEST(Planner, Issue19_VariantRefusalsAreKeptPerEngineVersion) {
  auto m = model::resolve_model("Qwen/Qwen3-8B");
  ASSERT_TRUE(m.has_value());
  const std::vector<std::pair<std::string, std::vector<std::string>>> expected = {
      {"0.11.0", {"", "w8a8", "w4a8_dynamic"}}, {"0.8.5", {""}}, {"0.9.0", {"", "w8a8"}}};
  for (int round = 0; round < 2; ++round)
    for (const auto& [version, variants] : expected) {
      SCOPED_TRACE(version);
      auto eng = engine::select_engine(catalogs().engines, "vllm-ascend", version);
      ASSERT_TRUE(eng.has_value()) << eng.error().describe();
      EXPECT_EQ(plan::quantization_variants(*m, *eng), variants);
    }
}
