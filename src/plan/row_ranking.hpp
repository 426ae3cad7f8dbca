// plan/row_ranking: a plan's rows ranked into its result, and the start commands of a row (moved out of planner.cpp,
// planidx36, to keep that file under 800 lines). Internal to plan/: planner.cpp's two callers.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "plan/launch.hpp"
#include "plan/planner.hpp"

namespace preflight::plan {

// Issue 16 (ux29): a card whose catalogue dtypes hold no bfloat16 (310P, 910A, V100, T4) starts a bf16 checkpoint in float16.
CardHalfPrecision card_half_precision(const device::DeviceSpec& dev);

// The start commands of candidate `c`, one that meets the targets (none without launch rules); `memo` (planfast6): the
// layout-free parts of the item's start commands, nullptr: made here.
void add_row_launch(Candidate& c, const model::ModelSpec& m, const device::DeviceSpec& dev, const engine::EngineProfile& eng, const PlanInputs& in,
                    LaunchMemo* memo = nullptr);

// RowDetail::table: the start commands of the first recommended row, the one the table prints. `eng`: the engine of
// the row's card when the caller holds it (planfast8: a run's, resolved once; resolving it per plan was 0.9% of the
// whole-catalogue table form), else resolved here (plan_engine).
void launch_first_row(PlanResult& r, std::span<const model::ModelSpec> models, std::span<const device::DeviceSpec> devices, const PlanInputs& in,
                      const Expected<engine::EngineProfile>* eng = nullptr);

// The plan of one device and count from its candidates (`list`, in slot order): the ones that meet the targets ranked
// (the largest model first, then higher precision, then faster), the rest kept in slot order as the rejected rows,
// with the plan's assumptions. `eng`: the card's engine (its run's).
PlanResult rank_candidates(CandidateList& list, const std::vector<model::ModelSpec>& models, const device::DeviceSpec& dev, int64_t count,
                           const PlanInputs& in, const PlanTargets& t, const Expected<engine::EngineProfile>& eng);

}  // namespace preflight::plan
