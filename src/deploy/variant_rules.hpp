#pragma once
// A quantization variant's engine rules (data/variants/quant_variants.json "rules") applied to a resolved
// deployment, the same for `fit --variant` and `validate` (issue 16).
#include <string>
#include <vector>

#include "deploy/deployment.hpp"
#include "estimate/fit.hpp"
#include "model/quant_variant.hpp"

namespace preflight::deploy {

// The rules for the resolved engine's rule version, the device family and the model kind (dense / MoE): a kernel
// fallback is added to `notes` ("variant ID on DEVICE (FAMILY): message"); a rejection makes `est` the verdict
// unsupported_quantization with the engine's own message and is returned (nullptr: the engine takes the variant).
const model::VariantRule* apply_variant_rules(const model::QuantVariant& v, const Resolved& resolved, estimate::FitEstimate& est, std::vector<std::string>& notes);

}  // namespace preflight::deploy
