// Private to src/plan: what planner.cpp and plan_variants.cpp share of the variant lists.
#pragma once

#include "engine/quantized_checkpoints.hpp"
#include "plan/planner.hpp"

namespace preflight::plan {

// The quantized-checkpoint catalogue a plan's start commands draw on: the plan's launch rules', else the shipped one
// (nullptr when neither loads).
const engine::QuantizedCatalog* quantized_catalog_of(const PlanInputs& in);

}  // namespace preflight::plan
