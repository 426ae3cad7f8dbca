// The fit's layout and quantization checks (fit_checks.cpp); private to src/estimate, called by fit.cpp.
#pragma once

#include "estimate/fit.hpp"

namespace preflight::estimate::checks {

// Parallel layout checks (vLLM ParallelConfig / model verify_with_parallel_config); false when refused (e.failure set).
bool layout_accepted(FitEstimate& e, const model::ModelSpec& m, const Deployment& dep);
// Quantization accepted by this engine on this platform; false when refused (e.failure set).
bool quantization_accepted(FitEstimate& e, const model::ModelSpec& m, const engine::EngineProfile& engine, const Deployment& dep);

}  // namespace preflight::estimate::checks
