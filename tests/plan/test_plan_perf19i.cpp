// Issue 19 (planfast8): a work item (a model and variant over every card and count) looks up the variant's rule for a
// layout (model::variant_rule at a TP size above 1: vLLM refuses a pre-quantized bitsandbytes 8-bit checkpoint under
// TP) once per (card family, TP size), not per row. Every row of a plan over cards of several families and counts must
// read the reason the row planned alone (evaluate_candidate: its own lookup) reads: the rule's message at every TP size
// above 1, and no rule at TP 1.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "plan/planner.hpp"
#include "plan_catalogs.hpp"
#include "plan_test_models.hpp"

using namespace preflight;
using preflight::test::catalogs;

TEST(LayoutRules, Issue19_LayoutRuleLookedUpOncePerFamilyGivesEachRowItsOwn) {
  const auto all = preflight::test::catalogue_model_specs();
  std::vector<model::ModelSpec> models;
  for (const auto& m : all)
    if (m.id == "Qwen/Qwen3-8B" || m.id == "meta-llama/Llama-3.1-8B-Instruct") models.push_back(m);
  ASSERT_FALSE(models.empty());
  // CUDA cards of several families (one platform run: one work item per model over all of them).
  std::vector<device::DeviceSpec> devices;
  std::set<std::string> families;
  for (const auto& d : catalogs().devices.devices)
    if (d.platform == "cuda" && families.size() < 6 && families.insert(d.family).second) devices.push_back(d);
  ASSERT_GE(devices.size(), 3u);
  plan::PlanTargets t;
  t.context_tokens = 8192;
  plan::PlanInputs in = catalogs().inputs();
  in.variant = "bnb_8bit";
  const std::vector<int64_t> counts = {1, 2, 4, 8, 16};
  const auto plans = plan::plan_for_devices(models, devices, counts, in, t, 2);
  std::map<std::string, const model::ModelSpec*> model_by_id;
  for (const auto& m : models) model_by_id[m.id] = &m;
  std::map<std::string, const device::DeviceSpec*> device_by_id;
  for (const auto& d : devices) device_by_id[d.id] = &d;
  const std::string message = "engine rejects it: ValueError: Prequant BitsAndBytes models with tensor parallelism is not supported";
  size_t rows = 0, refused = 0;
  for (const auto& p : plans)
    for (const auto* list : {&p.result.recommended, &p.result.rejected})
      for (const auto& c : *list) {
        const plan::Candidate alone =
            plan::evaluate_candidate(*model_by_id.at(c.model_id.str()), *device_by_id.at(p.device_id), in, "bnb_8bit", p.num_devices, t);
        EXPECT_EQ(c.reason.str(), alone.reason.str()) << c.model_id.str() << " " << p.device_id << " x" << p.num_devices;
        const bool rule = c.reason.str().rfind(message, 0) == 0;
        EXPECT_EQ(rule, c.tensor_parallel_size > 1) << c.model_id.str() << " " << p.device_id << " x" << p.num_devices << ": " << c.reason.str();
        ++rows;
        if (rule) ++refused;
      }
  EXPECT_EQ(rows, models.size() * devices.size() * counts.size());
  EXPECT_EQ(refused, models.size() * devices.size() * (counts.size() - 1));
}
