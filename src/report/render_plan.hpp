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
// What `plan --json` adds to the plan's object: members at the top level (--kubernetes: "kubernetes") and a
// "speculative" member in each row (--speculative-config), one per row in order; shorter lists leave the rest without.
struct PlanJsonExtras {
  Json top = Json::object();
  std::vector<Json> speculative_recommended, speculative_rejected;
};
// plan --json's text (issue 19, round 11: written row by row through base/json_writer, byte for byte what dump(2)
// writes for the same value, without building a tree of it; round 16: the one plan JSON writer): the envelope, the
// question, every recommended and rejected row (numbers, verdict, reason; a row that meets the targets adds its start
// commands and speed estimate), the assumptions, and `extras`. Text that is not well-formed UTF-8 (a model directory's
// name) is written as U+FFFD, as dump_json writes it; an error (corrupt) only for a value JSON text cannot hold (binary).
Expected<std::string> render_plan_json(const plan::PlanResult& plan, const std::string& question, const PlanJsonExtras& extras = {});
// Where the first recommended row's start command is printed: under the table (plan), or only in render_plan_commands'
// list of every row (plan --commands, ux32: the first row's command was printed twice); its notes stay under the table.
enum class FirstStart { under_table, in_commands };
std::string render_plan(const plan::PlanResult& plan, const std::string& question, PlanFormat format, size_t max_rows,
                        FirstStart first_start = FirstStart::under_table);
// plan --commands: the start commands of every recommended row shown (up to max_rows), each under a
// line naming its model, full variant name and layout.
std::string render_plan_commands(const plan::PlanResult& plan, PlanFormat format, size_t max_rows);

}  // namespace preflight::report
