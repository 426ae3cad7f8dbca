// plan/speculative: what `plan --speculative-config` adds to a plan (issue 15). Every candidate is sized with
// the drafter (PlanTargets::speculative, read by candidate_deployment: the estimate counts its weights and KV
// layers exactly as fit does) and started with the exact --speculative-config (PlanInputs::speculative_config,
// LaunchOptions). This file holds the two facts a plan adds around that: the models vLLM refuses the config for,
// with vLLM's own message, and what each row counted for the drafter.
#pragma once

#include <string>

#include "base/json_util.hpp"
#include "estimate/fit.hpp"
#include "model/model_spec.hpp"
#include "plan/planner.hpp"

namespace preflight::plan {

// vLLM's refusal of `spec` on `model`, empty when vLLM takes it. method mtp (or a deprecated *_mtp alias, which
// vLLM renames to mtp) on a config with no MTP layers (inspect's count, from num_nextn_predict_layers /
// mtp_num_hidden_layers): SpeculativeConfig.__post_init__ uses the target as the draft config, finds its
// model_type in no MTP type and raises "NotImplementedError: Unsupported speculative method: 'mtp'"
// (vllm/config/speculative.py, main of 2026).
std::string speculative_rejection(const model::ModelSpec& model, const estimate::SpeculativeConfig& spec);

// The drafter a row counted, in words: the model's own MTP layers, the drafter checkpoint read from its config
// (and where), an EAGLE head assumed of the target's shape, or none (ngram, suffix draft from the text).
std::string drafter_counted(const estimate::SpeculativeConfig& spec, const RowFit& fit);

// The "speculative" object of a plan row's JSON: method, num_speculative_tokens, the drafter checkpoint
// ("model", null for none), the config as given, what was counted (drafter_counted) and, where the row was sized,
// the drafter's weights on one device (bytes, inside weights_gib_per_device) and its KV layers.
Json speculative_row_json(const Candidate& candidate, const estimate::SpeculativeConfig& spec, const std::string& config_text);

}  // namespace preflight::plan
