#include "plan/fit_copy.hpp"

#include <algorithm>

#include "engine/allreduce_workspace.hpp"
#include "engine/moe_backend_workspace.hpp"
#include "engine/nccl_buffers.hpp"
#include "estimate/fit.hpp"
#include "estimate/fit_memo.hpp"

namespace preflight::plan {

namespace {

// Whether the MoE backend workspaces of `oh` list `a` and `b` alike (a record names the cards its backend runs on).
bool same_moe_backend_cards(const engine::Overheads& oh, const device::DeviceSpec& a, const device::DeviceSpec& b) {
  if (!oh.moe_backend_workspaces) return true;
  for (const auto& w : *oh.moe_backend_workspaces) {
    const bool in_a = std::find(w.devices.begin(), w.devices.end(), a.id) != w.devices.end();
    const bool in_b = std::find(w.devices.begin(), w.devices.end(), b.id) != w.devices.end();
    if (in_a != in_b) return false;
  }
  return true;
}

}  // namespace

bool same_fit_copy(const device::DeviceSpec& a, const device::DeviceSpec& b, const engine::EngineProfile& engine, const engine::Overheads& oh,
                   const PlanTargets& t, int64_t n) {
  const int64_t tp = std::min(n, a.node_devices());
  if (a.node_devices() != b.node_devices() || !estimate::same_fit_device(a, b, engine) || !same_moe_backend_cards(oh, a, b)) return false;
  // The interconnect, where a term of this version and TP reads it: the NCCL buffers, the all-reduce workspace.
  const engine::Interconnect ic_a = candidate_interconnect(t, oh, a, tp), ic_b = candidate_interconnect(t, oh, b, tp);
  const engine::NcclBuffers* nb = oh.nccl_buffers.get();
  if (nb && nb->counted_by(engine, tp) && ic_a != ic_b) return false;
  const engine::AllreduceFusionWorkspace* w = oh.allreduce_fusion_workspace.get();
  const int64_t pp = std::max<int64_t>(1, n / tp);  // a plan row's layout (evaluate_into); one data-parallel rank
  const auto allreduce_input = [&](const device::DeviceSpec& d, engine::Interconnect ic) {
    return w && w->allocated_by(engine, tp, pp, 1, ic) ? w->max_input_bytes(d.id, tp) : 0.0;
  };
  if (allreduce_input(a, ic_a) != allreduce_input(b, ic_b)) return false;
  // vLLM's large-device batch defaults (estimate::fit_class; they read the memory kind, which same_fit_device does not).
  return estimate::fit_class(a, engine, oh, tp).large_batch == estimate::fit_class(b, engine, oh, tp).large_batch;
}

std::vector<size_t> fit_copy_sets(std::span<const device::DeviceSpec* const> devs, const engine::EngineProfile* engine, const engine::Overheads* oh,
                                  const PlanTargets& t, int64_t n, size_t& sets) {
  std::vector<size_t> set_of(devs.size());
  sets = 0;
  for (size_t x = 0; x < devs.size(); ++x) {
    size_t y = 0;
    while (y < x && !(engine && oh && same_fit_copy(*devs[y], *devs[x], *engine, *oh, t, n))) ++y;
    set_of[x] = y < x ? set_of[y] : sets++;
  }
  return set_of;
}

estimate::FitClass plan_fit_class(const device::DeviceSpec& dev, const engine::EngineProfile& engine, const engine::Overheads& oh, const PlanTargets& t,
                                  int64_t n) {
  const int64_t tp = std::min(n, dev.node_devices());
  estimate::FitClass c = estimate::fit_class(dev, engine, oh, tp);
  const engine::AllreduceFusionWorkspace* w = oh.allreduce_fusion_workspace.get();
  if (!w || !w->allocated_by(engine, tp, std::max<int64_t>(1, n / tp), 1, candidate_interconnect(t, oh, dev, tp))) c.allreduce_card.clear();
  return c;
}

engine::Interconnect fit_interconnect(const device::DeviceSpec& dev, const engine::EngineProfile& engine, const engine::Overheads& oh, const PlanTargets& t,
                                      int64_t n) {
  const int64_t tp = std::min(n, dev.node_devices()), pp = std::max<int64_t>(1, n / tp);
  const engine::Interconnect ic = candidate_interconnect(t, oh, dev, tp);
  const engine::NcclBuffers* nb = oh.nccl_buffers.get();
  const engine::AllreduceFusionWorkspace* w = oh.allreduce_fusion_workspace.get();
  const bool read = (nb && nb->counted_by(engine, tp)) ||
                    (w && (w->allocated_by(engine, tp, pp, 1, ic) || w->allocated_by(engine, tp, pp, 1, engine::Interconnect::unknown)));
  return read ? ic : engine::Interconnect::unknown;
}

}  // namespace preflight::plan
