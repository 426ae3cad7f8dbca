// vLLM's hold on a GGUF model's tensors; the rules and their sources are in the header.
#include "estimate/gguf_vllm.hpp"

#include <algorithm>
#include <map>
#include <string>

#include "model/dtype.hpp"

namespace preflight::estimate {

namespace {

bool gguf_vllm_ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// The merged linear a dense weight is a shard of, named by its prefix ("" for none): vLLM's QKVParallelLinear takes the
// q/k/v projections, MergedColumnParallelLinear gate/up (the dense MLP and a shared expert alike). HF names for a config
// sized in a preset, GGUF names (blk.*.attn_q.weight) for a .gguf file.
std::string merged_linear_of(const std::string& module) {
  static const std::pair<const char*, const char*> k_shards[] = {
      {".q_proj", ".qkv"},           {".k_proj", ".qkv"},           {".v_proj", ".qkv"},
      {".gate_proj", ".gate_up"},    {".up_proj", ".gate_up"},      {".attn_q.weight", ".qkv"},
      {".attn_k.weight", ".qkv"},    {".attn_v.weight", ".qkv"},    {".ffn_gate.weight", ".gate_up"},
      {".ffn_up.weight", ".gate_up"}, {".ffn_gate_shexp.weight", ".gate_up_shexp"}, {".ffn_up_shexp.weight", ".gate_up_shexp"}};
  for (const auto& [leaf, merged] : k_shards) {
    const std::string tail(leaf);
    if (gguf_vllm_ends_with(module, tail)) return module.substr(0, module.size() - tail.size()) + merged;
  }
  return {};
}

// One tensor of the file: the group it belongs to, its elements and stored bytes.
struct GgufPiece {
  size_t group = 0;
  double elements = 0;
  double bytes = 0;
  bool quantized = true;
};

// The shards of each merged linear, each a list of its tensors in layer order.
using MergedShards = std::map<std::string, std::map<std::string, std::vector<GgufPiece>>>;

// GGUFLinearMethod._create_padded_weight_param: per layer, every shard's rows at the widest shard's bytes per value. A
// merged linear with an unquantized shard is not padded (its shards would differ in dtype).
void pad_merged_linears(const MergedShards& merged, VllmGgufBytes& out) {
  for (const auto& [key, shards] : merged) {
    if (shards.size() < 2) continue;
    const size_t layers = shards.begin()->second.size();
    if (!std::all_of(shards.begin(), shards.end(), [&](const auto& s) { return s.second.size() == layers; })) continue;
    for (size_t l = 0; l < layers; ++l) {
      double widest = 0;
      bool quantized = true;
      for (const auto& [name, pieces] : shards) {
        quantized = quantized && pieces[l].quantized && pieces[l].elements > 0;
        if (pieces[l].elements > 0) widest = std::max(widest, pieces[l].bytes / pieces[l].elements);
      }
      if (!quantized) continue;
      for (const auto& [name, pieces] : shards) {
        const double extra = pieces[l].elements * widest - pieces[l].bytes;
        out.loaded[pieces[l].group] += extra;
        out.padding_bytes += extra;
      }
    }
  }
}

}  // namespace

std::optional<GgufPreset> gguf_preset_of_scheme(const model::QuantScheme& scheme) {
  if (scheme.method != "gguf") return std::nullopt;
  // quant_variant.cpp names a variant's scheme source "<file> (variant <id>)".
  const std::string tag = "(variant ";
  const size_t at = scheme.source.rfind(tag);
  if (at == std::string::npos) return std::nullopt;
  const size_t end = scheme.source.find(')', at);
  if (end == std::string::npos) return std::nullopt;
  return gguf_preset_of_variant(scheme.source.substr(at + tag.size(), end - at - tag.size()));
}

std::optional<VllmGgufBytes> vllm_gguf_bytes(const model::ModelSpec& m, const model::QuantScheme& scheme, const engine::EngineProfile& engine) {
  const bool file = m.quant.method == "gguf" && scheme.method == "gguf" &&
                    std::any_of(m.weights.begin(), m.weights.end(), [](const model::WeightGroup& g) { return g.stored_bytes > 0; });
  const std::optional<GgufPreset> preset = file ? std::nullopt : gguf_preset_of_scheme(scheme);
  if (!file && !preset) return std::nullopt;
  const double dtype_bytes = static_cast<double>(model::dtype_bits(m.dtype) / 8);
  VllmGgufBytes out;
  out.stored.assign(m.weights.size(), 0.0);
  out.loaded.assign(m.weights.size(), 0.0);
  MergedShards merged;
  const auto add = [&](const GgufPiece& p, const model::WeightGroup& g) {
    out.stored[p.group] += p.bytes;
    const double held = p.quantized ? p.bytes : p.elements * dtype_bytes;
    out.loaded[p.group] += held;
    if (!p.quantized) out.unquantized_bytes += held;
    if (g.expert) return;  // routed experts: one w13 of one ggml type (GGUFMoEMethod), no padding
    if (const std::string key = merged_linear_of(g.module); !key.empty()) merged[key][g.module].push_back(p);
  };
  if (file) {
    for (size_t i = 0; i < m.weights.size(); ++i) {
      const auto& g = m.weights[i];
      const double elements = static_cast<double>(g.params());
      const bool unquantized = g.stored_format == "F32" || g.stored_format == "F16" || g.stored_format == "BF16";
      const double bytes = g.stored_bytes > 0 ? g.stored_bytes * static_cast<double>(g.count) : elements * dtype_bytes;
      add({.group = i, .elements = elements, .bytes = bytes, .quantized = !unquantized && g.stored_bytes > 0}, g);
    }
  } else {
    const GgufPresetBytes mix = gguf_preset_bytes(m, *preset);
    size_t text = 0;  // mix.groups holds the text groups in m.weights order
    for (size_t i = 0; i < m.weights.size(); ++i) {
      const auto& g = m.weights[i];
      const double elements = static_cast<double>(g.params());
      if (g.part != model::Part::text || text >= mix.groups.size()) {
        add({.group = i, .elements = elements, .bytes = elements * dtype_bytes, .quantized = false}, g);  // the mmproj file: F16
        continue;
      }
      const GgufGroupType& typed = mix.groups[text++];
      if (typed.tensor_bytes.empty()) {
        add({.group = i, .elements = elements, .bytes = typed.bytes, .quantized = false}, g);  // F32 in the file
        continue;
      }
      const double per_tensor = elements / static_cast<double>(typed.tensor_bytes.size());
      for (const double b : typed.tensor_bytes) add({.group = i, .elements = per_tensor, .bytes = b, .quantized = true}, g);
    }
  }
  if (engine::Version{0, 9, 0} <= engine.rule_version()) pad_merged_linears(merged, out);  // the named version, else the profile's newest
  return out;
}

}  // namespace preflight::estimate
