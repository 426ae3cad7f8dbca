// plan's --speculative-config checks and notes (issue 15; split from cmd_plan.cpp, issue 19 session 37): the refusals
// of a config an engine version cannot start, the rejected rows of the `plan --device` form, and the assumption and JSON
// a plan with a drafter carries.
#pragma once
#include <string>
#include <vector>
#include "base/error.hpp"
#include "device/device_spec.hpp"
#include "model/model_spec.hpp"
#include "plan/planner.hpp"
#include "report/render_plan.hpp"

namespace preflight::cli {

// Why the engine plan runs on `dev` cannot start plan's --speculative-config for `m` (its form before vLLM 0.8.2, the
// method the version refuses, then the config's own values: num_speculative_tokens and the other value checks, the
// n-gram window), or "".
std::string speculative_form_refusal(const plan::PlanInputs& in, const model::ModelSpec& m, const device::DeviceSpec& dev);
// The MODEL form: the first card whose engine refuses the config, exit 2.
Status check_speculative_form(const plan::PlanInputs& in, const model::ModelSpec& m, const std::vector<device::DeviceSpec>& list);
// The `plan --device D` form: models vLLM refuses the config for become rejected rows (removed from `models`).
Expected<std::vector<plan::Candidate>> refuse_speculative(std::vector<model::ModelSpec>& models, const device::DeviceSpec& dev, const plan::PlanInputs& in,
                                                          const plan::PlanTargets& t);
void note_speculative(plan::PlanResult& result, const plan::PlanTargets& t, const std::string& text);
void add_speculative_json(report::PlanJsonExtras& extras, const plan::PlanResult& result, const plan::PlanTargets& t, const std::string& text);

}  // namespace preflight::cli
