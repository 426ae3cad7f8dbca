#pragma once

#include "plan/planner.hpp"

namespace preflight::plan {

// The plan-wide assumptions the rows rest on, each once: the devices whose tok/s comes from a bandwidth prior, and the
// interconnect basis of each row (split from planner.cpp).
void note_row_assumptions(PlanResult& r);

}  // namespace preflight::plan
