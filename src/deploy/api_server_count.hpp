// deploy/api_server_count: vLLM's checks of --api-server-count (-asc) that depend on the engine core the start runs
// (issue 15 / 19, hard34). The headless ones sit with the other multi-node flags (data_parallel_flags.cpp).
#pragma once

#include "base/error.hpp"
#include "deploy/deployment.hpp"
#include "engine/engine_profile.hpp"

namespace preflight::deploy {

// vLLM 0.9.1 - 0.11.0 (vllm/entrypoints/cli/serve.py run_multi_api_server): a start with an API server and more than one
// API server process on the V0 engine (VLLM_USE_V1 false after create_engine_config: stated, the version's default, or
// set by the V1 oracle's fall-back, i.e. `profile` has V0 lines) stops with "ValueError: api_server_count > 1 is only
// supported for V1". invalid_argument naming the flag's origin; Ok otherwise (every other version, engine or count).
// vLLM bounds the count no further (one API server process each); preflight computes nothing from it beyond this
// comparison and the headless test (count < 1), so no value overflows.
Status check_api_server_count(const Flags& f, const engine::EngineProfile& profile);

}  // namespace preflight::deploy
