// Issue 19 (planfast7): the reasons of one work item's rows (a model and variant over every card and count) are made
// once per distinct text and their block shared (plan::RowReasonMemo), not one block per row: fewer blocks for the
// plan's caller to free on its own thread. The properties: the memo gives failure_reason's and architecture_facts'
// text for every fit, through one memo, when fits differ in any one field those texts read (a key that misses a field
// gives the first fit's text to the second, and fails here); and every row of a whole-catalogue plan reads the reason
// that the row planned alone (evaluate_candidate, no memo) reads, while the rows of one (model, variant) on one
// platform's cards with equal reasons share one block.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "base/units.hpp"
#include "plan/planner.hpp"
#include "plan/row_reasons.hpp"
#include "plan_catalogs.hpp"
#include "plan_test_models.hpp"

using namespace preflight;
using preflight::test::catalogs;
using estimate::Failure;

TEST(RowReasons, Issue19_MemoizedFailureReasonsReadEveryFieldTheirTextReads) {
  plan::RowFit base;
  base.weights_bytes = 40.0 * 1024 * 1024 * 1024;
  base.requested_bytes = 21.6 * 1024 * 1024 * 1024;
  base.gpu_memory_utilization = 0.9;
  base.total_bytes = 24.0 * 1024 * 1024 * 1024;
  base.available_kv_bytes = 1.5 * 1024 * 1024 * 1024;
  struct Row {
    const char* what;
    Failure failure;
    void (*change)(plan::RowFit&);
    int64_t context, largest;
  };
  const Row rows[] = {
      {"weights", Failure::weights_oom, [](plan::RowFit&) {}, 8192, 0},
      {"weights, other weights", Failure::weights_oom, [](plan::RowFit& f) { f.weights_bytes *= 2; }, 8192, 0},
      {"weights, other budget", Failure::weights_oom, [](plan::RowFit& f) { f.requested_bytes *= 0.5; }, 8192, 0},
      {"weights, other utilization", Failure::weights_oom, [](plan::RowFit& f) { f.gpu_memory_utilization = 0.8; }, 8192, 0},
      {"weights, other card memory", Failure::weights_oom, [](plan::RowFit& f) { f.total_bytes *= 2; }, 8192, 0},
      {"weights, other context (not read)", Failure::weights_oom, [](plan::RowFit&) {}, 4096, 7},
      {"no KV", Failure::kv_negative, [](plan::RowFit&) {}, 8192, 0},
      {"no KV, other weights", Failure::kv_negative, [](plan::RowFit& f) { f.weights_bytes *= 3; }, 8192, 0},
      {"no KV, other available", Failure::kv_negative, [](plan::RowFit& f) { f.available_kv_bytes = -2.0e9; }, 8192, 0},
      {"context", Failure::max_model_len_too_large, [](plan::RowFit&) {}, 8192, 4000},
      {"context, other largest", Failure::max_model_len_too_large, [](plan::RowFit&) {}, 8192, 5000},
      {"context, other context", Failure::max_model_len_too_large, [](plan::RowFit&) {}, 16384, 4000},
      {"context, other available", Failure::max_model_len_too_large, [](plan::RowFit& f) { f.available_kv_bytes *= 0.5; }, 8192, 4000},
      {"layout", Failure::invalid_layout, [](plan::RowFit& f) { f.failure_message = "ValueError: Total number of attention heads (40) must be divisible by tensor parallel size (16)."; }, 8192, 0},
      {"layout, other message", Failure::invalid_layout, [](plan::RowFit& f) { f.failure_message = "ValueError: Total number of attention heads (28) must be divisible by tensor parallel size (8)."; }, 8192, 0},
      {"after KV", Failure::after_kv_oom, [](plan::RowFit& f) { f.failure_message = "RuntimeError: CUDA out of memory while loading"; }, 8192, 0},
      {"quantization", Failure::unsupported_quantization, [](plan::RowFit& f) { f.failure_message = "Value error, fp8 is not supported\non this card"; }, 8192, 0},
      {"none", Failure::none, [](plan::RowFit&) {}, 8192, 0},
  };
  plan::RowReasonMemo memo;
  for (int pass = 0; pass < 2; ++pass)  // the second pass hits the entries the first made
    for (const Row& r : rows) {
      plan::RowFit f = base;
      f.failure = r.failure;
      r.change(f);
      const SharedText got = memo.failure(f, r.context, r.largest);
      EXPECT_EQ(got.str(), plan::failure_reason(f, r.context, r.largest)) << r.what << ", pass " << pass;
      if (r.failure == Failure::invalid_layout || r.failure == Failure::after_kv_oom)
        EXPECT_EQ(&got.str(), &f.failure_message.str()) << r.what << ": the fit's own block";
    }
  // Two fits whose reason is their own failure message, in two blocks of one text: both rows end in one block.
  plan::RowFit first = base, second = base;
  first.failure = second.failure = Failure::invalid_layout;
  first.failure_message = std::string("ValueError: 7 heads");
  second.failure_message = std::string("ValueError: 7 heads");
  ASSERT_NE(&first.failure_message.str(), &second.failure_message.str());
  EXPECT_EQ(&memo.failure(first, 8192, 0).str(), &memo.failure(second, 8192, 0).str());
  EXPECT_EQ(&first.failure_message.str(), &second.failure_message.str());
  EXPECT_EQ(second.failure_message.str(), "ValueError: 7 heads");
  // A text kept as it is: equal texts in one block, another text of the same length in its own.
  const SharedText t1 = memo.text("engine rejects it: no TP"), t2 = memo.text("engine rejects it: no TP"), t3 = memo.text("engine rejects it: no PP");
  EXPECT_EQ(&t1.str(), &t2.str());
  EXPECT_EQ(t3.str(), "engine rejects it: no PP");
  EXPECT_NE(&t1.str(), &t3.str());
  // Two fits equal in every field the text reads give one block.
  plan::RowFit a = base, b = base;
  a.failure = b.failure = Failure::weights_oom;
  b.kv_tokens = 12345;  // not read by the text
  EXPECT_EQ(&memo.failure(a, 8192, 0).str(), &memo.failure(b, 1024, 99).str());
}

TEST(RowReasons, Issue19_MemoizedArchitectureFactsKeyOnTheKvPerTokenAndTheModel) {
  const auto models = preflight::test::catalogue_model_specs();
  std::vector<std::pair<const model::ModelSpec*, plan::ModelFacts>> recurrent;
  for (const auto& m : models)
    if (auto f = plan::model_facts(m); f.state_layers > 0) recurrent.emplace_back(&m, std::move(f));
  ASSERT_GE(recurrent.size(), 2u) << "the catalogue's models with recurrent layers";
  plan::RowReasonMemo memo;
  size_t checked = 0;
  for (int pass = 0; pass < 2; ++pass)
    for (const auto& [m, facts] : recurrent)
      for (const int64_t kv : {1024, 2048, 1024, 4096 + 512}) {
        plan::RowFit fit;
        fit.kv_bytes_per_token_rank = kv;
        EXPECT_EQ(memo.facts(*m, facts, fit).str(), plan::architecture_facts(*m, facts, fit).str()) << m->id << " " << kv;
        ++checked;
      }
  EXPECT_EQ(checked, recurrent.size() * 8);
  const auto dense = std::find_if(models.begin(), models.end(), [](const model::ModelSpec& m) { return plan::model_facts(m).state_layers == 0; });
  ASSERT_NE(dense, models.end());
  const plan::ModelFacts dense_facts = plan::model_facts(*dense);
  EXPECT_EQ(memo.facts(*dense, dense_facts, {}).str(), dense_facts.layout_free.str());
}

TEST(RowReasons, Issue19_MemoizedRowReasonsEqualEachRowPlannedAlone) {
  const auto models = preflight::test::catalogue_model_specs();
  std::vector<device::DeviceSpec> devices;
  for (const auto& d : catalogs().devices.devices)
    if (d.id == "H100-SXM" || d.id == "RTX4090" || d.id == "A10" || d.id == "910B4" || d.id == "950PR") devices.push_back(d);
  ASSERT_EQ(devices.size(), 5u);
  plan::PlanTargets t;
  t.context_tokens = 8192;
  const plan::PlanInputs in = catalogs().inputs();
  const auto plans = plan::plan_for_devices(models, devices, {1, 8, 16}, in, t, 2);
  std::map<std::string, const model::ModelSpec*> model_by_id;
  for (const auto& m : models) model_by_id[m.id] = &m;
  std::map<std::string, const device::DeviceSpec*> device_by_id;
  for (const auto& d : devices) device_by_id[d.id] = &d;
  // Per (model, variant) and reason, the blocks its rows on the CUDA cards hold: one work item, as the three cards are in
  // one platform run (the NPU cards' rows are items of other runs, 950PR's of one of its own for its card-bound variants).
  std::map<std::tuple<std::string, std::string, std::string>, std::vector<const std::string*>> blocks;
  size_t rows = 0, failed = 0, recurrent = 0;
  for (const auto& p : plans)
    for (const auto* list : {&p.result.recommended, &p.result.rejected})
      for (const auto& c : *list) {
        const model::ModelSpec& m = *model_by_id.at(c.model_id.str());
        const plan::Candidate alone = plan::evaluate_candidate(m, *device_by_id.at(p.device_id), in, c.variant_id.str(), p.num_devices, t);
        EXPECT_EQ(c.reason.str(), alone.reason.str()) << c.model_id.str() << " [" << c.variant.str() << "] " << p.device_id << " x" << p.num_devices;
        ++rows;
        if (!c.fit.fits && !c.fit.engine_id.empty()) ++failed;
        if (c.meets && plan::model_facts(m).state_layers > 0) ++recurrent;
        if (!c.reason.empty() && device_by_id.at(p.device_id)->platform == "cuda") blocks[{c.model_id.str(), c.variant_id.str(), c.reason.str()}].push_back(&c.reason.str());
      }
  EXPECT_GT(rows, 1000u);
  EXPECT_GT(failed, 200u);
  EXPECT_GT(recurrent, 20u);
  size_t shared = 0;
  for (const auto& [key, held] : blocks) {
    for (const std::string* b : held) EXPECT_EQ(b, held.front()) << std::get<0>(key) << " [" << std::get<1>(key) << "] " << std::get<2>(key);
    if (held.size() > 1) ++shared;
  }
  EXPECT_GT(shared, 50u);
}
