// report/render_plan: speed estimates and plans as text, Markdown and JSON. Formatting only.
#pragma once

#include <string>

#include "base/json_util.hpp"
#include "estimate/speed.hpp"
#include "plan/planner.hpp"
#include "report/render.hpp"

namespace preflight::report {

Json speed_to_json(const estimate::SpeedEstimate& speed);
std::string render_speed(const estimate::SpeedEstimate& speed, const Style& style);

enum class PlanFormat { text, markdown };
Json plan_to_json(const plan::PlanResult& plan, const std::string& question);
std::string render_plan(const plan::PlanResult& plan, const std::string& question, PlanFormat format, size_t max_rows);
// plan --commands: the start commands of every recommended row shown (up to max_rows), each under a
// line naming its model, full variant name and layout.
std::string render_plan_commands(const plan::PlanResult& plan, PlanFormat format, size_t max_rows);

}  // namespace preflight::report
