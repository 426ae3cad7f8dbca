// estimate/fit_memo: the part of a fit that does not read the card's memory, kept for the other cards (issue 19).
// A fit reads a card in two ways: its fit class (platform, family, whether vLLM gives it the large-device batch
// defaults, the engine's MXFP4 layout, graph capture ceiling and FlashInfer TRTLLM listing for it) decides the
// settings, weights, profile run, NCCL buffers, non-torch, graph and the other terms before the KV budget; its usable
// memory decides the budget and all that follows. A plan fits one (model, variant, count) on every card of a platform;
// with this memo the terms before the budget are computed once per fit class, not once per card.
#pragma once

#include <memory>
#include <vector>

#include "estimate/fit.hpp"

namespace preflight::estimate {

// Caller-owned, for the fits of one deployment as a plan varies it: one model, one quantization (flag and scheme)
// and one set of targets, over cards, counts and the retry flags. An entry is used only when every input of the terms
// before the budget that a plan varies is equal (model, engine, overheads, the fit class, TP, PP, DP, DCP, EP,
// max_model_len, no_video, skip_mm_profiling, interconnect, the quantization flag); anything else in the deployment
// must stay the same while the memo lives. Deployments that explain themselves, build a rank tree, state a device
// total or name per-stage cards are fitted without it. A core whose terms fail (an overflow) is not kept.
class FitCoreMemo {
 public:
  FitCoreMemo();
  ~FitCoreMemo();
  FitCoreMemo(const FitCoreMemo&) = delete;
  FitCoreMemo& operator=(const FitCoreMemo&) = delete;
  void clear();
  size_t cores_computed() const { return m_computed; }  // for tests: how many cores were computed, not taken
  size_t cores_reused() const { return m_reused; }

  struct Entry;  // fit.cpp

 private:
  friend struct FitCoreMemoAccess;
  std::vector<std::unique_ptr<Entry>> m_entries;
  size_t m_computed = 0, m_reused = 0;
};

// try_estimate_fit, with the terms before the budget taken from `memo` where an earlier fit of the same class
// computed them (the same result as try_estimate_fit(model, device, engine, overheads, deployment)).
Expected<FitEstimate> try_estimate_fit(FitCoreMemo& memo, const model::ModelSpec& model, const device::DeviceSpec& device, const engine::EngineProfile& engine,
                                       const engine::Overheads& overheads, const Deployment& deployment);

// The same, written into `out` (a plan's candidate holds its fit in place: no estimate moved through an Expected). On an
// error `out` holds a partial estimate and the error is returned.
Status try_estimate_fit_into(FitEstimate& out, FitCoreMemo& memo, const model::ModelSpec& model, const device::DeviceSpec& device,
                             const engine::EngineProfile& engine, const engine::Overheads& overheads, const Deployment& deployment);

}  // namespace preflight::estimate
