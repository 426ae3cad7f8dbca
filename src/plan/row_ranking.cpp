#include "plan/row_ranking.hpp"

#include <algorithm>
#include <string>

#include "base/memory.hpp"
#include "base/units.hpp"
#include "plan/plan_notes.hpp"
#include "plan/row_order.hpp"

namespace preflight::plan {

CardHalfPrecision card_half_precision(const device::DeviceSpec& dev) {
  return dev.supports_dtype("bf16") ? CardHalfPrecision::bf16_and_fp16 : CardHalfPrecision::fp16_only;
}

void add_row_launch(Candidate& c, const model::ModelSpec& m, const device::DeviceSpec& dev, const engine::EngineProfile& eng, const PlanInputs& in,
                    LaunchMemo* memo) {
  if (in.launch_rules) {
    const int64_t node = dev.node_devices();  // ux29: an Atlas 800 A3 holds 16 910C dies
    const NodeSpan span = in.data_parallel_replicas * c.num_devices > node ? NodeSpan::several : NodeSpan::replica;  // ux28
    c.launch = build_launch(m, c, eng, *in.launch_rules, node,
                            {.workload = in.workload,
                             .node_span = span,
                             .speculative_config = in.speculative_config,
                             .compilation_config = in.compilation_config,
                             .device_family = dev.family,
                             .engine_args = &in.engine_args,
                             .half_precision = card_half_precision(dev),
                             .device_platform = dev.platform,
                             .host_cores = in.host_cores},
                            memo);
  }
}

void launch_first_row(PlanResult& r, std::span<const model::ModelSpec> models, std::span<const device::DeviceSpec> devices, const PlanInputs& in,
                      const Expected<engine::EngineProfile>* eng) {
  if (in.detail != RowDetail::table || r.recommended.empty()) return;
  Candidate& c = r.recommended.front();
  const auto m = std::find_if(models.begin(), models.end(), [&](const model::ModelSpec& x) { return x.id == c.model_id; });
  const auto dev = std::find_if(devices.begin(), devices.end(), [&](const device::DeviceSpec& x) { return x.id == c.device_id; });
  if (m == models.end() || dev == devices.end()) return;
  if (eng) {
    if (*eng) add_row_launch(c, *m, *dev, **eng, in);
  } else if (const auto resolved = plan_engine(in, *dev)) {
    add_row_launch(c, *m, *dev, *resolved, in);
  }
}

// Issue 19 (round 18): the list's block becomes the larger of the two (in place: ranked, or closed up) and only the
// smaller is moved into a block of its own, so that a plan touches fresh memory for the fewer rows and not for the
// recommended ones always (two thirds of a whole-catalogue plan's 78,395 candidates meet the targets: 75 MB of fresh
// pages for their copies before).
PlanResult rank_candidates(CandidateList& list, const std::vector<model::ModelSpec>& models, const device::DeviceSpec& dev, int64_t count,
                           const PlanInputs& in, const PlanTargets& t, const Expected<engine::EngineProfile>& eng) {
  PlanResult r;
  // Candidates are large: the recommended ones are ranked through their slots and moved once.
  std::vector<size_t> order;
  for (size_t s = 0; s < list.size(); ++s)
    if (list[s].meets) order.push_back(s);
  // Biggest model first (the seed's question), then higher precision, then faster.
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    const Candidate &a = list[x], &b = list[y];
    if (a.params != b.params) return a.params > b.params;
    if (a.variant_rank != b.variant_rank) return a.variant_rank < b.variant_rank;
    return a.tokens_per_s > b.tokens_per_s;
  });
  const size_t meeting = order.size();
  if (meeting > list.size() - meeting) {
    r.rejected.reserve(list.size() - meeting);
    prefault_writable(r.rejected.data(), r.rejected.capacity() * sizeof(Candidate));
    for (auto& c : list)
      if (!c.meets) r.rejected.push_back(std::move(c));
    permute_front(list, order);
    list.erase(list.begin() + static_cast<std::ptrdiff_t>(meeting), list.end());
    r.recommended = std::move(list);
  } else {
    r.recommended.reserve(meeting);
    prefault_writable(r.recommended.data(), r.recommended.capacity() * sizeof(Candidate));
    for (const size_t s : order) r.recommended.push_back(std::move(list[s]));
    // The rest keep their order; a moved-out row still reads meets = true.
    list.erase(std::remove_if(list.begin(), list.end(), [](const Candidate& c) { return c.meets; }), list.end());
    r.rejected = std::move(list);
  }
  launch_first_row(r, models, {&dev, 1}, in, &eng);
  r.assumptions.push_back(format("%lld x %s, TP = min(devices, %lld), PP across nodes; speed at decode context %s", static_cast<long long>(count),
                                 dev.id.c_str(), static_cast<long long>(dev.node_devices()),
                                 t.decode_context_tokens ? std::to_string(*t.decode_context_tokens).c_str() : "= each row's context target"));
  note_row_assumptions(r);
  return r;
}

}  // namespace preflight::plan
