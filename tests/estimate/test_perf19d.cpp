// Issue 19, review leftovers of the planner's speed-ups (behaviour-neutral): one predicate for "a ModelSlim
// checkpoint without --quantization" (the fit's auto-detection and plan's fix search), its note written only
// when the deployment explains itself, and the step-traffic memo keyed on values, bound to one model.
#include <gtest/gtest.h>

#include <vector>

#include "device/device_spec.hpp"
#include "engine/speed_profile.hpp"
#include "estimate/fit.hpp"
#include "estimate/speed.hpp"
#include "fit_setup.hpp"

using namespace preflight;

namespace {

bool has_note(const estimate::FitEstimate& e, const std::string& fragment) {
  for (const auto& a : e.assumptions)
    if (a.find(fragment) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST(Fit, Issue19_ModelSlimWithoutQuantizationFlagIsOnePredicate) {
  auto s = pftest::fit_setup("Qwen/Qwen3-0.6B", "910B3", "vllm-ascend", "0.11.0");
  model::ModelSpec slim = s.model;
  slim.quant.method = "ascend";
  estimate::Deployment plain, flagged, with_scheme;
  flagged.quantization = "ascend";
  with_scheme.quant_scheme = model::QuantScheme{};
  EXPECT_TRUE(estimate::modelslim_without_quantization_flag(slim, plain));
  EXPECT_FALSE(estimate::modelslim_without_quantization_flag(slim, flagged));
  EXPECT_FALSE(estimate::modelslim_without_quantization_flag(slim, with_scheme));
  EXPECT_FALSE(estimate::modelslim_without_quantization_flag(s.model, plain));  // not a ModelSlim checkpoint
  model::ModelSpec fp8 = s.model;
  fp8.quant.method = "fp8";
  EXPECT_FALSE(estimate::modelslim_without_quantization_flag(fp8, plain));

  // 0.11.0 reads no quant_model_description.json on its own: the checkpoint is built unquantized, and the note saying
  // so is an assumption of an explained estimate only; the numbers are the same either way.
  plain.max_model_len = 8192;
  estimate::Deployment quiet = plain;
  quiet.explain = false;
  const auto explained = estimate::estimate_fit(slim, s.device, s.engine, s.overheads, plain);
  const auto terse = estimate::estimate_fit(slim, s.device, s.engine, s.overheads, quiet);
  EXPECT_TRUE(has_note(explained, "without --quantization"));
  EXPECT_FALSE(has_note(terse, "without --quantization"));
  EXPECT_EQ(explained.quantization, "");
  EXPECT_EQ(terse.quantization, "");
  EXPECT_DOUBLE_EQ(explained.weights_bytes, terse.weights_bytes);
  EXPECT_EQ(explained.kv_tokens, terse.kv_tokens);
  EXPECT_EQ(explained.fits, terse.fits);
}

// The memo once compared the model and the scheme by address: a scheme changed in place (or another one at a reused
// address) read the traffic of the one before. It now holds the scheme's value and belongs to one model.
TEST(Speed, Issue19_StepTrafficMemoKeysOnTheSchemeValue) {
  auto s = pftest::fit_setup("Qwen/Qwen3-8B", "910B3", "vllm-ascend", "0.11.0");
  auto speeds = engine::load_speed_catalog();
  ASSERT_TRUE(speeds.has_value());
  const engine::SpeedProfile* profile = speeds->find("vllm-ascend", "npu");
  ASSERT_NE(profile, nullptr);
  estimate::Deployment d;
  model::QuantScheme scheme = s.model.quant;  // bf16 as published
  estimate::StepTrafficMemo memo(s.model);
  EXPECT_EQ(&memo.model(), &s.model);
  const double bf16_bytes = memo.get(scheme, *profile, d).dense_weight_bytes;
  ASSERT_GT(bf16_bytes, 0);
  // Qwen3-8B: 8,190,735,360 parameters, all but the 151,936 x 4,096 embedding (622,329,856) read every step in bf16.
  EXPECT_GT(bf16_bytes, 2.0 * 7.0e9);

  scheme.method = "fp8";  // the same object, now an fp8 checkpoint: about half the bytes
  scheme.linear_format = model::WeightFormat::fp8_channel;
  const double fp8_bytes = memo.get(scheme, *profile, d).dense_weight_bytes;
  EXPECT_LT(fp8_bytes, 0.6 * bf16_bytes);
  estimate::StepTrafficMemo fresh(s.model);
  EXPECT_DOUBLE_EQ(fp8_bytes, fresh.get(scheme, *profile, d).dense_weight_bytes);

  const model::QuantScheme copy = s.model.quant;  // another object with the first value: the first traffic again
  EXPECT_DOUBLE_EQ(memo.get(copy, *profile, d).dense_weight_bytes, bf16_bytes);
  d.tensor_parallel_size = 2;  // a value of the deployment: refilled too (each rank reads about half)
  const double tp2_bytes = memo.get(copy, *profile, d).dense_weight_bytes;
  EXPECT_LT(tp2_bytes, 0.6 * bf16_bytes);
  EXPECT_GT(tp2_bytes, 0.4 * bf16_bytes);
}

// Issue 19 (round 21): a memo whose caller holds its inputs unchanged (StepTrafficInputs::held, the planner's) skips the
// value comparison only for the very scheme and profile objects of its last fill or hit. Over a run of gets that
// switch between two schemes, two profiles with different operator counts, two TP sizes and an equal copy of a scheme,
// every traffic equals the one a fresh memo computes for the same inputs (the comparison it skips would have said the
// same).
TEST(Speed, Issue19_HeldStepTrafficMemoEqualsAFreshOne) {
  auto s = pftest::fit_setup("Qwen/Qwen3-8B", "910B3", "vllm-ascend", "0.11.0");
  auto speeds = engine::load_speed_catalog();
  ASSERT_TRUE(speeds.has_value());
  const engine::SpeedProfile* profile = speeds->find("vllm-ascend", "npu");
  ASSERT_NE(profile, nullptr);
  ASSERT_FALSE(profile->ops_per_layer.empty());
  engine::SpeedProfile doubled = *profile;  // another profile: twice the operators per layer
  for (auto& [kind, ops] : doubled.ops_per_layer) ops *= 2;
  const model::QuantScheme bf16 = s.model.quant;
  model::QuantScheme fp8 = s.model.quant;
  fp8.method = "fp8";
  fp8.linear_format = model::WeightFormat::fp8_channel;
  const model::QuantScheme bf16_copy = bf16;
  struct Step {
    const model::QuantScheme* scheme;
    const engine::SpeedProfile* profile;
    int64_t tp;
  };
  const std::vector<Step> steps = {{&bf16, profile, 1},     {&bf16, profile, 1}, {&fp8, profile, 1},      {&bf16, profile, 1},
                                   {&bf16, &doubled, 1},    {&bf16, &doubled, 2}, {&bf16, &doubled, 2},    {&bf16_copy, &doubled, 2},
                                   {&bf16_copy, profile, 2}, {&fp8, &doubled, 2},  {&fp8, &doubled, 1},     {&bf16, profile, 1}};
  estimate::StepTrafficMemo held(s.model, estimate::StepTrafficInputs::held);
  for (size_t i = 0; i < steps.size(); ++i) {
    estimate::Deployment d;
    d.tensor_parallel_size = steps[i].tp;
    const estimate::StepTraffic& got = held.get(*steps[i].scheme, *steps[i].profile, d);
    estimate::StepTrafficMemo fresh(s.model);
    const estimate::StepTraffic& want = fresh.get(*steps[i].scheme, *steps[i].profile, d);
    EXPECT_DOUBLE_EQ(got.dense_weight_bytes, want.dense_weight_bytes) << "step " << i;
    EXPECT_DOUBLE_EQ(got.dispatch_ops, want.dispatch_ops) << "step " << i;
    EXPECT_EQ(got.kv_bytes_per_token_layer, want.kv_bytes_per_token_layer) << "step " << i;
  }
  // The inputs differ where the test means them to: fp8 reads fewer bytes, the doubled profile dispatches more.
  estimate::Deployment one;
  estimate::StepTrafficMemo a(s.model), b(s.model), c(s.model);
  EXPECT_LT(a.get(fp8, *profile, one).dense_weight_bytes, 0.6 * b.get(bf16, *profile, one).dense_weight_bytes);
  EXPECT_DOUBLE_EQ(c.get(bf16, doubled, one).dispatch_ops, 2 * b.get(bf16, *profile, one).dispatch_ops);
}

// Issue 19 (planfast12): a speed estimate reads its step's KV bytes at one sequence from a note kept per thread while no
// step traffic was filled since (the same on every card of a plan's (model, variant, count)), and takes an end of the
// bandwidth range that is the basis itself from the step at the basis. Through one held memo, over cards whose basis
// is a datasheet figure (910B3) or a prior whose range starts at it (910B4) or ends at it (910B4-1), and over KV cache
// dtypes, TP sizes and contexts that change between estimates (a note kept across a refill or a context would give the
// earlier KV bytes), every estimate equals the one made alone, its band included.
TEST(Speed, Issue19_SpeedThroughASharedMemoEqualsAlone) {
  auto s = pftest::fit_setup("Qwen/Qwen3-8B", "910B3", "vllm-ascend", "0.11.0");
  auto speeds = engine::load_speed_catalog();
  ASSERT_TRUE(speeds.has_value());
  auto catalog = device::load_device_catalog();
  ASSERT_TRUE(catalog.has_value());
  std::vector<device::DeviceSpec> cards;
  for (const char* id : {"910B3", "910B4", "910B4-1"}) {
    auto d = device::find_device(*catalog, id);
    ASSERT_TRUE(d.has_value()) << id;
    cards.push_back(*d);
  }
  struct Step {
    size_t card;
    int64_t tp, context_tokens;
    const char* kv_cache_dtype;  // auto: the model's; fp8 halves the KV bytes a step reads at the same context
  };
  const std::vector<Step> steps = {{0, 1, 8192, "auto"},  {1, 1, 8192, "auto"},  {2, 1, 8192, "auto"},   {0, 1, 8192, "fp8"}, {1, 2, 8192, "fp8"},
                                   {2, 2, 8192, "auto"},  {0, 2, 4096, "auto"},  {1, 1, 4096, "auto"}, {2, 1, 32768, "auto"},   {0, 1, 32768, "fp8"}};
  estimate::StepTrafficMemo memo(s.model, estimate::StepTrafficInputs::held);
  const model::QuantScheme scheme = s.model.quant;
  // All through the memo first, in turn (as a plan's cards), then each alone.
  std::vector<estimate::SpeedEstimate> shared_estimates;
  for (const Step& step : steps) {
    const device::DeviceSpec& card = cards[step.card];
    const engine::SpeedProfile* profile = speeds->find("vllm-ascend", card.platform, card.id);
    ASSERT_NE(profile, nullptr) << card.id;
    estimate::Deployment d;
    d.tensor_parallel_size = step.tp;
    d.kv_cache_dtype = step.kv_cache_dtype;
    d.quant_scheme = scheme;
    estimate::SpeedWorkload w;
    w.context_tokens = step.context_tokens;
    w.traffic = &memo;
    shared_estimates.push_back(estimate::estimate_speed(s.model, card, *profile, *speeds, d, w));
  }
  bool some_range = false;
  for (size_t i = 0; i < steps.size(); ++i) {
    const device::DeviceSpec& card = cards[steps[i].card];
    estimate::Deployment d;
    d.tensor_parallel_size = steps[i].tp;
    d.kv_cache_dtype = steps[i].kv_cache_dtype;
    d.quant_scheme = scheme;
    estimate::SpeedWorkload alone;
    alone.context_tokens = steps[i].context_tokens;
    const auto& got = shared_estimates[i];
    const auto want = estimate::estimate_speed(s.model, card, *speeds->find("vllm-ascend", card.platform, card.id), *speeds, d, alone);
    ASSERT_EQ(got.points.size(), 1u) << "step " << i;
    ASSERT_EQ(want.points.size(), 1u) << "step " << i;
    EXPECT_EQ(got.points[0].terms.kv_bytes, want.points[0].terms.kv_bytes) << "step " << i;
    EXPECT_EQ(got.points[0].per_stream_tokens_per_s, want.points[0].per_stream_tokens_per_s) << "step " << i;
    EXPECT_EQ(got.points[0].per_stream_low, want.points[0].per_stream_low) << "step " << i;
    EXPECT_EQ(got.points[0].per_stream_high, want.points[0].per_stream_high) << "step " << i;
    EXPECT_EQ(got.single_stream_low, want.single_stream_low) << "step " << i;
    EXPECT_EQ(got.single_stream_high, want.single_stream_high) << "step " << i;
    EXPECT_EQ(got.ttft_s, want.ttft_s) << "step " << i;
    if (got.bandwidth_low_bytes_per_s != got.bandwidth_high_bytes_per_s) some_range = true;
  }
  EXPECT_TRUE(some_range);  // the priors' ranges were taken: their band ends are steps of their own
  // The fills between the notes changed what a step reads at one context: fp8 KV is half of bf16's.
  EXPECT_DOUBLE_EQ(shared_estimates[3].points[0].terms.kv_bytes, 0.5 * shared_estimates[2].points[0].terms.kv_bytes);
  // The KV bytes the steps read follow the context (Qwen3-8B: 36 layers x 8 KV heads x 128 x 2 (K, V) x 2 B = 147,456 B
  // a token, TP 1): 8,192 tokens read 1,207,959,552 B.
  estimate::Deployment d;
  d.quant_scheme = scheme;
  estimate::SpeedWorkload w;
  w.context_tokens = 8192;
  w.traffic = &memo;
  const auto at_8k = estimate::estimate_speed(s.model, cards[0], *speeds->find("vllm-ascend", "npu", "910B3"), *speeds, d, w);
  ASSERT_EQ(at_8k.points.size(), 1u);
  EXPECT_DOUBLE_EQ(at_8k.points[0].terms.kv_bytes, 36.0 * 8 * 128 * 2 * 2 * 8192);
}
