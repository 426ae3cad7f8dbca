// plan/fit_search: searches around one deployment: the largest context one request can get, and the
// cheapest changes that make a failing deployment start (shorter max_model_len, higher utilization, a
// smaller profile run: fewer sequences, fewer batched tokens, no encoder profiling; an accepted
// quantization, more tensor-parallel devices, a smaller KV-cache dtype), each verified by re-running
// the estimate.
#pragma once

#include <string>
#include <vector>

#include "estimate/fit.hpp"

namespace preflight::plan {

struct FitSearch {
  int64_t largest_context = 0;      // tokens: largest_context_held of the deployment's fit
  std::vector<std::string> fixes;   // human-readable, in order of cost
  std::vector<std::string> fix_flags;  // the vLLM flags of each fix
  // Issue 16 (fitcons27): the index of the first fix that adds devices (fixes.size() when none does): the fixes
  // before it change the engine's flags on the same cards and weights; fit inserts a quantized variant there.
  size_t more_devices_at = 0;
};

// The largest context one request gets from `fit`'s KV cache (estimate::kv_capacity_tokens: whole blocks, what vLLM's
// "estimated maximum model length" search gives), capped at the model's derived max_model_len (model::max_model_len_of),
// above which vLLM refuses a --max-model-len. fit's fixes, its variant fixes and plan use this one cap.
int64_t largest_context_held(const model::ModelSpec& model, const estimate::FitEstimate& fit);

FitSearch search_fixes(const model::ModelSpec& model, const device::DeviceSpec& device, const engine::EngineProfile& engine,
                       const engine::Overheads& overheads, const estimate::Deployment& deployment, const estimate::FitEstimate& base);

}  // namespace preflight::plan
