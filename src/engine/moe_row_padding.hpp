// engine/moe_row_padding: the row padding an engine gives an unquantized MoE layer's expert weights on one platform at
// load (issue 15, acc29), read from engines.json overheads[].moe_row_padding.
//
// vLLM on ROCm pads the fused expert weights of UnquantizedFusedMoEMethod (w13 [experts, 2 x intermediate / TP, hidden],
// w2 [experts, hidden, intermediate / TP]) "for better performance on ROCm": where VLLM_ROCM_MOE_PADDING is on (default
// 1) and a weight's row, stride(-2) x element bytes, is a multiple of 512 bytes, `_maybe_pad_weight` replaces it with
// F.pad(weight, (0, 256 // element bytes))[..., :-pad], a view that keeps the padded storage, so every row holds 256
// bytes more for the life of the engine and inside "Model loading took" (docs/memory-model.md, "ROCm: the expert row
// padding"). Quantized expert methods (FP8, MXFP4, ...) do not call it. The estimate (terms::moe_row_padding_bytes in
// estimate/fit_terms.cpp) sizes it from the model's shapes.
#pragma once

#include <string>

#include "base/error.hpp"
#include "base/json_util.hpp"
#include "engine/engine_profile.hpp"

namespace preflight::engine {

struct MoeRowPadding {
  std::string engine;                  // "vllm"
  EngineProfile::VersionRule applies;  // the versions read with the padding (version_source)
  double pad_bytes = 0;                // bytes added to each qualifying row (256)
  double row_bytes_multiple = 0;       // a row qualifies when its bytes are a multiple of this (512)
  std::string switch_env;              // the environment switch that turns it off ("VLLM_ROCM_MOE_PADDING=0")
  std::string source;                  // where the rule is read
  bool operator==(const MoeRowPadding&) const = default;

  // Whether engine `e` pads: its engine and a version of `applies`.
  bool applied_by(const EngineProfile& e) const { return e.engine == engine && e.rule_applies(applies); }
};

// overheads[].moe_row_padding; corrupt errors name the file and key.
Expected<MoeRowPadding> parse_moe_row_padding(const JsonObject& r, const std::string& origin);

}  // namespace preflight::engine
