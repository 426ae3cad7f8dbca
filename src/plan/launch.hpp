// plan/launch: the ready-to-run start command for a verified candidate: `vllm serve` with the sizing
// flags, the environment the stack needs and the workaround flags the launch rules know for this
// engine version and model, and the Ray head/worker lines when the layout spans nodes.
#pragma once

#include "plan/planner.hpp"

namespace preflight::plan {

Launch build_launch(const model::ModelSpec& model, const Candidate& candidate, const engine::EngineProfile& engine, const engine::LaunchRules& rules,
                    int64_t devices_per_node);

}  // namespace preflight::plan
