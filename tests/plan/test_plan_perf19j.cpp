// Issue 19 (planfast9): a plan makes a card's refusals of its engine settings (deploy::npu_only_setting_refusal: an
// NPU-only setting on another platform's card; deploy::kv_cache_dtype_refusal: a KV cache dtype the engine takes but
// cannot run on the card's family) once per card of a platform run, not per row, and the rows of that card share the
// text. Every row must read what it reads planned alone (evaluate_candidate makes both refusals itself), the refusal
// texts as deploy writes them, and one block per card.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "plan/planner.hpp"
#include "plan_catalogs.hpp"
#include "plan_test_models.hpp"

using namespace preflight;
using preflight::test::catalogs;

namespace {

struct Refusal {
  std::string prefix;  // "" = the row is not refused by the setting
};

// Plans `models` on `devices` at 1-16 cards under `in` and `t`, and checks every row against evaluate_candidate and
// `expected` (per device id: the text its rows' reasons start with, "" for none), and that the rows of a refused card
// hold one block.
void expect_card_refusals(const std::vector<model::ModelSpec>& models, const std::vector<device::DeviceSpec>& devices, const plan::PlanInputs& in,
                          const plan::PlanTargets& t, const std::map<std::string, Refusal>& expected) {
  const std::vector<int64_t> counts = {1, 2, 4, 8, 16};
  const auto plans = plan::plan_for_devices(models, devices, counts, in, t, 2);
  std::map<std::string, const model::ModelSpec*> model_by_id;
  for (const auto& m : models) model_by_id[m.id] = &m;
  std::map<std::string, const device::DeviceSpec*> device_by_id;
  for (const auto& d : devices) device_by_id[d.id] = &d;
  std::map<std::string, const std::string*> block;  // per device: the refusal's text block its first refused row holds
  size_t rows = 0, refused = 0;
  for (const auto& p : plans)
    for (const auto* list : {&p.result.recommended, &p.result.rejected})
      for (const auto& c : *list) {
        const std::string at = c.model_id.str() + " [" + c.variant.str() + "] " + p.device_id + " x" + std::to_string(p.num_devices);
        const plan::Candidate alone = plan::evaluate_candidate(*model_by_id.at(c.model_id.str()), *device_by_id.at(p.device_id), in,
                                                               c.variant_id.str(), p.num_devices, t);
        EXPECT_EQ(c.reason.str(), alone.reason.str()) << at;
        ++rows;
        const std::string& prefix = expected.at(p.device_id).prefix;
        if (prefix.empty()) {
          EXPECT_EQ(c.reason.str().find("--kv-cache-dtype: "), std::string::npos) << at;
          EXPECT_EQ(c.reason.str().find("--hccl-buffsize: "), std::string::npos) << at;
          continue;
        }
        // Rows the variant or layout refuses earlier keep that reason (it is checked first, as fit orders them).
        if (c.reason.str().rfind(prefix, 0) != 0) continue;
        ++refused;
        const std::string*& first = block[p.device_id];
        if (!first) first = &c.reason.str();
        EXPECT_EQ(&c.reason.str(), first) << at << ": its own copy of the card's refusal";
      }
  EXPECT_GT(rows, 0u);
  size_t refusing = 0;
  for (const auto& [id, r] : expected) refusing += !r.prefix.empty();
  EXPECT_EQ(block.size(), refusing);
  EXPECT_GE(refused, refusing * counts.size());
}

}  // namespace

TEST(CardRefusals, Issue19_KvCacheDtypeRefusalMadeOncePerCardEqualsEachRowPlannedAlone) {
  const auto all = preflight::test::catalogue_model_specs();
  std::vector<model::ModelSpec> models;
  for (const auto& m : all)
    if (m.id == "Qwen/Qwen3-8B" || m.id == "Qwen/Qwen3-30B-A3B") models.push_back(m);
  ASSERT_EQ(models.size(), 2u);
  const std::vector<device::DeviceSpec> devices = {preflight::test::dev("910B4"), preflight::test::dev("910C"), preflight::test::dev("310P3"),
                                                   preflight::test::dev("950PR")};
  plan::PlanInputs in = catalogs().inputs();
  in.engine = "vllm-ascend@0.23";  // data/engines/kv_cache_dtypes.json vllm-ascend-fp8-kv: 0.7.0 - 0.26.99 on a2, a3 and 310P
  plan::PlanTargets t;
  t.context_tokens = 8192;
  t.engine_settings.kv_cache_dtype = "fp8";
  expect_card_refusals(models, devices, in, t,
                       {{"910B4", {"--kv-cache-dtype: fp8 on 910B4 (ascend-a2, vllm-ascend 0.23"}},
                        {"910C", {"--kv-cache-dtype: fp8 on 910C (ascend-a3, vllm-ascend 0.23"}},
                        {"310P3", {"--kv-cache-dtype: fp8 on 310P3 (ascend-310p, vllm-ascend 0.23"}},
                        {"950PR", {""}}});
}

TEST(CardRefusals, Issue19_NpuOnlySettingRefusalMadeOncePerCardEqualsEachRowPlannedAlone) {
  const auto all = preflight::test::catalogue_model_specs();
  std::vector<model::ModelSpec> models;
  for (const auto& m : all)
    if (m.id == "Qwen/Qwen3-8B" || m.id == "meta-llama/Llama-3.1-8B-Instruct") models.push_back(m);
  ASSERT_EQ(models.size(), 2u);
  const std::vector<device::DeviceSpec> devices = {preflight::test::dev("H100-SXM"), preflight::test::dev("RTX4090"), preflight::test::dev("910B4")};
  plan::PlanInputs in = catalogs().inputs();
  plan::PlanTargets t;
  t.context_tokens = 8192;
  t.engine_settings.hccl_buffsize_bytes = 400.0 * 1024 * 1024;
  const std::string why = "--hccl-buffsize: HCCL_BUFFSIZE sizes the buffers of CANN's HCCL, which only an Ascend NPU's engine reads; ";
  expect_card_refusals(models, devices, in, t, {{"H100-SXM", {why + "H100-SXM is a cuda device"}}, {"RTX4090", {why + "RTX4090 is a cuda device"}}, {"910B4", {""}}});
}
