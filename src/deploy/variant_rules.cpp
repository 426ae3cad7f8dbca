#include "deploy/variant_rules.hpp"

#include "base/units.hpp"

namespace preflight::deploy {

const model::VariantRule* apply_variant_rules(const model::QuantVariant& v, const Resolved& resolved, estimate::FitEstimate& est, std::vector<std::string>& notes) {
  const bool moe = resolved.model.num_experts > 0;
  const std::string version = resolved.engine.rule_version().text();
  if (const auto* f = model::variant_rule(v, "fallback", resolved.engine.engine, version, resolved.device.family, moe))
    notes.push_back(format("variant %s on %s (%s): %s", v.id.c_str(), resolved.device.id.c_str(), resolved.device.family.c_str(), f->message.c_str()));
  const auto* rule =
      model::variant_rule(v, "rejected", resolved.engine.engine, version, resolved.device.family, moe, resolved.deployment.tensor_parallel_size);
  if (!rule) return nullptr;
  est.fits = false;
  est.failure = estimate::Failure::unsupported_quantization;
  est.failure_message = rule->message;
  return rule;
}

}  // namespace preflight::deploy
