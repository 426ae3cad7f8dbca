// deploy/speculative_method: --speculative-config's method as the engine's version takes it (issue 16, spec35;
// data/engines/speculative_methods.json through engine/speculative_methods). fit, logs, validate and bench --device
// resolve through it, so each refuses what `vllm serve` of that version refuses.
#pragma once

#include <string>
#include <vector>

#include "base/error.hpp"
#include "deploy/deployment.hpp"
#include "engine/engine_profile.hpp"
#include "estimate/fit.hpp"
#include "model/model_spec.hpp"

namespace preflight::deploy {

// invalid_argument naming the flag's origin with vLLM's own message (engine::speculative_method_refusal: pydantic's
// literal_error from 0.9.1 for a name the version's list lacks, V0's-era ValueError before 0.11.0 for an MTP draft
// without "model" on a target that has none); a model-specific MTP name the version rewrites to "mtp" is said in
// `assumptions`. Ok without --speculative-config or for other engines; the shipped file's load error otherwise.
// specdraft35: a draft_tensor_parallel_size other than 1 must equal the deployment's tensor_parallel_size. hard36: the
// config's max_model_len must not exceed the draft model config's length (`d.speculative.drafter`'s derived length, the
// target's max_model_len where the drafter's config names none; for MTP the target's derived length) nor the target's
// (d.max_model_len, else `target`'s derived length), as vLLM's _maybe_override_draft_max_model_len refuses.
// user36: then an MTP method on a `target` without MTP layers (mtp_without_layers_refusal), as plan refuses it.
Status check_speculative_method(const Flags& f, const engine::EngineProfile& profile, const model::ModelSpec& target, const estimate::Deployment& d,
                                std::vector<std::string>& assumptions);

// vLLM's refusal of an MTP draft (method mtp, or a *_mtp name vLLM renames to mtp) on a target whose config has no MTP
// layers (inspect's count, from num_nextn_predict_layers / mtp_num_hidden_layers), empty when vLLM takes it:
// SpeculativeConfig.__post_init__ uses the target as the draft config, finds its model_type in no MTP type and raises
// "NotImplementedError: Unsupported speculative method: 'mtp'" (vllm/config/speculative.py, main of 2026). The one
// rule fit, validate and logs (resolve_deployment) and plan (plan/speculative) refuse by (user36: fit sized nothing and
// said "fits" where plan refused the same config, exit 2).
std::string mtp_without_layers_refusal(const model::ModelSpec& model, const estimate::SpeculativeConfig& spec);

}  // namespace preflight::deploy
