// Issue 19 (round 11): report::render_plan_json writes plan --json row by row, byte for byte as nlohmann's dump(2)
// writes the same value, over real plans of the whole catalogue: both row details, DP+EP rows, rows without a fit, a
// speculative member per row and a top-level extra. Round 16: it is the one plan JSON writer (the tree writer
// plan_to_json it was compared with is gone), so the text is checked two ways: parsed back, dump(2) writes the same
// text (dump's layout, key order, escapes and digits), and the parsed rows hold the candidates' own values.
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

// The members every row has, and those it has only as a DP+EP row, a row with a fit, or a row that meets the targets,
// read back from the parsed text against the candidate they were written from.
void expect_row(const Json& j, const plan::Candidate& c, const std::string& where) {
  EXPECT_EQ(j.at("model"), c.model_id.str()) << where;
  EXPECT_EQ(j.at("variant"), c.variant.str()) << where;
  EXPECT_EQ(j.at("variant_id"), c.variant_id.str()) << where;
  EXPECT_EQ(j.at("quantization"), c.quantization_flag.str()) << where;
  EXPECT_EQ(j.at("device"), c.device_id.str()) << where;
  EXPECT_EQ(j.at("engine"), c.engine_id.str()) << where;
  EXPECT_EQ(j.at("num_devices"), c.num_devices) << where;
  EXPECT_EQ(j.at("tensor_parallel_size"), c.tensor_parallel_size) << where;
  EXPECT_EQ(j.at("pipeline_parallel_size"), c.pipeline_parallel_size) << where;
  EXPECT_EQ(j.at("context_tokens"), c.context_tokens) << where;
  EXPECT_EQ(j.at("params").get<double>(), c.params) << where;
  EXPECT_EQ(j.at("meets"), c.meets) << where;
  EXPECT_EQ(j.at("reason"), c.reason.str()) << where;
  EXPECT_EQ(j.contains("data_parallel_size"), c.data_parallel_size > 1) << where;
  if (c.data_parallel_size > 1) {
    EXPECT_EQ(j.at("data_parallel_size"), c.data_parallel_size) << where;
    EXPECT_EQ(j.at("expert_parallel"), c.expert_parallel) << where;
    EXPECT_EQ(j.at("cheaper"), c.cheaper.str()) << where;
  }
  EXPECT_EQ(j.contains("kv_cache_tokens"), c.fit.fits) << where;
  if (c.fit.fits) {
    EXPECT_EQ(j.at("kv_cache_tokens"), c.fit.kv_tokens) << where;
    EXPECT_EQ(j.at("max_concurrency").get<double>(), c.fit.max_concurrency) << where;
    EXPECT_EQ(j.at("weights_gib_per_device").get<double>(), c.fit.weights_bytes / (1024.0 * 1024.0 * 1024.0)) << where;
  }
  EXPECT_EQ(j.contains("verdict_depends_on"), !c.fit.verdict_depends_on.empty()) << where;
  EXPECT_EQ(j.contains("speed"), c.meets) << where;
  // Issue 16 (quant26): every row has "launch"; a rejected row's is null.
  ASSERT_TRUE(j.contains("launch")) << where;
  EXPECT_EQ(j.at("launch").is_null(), !c.meets) << where;
  if (!c.meets) return;
  EXPECT_EQ(j.at("launch").at("serve"), c.launch->serve) << where;
  EXPECT_EQ(j.at("launch").at("prepare").size(), c.launch->prepare.size()) << where;
  EXPECT_EQ(j.at("launch").at("nodes").size(), c.launch->nodes.size()) << where;
  const Json& s = j.at("speed");
  EXPECT_EQ(s.at("mode"), c.speed.mode.str()) << where;
  EXPECT_EQ(s.at("single_stream_tokens_per_s").get<double>(), c.speed.single_stream_tokens_per_s) << where;
  // planfast5: the decode-step and prefill lines a row keeps as numbers (Candidate::speed_lines) in their places.
  const std::vector<std::string> provenance = estimate::provenance_with(c.speed, c.speed_lines);
  ASSERT_EQ(s.at("provenance").size(), provenance.size()) << where;
  for (size_t i = 0; i < provenance.size(); ++i) EXPECT_EQ(s.at("provenance")[i], provenance[i]) << where;
  ASSERT_EQ(s.at("points").size(), c.speed.points.size()) << where;
  if (c.speed.points.empty()) EXPECT_TRUE(j.at("tokens_per_s").is_null()) << where;
  else EXPECT_EQ(j.at("tokens_per_s").get<double>(), c.tokens_per_s) << where;
}

// The text written for `r`: dump(2)'s own text of it (parsed back and dumped again) and the rows' values.
Json checked(const std::string& text, const plan::PlanResult& r, const std::string& question) {
  const Json j = Json::parse(text);
  EXPECT_EQ(j.dump(2), text) << question;
  EXPECT_EQ(j.at("command"), "plan");
  EXPECT_EQ(j.at("question"), question);
  EXPECT_EQ(j.at("assumptions").get<std::vector<std::string>>(), r.assumptions) << question;
  const Json& rec = j.at("recommended");
  const Json& rej = j.at("rejected");
  EXPECT_EQ(rec.size(), r.recommended.size()) << question;
  EXPECT_EQ(rej.size(), r.rejected.size()) << question;
  for (size_t i = 0; i < rec.size() && i < r.recommended.size(); ++i) expect_row(rec[i], r.recommended[i], question + " recommended " + std::to_string(i));
  for (size_t i = 0; i < rej.size() && i < r.rejected.size(); ++i) expect_row(rej[i], r.rejected[i], question + " rejected " + std::to_string(i));
  return j;
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
      checked(*text, r, question);
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
  const Json j = checked(*text, r, question);
  EXPECT_EQ(j.at("kubernetes"), extras.top["kubernetes"]);
  for (size_t i = 0; i < r.recommended.size(); ++i) EXPECT_EQ(j["recommended"][i].at("speculative"), extras.speculative_recommended[i]) << i;
  for (size_t i = 0; i + 1 < r.rejected.size(); ++i) EXPECT_EQ(j["rejected"][i].at("speculative"), extras.speculative_rejected[i]) << i;
  EXPECT_FALSE(j["rejected"].back().contains("speculative"));
  // Not well-formed UTF-8 (issue 19): written as U+FFFD, where plain dump throws (type_error 316); the text parses.
  r.rejected.back().model_id = "bad \xff name";
  auto replaced = report::render_plan_json(r, question, extras);
  ASSERT_TRUE(replaced.has_value()) << replaced.error().describe();
  EXPECT_EQ(Json::parse(*replaced)["rejected"].back().at("model").get<std::string>(), "bad \xEF\xBF\xBD name");
}
