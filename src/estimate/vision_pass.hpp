// estimate/vision_pass: the vision encoder's dummy pass in vLLM's profile run, derived tensor by tensor (issue 15,
// vis28): what one patch keeps alive at the pass's peak, per tower family whose forward was read in vLLM's code.
// Internal to estimate/ (fit_terms.cpp's encoder_pass uses it); pure functions of the model spec.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "model/model_spec.hpp"

namespace preflight::estimate::terms {

// The tower families whose encoder forward is derived. `not_derived`: the generic ViT (CLIP / SigLIP towers of LLaVA,
// Gemma 3), whose pass keeps the platform's fitted vision factor.
enum class VisionBlockKind { not_derived, qwen3_vl, qwen2_5_vl };

// The family from the tower's MLP as model/vision_tower lays it out: Qwen3-VL / Qwen3.5 / Qwen3.6 blocks have
// `mlp.linear_fc1` (fc1, GELU, fc2), Qwen2.5-VL blocks a gated `mlp.gate_proj` / `up_proj`.
VisionBlockKind vision_block_kind(const model::ModelSpec& m);

// Per patch, per rank, at the pass's peak: values in the tower's dtype for each moment of a block, the tensors alive
// through the whole forward, and the pixel bytes. All split parts are divided by `tp` (vLLM's parallel linears:
// q, k, v heads and the MLP intermediate); the residual stream, norms, position embeddings, deepstack features and
// pixel values are whole on every rank.
struct VisionPassPerPatch {
  VisionBlockKind kind = VisionBlockKind::not_derived;
  double attention_values = 0;   // the block at the attention kernel's output copy
  double mlp_values = 0;         // the block at the MLP's activation
  double position_values = 0;    // learned position embeddings kept by the forward (Qwen3-VL family)
  double deepstack_values = 0;   // deepstack features kept from their block to the end (Qwen3-VL)
  double pixel_bytes = 0;        // pixel values: fp32 as batched plus the copy in the tower's dtype
  double bytes = 0;              // max(attention, mlp) + position + deepstack values x dtype bytes + pixel bytes
};

// The derivation for `m` at tensor parallel `tp` (>= 1), with `pixels_per_patch` pixel values (the patch embedding's
// input width) and `dtype_bytes` for the tower's dtype; nullopt for a family that is not derived.
std::optional<VisionPassPerPatch> vision_pass_per_patch(const model::ModelSpec& m, int64_t tp, int64_t pixels_per_patch, double dtype_bytes);

// The terms of `p` named, with their values per patch (the fit's provenance). Built only where the fit explains itself:
// formatting it on every fit cost the whole-catalogue plan 52 M instructions (4.8%).
std::string vision_pass_rule(const model::ModelSpec& m, const VisionPassPerPatch& p, int64_t pixels_per_patch, double dtype_bytes);

}  // namespace preflight::estimate::terms
