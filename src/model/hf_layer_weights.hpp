// Private to src/model: the weight list parse_hf_config fills and the per-layer weight builders
// (hf_layer_weights.cpp) it calls for decoder and MTP layers.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/checked.hpp"
#include "base/error.hpp"
#include "model/architecture_traits.hpp"
#include "model/model_spec.hpp"

namespace preflight::model::hf_detail {

// Accumulates weight groups, merging identical (module, shape) entries across layers.
// Every group's rows x cols x count and the running total of all groups are checked: the first
// module whose parameter count overflows int64 is remembered and parse_hf_config reports it.
class WeightList {
 public:
  void add(WeightGroup g) {
    if (g.rows <= 0 || g.cols <= 0 || g.count <= 0) return;
    const auto total = checked_total(g.rows, g.cols, g.count);
    if (!total) return overflow(g.module);
    for (auto& existing : m_groups) {
      if (existing.module == g.module && existing.rows == g.rows && existing.cols == g.cols && existing.part == g.part) {
        existing.count += g.count;  // below 2^63: its parameters are part of the checked total
        m_total_params = *total;
        return;
      }
    }
    m_total_params = *total;
    m_groups.push_back(std::move(g));
  }
  // The first module whose parameter count (or the model total) overflows; empty when none did.
  const std::string& overflowed() const { return m_overflowed; }
  void linear(const std::string& module, int64_t rows, int64_t cols, Shard shard, Part part, int64_t kv_heads = 0) {
    add(WeightGroup{module, rows, cols, 1, shard, part, true, false, 1.0, kv_heads});
  }
  void vector(const std::string& module, int64_t rows, Shard shard, Part part) {
    add(WeightGroup{module, rows, 1, 1, shard, part, false, false, 1.0, 0});
  }
  std::vector<WeightGroup> take() { return std::move(m_groups); }

 private:
  // The model's parameter total with rows x cols x count added, when both stay below 2^63.
  std::optional<uint64_t> checked_total(int64_t rows, int64_t cols, int64_t count) const {
    const auto product = checked_mul(static_cast<uint64_t>(rows), static_cast<uint64_t>(cols));
    const auto params = product ? checked_mul(*product, static_cast<uint64_t>(count)) : std::nullopt;
    const auto total = params ? checked_add(m_total_params, *params) : std::nullopt;
    if (!total || *total > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
    return total;
  }
  void overflow(const std::string& module) {
    if (m_overflowed.empty()) m_overflowed = module;
  }
  std::vector<WeightGroup> m_groups;
  uint64_t m_total_params = 0;
  std::string m_overflowed;
};

struct TextDims {
  int64_t hidden = 0, heads = 0, kv_heads = 0, head_dim = 0, intermediate = 0, vocab = 0;
};

struct MoeDims {
  int64_t experts = 0, top_k = 0, inter = 0, shared_inter = 0;
  bool score_bias = false;
};

// Everything a layer's weight shapes depend on besides its own kind.
struct LayerWeightInputs {
  TextDims d;
  MoeDims moe;
  ArchitectureTraits traits;
  std::string origin;
  bool attention_bias = false, output_gate = false;
  bool single_mixer = false;  // hybrid_override_pattern: one mixer (or MLP) per layer, one norm
  // Multi-head latent attention (DeepSeek), with the optional sparse-attention indexer.
  std::optional<int64_t> kv_lora, q_lora, rope_dim_mla, nope, v_head, index_heads, index_dim;
  // Gated DeltaNet (linear attention).
  int64_t lin_key_heads = 0, lin_value_heads = 0, lin_key_head_dim = 0, lin_value_head_dim = 0;
  std::optional<int64_t> lin_kernel;
  bool qwen35_names = false;  // Qwen3.5 splits in_proj_qkvz / in_proj_ba into four projections
  // Mamba2.
  std::optional<int64_t> mamba_heads, mamba_head_dim, mamba_groups, mamba_state, mamba_kernel;
  std::optional<bool> conv_bias;
  Dtype ssm_dtype = Dtype::bf16;
  // DeepSeek-style MTP modules (num_nextn_predict_layers) store their own embedding and head.
  bool mtp_own_embedding = false;
};

// One decoder layer's weights by kind (the recurrent and MLA kinds also complete `l`'s cache geometry),
// then its feed-forward part and norms.
Status add_layer_weights(WeightList& w, LayerSpec& l, const LayerWeightInputs& in, Part part);

// MTP modules: one decoder layer each (last layer's attention kind, MoE when the model is MoE),
// plus the projection of [embedding; hidden] and its norms. DeepSeek-style checkpoints
// (num_nextn_predict_layers) also store their own embedding and head.
Status add_mtp_weights(WeightList& w, const ModelSpec& spec, const LayerWeightInputs& in);

}  // namespace preflight::model::hf_detail
