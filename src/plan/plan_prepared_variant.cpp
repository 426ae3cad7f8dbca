#include "plan/prepared_variant.hpp"

#include "engine/model_support.hpp"
#include "engine/quantization_methods.hpp"
#include "engine/vllm_gguf_architectures.hpp"
#include "plan/launch.hpp"
#include "plan/plan_variants.hpp"

namespace preflight::plan {

// The rule of `p.rules_of` that rejects it at TP `tp` (> 1) on `dev`'s family: model::variant_rule, kept in p.
const model::VariantRule* layout_rule(const PreparedVariant& p, const model::ModelSpec& m, const device::DeviceSpec& dev, const engine::EngineProfile& eng,
                                      int64_t tp) {
  const auto same = [&](const PreparedVariant::LayoutRule& r) { return r.tensor_parallel_size == tp && r.family == dev.family; };
  if (p.last_layout_rule < p.layout_rules.size() && same(p.layout_rules[p.last_layout_rule])) return p.layout_rules[p.last_layout_rule].rule;
  for (size_t i = 0; i < p.layout_rules.size(); ++i)
    if (same(p.layout_rules[i])) {
      p.last_layout_rule = i;
      return p.layout_rules[i].rule;
    }
  const model::VariantRule* rule = model::variant_rule(*p.rules_of, "rejected", eng.engine, p.rule_version, dev.family, m.num_experts > 0, tp);
  p.last_layout_rule = p.layout_rules.size();
  p.layout_rules.push_back({dev.family, tp, rule});
  return rule;
}

// The rule that rejects the prepared variant on `dev`'s family (p.rejected), looked up again only when the family
// is not the one it was looked up for.
void set_family(PreparedVariant& p, const model::ModelSpec& m, const device::DeviceSpec& dev, const Expected<engine::EngineProfile>& eng) {
  if (p.family == &dev.family || (p.family && *p.family == dev.family)) return;
  p.family = &dev.family;
  p.rejected = eng && p.rules_of ? model::variant_rule(*p.rules_of, "rejected", eng->engine, p.rule_version, dev.family, m.num_experts > 0) : nullptr;
  p.rejected_reason = p.rejected ? SharedText("engine rejects it: " + p.rejected->message) : SharedText();
  // Issue 16 (gguf36): a GGUF variant whose model type vLLM's GGUF loader maps to no GGUF architecture stops there, before
  // the step a variant rule describes (the MXFP4 experts of gguf_mxfp4): the row gives that refusal, as fit does
  // (estimate/fit_checks quantization_accepted, deploy/variant_rules).
  if (p.rejected && p.v && p.v->engine_quantization == "gguf" && eng && m.vision_hidden_size == 0 && m.vision_params == 0)
    if (const auto& archs = engine::shipped_vllm_gguf_architectures(); archs)
      if (std::string why = engine::vllm_gguf_architecture_refusal(*archs, eng->engine, eng->rule_version(), m.model_type, false); !why.empty())
        p.rejected_reason = SharedText("engine rejects it: " + why);
}

PreparedVariant prepare_variant(const model::ModelSpec& m, const device::DeviceSpec& dev, const PlanInputs& in, const Expected<engine::EngineProfile>& eng,
                                const std::string& variant) {
  PreparedVariant p;
  const auto& catalog = model::load_variant_catalog();
  p.published = published_label(m);
  p.model_id = m.id;
  p.platform = dev.platform;
  if (eng) {
    p.engine_id = eng->id;
    p.llama_cpp = eng->engine == "llama.cpp";
    if (!eng->runs_on(dev.platform)) p.wrong_platform = eng->id + " does not run on " + dev.platform + " devices";
    p.overheads = in.engines->overheads_for(*eng, dev.platform);
    p.speed = in.speeds->find(eng->engine, dev.platform, dev.id);
    if (auto arch = engine::shipped_architecture_check(*eng, m.architecture); arch.verdict == engine::ArchitectureVerdict::unsupported)
      p.architecture_refused = SharedText("engine rejects it: " + arch.message);
  }
  if (!variant.empty()) {
    auto found = catalog ? model::find_variant(*catalog, variant) : Expected<const model::QuantVariant*>(catalog.error());
    if (!found) {
      p.unknown = true;
      p.lookup_error = found.error().message;
      return p;
    }
    p.v = *found;
    p.variant_name = p.v->name;
    p.variant_id = p.v->id;
    p.quantization_flag = p.v->engine_quantization;
    if (std::string none = model::variant_without_effect(*p.v, m); !none.empty()) p.no_effect = SharedText(std::move(none));
    if (std::string refusal = eng ? engine::shipped_variant_refusal(*eng, p.v->id, p.v->engine_quantization) : std::string(); !refusal.empty())
      p.argparse_refused = SharedText("engine rejects it: " + refusal);
  } else if (eng) {
    p.quantization_flag = published_quantization_flag(m, *eng);  // issue 16 (planq32): as fit -q ascend sizes it
  }
  p.rules_of = p.v;
  if (!p.rules_of && m.quant.quantized() && catalog) p.rules_of = model::variant_of_checkpoint(*catalog, m.quant);
  if (p.v && eng) {
    if (const engine::QuantizedCatalog* published = quantized_catalog_of(in)) {
      Candidate probe;
      probe.model_id = p.model_id;
      probe.variant = p.variant_name;
      probe.variant_id = p.variant_id;
      probe.quantization_flag = p.quantization_flag;
      p.unservable_tp1 = unservable_reason(m, probe, *eng, *published);
      probe.num_devices = probe.tensor_parallel_size = 2;
      p.unservable_tp_many = unservable_reason(m, probe, *eng, *published);
    }
  }
  if (eng && p.rules_of) p.rule_version = eng->rule_version().text();
  set_family(p, m, dev, eng);
  return p;
}

}  // namespace preflight::plan
