// estimate/fit_memo: the part of a fit that does not read the card's memory, kept for the other cards (issue 19).
// A fit reads a card in two ways: its fit class (platform, family, whether vLLM gives it the large-device batch
// defaults, the engine's MXFP4 layout, graph capture ceiling and FlashInfer TRTLLM listing for it) decides the
// settings, weights, profile run, NCCL buffers, non-torch, graph and the other terms before the KV budget; its usable
// memory decides the budget and all that follows. A plan fits one (model, variant, count) on every card of a platform;
// with this memo the terms before the budget are computed once per fit class, not once per card, and the profile run,
// which reads no card, once per batch settings (planfast10: the classes of one deployment mostly differ in other terms).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
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
  size_t runs_shared() const { return m_runs_shared; }  // for tests: cores that took another class's profile run (planfast10)
  size_t weights_shared() const { return m_weights_shared; }  // for tests: cores that took another class's weights (planfast11)
  size_t shapes_shared() const { return m_shapes_shared; }  // for tests: cores that took another class's KV cache shape (perfest37)

  struct Entry;  // fit.cpp

 private:
  friend struct FitCoreMemoAccess;
  std::vector<std::unique_ptr<Entry>> m_entries;
  // Issue 19 (fitcopy36): the blocks of the entries clear() dropped, made afresh in place for the next ones (an entry is
  // a few kilobytes: its allocation and release were ~700 instructions a core), and the entry the last fit took, tried
  // before the others (the cards of a platform come in runs of one class).
  std::vector<std::unique_ptr<Entry>> m_spare;
  size_t m_last = 0;
  size_t m_computed = 0, m_reused = 0, m_runs_shared = 0, m_weights_shared = 0, m_shapes_shared = 0;
};

// Issue 19 (planfast14): group_bytes_for once per model and deployed scheme for the fits of a plan over many platforms
// (a whole-catalogue plan sizes the same model and variant again on each platform's cards: 629 computations, 21.5 M
// instructions). Its workers share one (a mutex). An entry is keyed by the model's address and the deployed scheme
// (terms::deployed_scheme) by value, and group_bytes_for reads nothing else (the model's weight groups and dtype, the
// scheme): it cannot stand for other inputs as long as the memo does not outlive the models it was filled for, which
// its owner guarantees (a plan holds one for the run over its const model list, and drops it before returning).
class GroupBytesMemo {
 public:
  // group_bytes_for(model, deployment) into `out`, its scheme pointer that of `deployment`'s deployed scheme.
  void get(GroupBytes& out, const model::ModelSpec& model, const Deployment& deployment);
  size_t computed() const { return m_computed; }  // for tests
  size_t reused() const { return m_reused; }

 private:
  struct Entry {
    const model::ModelSpec* model = nullptr;
    model::QuantScheme scheme;
    GroupBytes bytes;  // its scheme pointer unset: each get() sets the caller's
  };
  std::mutex m_mutex;
  std::vector<Entry> m_entries;
  size_t m_computed = 0, m_reused = 0;
};

// Issue 19 (planfast10): what the fit class of a card is made of (see above) at one TP size, under one engine and
// overheads: its platform and family, the large-device batch defaults, the engine's MXFP4 layout, graph capture ceiling
// and FlashInfer TRTLLM listing for it, and the card's id where the all-reduce workspace's table lists it at that TP.
// Reading them (the engine's per-card tables, the card's usable memory) cost a third of a whole-catalogue plan's fits
// as much again as the memo's lookups saved; a caller that fits one card many times (a plan: every model and variant
// at each count) makes this once per card and TP size (fit_class) and hands it to try_estimate_fit_into.
struct FitClass {
  // What it was made from: a fit of another card, engine, overheads or TP size makes its own instead (never wrong).
  const device::DeviceSpec* device = nullptr;
  const engine::EngineProfile* engine = nullptr;
  const engine::Overheads* overheads = nullptr;
  int64_t tensor_parallel_size = 0;
  // The class itself; the numbers first, so that two classes usually differ before a text is compared.
  bool large_batch = false;
  const engine::Mxfp4Layout* mxfp4 = nullptr;
  int64_t graph_ceiling = 0;
  bool trtllm = false;
  // Issue 19 (perfcls37): the family as the terms read it (fit_class): the family itself where a family list that
  // prints it or compares it alone names it (the NPU rules: KV budget divisor, MoE all-gather / MC2, non-torch, the
  // FRACTAL_NZ copy, the square mask, scale copies, all-to-all rows), else empty with `family_bits` saying which other
  // rules name it (bit 0: vLLM's FP8 Marlin fallback, Ampere and Turing; bit 1 + i: the NCCL buffers' domain i). Two
  // cards of families no rule names share a class (on CUDA: Blackwell, Ada, Pascal, ... apart from the rest).
  uint64_t family_bits = 0;
  std::string family, platform;
  std::string allreduce_card;  // the card's id where the workspace table lists it at this TP, else empty
  // Session 36 (planidx36's finding): the card's id where a MoE backend workspace record of this engine and version names
  // it (engines.json overheads[].moe_backend_workspaces: a named card allocates the backend's workspace in the profile
  // run, an unnamed one does not), else empty; before, an unnamed card could take a named card's core from the memo.
  std::string moe_backend_card;
  bool same_class(const FitClass& o) const {
    return large_batch == o.large_batch && mxfp4 == o.mxfp4 && graph_ceiling == o.graph_ceiling && trtllm == o.trtllm && family_bits == o.family_bits && family == o.family &&
           platform == o.platform && allreduce_card == o.allreduce_card && moe_backend_card == o.moe_backend_card;
  }
};
FitClass fit_class(const device::DeviceSpec& device, const engine::EngineProfile& engine, const engine::Overheads& overheads, int64_t tensor_parallel_size);

// try_estimate_fit, with the terms before the budget taken from `memo` where an earlier fit of the same class
// computed them (the same result as try_estimate_fit(model, device, engine, overheads, deployment)).
Expected<FitEstimate> try_estimate_fit(FitCoreMemo& memo, const model::ModelSpec& model, const device::DeviceSpec& device, const engine::EngineProfile& engine,
                                       const engine::Overheads& overheads, const Deployment& deployment);

// The same, written into `out` (a plan's candidate holds its fit in place: no estimate moved through an Expected). On an
// error `out` holds a partial estimate and the error is returned.
// `cls`: fit_class of the card at the deployment's TP size, made by the caller (nullptr, or one made for other inputs:
// made here).
Status try_estimate_fit_into(FitEstimate& out, FitCoreMemo& memo, const model::ModelSpec& model, const device::DeviceSpec& device,
                             const engine::EngineProfile& engine, const engine::Overheads& overheads, const Deployment& deployment,
                             const FitClass* cls = nullptr);

}  // namespace preflight::estimate
