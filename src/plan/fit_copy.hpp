// plan/fit_copy: which cards of one platform run of a plan may take one another's fit at one device count (issue 19).
// A whole-catalogue plan computes the fit of a (model, variant, count) once per set of cards whose fit is the same and
// copies it to the others of the set (planner.cpp run_item). The key is everything a fit reads of the card at that
// count, listed in same_fit_copy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "device/device_spec.hpp"
#include "engine/engine_profile.hpp"
#include "estimate/fit_memo.hpp"
#include "plan/planner.hpp"

namespace preflight::plan {

// Whether a candidate of `num_devices` cards of `a` and one of `b` (one platform run: one engine and its overheads, one
// plan's targets) have the same fit but for the card's id the fit records. What estimate_fit reads of the card, and of
// the deployment a plan makes for it (candidate_deployment, the interconnect of candidate_interconnect):
// - estimate::same_fit_device: platform, family, memory and runtime totals (the budget), the MXFP4 layout, the CUDA
//   graph capture ceiling, FlashInfer's uniform-batch card list;
// - its node's cards, and so the layout a count takes on it (TP = min(count, node), PP the rest);
// - the interconnect its TP group is sized for (a card's form factor decides it where the targets name none), where a
//   term of the version and TP reads it: the NCCL buffers (engines.json nccl_buffers, vLLM 0.4.3 - 0.10.99);
// - the all-reduce fusion workspace's maximum input for the card at that TP, where the version allocates it at that
//   layout and interconnect (allreduce_fusion_workspace, vLLM 0.19.x on NVSwitch; the list names cards);
// - vLLM's large-device batch defaults (estimate::fit_class's large_batch, which reads the memory kind);
// - the MoE backend workspaces whose card list names it (engines.json overheads[].moe_backend_workspaces).
// Everything else a fit reads is the deployment, the same for every card of the (model, variant, count).
bool same_fit_copy(const device::DeviceSpec& a, const device::DeviceSpec& b, const engine::EngineProfile& engine, const engine::Overheads& overheads,
                   const PlanTargets& targets, int64_t num_devices);

// For each card of `devs` (one platform run), the index of its set of cards with the same fit at `num_devices`
// (same_fit_copy), numbered in the order of each set's first card; `sets` is their number. Without an engine or
// overheads (`engine` or `overheads` null) every card is a set of its own.
std::vector<size_t> fit_copy_sets(std::span<const device::DeviceSpec* const> devs, const engine::EngineProfile* engine, const engine::Overheads* overheads,
                                  const PlanTargets& targets, int64_t num_devices, size_t& sets);

// estimate::fit_class of `device` at the TP a count of `num_devices` takes on it, without the all-reduce workspace's card
// where the version does not allocate that workspace at the row's layout (TP, PP, one data-parallel rank) and the
// interconnect its TP group is sized for (candidate_interconnect): the term then reads no card (estimate/fit_allreduce.cpp),
// and the cores of a FitCoreMemo are shared by the cards the workspace's list names and those it does not (planidx36:
// the ten Hopper cards of that list each had cores of their own at TP 2-8 under every version).
estimate::FitClass plan_fit_class(const device::DeviceSpec& device, const engine::EngineProfile& engine, const engine::Overheads& overheads,
                                  const PlanTargets& targets, int64_t num_devices);

// The interconnect a row of `num_devices` cards of `device` is sized with (Deployment::interconnect): that of
// candidate_interconnect where a term of the version reads it at the row's layout (the NCCL buffers; the all-reduce
// workspace, allocated on some interconnects only), else Interconnect::unknown, which no term then reads either: the fit
// is the same, and a FitCoreMemo (its key holds the interconnect) shares the cores of cards of other form factors
// (planidx36: an SXM and a PCIe card of one class at TP 2-8 had a core each under versions that read neither term).
engine::Interconnect fit_interconnect(const device::DeviceSpec& device, const engine::EngineProfile& engine, const engine::Overheads& overheads,
                                      const PlanTargets& targets, int64_t num_devices);

}  // namespace preflight::plan
