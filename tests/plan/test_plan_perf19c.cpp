#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "estimate/fit.hpp"
#include "model/model_catalog.hpp"
#include "plan_test_models.hpp"
#include "plan/launch.hpp"
#include "plan/planner.hpp"
#include "plan_catalogs.hpp"

using namespace preflight;
using preflight::test::catalogs;
using preflight::test::dev;

namespace {

// Every row of `b` is the row of `a` at the same place: model, device, variant, verdict, reason, the fit's
// numbers and the device it records, the speed, the start command.
void expect_same_plan(const plan::PlanResult& a, const plan::PlanResult& b, const std::string& at) {
  ASSERT_EQ(a.recommended.size(), b.recommended.size()) << at;
  ASSERT_EQ(a.rejected.size(), b.rejected.size()) << at;
  EXPECT_EQ(a.assumptions, b.assumptions) << at;
  for (const auto* rows : {&a.recommended, &a.rejected}) {
    const auto& other = rows == &a.recommended ? b.recommended : b.rejected;
    for (size_t i = 0; i < rows->size(); ++i) {
      const plan::Candidate& x = (*rows)[i];
      const plan::Candidate& y = other[i];
      const std::string where = at + " " + x.model_id.str() + " " + x.variant.str();
      EXPECT_EQ(x.model_id, y.model_id) << where;
      EXPECT_EQ(x.device_id, y.device_id) << where;
      EXPECT_EQ(x.variant, y.variant) << where;
      EXPECT_EQ(x.meets, y.meets) << where;
      EXPECT_EQ(x.reason, y.reason) << where;
      EXPECT_EQ(x.no_video, y.no_video) << where;
      EXPECT_EQ(x.skip_mm_profiling, y.skip_mm_profiling) << where;
      EXPECT_EQ(x.fit.device_id, y.fit.device_id) << where;
      if (!x.fit.engine_id.empty()) EXPECT_EQ(x.fit.device_id, x.device_id) << where;  // the rows that got as far as a fit
      EXPECT_EQ(x.fit.num_blocks, y.fit.num_blocks) << where;
      EXPECT_DOUBLE_EQ(x.fit.available_kv_bytes, y.fit.available_kv_bytes) << where;
      EXPECT_DOUBLE_EQ(x.tokens_per_s, y.tokens_per_s) << where;
      EXPECT_EQ(x.launch->serve, y.launch->serve) << where;
      EXPECT_EQ(x.launch->notes, y.launch->notes) << where;
      EXPECT_EQ(x.launch->prepare, y.launch->prepare) << where;
      EXPECT_EQ(x.launch->env, y.launch->env) << where;
      EXPECT_EQ(x.launch->multi_node, y.launch->multi_node) << where;
      EXPECT_EQ(x.speed.provenance, y.speed.provenance) << where;
      EXPECT_EQ(x.speed.assumptions, y.speed.assumptions) << where;
    }
  }
}

}  // namespace

// Issue 19 (round 5): plan_for_devices fits one card of each set with the same fit (estimate::same_fit_device:
// H100-SXM, H100-PCIe and H800; 910B1 and 910B3; A10 and A10G) and copies the fit to the others, each with its
// own device id (the speed stays per card: their bandwidths differ). Every (device, count) plan equals the
// plan of that device alone, which has no card to copy from, in the table's form and in --json's.
TEST(Planner, Issue19_DevicesWithTheSameFitPlanAsAlone) {
  const auto models = preflight::test::catalogue_model_specs();
  const std::vector<device::DeviceSpec> devices = {dev("H100-SXM"), dev("910B1"), dev("H100-PCIe"), dev("A10"), dev("910B3"), dev("H800"), dev("A10G"), dev("L4")};
  auto eng = engine::select_engine(catalogs().engines, "vllm", "");
  ASSERT_TRUE(eng.has_value());
  ASSERT_TRUE(estimate::same_fit_device(devices[0], devices[2], *eng));
  ASSERT_TRUE(estimate::same_fit_device(devices[0], devices[5], *eng));
  ASSERT_TRUE(estimate::same_fit_device(devices[3], devices[6], *eng));
  const std::vector<int64_t> counts = {1, 2, 8, 16};
  plan::PlanTargets t;
  t.context_tokens = 8192;
  for (const auto detail : {plan::RowDetail::table, plan::RowDetail::every_row}) {
    plan::PlanInputs in = catalogs().inputs();
    in.detail = detail;
    const auto together = plan::plan_for_devices(models, devices, counts, in, t, 2);
    ASSERT_EQ(together.size(), devices.size() * counts.size());
    for (size_t d = 0; d < devices.size(); ++d) {
      const auto alone = plan::plan_for_devices(models, {devices[d]}, counts, in, t, 1);
      for (size_t k = 0; k < counts.size(); ++k) {
        const auto& p = together[d * counts.size() + k];
        EXPECT_EQ(p.device_id, devices[d].id);
        EXPECT_EQ(p.num_devices, counts[k]);
        expect_same_plan(alone[k].result, p.result, devices[d].id + " x" + std::to_string(counts[k]) + (detail == plan::RowDetail::table ? " table" : " json"));
      }
    }
  }
}

// Issue 19 (round 5): the whole catalogue at once (every device, 1 to 16 cards, the table's form and --json's), where
// the work of one (model, variant) runs over all cards of a platform together (the variant's rejection rule looked up
// per card family, the fit copied within a set with the same fit, the step traffic shared, the start commands built
// once per distinct launch, the speed texts kept per thread), gives every device the plan it gets alone.
TEST(Planner, Issue19_WholeCatalogueTogetherEqualsEachDeviceAlone) {
  const auto models = preflight::test::catalogue_model_specs();
  const auto& devices = catalogs().devices.devices;
  const std::vector<int64_t> counts = {1, 2, 4, 8, 16};
  plan::PlanTargets t;
  t.context_tokens = 8192;
  for (const auto detail : {plan::RowDetail::table, plan::RowDetail::every_row}) {
    plan::PlanInputs in = catalogs().inputs();
    in.detail = detail;
    const auto together = plan::plan_for_devices(models, devices, counts, in, t, 0);
    ASSERT_EQ(together.size(), devices.size() * counts.size());
    size_t recommended = 0;
    for (size_t d = 0; d < devices.size(); ++d) {
      const auto alone = plan::plan_for_devices(models, {devices[d]}, counts, in, t, 0);
      for (size_t k = 0; k < counts.size(); ++k) {
        recommended += together[d * counts.size() + k].result.recommended.size();
        expect_same_plan(alone[k].result, together[d * counts.size() + k].result,
                         devices[d].id + " x" + std::to_string(counts[k]) + (detail == plan::RowDetail::table ? " table" : " json"));
      }
    }
    EXPECT_GT(recommended, 1000u);
  }
}

// Issue 19 (round 5): a plan builds the start commands once per distinct launch of a (model, variant, count) and
// copies them to the other cards' rows; plan::same_launch says when two candidates get the same commands. Two cards
// of one platform at the same count: the same; a row served without video (--limit-mm-per-prompt) or at another
// count: not the same, and its commands differ.
TEST(Launch, Issue19_SameLaunchMeansTheSameStartCommands) {
  const auto models = preflight::test::catalogue_model_specs();
  const auto m = std::find_if(models.begin(), models.end(), [](const model::ModelSpec& x) { return x.id == "Qwen/Qwen3-VL-8B-Instruct"; });
  ASSERT_NE(m, models.end());
  plan::PlanTargets t;
  t.context_tokens = 8192;
  plan::PlanInputs in = catalogs().inputs();
  in.detail = plan::RowDetail::every_row;
  const auto a = plan::evaluate_candidate(*m, dev("H100-SXM"), in, "", 2, t);
  const auto b = plan::evaluate_candidate(*m, dev("L40S"), in, "", 2, t);
  ASSERT_TRUE(a.meets && b.meets) << a.reason << " / " << b.reason;
  EXPECT_TRUE(plan::same_launch(a, b));
  EXPECT_EQ(a.launch->serve, b.launch->serve);
  EXPECT_EQ(a.launch->notes, b.launch->notes);
  auto eng = engine::select_engine(catalogs().engines, "vllm", "");
  ASSERT_TRUE(eng.has_value());
  plan::Candidate no_video = a;
  no_video.no_video = true;
  EXPECT_FALSE(plan::same_launch(a, no_video));
  EXPECT_NE(plan::build_launch(*m, no_video, *eng, catalogs().rules, 8).serve, a.launch->serve);
  const auto four = plan::evaluate_candidate(*m, dev("H100-SXM"), in, "", 4, t);
  EXPECT_FALSE(plan::same_launch(a, four));
  EXPECT_NE(four.launch->serve, a.launch->serve);
}

// Issue 19 (round 16): a plan copies a row's start commands between cards whose families every launch rule treats
// alike (plan::same_launch_family), not only within one family. With the shipped rules (data/engines/launch.json: the
// one rule that names families, qknorm-rope-fusion-a2, names ascend-910, ascend-a2, ascend-a3 and ascend-310p): an A2
// and a 950 differ, an A2 and an A3 do not, nor do two CUDA families. With two rules built here: two families are
// alike only when each rule names both or neither. (Whole-catalogue plans with the copies equal each card planned
// alone: Issue19_WholeCatalogueTogetherEqualsEachDeviceAlone.)
TEST(Launch, Issue19_LaunchFamiliesAreThoseEveryRuleTreatsAlike) {
  struct Row {
    const char* a;
    const char* b;
    bool same;
  };
  for (const Row& r : {Row{"ascend-a2", "ascend-950", false}, Row{"ascend-a2", "ascend-a3", true}, Row{"hopper", "ampere", true}})
    EXPECT_EQ(plan::same_launch_family(catalogs().rules, r.a, r.b), r.same) << r.a << " / " << r.b;
  engine::LaunchRules two;
  two.rules.resize(3);  // the last names no family: it holds on every card alike
  two.rules[0].device_families = {"x", "y"};
  two.rules[1].device_families = {"y", "z"};
  for (const Row& r : {Row{"x", "x", true}, Row{"x", "y", false}, Row{"y", "z", false}, Row{"x", "z", false}, Row{"v", "w", true}, Row{"z", "w", false}})
    EXPECT_EQ(plan::same_launch_family(two, r.a, r.b), r.same) << r.a << " / " << r.b;
}

// Issue 19 (round 5): the reasons a plan writes on its rows are built with std::to_chars instead of printf; each reads
// exactly as the printf format it replaced writes it (the format is spelled out here, the numbers are the fit's).
TEST(Planner, Issue19_ReasonsReadAsPrintfWroteThem) {
  const auto models = preflight::test::catalogue_model_specs();
  auto model = [&](const char* id) {
    const auto m = std::find_if(models.begin(), models.end(), [&](const model::ModelSpec& x) { return x.id == id; });
    EXPECT_NE(m, models.end()) << id;
    return *m;
  };
  auto printf_text = [](const char* fmt, auto... v) {
    char buf[512];
    std::snprintf(buf, sizeof buf, fmt, v...);
    return std::string(buf);
  };
  const double gib = 1024.0 * 1024.0 * 1024.0;
  plan::PlanTargets t;
  t.context_tokens = 8192;
  const plan::PlanInputs in = catalogs().inputs();
  const auto big = plan::evaluate_candidate(model("deepseek-ai/DeepSeek-V3"), dev("L4"), in, "", 1, t);
  ASSERT_EQ(big.fit.failure, estimate::Failure::weights_oom);
  EXPECT_EQ(big.reason, printf_text("weights %.1f GiB per device exceed the %.1f GiB budget (%.2f x %.1f GiB)", big.fit.weights_bytes / gib,
                                    big.fit.requested_bytes / gib, big.fit.gpu_memory_utilization, big.fit.total_bytes / gib));
  t.concurrency = 100000;
  const auto many = plan::evaluate_candidate(model("Qwen/Qwen3-0.6B"), dev("L4"), in, "", 1, t);
  ASSERT_TRUE(many.fit.fits);
  EXPECT_EQ(many.reason, printf_text("KV holds %.2f requests at %lld tokens; %lld wanted", many.fit.max_concurrency, 8192LL, 100000LL));
  t.concurrency = 1;
  const auto hybrid = plan::evaluate_candidate(model("Qwen/Qwen3.5-27B"), dev("H100-SXM"), in, "", 1, t);
  ASSERT_TRUE(hybrid.meets) << hybrid.reason;
  EXPECT_EQ(hybrid.reason.str().substr(0, hybrid.reason.find(" KiB") + 4),
            printf_text("KV cache in %lld of %lld layers (%lld recurrent layers keep a fixed state): %.0f KiB", 16LL, 64LL, 48LL,
                        static_cast<double>(hybrid.fit.kv_bytes_per_token_rank) / 1024.0));
}

// Issue 19 (round 14): a plan's candidates hold few heap blocks of their own. The texts every row of a (model, variant)
// repeats on a platform's cards and counts (model id, variant name, engine id, the fit's weight scheme) are one block
// shared by all of those rows (their characters sit at one address). (The fit's per-term breakdown and KV groups, which
// no plan output shows, are not in a row at all since planfast4: plan::RowFit.)
TEST(Planner, Issue19_CandidatesShareTheirRepeatedTexts) {
  const auto models = preflight::test::catalogue_model_specs();
  const std::vector<device::DeviceSpec> devices = {dev("H100-SXM"), dev("H100-PCIe"), dev("L4")};  // one platform: one run
  plan::PlanTargets t;
  t.context_tokens = 8192;
  plan::PlanInputs in = catalogs().inputs();
  in.detail = plan::RowDetail::table;
  const auto plans = plan::plan_for_devices(models, devices, {1, 2, 8}, in, t, 2);
  struct First {
    const char *model_id, *variant, *engine_id, *weight_scheme;
  };
  std::vector<std::pair<std::string, First>> seen;  // by "model id [variant]"
  size_t rows = 0, shared_schemes = 0;
  for (const auto& p : plans)
    for (const auto* list : {&p.result.recommended, &p.result.rejected})
      for (const auto& c : *list) {
        ++rows;
        const std::string key = c.model_id.str() + " [" + c.variant.str() + "]";
        const char* scheme = c.fit.weight_scheme.empty() ? nullptr : c.fit.weight_scheme.c_str();
        auto it = std::find_if(seen.begin(), seen.end(), [&](const auto& s) { return s.first == key; });
        if (it == seen.end()) {
          seen.push_back({key, {c.model_id.c_str(), c.variant.c_str(), c.engine_id.c_str(), scheme}});
          continue;
        }
        First& f = it->second;
        EXPECT_EQ(c.model_id.c_str(), f.model_id) << key << " on " << c.device_id;
        EXPECT_EQ(c.variant.c_str(), f.variant) << key << " on " << c.device_id;
        EXPECT_EQ(c.engine_id.c_str(), f.engine_id) << key << " on " << c.device_id;
        // A retried fit (served without video, or with --skip-mm-profiling) sizes a copy of the deployment, whose scheme
        // GroupBytes does not recognise by address: it computes its own bytes, and its own scheme name.
        if (!scheme || c.no_video || c.skip_mm_profiling) continue;
        if (!f.weight_scheme) f.weight_scheme = scheme;
        EXPECT_EQ(scheme, f.weight_scheme) << key << " on " << c.device_id << ": " << c.fit.weight_scheme;
        ++shared_schemes;
      }
  // Every model in at least its published form, on 3 cards x 3 counts; most rows get as far as a fit.
  EXPECT_GE(seen.size(), models.size());
  EXPECT_EQ(rows, seen.size() * 9);
  EXPECT_GT(shared_schemes, rows / 2);
}

// Issue 19 (round 21): a row on a card whose platform the engine does not run on takes prepare_variant's answer for
// that platform (PreparedVariant::wrong_platform) instead of asking the engine again per row. With --engine vllm on an
// H100 and a 910B3 together: every 910B3 row at every count is rejected with the engine's refusal of the npu platform
// (the text written here from the engine's id), and no H100 row is; the plan of each card equals its plan alone.
TEST(Planner, Issue19_WrongPlatformRowsTakeTheVariantsAnswer) {
  const auto models = preflight::test::catalogue_model_specs();
  const std::vector<device::DeviceSpec> devices = {dev("H100-SXM"), dev("910B3")};
  plan::PlanTargets t;
  t.context_tokens = 8192;
  plan::PlanInputs in = catalogs().inputs();
  in.engine = "vllm";
  in.detail = plan::RowDetail::table;
  auto eng = engine::select_engine(catalogs().engines, "vllm", "");
  ASSERT_TRUE(eng.has_value());
  ASSERT_FALSE(eng->runs_on("npu"));
  const std::string refusal = eng->id + " does not run on npu devices";
  const std::vector<int64_t> counts = {1, 8};
  const auto together = plan::plan_for_devices(models, devices, counts, in, t, 2);
  ASSERT_EQ(together.size(), 4u);
  for (size_t k = 0; k < counts.size(); ++k) {
    const auto& gpu = together[k].result;
    const auto& npu = together[counts.size() + k].result;
    EXPECT_TRUE(npu.recommended.empty());
    EXPECT_EQ(npu.rejected.size(), gpu.recommended.size() + gpu.rejected.size());
    for (const auto& c : npu.rejected) EXPECT_EQ(c.reason.str(), refusal) << c.model_id.str() << " " << c.variant.str();
    EXPECT_GT(gpu.recommended.size(), 50u);
    for (const auto* rows : {&gpu.recommended, &gpu.rejected})
      for (const auto& c : *rows) EXPECT_NE(c.reason.str(), refusal) << c.model_id.str();
  }
  for (size_t d = 0; d < devices.size(); ++d) {
    const auto alone = plan::plan_for_devices(models, {devices[d]}, counts, in, t, 1);
    for (size_t k = 0; k < counts.size(); ++k) expect_same_plan(alone[k].result, together[d * counts.size() + k].result, devices[d].id);
  }
}

// Issue 19 (planfast4): a row keeps a RowFit, not the whole FitEstimate; the fit is computed in its work item's scratch
// (reused from row to row), copied as a RowFit to the cards with the same fit (H100-SXM, H100-PCIe, H800) and taken
// from the fit-core memo for the other counts. Every row's RowFit equals, field by field, the whole estimate_fit of the
// row's deployment computed for that card alone (no memo, no scratch, no copy): the rows that share one fit entry
// report that entry's numbers, each with its own card.
TEST(Planner, Issue19_RowsSharingOneFitReportThatFitsNumbers) {
  const auto all = preflight::test::catalogue_model_specs();
  const std::vector<model::ModelSpec> models(all.begin(), all.begin() + std::min<size_t>(all.size(), 24));
  const std::vector<device::DeviceSpec> devices = {dev("H100-SXM"), dev("H100-PCIe"), dev("H800")};
  const auto eng = engine::select_engine(catalogs().engines, "vllm", "");
  ASSERT_TRUE(eng.has_value());
  const engine::Overheads* oh = catalogs().engines.overheads_for(*eng, "cuda");
  ASSERT_NE(oh, nullptr);
  plan::PlanTargets t;
  t.context_tokens = 8192;
  plan::PlanInputs in = catalogs().inputs();
  in.detail = plan::RowDetail::table;
  const auto plans = plan::plan_for_devices(models, devices, {1, 2, 8, 16}, in, t, 2);
  size_t compared = 0;
  for (const auto& p : plans) {
    const device::DeviceSpec& d = devices[static_cast<size_t>(std::find_if(devices.begin(), devices.end(), [&](const auto& x) { return x.id == p.device_id; }) - devices.begin())];
    for (const auto* list : {&p.result.recommended, &p.result.rejected})
      for (const auto& c : *list) {
        if (c.fit.engine_id.empty()) continue;  // rejected before a fit ran
        const auto m = std::find_if(models.begin(), models.end(), [&](const auto& x) { return x.id == c.model_id; });
        ASSERT_NE(m, models.end());
        const model::QuantVariant* v = c.variant_id.empty() ? nullptr : *model::find_variant(*model::load_variant_catalog(), c.variant_id);
        estimate::Deployment dep = plan::candidate_deployment(c, v, t);
        dep.interconnect = plan::candidate_interconnect(t, *oh, d, c.tensor_parallel_size);
        dep.no_video = c.no_video;
        dep.skip_mm_profiling = c.skip_mm_profiling;
        const estimate::FitEstimate f = estimate::estimate_fit(*m, d, *eng, *oh, dep);
        const plan::RowFit& r = c.fit;
        const std::string at = c.model_id.str() + " [" + c.variant.str() + "] " + d.id + " x" + std::to_string(c.num_devices);
        EXPECT_EQ(r.engine_id, f.engine_id) << at;
        EXPECT_EQ(r.device_id, d.id) << at;
        EXPECT_EQ(r.device_id, f.device_id) << at;
        EXPECT_EQ(c.tensor_parallel_size, f.tensor_parallel_size) << at;
        EXPECT_EQ(c.pipeline_parallel_size, f.pipeline_parallel_size) << at;
        EXPECT_EQ(r.decode_context_parallel_size, f.decode_context_parallel_size) << at;
        EXPECT_EQ(r.drafter_layers, f.drafter_layers) << at;
        EXPECT_EQ(r.drafter_weights_bytes, f.drafter_weights_bytes) << at;
        EXPECT_EQ(r.gpu_memory_utilization, f.gpu_memory_utilization) << at;
        EXPECT_EQ(r.kv_cache_dtype, f.kv_cache_dtype) << at;
        EXPECT_EQ(r.weight_scheme, f.weight_scheme) << at;
        EXPECT_EQ(r.total_bytes, f.total_bytes) << at;
        EXPECT_EQ(r.requested_bytes, f.requested_bytes) << at;
        EXPECT_EQ(r.weights_bytes, f.weights_bytes) << at;
        EXPECT_EQ(r.nccl_buffer_bytes, f.nccl_buffer_bytes) << at;
        EXPECT_EQ(r.available_kv_bytes, f.available_kv_bytes) << at;
        EXPECT_EQ(r.activation_vision_bytes, f.activation_vision_bytes) << at;
        EXPECT_EQ(r.encoder_profiles_video, f.encoder_profiles_video) << at;
        EXPECT_EQ(r.fits, f.fits) << at;
        EXPECT_EQ(r.failure, f.failure) << at;
        EXPECT_EQ(r.num_blocks, f.num_blocks) << at;
        EXPECT_EQ(r.kv_tokens, f.kv_tokens) << at;
        EXPECT_EQ(r.kv_bytes_per_token_rank, f.kv_bytes_per_token_rank) << at;
        EXPECT_EQ(r.max_concurrency, f.max_concurrency) << at;
        EXPECT_EQ(r.failure_message, f.failure_message) << at;
        EXPECT_EQ(r.verdict_depends_on, f.verdict_depends_on) << at;
        ++compared;
      }
  }
  // 24 models (each in at least its published form) x 3 cards x 4 counts, most of them sized.
  EXPECT_GT(compared, models.size() * 3 * 4 / 2);
}
