#include "deploy/speculative_method.hpp"

#include <algorithm>
#include <optional>
#include <utility>

#include "base/text.hpp"
#include "base/units.hpp"
#include "engine/speculative_methods.hpp"
#include "engine/speculative_quantization.hpp"

namespace preflight::deploy {

namespace {

// The lengths vLLM's _maybe_override_draft_max_model_len compares (vllm/config/model.py _get_and_verify_max_len for the
// draft ModelConfig, whose spec_target_max_model_len is the target's max_model_len).
std::pair<std::optional<int64_t>, std::optional<int64_t>> draft_and_target_len(const model::ModelSpec& target, const estimate::Deployment& d) {
  std::optional<int64_t> target_len = d.max_model_len;
  if (!target_len && target.derived_max_model_len > 0) target_len = target.derived_max_model_len;
  std::optional<int64_t> draft_len;
  if (const auto& drafter = d.speculative.drafter) draft_len = drafter->derived_max_model_len > 0 ? std::optional<int64_t>(drafter->derived_max_model_len) : target_len;
  else if (d.speculative.mtp() && target.derived_max_model_len > 0) draft_len = target.derived_max_model_len;
  return {draft_len, target_len};
}

// hard36: V0's --speculative-model-quantization (merged into the config as "quantization") takes argparse's choices,
// the version's quantization methods (data/engines/quantization_methods.json).
std::string speculative_quantization_flag_refusal(const Flags& f, const engine::EngineProfile& profile, const std::vector<std::string>& flags) {
  if (std::find(flags.begin(), flags.end(), "--speculative-model-quantization") == flags.end()) return "";
  const Json config = Json::parse(f.speculative_config->value, nullptr, false);
  if (!config.is_object() || !config.contains("quantization") || !config["quantization"].is_string()) return "";
  const auto& methods = engine::shipped_quantization_methods();
  if (!methods) return "";
  const std::string why = engine::speculative_quantization_choice_refusal(*methods, profile.engine, profile.rule_version(), config["quantization"].get<std::string>());
  return why.empty() ? "" : why + " (" + profile.engine + " " + profile.rule_version().text() + ", " + methods->origin + ")";
}

}  // namespace

Status check_speculative_method(const Flags& f, const engine::EngineProfile& profile, const model::ModelSpec& target, const estimate::Deployment& d,
                                std::vector<std::string>& assumptions) {
  const std::string& model_type = target.model_type;
  const int64_t target_tp = d.tensor_parallel_size;
  const auto [draft_len, target_len] = draft_and_target_len(target, d);
  if (!f.speculative_config || (profile.engine != "vllm" && profile.engine != "vllm-ascend")) return Ok{};
  const auto& catalog = engine::shipped_speculative_methods();
  if (!catalog) return catalog.error();
  const engine::Version version = profile.rule_version();
  const std::string& text = f.speculative_config->value;
  std::vector<std::string> flags;  // the V0 flags the config came from (the origin names each)
  for (const auto& word : split(f.speculative_config->origin, ' '))
    if (word.rfind("--", 0) == 0) flags.push_back(word);
  for (const std::string& why : {speculative_quantization_flag_refusal(f, profile, flags),
                                 engine::speculative_value_refusal(*catalog, profile.engine, version, text, flags, engine::SpeculativeValueStage::argparse),
                                 engine::speculative_method_refusal(*catalog, profile.engine, version, text, model_type),
                                 engine::speculative_value_refusal(*catalog, profile.engine, version, text, flags, engine::SpeculativeValueStage::config, target_tp),
                                 engine::speculative_ngram_window_refusal(*catalog, profile.engine, version, text),  // attack37
                                 engine::speculative_max_len_refusal(*catalog, profile.engine, version, text, draft_len, target_len)})
    if (!why.empty()) return make_error(ErrorKind::invalid_argument, f.speculative_config->origin + ": " + why);
  const Json config = Json::parse(text, nullptr, false);
  if (config.is_object() && config.contains("method") && config["method"].is_string())  // user36: as plan refuses it
    if (const std::string why = mtp_without_layers_refusal(target, {.method = config["method"].get<std::string>()}); !why.empty())
      return make_error(ErrorKind::invalid_argument, f.speculative_config->origin + ": " + why);
  const engine::SpeculativeMethodList* list = engine::speculative_method_list(*catalog, profile.engine, version);
  if (!list || !config.is_object() || !config.contains("method") || !config["method"].is_string()) return Ok{};
  const std::string method = config["method"].get<std::string>();
  if (std::find(list->mtp_aliases.begin(), list->mtp_aliases.end(), method) != list->mtp_aliases.end())
    assumptions.push_back(format("%s %s takes speculative method '%s' as 'mtp' (vLLM's warning: \"method `%s` is deprecated and replaced with mtp.\"; %s)",
                                 profile.engine.c_str(), version.text().c_str(), method.c_str(), method.c_str(), catalog->origin.c_str()));
  else if (!list->checked && !list->takes(method))
    assumptions.push_back(format("%s %s checks no speculative method name (SpeculativeConfig is a plain dataclass before vLLM 0.9.1): '%s' is sized as given, "
                                 "and vLLM takes the drafter's kind from its config (%s)",
                                 profile.engine.c_str(), version.text().c_str(), method.c_str(), catalog->origin.c_str()));
  return Ok{};
}

std::string mtp_without_layers_refusal(const model::ModelSpec& m, const estimate::SpeculativeConfig& spec) {
  if (!spec.mtp() || m.mtp_layers > 0) return "";
  return format("NotImplementedError: Unsupported speculative method: 'mtp' (vLLM SpeculativeConfig: %s has no MTP layers, "
                "num_nextn_predict_layers / mtp_num_hidden_layers absent or 0 in its config)",
                m.id.c_str());
}

}  // namespace preflight::deploy
