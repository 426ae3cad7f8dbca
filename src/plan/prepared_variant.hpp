// Private to src/plan: a (model, variant) prepared once for the candidates of every count and card of a platform
// (planner.cpp, plan_prepared_variant.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/shared_text.hpp"
#include "base/error.hpp"
#include "device/device_spec.hpp"
#include "engine/engine_profile.hpp"
#include "engine/speed_profile.hpp"
#include "model/model_spec.hpp"
#include "model/quant_variant.hpp"
#include "plan/planner.hpp"

namespace preflight::plan {

// A variant as every count of one (model, variant, device) uses it, looked up once for all of them: the
// catalogue entry ("" = as published: none), the lookup's error for an unknown id, and the rule that
// rejects it on this engine and device family (checked after the engine's own checks, as before); for a
// published checkpoint that is a variant of the list (read from its descriptor), that variant's rule
// (issue 16).
struct PreparedVariant {
  const model::QuantVariant* v = nullptr;
  bool unknown = false;      // the id is not in the list (or the list did not load): lookup_error says why
  std::string lookup_error;
  const model::VariantRule* rejected = nullptr;  // on the family `family` points to (set_family)
  SharedText rejected_reason;                    // its row's reason, made once per family (round 14)
  const model::QuantVariant* rules_of = nullptr;  // the variant whose rules apply (the checkpoint's when published)
  std::string rule_version;                       // the engine's rule version text, formatted once
  const std::string* family = nullptr;
  SharedText published;  // published_label(m): the row's variant name when it has no variant (looked up once, not per count)
  // Issue 19 (round 14): the texts every candidate of this (model, variant, engine) holds, made once and shared.
  SharedText model_id, variant_name, variant_id, quantization_flag, engine_id;
  // The engine's overheads and speed profile on this device (nullptr: none), looked up once, not per count.
  const engine::Overheads* overheads = nullptr;
  const engine::SpeedProfile* speed = nullptr;
  // Planfast11: the engine is llama.cpp (its rows take their own sizing and never refuse a long context), compared once
  // here rather than three times a row (1.2% of the whole-catalogue --json plan's instructions).
  bool llama_cpp = false;
  // Issue 16: why no start command can serve the variant (plan::unservable_reason) at TP 1 and at TP > 1, "" when one
  // can; looked up once per (model, variant, engine): it reads the catalogue and the engine, not the card.
  std::string unservable_tp1, unservable_tp_many;
  // The engine's refusal of the platform prepare_variant's device is on ("vllm@0.28-0.30 does not run on npu devices"),
  // made once for every card of that platform (round 14: 7% of a whole-catalogue plan's rows); empty when it runs there.
  std::string platform;
  SharedText wrong_platform;
  // Issue 16 (quant26): model::variant_without_effect of the variant on the model ("" when it quantizes something).
  SharedText no_effect;
  // Issue 16: the line `vllm serve`'s parser prints when the engine version has no --quantization choice for the variant
  // (engine::shipped_quantization_refusal, as fit's deploy::apply_variant_rules reads it first), "" when it has one; once
  // per (model, variant, engine): plan --variant w8a8 on a CUDA card gave the variant rule's later ValueError instead.
  SharedText argparse_refused;
  // Issues 15/16 (arch31): the engine version's model registry lacks the model's architecture (engine::shipped_architecture_check),
  // "" when it has it or preflight's list does not name it; once per (model, engine).
  SharedText architecture_refused;
  // Planfast8: the rule that rejects the variant at a TP size above 1 on a family (layout_rule), looked up once per
  // (family, TP size) rather than per card and count (1.5% of the whole-catalogue plan's instructions).
  struct LayoutRule {
    std::string family;
    int64_t tensor_parallel_size = 0;
    const model::VariantRule* rule = nullptr;
  };
  mutable std::vector<LayoutRule> layout_rules;
  mutable size_t last_layout_rule = 0;  // the entry the last lookup found: a work item meets its cards family by family
};

// The rule of `p.rules_of` that rejects it at TP `tp` (> 1) on `dev`'s family: model::variant_rule, kept in p.
const model::VariantRule* layout_rule(const PreparedVariant& p, const model::ModelSpec& m, const device::DeviceSpec& dev, const engine::EngineProfile& eng,
                                      int64_t tp);

// The rule that rejects the prepared variant on `dev`'s family (p.rejected), looked up again only when the family
// is not the one it was looked up for.
void set_family(PreparedVariant& p, const model::ModelSpec& m, const device::DeviceSpec& dev, const Expected<engine::EngineProfile>& eng);

// The variant `variant` ("" = the checkpoint as published) of `m` on `dev` under engine `eng`, prepared once.
PreparedVariant prepare_variant(const model::ModelSpec& m, const device::DeviceSpec& dev, const PlanInputs& in, const Expected<engine::EngineProfile>& eng,
                                const std::string& variant);

}  // namespace preflight::plan
