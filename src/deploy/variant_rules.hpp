#pragma once
// A quantization variant's engine rules (data/variants/quant_variants.json "rules") applied to a resolved
// deployment, the same for `fit --variant` and `validate` (issue 16), and vLLM's argument parser's verdict on the
// --quantization the variant or the user passes (data/engines/quantization_methods.json, issue 16 quant29).
#include <optional>
#include <string>
#include <vector>

#include "deploy/deployment.hpp"
#include "estimate/fit.hpp"
#include "model/quant_variant.hpp"

namespace preflight::deploy {

// The rules for the resolved engine's rule version, the device family and the model kind (dense / MoE): a kernel
// fallback is added to `notes` ("variant ID on DEVICE (FAMILY): message"); a rejection makes `est` the verdict
// unsupported_quantization with the engine's own message and is returned (nullopt: the engine takes the variant).
// The first rejection is vLLM's argument parser's when the engine version's --quantization choices lack the
// variant's method (`vllm serve` stops there, before any rule of the variant is met).
std::optional<model::VariantRule> apply_variant_rules(const model::QuantVariant& v, const Resolved& resolved, estimate::FitEstimate& est,
                                                      std::vector<std::string>& notes);

// An explicit --quantization (fit's flag, `quantization` as given) against the resolved engine version's argparse
// choices: invalid_argument naming the flag's origin with the line `vllm serve` prints ("vllm serve: error: argument
// --quantization/-q: invalid choice: 'ascend' (choose from ...)"); Ok when the engine takes it or the flag is not
// the engine's (llama.cpp, MindIE). A shipped list that does not load is its corrupt error.
Status check_quantization_choice(const Resolved& resolved, const Given<std::string>& quantization);

}  // namespace preflight::deploy
