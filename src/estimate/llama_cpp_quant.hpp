// estimate/llama_cpp_quant: the ggml type llama-quantize gives each tensor of a GGUF preset, and so the bytes of the
// file it writes, tensor group by tensor group. Issue 16 (llamacpp32): a preset is not one bits-per-weight figure. The
// preset's base type (Q4_K for Q4_K_M) is raised for some tensors (the output head to Q6_K, attn_v and ffn_down of the
// use_more_bits layers to Q6_K in Q4_K_M / Q5_K_M, attn_k / attn_v to Q8_0 in 8-expert models), and a K-quant (256
// values a block, QK_K) that does not divide a tensor's row width falls back to a 32-value type (Q4_K -> Q5_0, Q5_K ->
// Q5_1, Q6_K -> Q8_0; F16 where 32 does not divide it either). Source: ggml-org/llama.cpp src/llama-quant.cpp,
// llama_tensor_get_type (the role rules, use_more_bits, the 'convert_incompatible_tensor' fallback) and
// llama_model_quantize_impl (n_attention_wv counted over attn_v / attn_qkv / attn_kv_b, n_ffn_down = n_layer; 1-D
// tensors, ffn_gate_inp and ssm_conv1d are never quantized and convert_hf_to_gguf.py writes them in F32).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/model_spec.hpp"

namespace preflight::estimate {

// The llama-quantize presets the variant catalogue names (data/variants/quant_variants.json gguf_*).
enum class GgufPreset { q8_0, q6_k, q5_k_m, q4_k_m, q5_0, q4_0 };
// The preset of a variant id ("gguf_q4_k_m"); nullopt for any other id.
std::optional<GgufPreset> gguf_preset_of_variant(const std::string& variant_id);
const char* gguf_preset_name(GgufPreset preset);

// One weight group of the file as llama-quantize writes it.
struct GgufGroupType {
  std::string module;   // the ModelSpec group (HF names)
  std::string type;     // ggml type of its tensors ("Q6_K"); for a group split over layers, the type most of its bytes take
  double bytes = 0;     // all of its tensors
  int64_t fallback_tensors = 0;  // tensors whose K-quant did not divide the row width (llama-quantize's n_fallback)
  // Issue 16 (llamacpp34): each tensor's bytes in layer order (one per layer; a routed-expert group's tensor holds all its
  // experts); empty for a group llama-quantize leaves unquantized (F32).
  std::vector<double> tensor_bytes;
};
struct GgufPresetBytes {
  double text_bytes = 0;  // every text tensor of the file
  std::vector<GgufGroupType> groups;  // in the ModelSpec's group order (text groups only)
  std::vector<double> group_bytes;    // per ModelSpec weight group; 0 for groups outside the text part
  int64_t fallback_tensors = 0;
};

// The bytes of `m`'s text tensors in `preset`. Roles follow convert_hf_to_gguf.py's tensor names: embed_tokens ->
// token_embd, lm_head -> output (a tied model's token_embd takes the output's rule), *.v_proj -> attn_v, *.k_proj ->
// attn_k, *.o_proj -> attn_output, *qkv_proj -> attn_qkv, *down_proj (dense, shared and routed experts) -> ffn_down.
// A group's tensors are one per layer (count / experts for a routed-expert group); their layer indices for
// use_more_bits are the MoE layers' block indices for expert and shared-expert groups of an MoE model (llama.cpp parses
// 'blk.N.' there), else 0 .. n-1 in order (llama.cpp's running counter).
GgufPresetBytes gguf_preset_bytes(const model::ModelSpec& m, GgufPreset preset);

}  // namespace preflight::estimate
