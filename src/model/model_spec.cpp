#include "model/model_spec.hpp"
#include "model/quant_layers.hpp"

#include <algorithm>
#include <array>

#include "base/text.hpp"
#include "base/units.hpp"

namespace preflight::model {

const char* layer_kind_name(LayerKind kind) {
  static constexpr std::array<const char*, static_cast<size_t>(LayerKind::count_)> k_names{
      "full_attention", "sliding_attention", "mla_attention", "linear_attention", "mamba", "mlp_only"};
  return k_names[static_cast<size_t>(kind)];
}

ParamCounts count_params(const ModelSpec& spec) {
  ParamCounts c;
  for (const auto& g : spec.weights) {
    const int64_t n = g.params();
    switch (g.part) {
      case Part::text: c.text += n; break;
      case Part::vision: c.vision += n; break;
      case Part::mtp: c.mtp += n; break;
    }
    if (g.part == Part::text && (g.module == "model.embed_tokens" || g.module == "lm_head")) c.embedding += n;
    if (g.part == Part::text) c.active += g.expert ? static_cast<int64_t>(static_cast<double>(n) * g.active_fraction) : n;
  }
  c.total = c.text + c.vision;
  c.active_matmul = c.active;
  if (!spec.tie_word_embeddings)
    for (const auto& g : spec.weights)
      if (g.part == Part::text && g.module == "model.embed_tokens") c.active_matmul -= g.params();
  return c;
}

namespace {
// vLLM's prefix of the module `group` stands for at layer `index` (the first '*'; a later one, an expert's or a vision
// block's index, reads 0): the fused qkv_proj / gate_up_proj of the Llama / Qwen packed_modules_mapping, a FusedMoE's
// "...mlp.experts" for routed experts, "mtp." for an MTP layer (Qwen3.5 / Qwen3-Next checkpoints name theirs
// mtp.layers.N). VL checkpoints' "language_model" part is not restored (normalize_module drops it).
std::string vllm_prefix(const WeightGroup& group, const std::string& index) {
  std::string m = group.module;
  if (group.expert) {
    const size_t at = m.find(".experts");
    if (at != std::string::npos) m = m.substr(0, at + 8);
  } else {
    const size_t dot = m.rfind('.');
    const std::string leaf = dot == std::string::npos ? m : m.substr(dot + 1);
    const std::string head = dot == std::string::npos ? std::string() : m.substr(0, dot + 1);
    if (leaf == "q_proj" || leaf == "k_proj" || leaf == "v_proj") m = head + "qkv_proj";
    if (leaf == "gate_proj" || leaf == "up_proj") m = head + "gate_up_proj";
  }
  if (group.part == Part::mtp && starts_with(m, "model.")) m = starts_with(m, "model.mtp.") ? m.substr(6) : "mtp." + m.substr(6);
  const size_t star = m.find('*');
  if (star != std::string::npos) m.replace(star, 1, index);
  for (auto& ch : m)
    if (ch == '*') ch = '0';
  return m;
}
}  // namespace

double gptq_dynamic_group_bytes(const ModelSpec& spec, const QuantScheme& scheme, WeightFormat base, const WeightGroup& group) {
  const int b = dtype_bits(spec.dtype) / 8;
  const int64_t layers = group.module.find('*') == std::string::npos ? 1 : (group.part == Part::mtp ? spec.mtp_layers : spec.num_hidden_layers);
  const int64_t n = std::max<int64_t>(1, layers);
  std::vector<std::string> prefixes;
  prefixes.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) prefixes.push_back(vllm_prefix(group, std::to_string(i)));
  const double sum = gptq_dynamic_linear_bytes_sum(scheme, base, prefixes, group.rows, group.cols, b);
  return sum / static_cast<double>(n) * static_cast<double>(group.count);
}

double weight_group_bytes(const ModelSpec& spec, const WeightGroup& group) {
  if (group.stored_bytes > 0) return group.stored_bytes * static_cast<double>(group.count);
  const int b = dtype_bits(spec.dtype) / 8;
  // GGUF presets quantize embeddings and the output head too; 1-D tensors (norms) stay unquantized. A preset whose
  // experts have a ggml type of their own (gguf_mxfp4: MXFP4 experts, Q8_0 the rest) sizes them in it.
  if (spec.quant.linear_format == WeightFormat::packed_bits && group.cols > 1 && !(group.expert && spec.quant.expert_format != WeightFormat::packed_bits))
    return linear_weight_bytes(WeightFormat::packed_bits, group.rows, group.cols, spec.quant, b) * static_cast<double>(group.count);
  if (!group.linear) return static_cast<double>(group.params()) * b;
  const WeightFormat f = module_format(spec.quant, group.module, group.expert);
  if (spec.quant.per_layer_rules()) return gptq_dynamic_group_bytes(spec, spec.quant, f, group);
  return linear_weight_bytes(f, group.rows, group.cols, spec.quant, b) * static_cast<double>(group.count);
}

WeightBytes compute_weight_bytes(const ModelSpec& spec) {
  WeightBytes out;
  // Issue 16 (quant33): MTP layers a scheme keeps unquantized (mtp_kept_unquantized) are stored in the model dtype, as
  // estimate's MTP term loads them; before, their groups took the decoder layers' formats (nvidia/Qwen3.6-35B-A3B-NVFP4
  // excludes "mtp*": its MTP layer, 1.69 GB in bf16, was sized as 0.50 GB of NVFP4 experts).
  ModelSpec mtp_spec;
  const bool mtp_unquantized = spec.quant.quantized() && mtp_kept_unquantized(spec.quant);
  if (mtp_unquantized) mtp_spec.dtype = spec.dtype;
  for (const auto& g : spec.weights) {
    if (g.part == Part::mtp) {
      out.mtp += g.stored_bytes <= 0 && mtp_unquantized ? weight_group_bytes(mtp_spec, g) : weight_group_bytes(spec, g);
      continue;
    }
    const double bytes = weight_group_bytes(spec, g);
    out.total += bytes;
    const WeightFormat f = g.linear ? module_format(spec.quant, g.module, g.expert) : WeightFormat::native;
    out.by_format[!g.stored_format.empty() ? g.stored_format : f == WeightFormat::native ? dtype_name(spec.dtype) : weight_format_name(f)] += bytes;
  }
  return out;
}

int64_t kv_bytes_per_token(const ModelSpec& spec, int cache_dtype_bytes) {
  int64_t total = 0;
  for (const auto& l : spec.layers) {
    if (l.kv_shared) continue;
    switch (l.kind) {
      case LayerKind::full_attention:
      case LayerKind::sliding_attention:
        total += l.num_key_value_heads * (l.head_dim_k + l.head_dim_v) * cache_dtype_bytes;
        break;
      case LayerKind::mla_attention:
        total += l.mla_cache_dim * cache_dtype_bytes;
        break;
      default: break;
    }
  }
  return total;
}

int64_t state_bytes_per_sequence(const ModelSpec& spec, int conv_dtype_bytes) {
  int64_t total = 0;
  for (const auto& l : spec.layers) {
    if (l.kind != LayerKind::linear_attention && l.kind != LayerKind::mamba) continue;
    total += l.conv_channels * l.conv_len * conv_dtype_bytes;
    total += l.ssm_heads * l.ssm_head_dim * l.ssm_state_dim * (dtype_bits(l.ssm_dtype) / 8);
  }
  return total;
}

int64_t count_layers(const ModelSpec& spec, LayerKind kind) {
  int64_t n = 0;
  for (const auto& l : spec.layers) n += l.kind == kind ? 1 : 0;
  return n;
}

}  // namespace preflight::model
