// Predicates on a model and a deployment that more than one file of memory terms asks (fit_terms.cpp,
// fit_profile.cpp, fit_overhead_terms.cpp); private to src/estimate.
#pragma once

#include "estimate/fit_terms.hpp"

namespace preflight::estimate::terms {

// ModelSlim int8 experts, whose permuted rows vLLM-Ascend dispatches as int8.
bool int8_dispatched_experts(const model::QuantScheme& scheme);
// A DeepSeek sparse-attention (DSA) model: some layer carries an indexer.
bool has_sparse_indexer(const model::ModelSpec& m);
// An MLA model: some layer caches a latent.
bool has_mla_cache(const model::ModelSpec& m);
// The config's vision_config was read into the spec.
bool has_vision_tower(const model::ModelSpec& m);
// A vLLM-family engine leaves the vision tower out (every modality limited to 0, vLLM >= 0.16).
bool vision_tower_skipped(const model::ModelSpec& m, const engine::EngineProfile& engine, const Deployment& dep);

}  // namespace preflight::estimate::terms
