// model/quant_variant: the quantized variants of a published model, one list (data/variants/
// quant_variants.json) read by fit --variant, plan and validate. A variant says how the tool that
// exports it stores each linear weight (as a QuantScheme, so bytes come from linear_weight_bytes),
// which modules stay in the model dtype, the --quantization value the engine reads, the words people
// write for it, and the engine rules: a rejection with the engine's own message, or a kernel fallback.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/error.hpp"
#include "base/json_util.hpp"
#include "model/model_spec.hpp"
#include "model/quant_scheme.hpp"

namespace preflight::model {

struct VariantRule {
  std::string engine;                 // vllm | vllm-ascend | llama.cpp
  std::vector<std::string> families;  // device families; empty = every device of the engine
  std::string before_version;         // "0.10.0": holds while the engine version is older; empty = every later version
  std::string model_kind;             // dense | moe | "" (both)
  std::string status;                 // rejected | fallback
  std::string message;                // rejected: the engine's message verbatim; fallback: the kernel it uses
  std::string from_version;           // "0.9.2": holds from this engine version on; empty = from the first
  // Holds only for a tensor-parallel size above this (vLLM refuses a pre-quantized bitsandbytes checkpoint under TP);
  // 0 = any layout. Optional key "tensor_parallel_above".
  int64_t tensor_parallel_above = 0;
};

struct QuantVariant {
  std::string id;                    // "w4a8_dynamic"
  std::string name;                  // full name, never cut: "msModelSlim W4A8_DYNAMIC (attention W8A8_DYNAMIC)"
  std::string tool;                  // what exports it
  std::string engine_quantization;   // --quantization / quant_method the engine reads; "" = as published
  std::vector<std::string> aliases;  // lowercase words people write for it
  // Issue 16 (h-quant25): words that name this variant on one engine only, ahead of another variant's word of the same
  // length ("w8a8" on vLLM is compressed-tensors' INT8 W8A8 preset, on vLLM-Ascend msModelSlim's W8A8). Optional key
  // "engine_aliases": {"vllm": ["w8a8", ...]}.
  std::vector<std::pair<std::string, std::vector<std::string>>> engine_aliases;
  QuantScheme scheme;                // storage: formats, groups, kept modules; method = engine_quantization
  std::string layout, descriptor;    // tensors as exported, and the descriptor file that names the format
  std::vector<VariantRule> rules;
  std::string source;

  bool quantized() const { return !engine_quantization.empty(); }
};

struct VariantCatalog {
  std::vector<QuantVariant> variants;
  std::string origin;
};

// Validates every record: unknown keys, an empty source or id, a duplicate id, an unknown weight
// format, a rule with an unknown status or a rejection without a message (corrupt errors naming the
// file and the record).
Expected<VariantCatalog> parse_variant_catalog(const Json& root, const std::string& origin);
// The embedded data/variants/quant_variants.json, parsed once (the result lives as long as the program).
const Expected<VariantCatalog>& load_variant_catalog();

// The variant named `name` (id, case-insensitive, '-' read as '_'), or not_found listing every id.
Expected<const QuantVariant*> find_variant(const VariantCatalog& catalog, const std::string& name);

// The variant a free-text quantization names ("w8a8 (ascend w8a8_dynamic)", "AWQ int4", "modelopt
// (NVFP4)", or an id such as "ct_w4a16"): the variant with the longest alias or id found in the text as
// whole words (lowercased), or
// nullptr when none matches. "none", "bf16", "not stated" and empty text give the bf16 variant. With `engine` (vllm,
// vllm-ascend, ...) a variant's engine_aliases for that engine count too and win a tie of length.
const QuantVariant* variant_from_text(const VariantCatalog& catalog, const std::string& text, const std::string& engine = {});

// The variant a checkpoint's own descriptor (config.json quantization_config, hf_quant_config.json,
// quant_model_description.json, as parsed into `scheme`) is: the variant whose engine method is the
// descriptor's (compared like vLLM names them: '-' read as '_', "modelopt" also covers "modelopt_fp4") and
// whose storage is the same (linear and expert formats, the group size and zero points of group formats,
// the fp8 block); a ModelSlim export (method "ascend") whose model_quant_type a variant names
// ("modelslim_quant_type") is that variant whatever its per-module types. An unquantized scheme is the bf16 variant; nullptr when no single variant of the list
// stores it that way (per-module mixed precision, a group size no variant has).
const QuantVariant* variant_of_checkpoint(const VariantCatalog& catalog, const QuantScheme& scheme);

// Issue 16 (quant26): why `variant` changes nothing on `model`, or "" when it quantizes something there. A variant
// that quantizes the routed experts only (its linear format is the model dtype, its expert format is not: MXFP4,
// whose vLLM Mxfp4Config.get_quant_method gives every LinearBase UnquantizedLinearMethod and quantizes FusedMoE
// layers alone) on a model without experts loads every weight as published: "no effect: no MoE experts (...)".
// fit --variant refuses it as bad input (exit 2); plan lists no such row and rejects it where --variant names it.
std::string variant_without_effect(const QuantVariant& variant, const ModelSpec& model);

// The first rule of `status` that holds for the engine (its name and version "X.Y[.Z]": the version the
// user named, else the profile's newest, EngineProfile::rule_version), the device family and the model
// kind, or nullptr. Versions compare by major, minor and patch ("0.9.1rc2" reads 0.9.1: release-candidate
// suffixes are not told apart); a bounded rule never holds for a version that does not read. A rule with
// tensor_parallel_above holds only when `tensor_parallel` is above it (default 1: a lookup for every layout of a
// device, such as a plan's per family, never meets one; the caller that knows the layout passes its TP).
const VariantRule* variant_rule(const QuantVariant& variant, const std::string& status, const std::string& engine, const std::string& engine_version,
                                const std::string& device_family, bool moe, int64_t tensor_parallel = 1);

}  // namespace preflight::model
