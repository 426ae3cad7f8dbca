// estimate/fit_budget: the KV budget a fit sizes on its card (requested memory less the terms before it, per pipeline
// stage, with its band) and the per-rank tree built from it. Private to src/estimate: fit.cpp's fit_rest calls them.
// Split out of fit.cpp (perfest37).
#pragma once

#include <string>
#include <vector>

#include "estimate/fit.hpp"
#include "estimate/fit_terms.hpp"

namespace preflight::estimate::budget {

// The KV budget (reference 1.2, 4.2): requested - weights - activation peak - non-torch [- graph], per
// stage; the band from the fitted terms' bands, its high side widened where the engine may take a
// cheaper sampling path.
struct KvBudget {
  double available = 0;         // the printed "Available KV cache memory" (the lower stage under PP)
  double available_blocks = 0;  // what sizes num_blocks, in first-stage layer units
  double first_stage = 0;       // the first (or only) stage's budget
  double last_stage = 0;        // the last stage's budget (PP > 1)
  double band = 0, band_high = 0;
};

// The budget of `e` (its totals, terms and stages set by the fit's core; sets requested_bytes and, under PP, the stages)
// with `dep`'s --kv-cache-memory-bytes and sampling path, and the band from the fitted terms' bands.
KvBudget kv_budget(FitEstimate& e, const engine::EngineProfile& engine, const engine::Overheads& oh, const Deployment& dep, const terms::StageLayout& lay,
                   const terms::StageWeights& weights, const terms::ProfileRun& run, double non_torch_band);

// The budget's formula as the estimate applied it.
std::string budget_rule(const FitEstimate& e, const Deployment& dep);

// The per-rank tree: one entry for PP 1, else the first stage (encoder, embedding) and the last (head, sampler).
std::vector<RankFootprint> rank_footprints(const FitEstimate& e, const terms::StageLayout& lay, const terms::StageWeights& weights, const terms::ProfileRun& run,
                                           const Term& non_torch, const Term& graph, const KvBudget& budget, const KvGeometry& kv, const engine::Overheads& oh,
                                           bool explain);

}  // namespace preflight::estimate::budget
