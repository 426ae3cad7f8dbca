// The encoder pass of vLLM's profile run, tensor by tensor (issue 15, vis28). Read in vLLM main from 3bd9c4915
// (2025-12-15) to ad32608e2 (2026-06-16), the same code throughout for what is counted here
// (vllm/model_executor/models/qwen2_5_vl.py Qwen2_5_VisionAttention.forward, Qwen2_5_VisionBlock.forward;
// qwen3_vl.py Qwen3_VisionBlock.forward, Qwen3_VisionTransformer.forward, Qwen3VLForConditionalGeneration
// _process_image_input). Qwen3-VL's blocks use Qwen2.5-VL's attention module.
//
// The attention at its peak, the moment the kernel's output is copied once more:
//  - the block input x and norm1(x), the call's argument (both whole: the residual stream is not split by TP);
//  - the qkv projection's output, 3 x hidden / TP (q, k, v are views of it);
//  - q and k rearranged to "(two b) s head head_dim", a copy of a strided slice (2 x hidden / TP), and the rotated
//    copy ApplyRotaryEmb returns (2 x hidden / TP);
//  - the kernel's output (hidden / TP: FlashAttention's varlen kernel keeps no score matrix). vLLM's ViT attention on
//    CUDA is FlashAttention where the wheel's flash-attn kernels run (vllm/v1/attention/ops/vit_attn_wrappers.py; the
//    platform's get_vit_attn_backend), and there the final `rearrange(...).contiguous()` is a view at batch 1: no
//    further copy. (SDPA, the fallback, runs image by image and `torch.cat`s the outputs: one copy more, hidden / TP,
//    which is not counted: which backend a card runs is not modelled, and the count follows the default path, not the
//    figures of any case set.)
// The MLP at its peak, the activation's output beside the first projection's:
//  - Qwen3-VL family: x, norm2(x), linear_fc1's output and the GELU's (intermediate / TP each);
//  - Qwen2.5-VL: x, the attention's output x_attn, the fused norm's output and its residual (norm2(x, residual=x_attn)),
//    gate_up's output (2 x intermediate / TP) and act_and_mul's (intermediate / TP).
// Through the whole forward: the pixel values, fp32 in the batched dummy input and the tower-dtype copy
// `pixel_values.type(self.visual.dtype)`; Qwen3-VL's interpolated position embeddings (`pos_embeds`, a local of the
// forward); the deepstack features, [patches / merge^2, out_hidden] each (out_hidden is the text hidden size), all
// alive from the last deepstack index to the merger.
// Not counted: the rotary cos / sin tables (head_dim fp32 values a patch, about 1% of the pass; the spec carries no
// vision head count), Qwen2.5-VL's window reordering, allocator rounding.
#include "estimate/vision_pass.hpp"

#include <algorithm>

#include "base/units.hpp"

namespace preflight::estimate::terms {

VisionBlockKind vision_block_kind(const model::ModelSpec& m) {
  for (const auto& g : m.weights) {
    if (g.part != model::Part::vision) continue;
    if (g.module == "model.visual.blocks.*.mlp.linear_fc1") return VisionBlockKind::qwen3_vl;
    if (g.module == "model.visual.blocks.*.mlp.gate_proj") return VisionBlockKind::qwen2_5_vl;
  }
  return VisionBlockKind::not_derived;
}

std::optional<VisionPassPerPatch> vision_pass_per_patch(const model::ModelSpec& m, int64_t tp, int64_t pixels_per_patch, double dtype_bytes) {
  VisionPassPerPatch p;
  p.kind = vision_block_kind(m);
  if (p.kind == VisionBlockKind::not_derived) return std::nullopt;
  const double h = static_cast<double>(m.vision_hidden_size), inter = static_cast<double>(m.vision_intermediate_size);
  const double t = static_cast<double>(std::max<int64_t>(1, tp));
  p.attention_values = 2.0 * h + 8.0 * h / t;
  if (p.kind == VisionBlockKind::qwen3_vl) {
    p.mlp_values = 2.0 * h + 2.0 * inter / t;
    p.position_values = h;
    p.deepstack_values = static_cast<double>(m.vision_deepstack_levels) * static_cast<double>(m.hidden_size) /
                         static_cast<double>(std::max<int64_t>(1, m.vision_patches_per_token));
  } else {
    p.mlp_values = 4.0 * h + 3.0 * inter / t;
  }
  p.pixel_bytes = static_cast<double>(pixels_per_patch) * (4.0 + dtype_bytes);
  p.bytes = (std::max(p.attention_values, p.mlp_values) + p.position_values + p.deepstack_values) * dtype_bytes + p.pixel_bytes;
  return p;
}

std::string vision_pass_rule(const model::ModelSpec& m, const VisionPassPerPatch& p, int64_t pixels_per_patch, double dtype_bytes) {
  const bool attention_peak = p.attention_values >= p.mlp_values;
  const bool q3 = p.kind == VisionBlockKind::qwen3_vl;
  return format("live tensors a patch at the %s peak (%s): (max(attention 2 x hidden + 8 x hidden / TP = %.0f, MLP %s = %.0f)%s%s) values x %.0f B "
                  "+ %lld pixel values x (4 + %.0f) B = %.0f B",
                  attention_peak ? "attention" : "MLP", q3 ? "Qwen3-VL tower" : "Qwen2.5-VL tower", p.attention_values,
                  q3 ? "2 x hidden + 2 x intermediate / TP" : "4 x hidden + 3 x intermediate / TP", p.mlp_values,
                  q3 ? format(" + position embeddings %.0f", p.position_values).c_str() : "",
                  p.deepstack_values > 0 ? format(" + deepstack features %lld x %lld / %lld = %.0f", static_cast<long long>(m.vision_deepstack_levels),
                                                  static_cast<long long>(m.hidden_size), static_cast<long long>(m.vision_patches_per_token), p.deepstack_values).c_str()
                                         : "",
                  dtype_bytes, static_cast<long long>(pixels_per_patch), dtype_bytes, p.bytes);
}

}  // namespace preflight::estimate::terms
