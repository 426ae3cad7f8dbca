// engine/speculative_quantization: V0's --speculative-model-quantization as the version's argparse takes it (hard36; a
// header of its own so that engine/quantization_methods.hpp, which most of the tree includes, stays as it is).
#pragma once

#include <string>

#include "engine/quantization_methods.hpp"

namespace preflight::engine {

// argparse's refusal of V0's --speculative-model-quantization (vllm/engine/arg_utils.py v0.6.0 - v0.8.2:
// 'type=nullable_str, choices=[*QUANTIZATION_METHODS, None]', the choices of --quantization without a platform's
// additions), or "" when the version's list takes `method` ("None" and "" are None), no list covers the version, or
// the covering list is not argparse's. Defined in quantization_methods.cpp.
std::string speculative_quantization_choice_refusal(const QuantizationMethodCatalog& catalog, const std::string& engine_name, const Version& version,
                                                    const std::string& method);

}  // namespace preflight::engine
