// Issue 19 (planfast7b): plan::release_plans frees a plan_for_devices result on the plan's workers (its ~146,000 row
// blocks were freed on one thread after the workers were done). The properties: every block goes (the candidate lists'
// large-block chunks return to what they were, on 1, 2 and 3 workers), the result is empty after, and a copy of the
// result, whose rows share their texts, start commands and speed lists' texts with the freed one, reads the same rows
// afterwards as a plan computed fresh (a worker freeing a block the copy still holds, or freeing a plan twice, fails
// here or crashes).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/memory.hpp"
#include "plan/planner.hpp"
#include "plan_catalogs.hpp"
#include "plan_test_models.hpp"

using namespace preflight;
using preflight::test::catalogs;

namespace {

std::vector<device::DeviceSpec> some_cards() {
  std::vector<device::DeviceSpec> out;
  for (const auto& d : catalogs().devices.devices)
    if (d.id == "H100-SXM" || d.id == "A10" || d.id == "RTX4090" || d.id == "910B4" || d.id == "950PR") out.push_back(d);
  return out;
}

void expect_same_rows(const plan::CandidateList& a, const plan::CandidateList& b, const std::string& at) {
  ASSERT_EQ(a.size(), b.size()) << at;
  for (size_t r = 0; r < a.size(); ++r) {
    const std::string row = at + " row " + std::to_string(r);
    EXPECT_EQ(a[r].model_id, b[r].model_id) << row;
    EXPECT_EQ(a[r].variant, b[r].variant) << row;
    EXPECT_EQ(a[r].reason, b[r].reason) << row;
    EXPECT_EQ(a[r].tokens_per_s, b[r].tokens_per_s) << row;
    EXPECT_EQ(a[r].speed.provenance, b[r].speed.provenance) << row;
    EXPECT_EQ(a[r].speed.assumptions, b[r].speed.assumptions) << row;
    ASSERT_EQ(a[r].speed.points.size(), b[r].speed.points.size()) << row;
    for (size_t p = 0; p < a[r].speed.points.size(); ++p) EXPECT_EQ(a[r].speed.points[p].per_stream_tokens_per_s, b[r].speed.points[p].per_stream_tokens_per_s) << row;
    EXPECT_EQ(a[r].launch->serve, b[r].launch->serve) << row;  // an unset launch reads as an empty one
  }
}

}  // namespace

TEST(PlanRelease, Issue19_ReleasedPlansFreeEveryBlockOnTheWorkers) {
  const auto models = preflight::test::catalogue_model_specs();
  const auto cards = some_cards();
  ASSERT_EQ(cards.size(), 5u);
  plan::PlanTargets t;
  t.context_tokens = 8192;
  plan::PlanInputs in = catalogs().inputs();
  in.detail = plan::RowDetail::every_row;
  const size_t chunks_before = large_block_chunks();
  for (const int workers : {1, 2, 3}) {
    auto plans = plan::plan_for_devices(models, cards, {1, 8, 16}, in, t, 2);
    ASSERT_EQ(plans.size(), 15u);
    size_t rows = 0;
    for (const auto& p : plans) rows += p.result.recommended.size() + p.result.rejected.size();
    ASSERT_GT(rows, 1000u);
    if (chunks_before == 0) EXPECT_GT(large_block_chunks(), 0u);  // the lists' blocks are large ones (base/memory)
    plan::release_plans(plans, workers);
    EXPECT_TRUE(plans.empty()) << workers << " workers";
    EXPECT_EQ(large_block_chunks(), chunks_before) << workers << " workers";
  }
}

TEST(PlanRelease, Issue19_ReleasingAPlanLeavesACopyOfItWhole) {
  const auto models = preflight::test::catalogue_model_specs();
  const auto cards = some_cards();
  plan::PlanTargets t;
  t.context_tokens = 8192;
  plan::PlanInputs in = catalogs().inputs();
  in.detail = plan::RowDetail::every_row;
  auto plans = plan::plan_for_devices(models, cards, {1, 8}, in, t, 2);
  const auto copy = plans;  // shares every text, start command and speed text block with `plans`
  plan::release_plans(plans, 2);
  ASSERT_TRUE(plans.empty());
  const auto fresh = plan::plan_for_devices(models, cards, {1, 8}, in, t, 1);
  ASSERT_EQ(copy.size(), fresh.size());
  size_t launched = 0;
  for (size_t n = 0; n < copy.size(); ++n) {
    const std::string at = copy[n].device_id + " x " + std::to_string(copy[n].num_devices);
    EXPECT_EQ(copy[n].device_id, fresh[n].device_id) << at;
    expect_same_rows(copy[n].result.recommended, fresh[n].result.recommended, at + " recommended");
    expect_same_rows(copy[n].result.rejected, fresh[n].result.rejected, at + " rejected");
    EXPECT_EQ(copy[n].result.assumptions, fresh[n].result.assumptions) << at;
    for (const auto& c : copy[n].result.recommended) launched += c.launch->serve.empty() ? 0 : 1;
  }
  EXPECT_GT(launched, 100u);  // every_row: the recommended rows carry start commands
}
