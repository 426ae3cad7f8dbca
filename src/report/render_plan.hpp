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
// What `plan --json` adds to plan_to_json's object: members at the top level (--kubernetes: "kubernetes") and a
// "speculative" member in each row (--speculative-config), one per row in order; shorter lists leave the rest without.
struct PlanJsonExtras {
  Json top = Json::object();
  std::vector<Json> speculative_recommended, speculative_rejected;
};
// Issue 19 (round 11): plan --json's text written row by row (base/json_writer), byte for byte what dump(2) writes
// for plan_to_json(plan, question) with `extras` added, without building that tree. An error (corrupt) where a
// text is not well-formed UTF-8, which dump refuses too.
Expected<std::string> render_plan_json(const plan::PlanResult& plan, const std::string& question, const PlanJsonExtras& extras = {});
std::string render_plan(const plan::PlanResult& plan, const std::string& question, PlanFormat format, size_t max_rows);
// plan --commands: the start commands of every recommended row shown (up to max_rows), each under a
// line naming its model, full variant name and layout.
std::string render_plan_commands(const plan::PlanResult& plan, PlanFormat format, size_t max_rows);

}  // namespace preflight::report
