// model/quant_layers: per-layer weight sizing of one weight group under per-layer quantization rules (GPTQ `dynamic`,
// AutoRound's extra_config), for model_spec's weight groups. Kept out of quant_scheme.hpp, which most of the tree
// includes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/quant_scheme.hpp"

namespace preflight::model {

// The untied output head's module as hf_config names it.
inline constexpr std::string_view k_lm_head = "lm_head";

// The sum of gptq_dynamic_linear_bytes over `prefixes` (one concrete module name per layer of a group), with the
// scheme's rule list found once for all of them instead of once per prefix: the same bytes, in time linear in the
// number of rules plus the prefixes' matches.
double gptq_dynamic_linear_bytes_sum(const QuantScheme& scheme, WeightFormat base, const std::vector<std::string>& prefixes, int64_t rows,
                                     int64_t cols, int model_dtype_bytes);

}  // namespace preflight::model
