// plan/launch: the ready-to-run start command for a verified candidate: `vllm serve` with the sizing
// flags, the environment the stack needs and the workaround flags the launch rules know for this
// engine version and model. A quantized variant is served from a checkpoint that really has that
// format: a published one from the quantized-checkpoint catalogue, or the output of the conversion
// step printed before it. A layout that spans nodes gets one block per node (head, workers), each
// setting up the environment before `ray start`, since Ray workers inherit the environment of the
// `ray start` that launched them.
#pragma once

#include "plan/planner.hpp"

namespace preflight::plan {

const char* workload_name(Workload workload);

struct LaunchOptions {
  Workload workload = Workload::chat;
};

Launch build_launch(const model::ModelSpec& model, const Candidate& candidate, const engine::EngineProfile& engine, const engine::LaunchRules& rules,
                    int64_t devices_per_node, const LaunchOptions& options = {});

}  // namespace preflight::plan
