// Issue 19 (round 11): report::render_plan_json writes plan --json row by row; its text must be the one nlohmann's
// dump(2) writes for report::plan_to_json's tree (what plan --json printed before), over real plans of the whole
// catalogue: both row details, DP+EP rows, rows without a fit, a speculative member per row and a top-level extra.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "plan/dp_ep.hpp"
#include "plan/planner.hpp"
#include "plan_catalogs.hpp"
#include "plan_test_models.hpp"
#include "report/render_plan.hpp"

using namespace preflight;
using preflight::test::catalogs;
using preflight::test::dev;

namespace {

// What plan --json printed before round 11 (cli/cmd_plan): the tree, the extras set into it, dump(2).
std::string dumped(const plan::PlanResult& r, const std::string& question, const report::PlanJsonExtras& extras) {
  Json j = report::plan_to_json(r, question);
  for (const auto& [k, v] : extras.top.items()) j[k] = v;
  for (size_t i = 0; i < extras.speculative_recommended.size(); ++i) j["recommended"][i]["speculative"] = extras.speculative_recommended[i];
  for (size_t i = 0; i < extras.speculative_rejected.size(); ++i) j["rejected"][i]["speculative"] = extras.speculative_rejected[i];
  return j.dump(2);
}

}  // namespace

TEST(RenderPlanJson, Issue19_WholeCatalogueAsDumpWritesIt) {
  const auto models = preflight::test::catalogue_model_specs();
  // An NPU, a CUDA card, a ROCm card: both engines' start commands; 16 cards: two nodes (multi_node, nodes).
  const std::vector<device::DeviceSpec> devices = {dev("910B3"), dev("H100-SXM"), dev("MI300X")};
  plan::PlanTargets t;
  t.context_tokens = 8192;
  size_t recommended = 0, rejected = 0, dp_rows = 0, fits_rejected = 0;
  for (const auto detail : {plan::RowDetail::every_row, plan::RowDetail::table}) {
    plan::PlanInputs in = catalogs().inputs();
    in.detail = detail;
    const auto plans = plan::plan_for_devices(models, devices, {1, 8, 16}, in, t, 0);
    for (const auto& p : plans) {
      plan::PlanResult r = p.result;
      if (p.num_devices > 1) plan::add_dp_ep_rows_for_device(r, models, dev(p.device_id), in, t);
      r.assumptions.push_back("assumed \"quoted\"\ttab");
      const std::string question = "what " + std::to_string(p.num_devices) + " x " + p.device_id + " runs";
      auto text = report::render_plan_json(r, question);
      ASSERT_TRUE(text.has_value()) << text.error().describe();
      ASSERT_EQ(*text, dumped(r, question, {})) << question;
      recommended += r.recommended.size();
      rejected += r.rejected.size();
      for (const auto& c : r.recommended) dp_rows += c.data_parallel_size > 1;
      for (const auto& c : r.rejected) fits_rejected += c.fit.fits;
    }
  }
  // The plans above have every kind of row the writer has a branch for.
  EXPECT_GT(recommended, 500u);
  EXPECT_GT(rejected, 500u);
  EXPECT_GT(dp_rows, 0u);
  EXPECT_GT(fits_rejected, 0u);
}

TEST(RenderPlanJson, Issue19_ExtrasAndHostileTextsAsDumpWritesThem) {
  const auto models = preflight::test::catalogue_model_specs();
  plan::PlanInputs in = catalogs().inputs();
  plan::PlanTargets t;
  t.context_tokens = 8192;
  plan::PlanResult r = plan::plan_for_device(models, dev("H100-SXM"), 2, in, t);
  ASSERT_FALSE(r.recommended.empty());
  ASSERT_FALSE(r.rejected.empty());
  // A top-level member (plan --kubernetes) and a speculative member in every row but the last rejected one.
  report::PlanJsonExtras extras;
  extras.top["kubernetes"] = Json{{"kinds", "Deployment,Service"}, {"path", "out.yaml"}};
  for (size_t i = 0; i < r.recommended.size(); ++i) extras.speculative_recommended.push_back(Json{{"method", "mtp"}, {"row", i}, {"x", 0.1}});
  for (size_t i = 0; i + 1 < r.rejected.size(); ++i) extras.speculative_rejected.push_back(Json{{"method", "mtp"}, {"tokens", Json::array()}});
  // Control characters, quotes and backslashes from a model directory's name or a config reach the rows' texts.
  r.recommended.front().model_id = "dir/\x01\"q\"\\\x1b[0m\n";
  r.rejected.front().reason = "why: \x7f\t\xc3\xa9";
  const std::string question = "q \"quoted\"";
  auto text = report::render_plan_json(r, question, extras);
  ASSERT_TRUE(text.has_value()) << text.error().describe();
  EXPECT_EQ(*text, dumped(r, question, extras));
  // Not well-formed UTF-8: dump throws, and render_plan_json says so (a corrupt error naming the byte).
  r.rejected.back().model_id = "bad \xff name";
  EXPECT_THROW((void)dumped(r, question, extras), Json::type_error);
  auto bad = report::render_plan_json(r, question, extras);
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().kind, ErrorKind::corrupt);
  EXPECT_NE(bad.error().message.find("invalid UTF-8 byte at index 4: 0xFF"), std::string::npos) << bad.error().message;
}
