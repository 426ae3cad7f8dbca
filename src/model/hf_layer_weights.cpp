#include "model/hf_layer_weights.hpp"

#include "base/units.hpp"

namespace preflight::model::hf_detail {

namespace {

void add_standard_attention(WeightList& w, const std::string& p, const TextDims& d, const ArchitectureTraits& t,
                            bool attention_bias, bool output_gate, Part part) {
  const int64_t q_dim = d.heads * d.head_dim, kv_dim = d.kv_heads * d.head_dim;
  w.linear(p + ".self_attn.q_proj", q_dim * (output_gate ? 2 : 1), d.hidden, Shard::column, part);
  w.linear(p + ".self_attn.k_proj", kv_dim, d.hidden, Shard::kv_heads, part, d.kv_heads);
  w.linear(p + ".self_attn.v_proj", kv_dim, d.hidden, Shard::kv_heads, part, d.kv_heads);
  w.linear(p + ".self_attn.o_proj", d.hidden, q_dim, Shard::row, part);
  if (t.qkv_bias || attention_bias) {
    w.vector(p + ".self_attn.q_proj.bias", q_dim * (output_gate ? 2 : 1), Shard::column, part);
    w.add(WeightGroup{p + ".self_attn.k_proj.bias", kv_dim, 1, 1, Shard::kv_heads, part, false, false, 1.0, d.kv_heads});
    w.add(WeightGroup{p + ".self_attn.v_proj.bias", kv_dim, 1, 1, Shard::kv_heads, part, false, false, 1.0, d.kv_heads});
  }
  if (attention_bias && t.attention_bias_covers_o) w.vector(p + ".self_attn.o_proj.bias", d.hidden, Shard::replicated, part);
  if (t.qk_norm) {
    w.vector(p + ".self_attn.q_norm", d.head_dim, Shard::replicated, part);
    w.vector(p + ".self_attn.k_norm", d.head_dim, Shard::replicated, part);
  }
  if (t.attention_sinks) w.vector(p + ".self_attn.sinks", d.heads, Shard::column, part);
}

void add_dense_mlp(WeightList& w, const std::string& p, int64_t hidden, int64_t inter, MlpKind mlp, Part part) {
  if (mlp == MlpKind::gated) w.linear(p + ".gate_proj", inter, hidden, Shard::column, part);
  w.linear(p + ".up_proj", inter, hidden, Shard::column, part);
  w.linear(p + ".down_proj", hidden, inter, Shard::row, part);
}

void add_moe(WeightList& w, const std::string& p, int64_t hidden, const MoeDims& m, const ArchitectureTraits& t, Part part) {
  const double active = m.experts > 0 ? static_cast<double>(m.top_k) / static_cast<double>(m.experts) : 1.0;
  auto expert = [&](const std::string& name, int64_t rows, int64_t cols, bool linear) {
    w.add(WeightGroup{p + ".experts.*." + name, rows, cols, m.experts, Shard::expert, part, linear, true, active, 0});
  };
  w.add(WeightGroup{p + ".gate", m.experts, hidden, 1, Shard::replicated, part, false, false, 1.0, 0});
  if (t.router_bias) w.vector(p + ".gate.bias", m.experts, Shard::replicated, part);
  if (m.score_bias) w.vector(p + ".gate.e_score_correction_bias", m.experts, Shard::replicated, part);
  if (t.mlp == MlpKind::gated) expert("gate_proj", m.inter, hidden, true);
  expert("up_proj", m.inter, hidden, true);
  expert("down_proj", hidden, m.inter, true);
  if (t.expert_bias) {
    expert("gate_up_proj.bias", (t.mlp == MlpKind::gated ? 2 : 1) * m.inter, 1, false);
    expert("down_proj.bias", hidden, 1, false);
  }
  if (m.shared_inter > 0) {
    add_dense_mlp(w, p + ".shared_expert", hidden, m.shared_inter, t.mlp, part);
    if (t.shared_expert_gate) w.add(WeightGroup{p + ".shared_expert_gate", 1, hidden, 1, Shard::replicated, part, false, false, 1.0, 0});
  }
}

Status add_mla_attention(WeightList& w, const std::string& p, LayerSpec& l, const LayerWeightInputs& in, Part part) {
  const TextDims& d = in.d;
  const std::string& origin = in.origin;
  const auto& kv_lora = in.kv_lora;
  const auto& q_lora = in.q_lora;
  const auto& index_heads = in.index_heads;
  const auto& index_dim = in.index_dim;
  const int64_t rope = in.rope_dim_mla.value_or(0), qk_nope = in.nope.value_or(0), vd = in.v_head.value_or(0);
  if (rope <= 0 || qk_nope <= 0 || vd <= 0) {
    return make_error(ErrorKind::corrupt, format("%s: kv_lora_rank is set but qk_rope_head_dim / qk_nope_head_dim / v_head_dim are missing", origin.c_str()), origin);
  }
  const int64_t qk_head = qk_nope + rope;
  if (q_lora && *q_lora > 0) {
    w.linear(p + ".self_attn.q_a_proj", *q_lora, d.hidden, Shard::replicated, part);
    w.vector(p + ".self_attn.q_a_layernorm", *q_lora, Shard::replicated, part);
    w.linear(p + ".self_attn.q_b_proj", d.heads * qk_head, *q_lora, Shard::column, part);
  } else {
    w.linear(p + ".self_attn.q_proj", d.heads * qk_head, d.hidden, Shard::column, part);
  }
  w.linear(p + ".self_attn.kv_a_proj_with_mqa", *kv_lora + rope, d.hidden, Shard::replicated, part);
  w.vector(p + ".self_attn.kv_a_layernorm", *kv_lora, Shard::replicated, part);
  w.linear(p + ".self_attn.kv_b_proj", d.heads * (qk_nope + vd), *kv_lora, Shard::column, part);
  w.linear(p + ".self_attn.o_proj", d.hidden, d.heads * vd, Shard::row, part);
  l.mla_cache_dim = *kv_lora + rope;
  l.num_key_value_heads = 1;
  l.head_dim_k = *kv_lora + rope;
  l.head_dim_v = 0;
  if (index_heads && index_dim && *index_heads > 0 && *index_dim > 0) {
    w.linear(p + ".self_attn.indexer.wq_b", *index_heads * *index_dim, q_lora.value_or(d.hidden), Shard::replicated, part);
    w.linear(p + ".self_attn.indexer.wk", *index_dim, d.hidden, Shard::replicated, part);
    w.vector(p + ".self_attn.indexer.k_norm", 2 * *index_dim, Shard::replicated, part);
    w.add(WeightGroup{p + ".self_attn.indexer.weights_proj", *index_heads, d.hidden, 1, Shard::replicated, part, false, false, 1.0, 0});
    l.indexer_head_dim = *index_dim;
  }
  return Ok{};
}


// The fixed per-sequence state of a recurrent layer (linear attention or Mamba): a causal conv over
// `kernel` - 1 past inputs of `conv_channels`, and `heads` x `head_dim` x `state_dim` of SSM state. Such a
// layer keeps no KV cache.
void set_recurrent_geometry(LayerSpec& l, int64_t conv_channels, int64_t kernel, int64_t heads, int64_t head_dim, int64_t state_dim,
                            Dtype ssm_dtype) {
  l.conv_channels = conv_channels;
  l.conv_len = kernel - 1;
  l.ssm_heads = heads;
  l.ssm_head_dim = head_dim;
  l.ssm_state_dim = state_dim;
  l.ssm_dtype = ssm_dtype;
  l.num_key_value_heads = 0;
}

Status add_linear_attention(WeightList& w, const std::string& p, LayerSpec& l, const LayerWeightInputs& in, Part part) {
  const TextDims& d = in.d;
  const std::string& origin = in.origin;
  const int64_t Hk = in.lin_key_heads, Hv = in.lin_value_heads, dk = in.lin_key_head_dim, dv = in.lin_value_head_dim;
  const auto& lin_kernel = in.lin_kernel;
  if (Hk <= 0 || Hv <= 0 || dk <= 0 || dv <= 0 || lin_kernel.value_or(0) <= 0) {
    return make_error(ErrorKind::corrupt, format("%s: linear_attention layers need linear_num_key_heads, linear_num_value_heads, linear_key_head_dim, linear_value_head_dim, linear_conv_kernel_dim", origin.c_str()), origin);
  }
  const int64_t conv_dim = 2 * Hk * dk + Hv * dv;
  const std::string a = p + ".linear_attn";
  if (in.qwen35_names) {
    w.linear(a + ".in_proj_qkv", conv_dim, d.hidden, Shard::column, part);
    w.linear(a + ".in_proj_z", Hv * dv, d.hidden, Shard::column, part);
    w.linear(a + ".in_proj_b", Hv, d.hidden, Shard::column, part);
    w.linear(a + ".in_proj_a", Hv, d.hidden, Shard::column, part);
  } else {
    w.linear(a + ".in_proj_qkvz", conv_dim + Hv * dv, d.hidden, Shard::column, part);
    w.linear(a + ".in_proj_ba", 2 * Hv, d.hidden, Shard::column, part);
  }
  w.add(WeightGroup{a + ".conv1d", conv_dim, *lin_kernel, 1, Shard::column, part, false, false, 1.0, 0});
  w.vector(a + ".dt_bias", Hv, Shard::column, part);
  w.vector(a + ".A_log", Hv, Shard::column, part);
  w.vector(a + ".norm", dv, Shard::replicated, part);
  w.linear(a + ".out_proj", d.hidden, Hv * dv, Shard::row, part);
  set_recurrent_geometry(l, conv_dim, *lin_kernel, Hv, dv, dk, in.ssm_dtype);
  l.linear_num_key_heads = Hk;
  return Ok{};
}

Status add_mamba(WeightList& w, const std::string& p, LayerSpec& l, const LayerWeightInputs& in, Part part) {
  const TextDims& d = in.d;
  const std::string& origin = in.origin;
  const auto& mamba_kernel = in.mamba_kernel;
  const int64_t nh = in.mamba_heads.value_or(0), hd = in.mamba_head_dim.value_or(0), g = in.mamba_groups.value_or(1), n = in.mamba_state.value_or(0);
  if (nh <= 0 || hd <= 0 || n <= 0 || mamba_kernel.value_or(0) <= 0) {
    return make_error(ErrorKind::corrupt, format("%s: Mamba layers need mamba_num_heads, mamba_head_dim, ssm_state_size, conv_kernel", origin.c_str()), origin);
  }
  const int64_t inner = nh * hd, conv_dim = inner + 2 * g * n;
  const std::string m = p + ".mixer";
  w.linear(m + ".in_proj", 2 * inner + 2 * g * n + nh, d.hidden, Shard::column, part);
  w.add(WeightGroup{m + ".conv1d", conv_dim, *mamba_kernel, 1, Shard::column, part, false, false, 1.0, 0});
  if (in.conv_bias.value_or(true)) w.vector(m + ".conv1d.bias", conv_dim, Shard::column, part);
  w.vector(m + ".dt_bias", nh, Shard::column, part);
  w.vector(m + ".A_log", nh, Shard::column, part);
  w.vector(m + ".D", nh, Shard::column, part);
  w.vector(m + ".norm", inner, Shard::column, part);
  w.linear(m + ".out_proj", d.hidden, inner, Shard::row, part);
  set_recurrent_geometry(l, conv_dim, *mamba_kernel, nh, hd, n, in.ssm_dtype);
  return Ok{};
}

}  // namespace

// One decoder layer's weights by kind (the recurrent and MLA kinds also complete `l`'s cache geometry),
// then its feed-forward part and norms.
Status add_layer_weights(WeightList& w, LayerSpec& l, const LayerWeightInputs& in, Part part) {
  const std::string p = "model.layers.*";
  const TextDims& d = in.d;
  switch (l.kind) {
    case LayerKind::full_attention:
    case LayerKind::sliding_attention:
      add_standard_attention(w, p, d, in.traits, in.attention_bias, in.output_gate, part);
      break;
    case LayerKind::mla_attention: {
      PF_TRY(ok, add_mla_attention(w, p, l, in, part));
      (void)ok;
      break;
    }
    case LayerKind::linear_attention: {
      PF_TRY(ok, add_linear_attention(w, p, l, in, part));
      (void)ok;
      break;
    }
    case LayerKind::mamba: {
      PF_TRY(ok, add_mamba(w, p, l, in, part));
      (void)ok;
      break;
    }
    case LayerKind::mlp_only:
    case LayerKind::count_:
      l.num_key_value_heads = 0;
      break;
  }
  // Feed-forward part.
  if (l.moe) {
    add_moe(w, p + ".mlp", d.hidden, in.moe, in.traits, part);
  } else if (!in.single_mixer || l.kind == LayerKind::mlp_only) {
    if (d.intermediate > 0) add_dense_mlp(w, p + ".mlp", d.hidden, d.intermediate, in.traits.mlp, part);
  }
  w.vector(p + ".norms", d.hidden * (in.single_mixer ? 1 : 2), Shard::replicated, part);
  return Ok{};
}

// MTP modules: one decoder layer each (last layer's attention kind, MoE when the model is MoE),
// plus the projection of [embedding; hidden] and its norms. DeepSeek-style checkpoints
// (num_nextn_predict_layers) also store their own embedding and head.
Status add_mtp_weights(WeightList& w, const ModelSpec& spec, const LayerWeightInputs& in) {
  const TextDims& d = in.d;
  for (int64_t i = 0; i < spec.mtp_layers; ++i) {
    LayerSpec l = spec.layers.empty() ? LayerSpec{} : spec.layers.back();
    if (l.kind == LayerKind::linear_attention || l.kind == LayerKind::mamba || l.kind == LayerKind::mlp_only) {
      l = LayerSpec{};
      l.kind = LayerKind::full_attention;
      l.num_key_value_heads = d.kv_heads;
      l.head_dim_k = l.head_dim_v = d.head_dim;
    }
    l.moe = in.moe.experts > 0;
    PF_TRY(ok, add_layer_weights(w, l, in, Part::mtp));
    (void)ok;
    w.linear("model.mtp.eh_proj", d.hidden, 2 * d.hidden, Shard::replicated, Part::mtp);
    w.vector("model.mtp.norms", 3 * d.hidden, Shard::replicated, Part::mtp);
    if (in.mtp_own_embedding) {
      w.add(WeightGroup{"model.mtp.embed_tokens", d.vocab, d.hidden, 1, Shard::vocab, Part::mtp, false, false, 1.0, 0});
      w.add(WeightGroup{"model.mtp.shared_head.head", d.vocab, d.hidden, 1, Shard::vocab, Part::mtp, false, false, 1.0, 0});
    }
  }
  return Ok{};
}

}  // namespace preflight::model::hf_detail
