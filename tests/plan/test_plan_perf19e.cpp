// Issue 19 (planfast5): a plan --json row keeps its speed's decode-step and prefill provenance lines as the numbers they
// print (Candidate::speed_lines, estimate/speed_lines.hpp) instead of two text blocks per row; the JSON writer writes
// them. The row's whole provenance, and every other member of its speed, equal an explained estimate_speed of the row's
// deployment computed here on its own, with no memo, workload or scratch of the planner's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "deploy/deployment.hpp"
#include "estimate/speed.hpp"
#include "estimate/speed_lines.hpp"
#include "model/quant_variant.hpp"
#include "plan/planner.hpp"
#include "plan_catalogs.hpp"
#include "plan_test_models.hpp"
#include "report/render_plan.hpp"

using namespace preflight;
using preflight::test::catalogs;
using preflight::test::dev;

namespace {

std::vector<std::string> texts(std::span<const SharedText> v) { return {v.begin(), v.end()}; }  // a std::vector or InlineVector

// The whole speed estimate of row `c` on `d`, explained: the deployment and workload as the planner sizes them
// (candidate_deployment, the card's interconnect, the fit's retry flags; one stream per concurrency target, nodes of 8).
estimate::SpeedEstimate whole_speed(const plan::Candidate& c, const model::ModelSpec& m, const device::DeviceSpec& d, const plan::PlanInputs& in,
                                    const plan::PlanTargets& t) {
  std::vector<std::string> assumed;
  const auto eng = deploy::resolve_engine(plan::plan_engine_input(in), catalogs().engines, d.platform, assumed);
  EXPECT_TRUE(eng.has_value()) << d.id;
  EXPECT_EQ(eng->id, c.engine_id.str()) << d.id;
  const engine::Overheads* oh = catalogs().engines.overheads_for(*eng, d.platform);
  const engine::SpeedProfile* sp = catalogs().speeds.find(eng->engine, d.platform, d.id);
  EXPECT_TRUE(oh && sp) << d.id;
  const model::QuantVariant* v = c.variant_id.empty() ? nullptr : *model::find_variant(*model::load_variant_catalog(), c.variant_id);
  estimate::Deployment dep = plan::candidate_deployment(c, v, t);
  dep.interconnect = plan::candidate_interconnect(t, *oh, d, c.tensor_parallel_size);
  dep.no_video = c.no_video;
  dep.skip_mm_profiling = c.skip_mm_profiling;
  dep.explain = true;
  estimate::SpeedWorkload w;
  w.concurrency = {t.concurrency};
  w.devices_per_node = 8;
  w.engine_version = deploy::stated_engine_version(in.engine, in.engine_version);
  w.context_tokens = std::min(t.decode_context_tokens.value_or(c.context_tokens), c.context_tokens);
  return estimate::estimate_speed(m, d, *sp, catalogs().speeds, dep, w);
}

}  // namespace

TEST(Planner, Issue19_RowsKeepTheirSpeedLinesAsNumbersThatWriteTheWholeProvenance) {
  const auto all = preflight::test::catalogue_model_specs();
  // A CUDA card with a link, a PCIe card, an NPU with a bandwidth prior; 1 card, 8 (TP 8), 16 (TP 8 x PP 2: cross node).
  const std::vector<device::DeviceSpec> devices = {dev("H100-SXM"), dev("RTX4090"), dev("910B4")};
  plan::PlanTargets t;
  t.context_tokens = 8192;
  plan::PlanInputs in = catalogs().inputs();
  in.detail = plan::RowDetail::every_row;
  const auto plans = plan::plan_for_devices(all, devices, {1, 8, 16}, in, t, 2);
  size_t compared = 0, deferred = 0, eager = 0, linked = 0;
  for (const auto& p : plans) {
    const device::DeviceSpec d = dev(p.device_id);
    for (const auto& c : p.result.recommended) {
      const auto m = std::find_if(all.begin(), all.end(), [&](const auto& x) { return x.id == c.model_id; });
      ASSERT_NE(m, all.end());
      const estimate::SpeedEstimate whole = whole_speed(c, *m, d, in, t);
      const std::string at = c.model_id.str() + " [" + c.variant.str() + "] " + d.id + " x" + std::to_string(c.num_devices);
      const std::vector<std::string> full = estimate::provenance_with(c.speed, c.speed_lines);
      EXPECT_EQ(full, texts(whole.provenance)) << at;
      EXPECT_EQ(texts(c.speed.assumptions), texts(whole.assumptions)) << at;
      EXPECT_EQ(c.speed.bandwidth_source, whole.bandwidth_source) << at;
      EXPECT_EQ(c.speed.link, whole.link) << at;
      EXPECT_EQ(c.speed.mode, whole.mode) << at;
      EXPECT_EQ(c.speed.single_stream_tokens_per_s, whole.single_stream_tokens_per_s) << at;
      EXPECT_EQ(c.speed.ttft_s, whole.ttft_s) << at;
      ASSERT_EQ(c.speed.points.size(), whole.points.size()) << at;
      for (size_t i = 0; i < whole.points.size(); ++i) {
        EXPECT_EQ(c.speed.points[i].per_stream_tokens_per_s, whole.points[i].per_stream_tokens_per_s) << at;
        EXPECT_EQ(c.speed.points[i].terms.step_s, whole.points[i].terms.step_s) << at;
      }
      // The two lines are not in the row's own provenance: it holds the texts the rows of a device share.
      EXPECT_EQ(c.speed.provenance.size() + c.speed_lines.decode + c.speed_lines.prefill, whole.provenance.size()) << at;
      for (const auto& line : c.speed.provenance) {
        EXPECT_NE(line.str().rfind("decode step at batch 1:", 0), 0u) << at;
        EXPECT_NE(line.str().rfind("prefill ", 0), 0u) << at;
      }
      deferred += c.speed_lines.decode && c.speed_lines.prefill;
      eager += c.speed.mode == "eager";
      linked += !c.speed.link.empty();
      ++compared;
    }
  }
  // Most recommended rows carry both lines; the plans hold eager rows (the NPU's older engines) and rows over a link.
  EXPECT_GT(compared, 100u);
  EXPECT_GT(deferred, compared / 2);
  EXPECT_GT(linked, 0u);
  (void)eager;
}

// A row whose lines the writer writes: the JSON's provenance is the whole list in order, the decode line where the
// estimate put it (after the bandwidth and link lines, before an eager line), the prefill line last.
TEST(RenderPlanJson, Issue19_DeferredSpeedLinesWrittenInTheirPlaces) {
  const auto all = preflight::test::catalogue_model_specs();
  plan::PlanTargets t;
  t.context_tokens = 8192;
  plan::PlanInputs in = catalogs().inputs();
  const plan::PlanResult r = plan::plan_for_device(all, dev("H100-SXM"), 8, in, t);
  ASSERT_FALSE(r.recommended.empty());
  auto text = report::render_plan_json(r, "q");
  ASSERT_TRUE(text.has_value());
  const Json j = Json::parse(*text);
  size_t written = 0;
  for (size_t i = 0; i < r.recommended.size(); ++i) {
    const plan::Candidate& c = r.recommended[i];
    const auto& prov = j.at("recommended")[i].at("speed").at("provenance");
    ASSERT_EQ(prov.size(), c.speed.provenance.size() + c.speed_lines.decode + c.speed_lines.prefill) << i;
    if (!c.speed_lines.decode) continue;
    // Written here from the numbers the line prints (printf's "%.2f ... %lld" of the estimate's comment in speed.cpp).
    char decode[512];
    std::snprintf(decode, sizeof decode,
                  "decode step at batch 1: weights %.2f GB + KV %.3f GB + state %.3f GB per rank at context %lld -> memory %.2f ms; %s overhead %.2f ms; MoE "
                  "routing %.2f ms (%lld layers); communication %.2f ms (%lld all-reduces)",
                  c.speed_lines.weight_bytes / 1e9, c.speed_lines.kv_bytes / 1e9, c.speed_lines.state_bytes / 1e9, static_cast<long long>(c.speed.context_tokens),
                  c.speed_lines.memory_s * 1e3, c.speed.mode == "eager" ? "eager dispatch" : "graph step", c.speed_lines.overhead_s * 1e3,
                  c.speed_lines.moe_s * 1e3, static_cast<long long>(c.speed.moe_layers), c.speed_lines.communication_s * 1e3,
                  static_cast<long long>(c.speed.allreduces_per_step));
    EXPECT_EQ(prov[c.speed_lines.decode_at], decode) << i;
    EXPECT_EQ(prov[c.speed_lines.decode_at - 1], c.speed.provenance[c.speed_lines.decode_at - 1].str()) << i;  // the bandwidth (and link) line before it
    if (c.speed_lines.prefill) {
      char prefill[256];
      std::snprintf(prefill, sizeof prefill, "prefill %lld tokens: %.2f TFLOP at %.0f%% of %.0f TFLOPS = %.1f ms, %lld chunk(s) of %lld; communication %.1f ms",
                    static_cast<long long>(c.speed.input_tokens), c.speed_lines.flops / 1e12, c.speed_lines.efficiency * 100, c.speed_lines.peak / 1e12,
                    c.speed_lines.compute_s * 1e3, static_cast<long long>(c.speed_lines.chunks), static_cast<long long>(c.speed_lines.chunk),
                    c.speed_lines.comm_s * 1e3);
      EXPECT_EQ(prov.back(), prefill) << i;
    }
    ++written;
  }
  EXPECT_GT(written, r.recommended.size() / 2);
}
