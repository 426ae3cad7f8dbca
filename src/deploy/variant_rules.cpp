#include "deploy/variant_rules.hpp"

#include "base/units.hpp"
#include "engine/quantization_methods.hpp"

namespace preflight::deploy {

namespace {

// The line `vllm serve` prints when its parser refuses `method` on the resolved engine version, or "".
Expected<std::string> argparse_refusal(const Resolved& resolved, const std::string& method) {
  const auto& catalog = engine::shipped_quantization_methods();
  if (!catalog) return catalog.error();
  return engine::quantization_choice_refusal(*catalog, resolved.engine.engine, resolved.engine.rule_version(), method, resolved.deprecated_quantization);
}

}  // namespace

std::optional<model::VariantRule> apply_variant_rules(const model::QuantVariant& v, const Resolved& resolved, estimate::FitEstimate& est,
                                                      std::vector<std::string>& notes) {
  const bool moe = resolved.model.num_experts > 0;
  const std::string version = resolved.engine.rule_version().text();
  std::optional<model::VariantRule> rejected;
  // A shipped list that does not load is caught by the catalogue test and `check_quantization_choice`; here it refuses nothing.
  if (std::string refusal = engine::shipped_variant_refusal(resolved.engine, v.id, v.engine_quantization, resolved.deprecated_quantization);
      !refusal.empty())
    rejected = model::VariantRule{.engine = resolved.engine.engine, .status = "rejected", .message = std::move(refusal)};
  if (!rejected) {
    if (const auto* f = model::variant_rule(v, "fallback", resolved.engine.engine, version, resolved.device.family, moe))
      notes.push_back(format("variant %s on %s (%s): %s", v.id.c_str(), resolved.device.id.c_str(), resolved.device.family.c_str(), f->message.c_str()));
    if (const auto* rule = model::variant_rule(v, "rejected", resolved.engine.engine, version, resolved.device.family, moe, resolved.deployment.tensor_parallel_size))
      rejected = *rule;
  }
  if (!rejected) return std::nullopt;
  // Issue 16 (gguf36): a refusal the fit already made before sizing anything (vLLM's GGUF loader refusing the model type,
  // a platform's quantization list) is where the engine stops, before the step the variant's rule describes: it stands.
  if (est.failure == estimate::Failure::unsupported_quantization && !est.failure_message.empty())
    return model::VariantRule{.engine = resolved.engine.engine, .status = "rejected", .message = est.failure_message};
  est.fits = false;
  est.failure = estimate::Failure::unsupported_quantization;
  est.failure_message = rejected->message;
  return rejected;
}

Status check_quantization_choice(const Resolved& resolved, const Given<std::string>& quantization) {
  PF_TRY(refusal, argparse_refusal(resolved, quantization.value));
  if (refusal.empty()) return Ok{};
  return make_error(ErrorKind::invalid_argument, quantization.origin + ": " + refusal, quantization.origin);
}

}  // namespace preflight::deploy
