// Private to src/plan: what planner.cpp and plan_variants.cpp share of the variant lists.
#pragma once

#include "engine/quantized_checkpoints.hpp"
#include "plan/planner.hpp"

namespace preflight::plan {

// The quantized-checkpoint catalogue a plan's start commands draw on: the plan's launch rules', else the shipped one
// (nullptr when neither loads).
const engine::QuantizedCatalog* quantized_catalog_of(const PlanInputs& in);

// Issue 16 (planq32): the --quantization a published ModelSlim checkpoint (quant_model_description.json, config.json
// without a quantization_config) is served with as its own variant: "ascend" where `eng` takes that method but does not
// detect the descriptor by itself (engines.json quantization_auto_detect "descriptor_file": vLLM-Ascend 0.15 and 0.17+),
// else "" (the engine's own choice, as fit sizes it). Without it, vLLM-Ascend 0.13 builds every layer unquantized in bf16.
std::string published_quantization_flag(const model::ModelSpec& m, const engine::EngineProfile& eng);

}  // namespace preflight::plan
