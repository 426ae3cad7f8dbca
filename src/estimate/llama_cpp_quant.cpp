// The tensor-type rules of llama-quantize for the presets the variant catalogue names, read at ggml-org/llama.cpp
// src/llama-quant.cpp (llama_tensor_get_type; the same rules from b5622 to b10453 for these presets). Not modelled: the
// IQ and Q2_K / Q3_K presets, --imatrix (Q4_0 / Q5_0 raise the first n_layer/8 ffn_down to Q4_1 / Q5_1 only with one),
// --output-tensor-type / --token-embedding-type / --tensor-type overrides, Falcon's own ffn_down mix, and the 70B rule
// (attn_v Q4_K -> Q5_K where llama.cpp's model type is 70B).
#include "estimate/llama_cpp_quant.hpp"

#include <algorithm>
#include <map>

#include "model/gguf_reader.hpp"

namespace preflight::estimate {

namespace {

enum class Role { token_embd, output, attn_v, attn_k, attn_output, attn_qkv, ffn_down, other, not_quantized };

bool ends_with(const std::string& s, const std::string& tail) { return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0; }

// convert_hf_to_gguf.py's names for the HF modules whose llama-quantize rule differs from the preset's base type.
Role role_of(const model::WeightGroup& g) {
  if (g.module == "model.embed_tokens") return Role::token_embd;
  if (g.module == "lm_head") return Role::output;
  if (!g.linear || g.cols <= 1) return Role::not_quantized;  // 1-D, ffn_gate_inp, ssm_conv1d: F32 in the file
  if (ends_with(g.module, ".v_proj")) return Role::attn_v;
  if (ends_with(g.module, ".k_proj")) return Role::attn_k;
  if (ends_with(g.module, ".o_proj")) return Role::attn_output;
  if (ends_with(g.module, "qkv_proj") || ends_with(g.module, "query_key_value")) return Role::attn_qkv;
  if (ends_with(g.module, "down_proj")) return Role::ffn_down;
  return Role::other;
}

const char* base_type(GgufPreset p) {
  switch (p) {
    case GgufPreset::q8_0: return "Q8_0";
    case GgufPreset::q6_k: return "Q6_K";
    case GgufPreset::q5_k_m: return "Q5_K";
    case GgufPreset::q4_k_m: return "Q4_K";
    case GgufPreset::q5_0: return "Q5_0";
    case GgufPreset::q4_0: return "Q4_0";
  }
  return "Q8_0";
}

int64_t block_of(const std::string& type) {
  const auto s = model::ggml_type_size_by_name(type);
  return s ? static_cast<int64_t>(s->block_elements) : 1;
}

double bytes_of(const std::string& type, double elements) {
  const auto s = model::ggml_type_size_by_name(type);
  return s ? elements / static_cast<double>(s->block_elements) * static_cast<double>(s->block_bytes) : elements * 2.0;
}

// llama-quant.cpp use_more_bits: the first and last eighth of the layers and every third one between.
bool use_more_bits(int64_t i, int64_t n) { return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2; }

// llama_tensor_get_type for one tensor of row width nx (ne[0]) at position i of n.
std::string tensor_type(GgufPreset p, Role role, int64_t nx, int64_t i, int64_t n, int64_t n_expert, bool* fallback) {
  std::string t = base_type(p);
  const bool k_mix = p == GgufPreset::q4_k_m || p == GgufPreset::q5_k_m;
  switch (role) {
    case Role::output:
      if (nx % block_of(t) != 0) t = "Q8_0";
      else if (t != "Q8_0") t = "Q6_K";
      break;
    case Role::attn_v:
      if (k_mix && use_more_bits(i, n)) t = "Q6_K";
      if (n_expert == 8) t = "Q8_0";
      break;
    case Role::attn_k:
      if (n_expert == 8) t = "Q8_0";
      break;
    case Role::ffn_down:
      if (k_mix && use_more_bits(i, n)) t = "Q6_K";
      break;
    case Role::attn_output:
      if (n_expert == 8 && p == GgufPreset::q4_k_m) t = "Q5_K";
      break;
    case Role::attn_qkv:
      if (p == GgufPreset::q4_k_m) t = "Q5_K";
      else if (p == GgufPreset::q5_k_m) t = "Q6_K";
      break;
    default: break;
  }
  *fallback = false;
  if (nx % block_of(t) != 0) {
    *fallback = true;
    t = t == "Q4_K" ? "Q5_0" : t == "Q5_K" ? "Q5_1" : t == "Q6_K" ? "Q8_0" : "F16";
    if (nx % block_of(t) != 0) t = "F16";
  }
  return t;
}

}  // namespace

std::optional<GgufPreset> gguf_preset_of_variant(const std::string& variant_id) {
  static const std::map<std::string, GgufPreset> k_ids{{"gguf_q8_0", GgufPreset::q8_0},     {"gguf_q6_k", GgufPreset::q6_k},
                                                       {"gguf_q5_k_m", GgufPreset::q5_k_m}, {"gguf_q4_k_m", GgufPreset::q4_k_m},
                                                       {"gguf_q5_0", GgufPreset::q5_0},     {"gguf_q4_0", GgufPreset::q4_0}};
  const auto it = k_ids.find(variant_id);
  if (it == k_ids.end()) return std::nullopt;
  return it->second;
}

const char* gguf_preset_name(GgufPreset preset) {
  switch (preset) {
    case GgufPreset::q8_0: return "Q8_0";
    case GgufPreset::q6_k: return "Q6_K";
    case GgufPreset::q5_k_m: return "Q5_K_M";
    case GgufPreset::q4_k_m: return "Q4_K_M";
    case GgufPreset::q5_0: return "Q5_0";
    case GgufPreset::q4_0: return "Q4_0";
  }
  return "?";
}

GgufPresetBytes gguf_preset_bytes(const model::ModelSpec& m, GgufPreset preset) {
  GgufPresetBytes out;
  out.group_bytes.assign(m.weights.size(), 0.0);
  const int64_t n_layer = m.num_hidden_layers;
  const int64_t n_expert = m.num_experts;
  const bool tied = std::none_of(m.weights.begin(), m.weights.end(), [](const model::WeightGroup& g) { return g.part == model::Part::text && g.module == "lm_head"; });
  std::vector<int64_t> moe_layers, dense_layers;
  for (size_t il = 0; il < m.layers.size(); ++il) (m.layers[il].moe ? moe_layers : dense_layers).push_back(static_cast<int64_t>(il));
  for (size_t gi = 0; gi < m.weights.size(); ++gi) {
    const auto& g = m.weights[gi];
    if (g.part != model::Part::text) continue;
    Role role = role_of(g);
    if (role == Role::token_embd && tied) role = Role::output;  // !qs.has_output: token_embd takes the output's rule
    GgufGroupType row;
    row.module = g.module;
    if (role == Role::not_quantized) {
      row.type = "F32";
      row.bytes = static_cast<double>(g.params()) * 4.0;
    } else {
      const int64_t per_tensor_matrices = g.expert && n_expert > 0 ? n_expert : 1;
      const int64_t tensors = std::max<int64_t>(1, g.count / per_tensor_matrices);
      const double elements = static_cast<double>(g.rows) * static_cast<double>(g.cols) * static_cast<double>(per_tensor_matrices);
      // Layer positions for use_more_bits: llama.cpp parses 'blk.N.' for MoE models, else counts tensors in order.
      std::vector<int64_t> index(static_cast<size_t>(tensors));
      const bool shared = g.module.find("shared_expert") != std::string::npos;
      const std::vector<int64_t>& blocks = (g.expert || shared) ? moe_layers : dense_layers;
      const bool by_block = n_expert > 1 && static_cast<int64_t>(blocks.size()) == tensors;
      for (int64_t k = 0; k < tensors; ++k) index[static_cast<size_t>(k)] = by_block ? blocks[static_cast<size_t>(k)] : k;
      const int64_t n = role == Role::ffn_down ? n_layer : tensors;  // n_ffn_down = n_layer; n_attention_wv = the attn_v tensors
      std::map<std::string, double> by_type;
      for (int64_t k = 0; k < tensors; ++k) {
        bool fallback = false;
        const std::string t = tensor_type(preset, role, g.cols, index[static_cast<size_t>(k)], n, n_expert, &fallback);
        row.tensor_bytes.push_back(bytes_of(t, elements));
        by_type[t] += row.tensor_bytes.back();
        row.fallback_tensors += fallback ? 1 : 0;
      }
      for (const auto& [t, b] : by_type) {
        row.bytes += b;
        if (row.type.empty() || b > by_type[row.type]) row.type = t;
      }
    }
    out.group_bytes[gi] = row.bytes;
    out.text_bytes += row.bytes;
    out.fallback_tensors += row.fallback_tensors;
    out.groups.push_back(std::move(row));
  }
  return out;
}

}  // namespace preflight::estimate
