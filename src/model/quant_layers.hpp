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

// Issue 15/16: whether the scheme leaves the MTP layers in the model dtype: an ignore / exclude pattern names "mtp"
// (ModelOpt exports' exclude_modules ["mtp*", "mtp.layers.0*"], the variants' keep_high_precision "mtp"). The
// checkpoints store those layers as mtp.layers.N / model.layers.<last+1>, while preflight names an MTP group like a
// decoder layer's ("model.layers.*..."), so the patterns are read here rather than matched against group names.
bool mtp_kept_unquantized(const QuantScheme& scheme);

}  // namespace preflight::model
