// The fit's verdict and printed lines (fit_verdict.cpp); private to src/estimate, called by fit.cpp's fit_rest.
#pragma once

#include <cstdint>

#include "estimate/fit.hpp"
#include "estimate/fit_terms.hpp"

namespace preflight::estimate::verdict {

// Issue 15: vLLM 0.14-0.15's whole-model KV check over every PP stage's layers (sets e.pp_whole_model_*).
void pp_whole_model_check(FitEstimate& e, const engine::EngineProfile& engine, double available, int64_t L);
// The verdict: weights per stage, the KV budget against one request at max_model_len, the failure and its message.
void decide(FitEstimate& e, const engine::EngineProfile& engine, const engine::Overheads& oh, const KvGeometry& kv, double available, int64_t L,
            const Deployment& dep, const terms::Mc2TransportVerdict& mc2);
// The engine's printed lines (KV size in tokens, maximum concurrency, the graph estimate's lines).
void printed_lines(FitEstimate& e, const engine::EngineProfile& engine, double available, int64_t L);

}  // namespace preflight::estimate::verdict
