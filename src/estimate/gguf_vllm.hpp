// estimate/gguf_vllm: the bytes vLLM holds for a GGUF model's weights, tensor by tensor (issue 16, llamacpp34). Before,
// a GGUF preset served by vLLM (plan's GGUF rows, fit --variant gguf_*) took the preset's file-average bits per weight on
// every 2-D weight, and a .gguf file its bytes as stored. vLLM's GGUF loader (vllm/model_executor/model_loader/
// gguf_loader.py, weight_utils.gguf_quant_weights_iterator; layers/quantization/gguf.py, read at v0.6.0 - v0.23.0 of
// efschu/vllm, the last in-tree release before the vllm-gguf-plugin move) does this:
// - a quantized tensor (Q4_0 .. Q8_0, Q2_K .. Q6_K, IQ*) stays in its own ggml type as raw bytes and is dequantized on
//   the fly: linear layers (GGUFLinearMethod), the vocab embedding and the LM head (GGUFEmbeddingMethod: the rows a batch
//   picks are dequantized, not the table), routed experts (GGUFMoEMethod). Nothing quantized is dequantized at load;
// - an F32 / F16 / BF16 tensor (the norms, the MoE router that convert_hf_to_gguf.py writes in F32) is copied into a
//   parameter of the model dtype (from 0.10.2 the loader lists such linears as unquantized_modules);
// - from 0.9.0 (PR #18646, CUDA-graph compatible GGUF: GGUFLinearMethod._create_padded_weight_param) the shards of a
//   merged linear (q/k/v in QKVParallelLinear, gate/up in MergedColumnParallelLinear) are one zero-padded tensor: every
//   shard's rows at the widest shard's row bytes. Q4_K_M gives attn_v Q6_K on its use_more_bits layers, so q and k are
//   held at Q6_K's row width there. The out-of-tree vllm-gguf-plugin that serves GGUF from vLLM 0.24.0 keeps the same
//   padding (vllm_gguf_plugin/quantization/linear.py GGUFLinearMethod._create_padded_weight_param).
// The ggml type of each tensor of a preset comes from estimate/llama_cpp_quant (llama-quantize's rules); a .gguf file
// states its own (WeightGroup::stored_format).
#pragma once

#include <optional>
#include <vector>

#include "engine/engine_profile.hpp"
#include "estimate/llama_cpp_quant.hpp"
#include "model/model_spec.hpp"
#include "model/quant_scheme.hpp"

namespace preflight::estimate {

// The preset of a GGUF variant's scheme (quant_variants.json gguf_*: method "gguf", source "... (variant gguf_q4_k_m)");
// nullopt for any other scheme and for the presets llama_cpp_quant does not model (Q4_K_S, Q3_K_M, MXFP4_MOE, ...).
std::optional<GgufPreset> gguf_preset_of_scheme(const model::QuantScheme& scheme);

struct VllmGgufBytes {
  std::vector<double> stored;  // per m.weights group: the bytes in the GGUF file
  std::vector<double> loaded;  // per m.weights group: the bytes vLLM holds for it after loading
  double padding_bytes = 0;    // of `loaded`: the zero padding of merged linears (0.9.0 on)
  double unquantized_bytes = 0;  // of `loaded`: the F32 / F16 / BF16 tensors, in the model dtype
};

// For `m` served by vLLM (`engine`) from a GGUF: the file's own tensors (m.quant.method "gguf" and stored bytes on its
// groups) or, for a config sized in a preset (`scheme` a GGUF variant's), the tensors llama-quantize writes. Groups
// outside the text part of a preset (a vision tower: the mmproj file, F16) are in the model dtype. nullopt: not a GGUF,
// or a preset that llama_cpp_quant does not model (the caller keeps the file average).
std::optional<VllmGgufBytes> vllm_gguf_bytes(const model::ModelSpec& m, const model::QuantScheme& scheme, const engine::EngineProfile& engine);

}  // namespace preflight::estimate
