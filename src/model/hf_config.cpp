#include "model/hf_config.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "base/checked.hpp"
#include "base/units.hpp"
#include "base/file.hpp"
#include "base/quote.hpp"
#include "base/text.hpp"
#include "model/architecture_traits.hpp"
#include "model/json_key_order.hpp"
#include "model/vision_tower.hpp"
#include "model/hf_layer_weights.hpp"

namespace preflight::model {

namespace {

using hf_detail::LayerWeightInputs;
using hf_detail::MoeDims;
using hf_detail::TextDims;
using hf_detail::WeightList;
using hf_detail::add_layer_weights;
using hf_detail::add_mtp_weights;

// Reads text-stack fields from text_config when present, else the top level.
class ConfigView {
 public:
  ConfigView(const Json& root, const std::string& origin)
      : m_root(root, origin),
        m_text_json(root.contains("text_config") && root["text_config"].is_object() ? &root["text_config"] : nullptr),
        m_text(m_text_json ? *m_text_json : root, origin, m_text_json ? "text_config" : "") {}

  const JsonObject& text() const { return m_text; }
  const JsonObject& root() const { return m_root; }

  const JsonObject& holder(const std::string& key) const { return m_text.has(key) ? m_text : m_root; }
  Expected<std::optional<int64_t>> opt_int(const std::string& key) const { return holder(key).opt_int(key); }
  Expected<std::optional<double>> opt_number(const std::string& key) const { return holder(key).opt_number(key); }
  Expected<std::optional<std::string>> opt_string(const std::string& key) const { return holder(key).opt_string(key); }
  Expected<std::optional<bool>> opt_bool(const std::string& key) const { return holder(key).opt_bool(key); }
  const Json* find(const std::string& key) const { return holder(key).find(key); }

  // A required positive integer below `cap`.
  Expected<int64_t> dim(const std::string& key, int64_t cap) const {
    PF_TRY(v, opt_int(key));
    if (!v) return make_error(ErrorKind::corrupt, format("%s: missing required field %s", m_root.origin().c_str(), m_text.key_path(key).c_str()), m_root.origin());
    return check(key, *v, cap);
  }
  Expected<int64_t> opt_dim(const std::string& key, int64_t fallback, int64_t cap) const {
    PF_TRY(v, opt_int(key));
    if (!v) return fallback;
    return check(key, *v, cap);
  }
  // An optional size or count: absent -> nullopt; present -> 0..cap (0 keeps its "not used" meaning).
  Expected<std::optional<int64_t>> opt_size(const std::string& key, int64_t cap) const {
    PF_TRY(v, opt_int(key));
    if (v && (*v < 0 || *v > cap)) {
      return make_error(ErrorKind::corrupt, format("%s: %s is %lld, expected 0..%lld", m_root.origin().c_str(), holder(key).key_path(key).c_str(),
                                                   static_cast<long long>(*v), static_cast<long long>(cap)),
                        m_root.origin());
    }
    return v;
  }
  Expected<int64_t> check(const std::string& key, int64_t v, int64_t cap) const {
    if (v <= 0 || v > cap) {
      return make_error(ErrorKind::corrupt, format("%s: %s is %lld, expected 1..%lld", m_root.origin().c_str(), holder(key).key_path(key).c_str(),
                                                   static_cast<long long>(v), static_cast<long long>(cap)),
                        m_root.origin());
    }
    return v;
  }

 private:
  JsonObject m_root;
  const Json* m_text_json;
  JsonObject m_text;
};

// The KV bytes per token and the recurrent state bytes per sequence that model_spec computes in
// int64, checked here once at 8 bytes per element (more than any cache dtype) so that those sums
// cannot overflow. The error names the config keys the overflowing product comes from.
Status check_cache_sizes(const ModelSpec& spec, const std::string& origin) {
  constexpr uint64_t k_element_bytes = 8;
  auto product = [](std::initializer_list<int64_t> factors) -> std::optional<uint64_t> {
    uint64_t r = k_element_bytes;
    for (int64_t f : factors) {
      const auto next = checked_mul(r, static_cast<uint64_t>(std::max<int64_t>(f, 0)));
      if (!next) return std::nullopt;
      r = *next;
    }
    return r;
  };
  uint64_t kv_total = 0, state_total = 0;
  for (const auto& l : spec.layers) {
    std::optional<uint64_t> kv = 0, state = 0;
    const char* keys = "";
    if (l.kind == LayerKind::full_attention || l.kind == LayerKind::sliding_attention) {
      kv = product({l.num_key_value_heads, l.head_dim_k + l.head_dim_v});
      keys = "num_key_value_heads x head_dim";
    } else if (l.kind == LayerKind::mla_attention) {
      kv = product({l.mla_cache_dim});
      keys = "kv_lora_rank + qk_rope_head_dim";
    } else if (l.kind == LayerKind::linear_attention || l.kind == LayerKind::mamba) {
      const auto conv = product({l.conv_channels, l.conv_len});
      const auto ssm = product({l.ssm_heads, l.ssm_head_dim, l.ssm_state_dim});
      state = conv && ssm ? checked_add(*conv, *ssm) : std::nullopt;
      keys = l.kind == LayerKind::mamba ? "mamba_num_heads x mamba_head_dim x ssm_state_size, n_groups, conv_kernel"
                                        : "linear_num_value_heads x linear_value_head_dim x linear_key_head_dim, linear_conv_kernel_dim";
    }
    const auto kv_sum = kv ? checked_add(kv_total, *kv) : std::nullopt;
    const auto state_sum = state ? checked_add(state_total, *state) : std::nullopt;
    if (!kv_sum || !state_sum || *kv_sum > static_cast<uint64_t>(INT64_MAX) || *state_sum > static_cast<uint64_t>(INT64_MAX)) {
      return make_error(ErrorKind::corrupt, format("%s: %s: the %s cache size overflows (%s)", origin.c_str(), keys, kv_sum ? "recurrent state" : "KV",
                                                   "the dimensions in the config are too large"),
                        origin);
    }
    kv_total = *kv_sum;
    state_total = *state_sum;
  }
  return Ok{};
}

// architectures[0] and model_type into `spec`; `traits` from the catalogue entry, which is returned
// (nullptr for an architecture the catalogue lacks: Llama-style defaults, with the assumption recorded).
Expected<const ArchitectureTraits*> read_architecture(const ConfigView& cfg, const std::string& origin, ModelSpec& spec, ArchitectureTraits& traits) {
  if (const Json* archs = cfg.root().find("architectures")) {
    if (!archs->is_array() || archs->empty() || !(*archs)[0].is_string()) {
      return make_error(ErrorKind::corrupt, format("%s: architectures: expected a non-empty array of strings", origin.c_str()), origin);
    }
    spec.architecture = strip_terminal_controls((*archs)[0].get<std::string>());  // it is printed (issue 19 item 12)
  }
  // auto_map (top level, or in text_config for VL wrappers): classes in the repository's own code, which
  // the engine loads only with --trust-remote-code.
  const Json& top = cfg.root().json();
  const auto text = top.find("text_config");
  for (const Json* scope : {&top, text != top.end() && text->is_object() ? &*text : nullptr}) {
    if (!scope) continue;
    const auto it = scope->find("auto_map");
    if (it == scope->end()) continue;
    if (!it->is_object()) return make_error(ErrorKind::corrupt, format("%s: auto_map: expected an object", origin.c_str()), origin);
    for (auto entry = it->begin(); entry != it->end(); ++entry)
      if (entry->is_string()) spec.auto_map.push_back(strip_terminal_controls(entry.key() + "=" + entry->get<std::string>()));
  }
  PF_TRY(model_type, cfg.opt_string("model_type"));
  spec.model_type = strip_terminal_controls(model_type.value_or(""));
  const ArchitectureTraits* found = find_builtin_traits(spec.architecture);
  if (found) {
    traits = *found;
  } else {
    spec.assumptions.push_back(format("no architecture traits for '%s'; assumed a Llama-style layer (gated MLP, no q/k norm, biases per attention_bias)",
                                      spec.architecture.empty() ? "(none)" : spec.architecture.c_str()));
  }
  return found;
}

// torch_dtype (or dtype); float32 is served as bfloat16, absent is assumed bfloat16.
Status read_dtype(const ConfigView& cfg, ModelSpec& spec) {
  PF_TRY(torch_dtype_a, cfg.opt_string("torch_dtype"));
  PF_TRY(torch_dtype_b, cfg.opt_string("dtype"));
  const std::string dtype_name_raw = torch_dtype_a.value_or(torch_dtype_b.value_or(""));
  if (auto d = dtype_from_torch_name(dtype_name_raw)) {
    spec.dtype = *d;
    if (spec.dtype == Dtype::f32) {
      spec.dtype = Dtype::bf16;
      spec.assumptions.push_back("config dtype is float32; engines serve it as bfloat16 by default (--dtype auto)");
    }
  } else if (dtype_name_raw.empty()) {
    spec.assumptions.push_back("config has no torch_dtype/dtype; assumed bfloat16");
  } else {
    // Issue 19: a dtype it does not know was reported as "no torch_dtype".
    spec.assumptions.push_back(format("config's %s '%s' is not a dtype preflight knows; assumed bfloat16", torch_dtype_a ? "torch_dtype" : "dtype",
                                      one_line(strip_terminal_controls(dtype_name_raw), 64).c_str()));
  }
  return Ok{};
}

// tie_word_embeddings (the top level wins over text_config), else the text model's config class default.
Status read_tie_word_embeddings(const ConfigView& cfg, ModelSpec& spec) {
  PF_TRY(tie_text, cfg.text().opt_bool("tie_word_embeddings"));
  PF_TRY(tie_root, cfg.root().opt_bool("tie_word_embeddings"));
  if (tie_text || tie_root) {
    spec.tie_word_embeddings = tie_root ? *tie_root : *tie_text;
    return Ok{};
  }
  // Unset: the text model's config class default (GemmaConfig and its successors tie; LlamaConfig,
  // MistralConfig, Qwen2/Qwen3 and most others set False; the PretrainedConfig base says True).
  PF_TRY(text_type, cfg.text().opt_string("model_type"));
  const std::string type = text_type.value_or(spec.model_type);
  const bool untied_class = type.rfind("llama", 0) == 0 || type.rfind("mistral", 0) == 0 || type.rfind("mixtral", 0) == 0 || type.rfind("qwen", 0) == 0;
  spec.tie_word_embeddings = !untied_class;
  spec.assumptions.push_back(format("config has no tie_word_embeddings; %s (the %s config class default)", untied_class ? "untied" : "tied",
                                    type.empty() ? "PretrainedConfig" : type.c_str()));
  return Ok{};
}

// The text stack's shape: its dimensions, the layer count and the hybrid_override_pattern (Nemotron-H style).
struct TextStack {
  TextDims d;
  int64_t layers = 0;
  std::string hybrid_pattern;
};

// head_dim (or attention_head_dim), else hidden_size / num_attention_heads; its provenance goes into `spec`.
Expected<int64_t> read_head_dim(const ConfigView& cfg, const std::string& origin, const TextDims& d, ModelSpec& spec) {
  PF_TRY(head_dim_a, cfg.opt_int("head_dim"));
  PF_TRY(head_dim_b, cfg.opt_int("attention_head_dim"));
  if (head_dim_a || head_dim_b) {
    PF_TRY(hd, cfg.check(head_dim_a ? "head_dim" : "attention_head_dim", head_dim_a ? *head_dim_a : *head_dim_b, k_max_dim));
    spec.provenance.push_back({"head_dim", origin, "config head_dim"});
    return hd;
  }
  if (d.hidden % d.heads != 0) {
    return make_error(ErrorKind::corrupt, format("%s: hidden_size (%lld) is not a multiple of num_attention_heads (%lld) and head_dim is not given",
                                                 origin.c_str(), static_cast<long long>(d.hidden), static_cast<long long>(d.heads)),
                      origin);
  }
  spec.provenance.push_back({"head_dim", origin, "hidden_size / num_attention_heads (no head_dim key)"});
  return d.hidden / d.heads;
}

// The text stack's dimensions, checked, and copied into `spec` with the context length and embedding tying.
Expected<TextStack> read_text_stack(const ConfigView& cfg, const std::string& origin, ModelSpec& spec) {
  TextStack text;
  TextDims& d = text.d;
  PF_TRY(hidden, cfg.dim("hidden_size", k_max_dim));
  d.hidden = hidden;
  PF_TRY(pattern_opt, cfg.opt_string("hybrid_override_pattern"));
  text.hybrid_pattern = pattern_opt.value_or("");
  if (!text.hybrid_pattern.empty() && !cfg.find("num_hidden_layers")) {
    text.layers = static_cast<int64_t>(text.hybrid_pattern.size());
  } else {
    PF_TRY(l, cfg.dim("num_hidden_layers", k_max_layers));
    text.layers = l;
  }
  PF_TRY(vocab, cfg.dim("vocab_size", k_max_vocab));
  d.vocab = vocab;
  PF_TRY(heads, cfg.dim("num_attention_heads", k_max_dim));
  d.heads = heads;
  PF_TRY(kv_heads_opt, cfg.opt_int("num_key_value_heads"));
  if (kv_heads_opt) {
    PF_TRY(kv, cfg.check("num_key_value_heads", *kv_heads_opt, k_max_dim));
    d.kv_heads = kv;
  } else {
    d.kv_heads = d.heads;
    spec.assumptions.push_back("config has no num_key_value_heads; assumed multi-head attention (equal to num_attention_heads)");
  }
  if (d.heads % d.kv_heads != 0) {
    return make_error(ErrorKind::corrupt, format("%s: num_attention_heads (%lld) is not a multiple of num_key_value_heads (%lld)", origin.c_str(),
                                                 static_cast<long long>(d.heads), static_cast<long long>(d.kv_heads)),
                      origin);
  }
  PF_TRY(head_dim, read_head_dim(cfg, origin, d, spec));
  d.head_dim = head_dim;
  PF_TRY(inter, cfg.opt_dim("intermediate_size", 0, k_max_dim * 4));
  d.intermediate = inter;
  // Present means 1..2^31-1: vLLM reads it as the model's context length, so -1 or 0 is not "unset".
  PF_TRY(max_pos, cfg.opt_dim("max_position_embeddings", 0, INT32_MAX));
  spec.max_position_embeddings = max_pos;
  PF_TRY(tie_ok, read_tie_word_embeddings(cfg, spec));
  (void)tie_ok;

  spec.hidden_size = d.hidden;
  spec.num_hidden_layers = text.layers;
  spec.num_attention_heads = d.heads;
  spec.num_key_value_heads = d.kv_heads;
  spec.head_dim = d.head_dim;
  spec.intermediate_size = d.intermediate;
  spec.vocab_size = d.vocab;
  return text;
}

// Rotary dimensions (persistent cos/sin cache size): head_dim x partial_rotary_factor.
Status read_rotary(const ConfigView& cfg, const std::string& origin, int64_t head_dim, ModelSpec& spec) {
  PF_TRY(prf_a, cfg.opt_number("partial_rotary_factor"));
  double partial = prf_a.value_or(1.0);
  if (const Json* rp = cfg.find("rope_parameters"); rp && rp->is_object() && rp->contains("partial_rotary_factor") && (*rp)["partial_rotary_factor"].is_number()) {
    partial = (*rp)["partial_rotary_factor"].get<double>();
  }
  if (!(partial > 0 && partial <= 1)) {
    return make_error(ErrorKind::corrupt, format("%s: partial_rotary_factor is %g, expected a number in (0, 1]", origin.c_str(), partial), origin);
  }
  spec.rotary_dim = static_cast<int64_t>(static_cast<double>(head_dim) * partial);
  return Ok{};
}

// vLLM's derived max_model_len (model_spec.hpp; vllm/config/model.py _get_and_verify_max_len, read on main 2026-12).
// Keys that are not positive numbers are left out; a factor that is not a positive number leaves the length unscaled.
void read_derived_max_model_len(const ConfigView& cfg, ModelSpec& spec) {
  const auto positive = [](const Json* v) { return v && v->is_number() && v->get<double>() > 0 && v->get<double>() < 1e12; };
  // Python prints an int as "40960" and a float as "131072.0".
  const auto python_text = [](double v, bool is_float) { return is_float ? format("%.1f", v) : format("%lld", static_cast<long long>(v)); };
  double derived = 0;
  bool is_float = false;
  std::string key;
  for (const char* k : {"max_position_embeddings", "n_positions", "max_seq_len", "seq_length", "model_max_length", "max_target_positions",
                        "max_sequence_length", "max_seq_length", "seq_len"}) {
    const Json* v = cfg.find(k);
    if (!positive(v) || (derived > 0 && v->get<double>() >= derived)) continue;
    derived = v->get<double>();
    is_float = v->is_number_float();
    key = k;
  }
  const Json* model_max = cfg.find("model_max_length");
  if (positive(model_max)) {
    derived = model_max->get<double>();
    is_float = model_max->is_number_float();
    key = "model_max_length";
  }
  if (derived <= 0) return;
  const Json* rope = cfg.find("rope_scaling");
  if (!rope || !rope->is_object()) rope = cfg.find("rope_parameters");  // transformers v5's name, which vLLM reads the same
  if (rope && rope->is_object() && spec.model_type.find("gemma3") == std::string::npos) {
    const auto type_of = [&](const char* k) { return rope->contains(k) && (*rope)[k].is_string() ? (*rope)[k].get<std::string>() : std::string(); };
    const std::string type = type_of("rope_type").empty() ? type_of("type") : type_of("rope_type");
    const Json* factor = rope->contains("factor") ? &(*rope)["factor"] : nullptr;
    if (!type.empty() && type != "su" && type != "longrope" && type != "llama3" && type != "default" && type != "mrope" && positive(factor)) {
      if (const Json* original = rope->contains("original_max_position_embeddings") ? &(*rope)["original_max_position_embeddings"] : nullptr;
          type == "yarn" && positive(original)) {
        derived = original->get<double>();
        is_float = original->is_number_float();
      }
      derived *= factor->get<double>();
      is_float = is_float || factor->is_number_float();
    }
  }
  spec.derived_max_model_len = static_cast<int64_t>(derived);
  const std::string model_max_text = positive(model_max) ? python_text(model_max->get<double>(), model_max->is_number_float()) : "None";
  spec.derived_max_model_len_text = format("%s=%s or model_max_length=%s", key.c_str(), python_text(derived, is_float).c_str(), model_max_text.c_str());
}

// The routed experts, top-k and shared expert of a MoE model (all zero for a dense one), also into `spec`.
Expected<MoeDims> read_moe(const ConfigView& cfg, const std::string& origin, int64_t intermediate, ModelSpec& spec) {
  MoeDims moe;
  PF_TRY(e1, cfg.opt_int("num_experts"));
  PF_TRY(e2, cfg.opt_int("n_routed_experts"));
  PF_TRY(e3, cfg.opt_int("num_local_experts"));
  const auto experts_raw = e1 ? e1 : (e2 ? e2 : e3);
  // 0 experts is a dense model; a negative count is refused by check() below (issue 19: n_routed_experts -1 read
  // DeepSeek-V3 as a dense 37 B model that "fits", exit 0).
  if (!experts_raw || *experts_raw == 0) return moe;
  PF_TRY(experts, cfg.check(e1 ? "num_experts" : (e2 ? "n_routed_experts" : "num_local_experts"), *experts_raw, k_max_experts));
  moe.experts = experts;
  PF_TRY(k1, cfg.opt_int("num_experts_per_tok"));
  PF_TRY(k2, cfg.opt_int("experts_per_token"));
  moe.top_k = k1.value_or(k2.value_or(0));
  if (moe.top_k <= 0 || moe.top_k > moe.experts) {
    return make_error(ErrorKind::corrupt, format("%s: num_experts_per_tok (%lld) must be 1..%lld", origin.c_str(), static_cast<long long>(moe.top_k),
                                                 static_cast<long long>(moe.experts)),
                      origin);
  }
  PF_TRY(mi, cfg.opt_dim("moe_intermediate_size", intermediate, k_max_dim * 4));
  moe.inter = mi;
  if (moe.inter <= 0) return make_error(ErrorKind::corrupt, format("%s: MoE model without moe_intermediate_size or intermediate_size", origin.c_str()), origin);
  PF_TRY(n_shared, cfg.opt_size("n_shared_experts", k_max_experts));
  PF_TRY(shared_q, cfg.opt_size("shared_expert_intermediate_size", k_max_dim * 4));
  PF_TRY(shared_n, cfg.opt_size("moe_shared_expert_intermediate_size", k_max_dim * 4));
  if (shared_q && *shared_q > 0) moe.shared_inter = *shared_q;
  else if (shared_n && *shared_n > 0) moe.shared_inter = *shared_n;
  else if (n_shared && *n_shared > 0) moe.shared_inter = *n_shared * moe.inter;
  if (n_shared) spec.num_shared_experts = *n_shared;
  else if (moe.shared_inter > 0) spec.num_shared_experts = 1;
  PF_TRY(topk_method, cfg.opt_string("topk_method"));
  moe.score_bias = topk_method.value_or("") == "noaux_tc";
  spec.num_experts = moe.experts;
  spec.num_experts_per_tok = moe.top_k;
  spec.moe_intermediate_size = moe.inter;
  return moe;
}

// Which layers of a MoE model route (the others keep a dense MLP): first_k_dense_replace,
// moe_layer_freq, decoder_sparse_step and mlp_only_layers.
struct MoePlacement {
  std::optional<int64_t> first_dense, moe_freq, sparse_step;
  std::set<int64_t> mlp_only;

  bool routes(int64_t i) const {
    bool is_moe = true;
    if (first_dense && i < *first_dense) is_moe = false;
    if (moe_freq && *moe_freq > 1 && i % *moe_freq != 0) is_moe = false;
    if (sparse_step && *sparse_step > 1 && (i + 1) % *sparse_step != 0) is_moe = false;
    if (mlp_only.count(i)) is_moe = false;
    return is_moe;
  }
};

Expected<MoePlacement> read_moe_placement(const ConfigView& cfg) {
  MoePlacement m;
  PF_TRY(first_dense, cfg.opt_size("first_k_dense_replace", k_max_layers));
  PF_TRY(moe_freq, cfg.opt_size("moe_layer_freq", k_max_layers));
  PF_TRY(sparse_step, cfg.opt_size("decoder_sparse_step", k_max_layers));
  m.first_dense = first_dense;
  m.moe_freq = moe_freq;
  m.sparse_step = sparse_step;
  if (const Json* list = cfg.find("mlp_only_layers"); list && list->is_array()) {
    for (const auto& v : *list) if (v.is_number_integer()) m.mlp_only.insert(v.get<int64_t>());
  }
  return m;
}

// The config keys that decide each layer's kind.
struct LayerKeys {
  std::optional<int64_t> kv_lora, rope_dim_mla, full_interval, lin_v_heads, sliding, swp_cfg;
  std::optional<bool> use_sliding;
  const Json* layer_types = nullptr;
};

Expected<LayerKeys> read_layer_keys(const ConfigView& cfg, const std::string& origin, const TextStack& text) {
  LayerKeys k;
  PF_TRY(kv_lora, cfg.opt_size("kv_lora_rank", k_max_dim));
  PF_TRY(rope_dim_mla, cfg.opt_size("qk_rope_head_dim", k_max_dim));
  PF_TRY(full_interval, cfg.opt_size("full_attention_interval", k_max_layers));
  PF_TRY(lin_v_heads, cfg.opt_size("linear_num_value_heads", k_max_dim));
  PF_TRY(sliding, cfg.opt_size("sliding_window", INT32_MAX));
  PF_TRY(use_sliding, cfg.opt_bool("use_sliding_window"));
  PF_TRY(swp_cfg, cfg.opt_size("sliding_window_pattern", k_max_layers));
  k.kv_lora = kv_lora;
  k.rope_dim_mla = rope_dim_mla;
  k.full_interval = full_interval;
  k.lin_v_heads = lin_v_heads;
  k.sliding = sliding;
  k.use_sliding = use_sliding;
  k.swp_cfg = swp_cfg;
  k.layer_types = cfg.find("layer_types");
  const int64_t layers = text.layers;
  if (k.layer_types && (!k.layer_types->is_array() || static_cast<int64_t>(k.layer_types->size()) != layers)) {
    return make_error(ErrorKind::corrupt, format("%s: layer_types: expected an array of %lld entries", origin.c_str(), static_cast<long long>(layers)), origin);
  }
  if (!text.hybrid_pattern.empty() && static_cast<int64_t>(text.hybrid_pattern.size()) != layers) {
    return make_error(ErrorKind::corrupt, format("%s: hybrid_override_pattern has %zu layers, num_hidden_layers is %lld", origin.c_str(),
                                                 text.hybrid_pattern.size(), static_cast<long long>(layers)),
                      origin);
  }
  return k;
}

// An MLA model's rotary embedding (issue 15, acc31): vLLM's DeepseekV2MLAAttention builds
// get_rope(qk_rope_head_dim, ...), so the cache is qk_rope_head_dim wide, not head_dim (hidden / heads: 56 for DeepSeek-V3,
// whose qk_rope_head_dim is 64); and a rope_scaling of any type but "default" becomes "deepseek_yarn", a
// DeepseekScalingRotaryEmbedding (vllm/model_executor/models/deepseek_v2.py DeepseekV2MLAAttention.__init__: 'if
// rope_scaling: rope_scaling["rope_type"] = 'deepseek_yarn'' read at f41647ee6, 2025-04-11, v0.8.4's; 'if
// config.rope_parameters["rope_type"] != "default"' at 3e41992fe, 2025-12-12, v0.13.0's).
void read_mla_rotary(const ConfigView& cfg, const LayerKeys& keys, ModelSpec& spec) {
  if (!keys.kv_lora || !keys.rope_dim_mla) return;
  spec.rotary_dim = *keys.rope_dim_mla;
  const Json* rope = cfg.find("rope_scaling");
  if (!rope || !rope->is_object()) rope = cfg.find("rope_parameters");
  if (!rope || !rope->is_object()) return;
  const auto type_of = [&](const char* k) { return rope->contains(k) && (*rope)[k].is_string() ? (*rope)[k].get<std::string>() : std::string(); };
  const std::string type = type_of("rope_type").empty() ? type_of("type") : type_of("rope_type");
  if (!type.empty() && type != "default") spec.rope_class = RopeClass::deepseek_scaling;
}


// Layer i's kind from the first rule that applies: hybrid_override_pattern, kv_lora_rank (MLA),
// layer_types, full_attention_interval, sliding_window, else full attention. `rule` names the rule.
Status assign_layer_kind(LayerSpec& l, int64_t i, const LayerKeys& k, const std::string& hybrid_pattern, const ArchitectureTraits& traits,
                         const std::string& origin, std::string& rule) {
  const auto& kv_lora = k.kv_lora;
  const auto& full_interval = k.full_interval;
  const auto& sliding = k.sliding;
  const auto& swp_cfg = k.swp_cfg;
  if (!hybrid_pattern.empty()) {
    const char c = hybrid_pattern[static_cast<size_t>(i)];
    if (c == 'M') l.kind = LayerKind::mamba;
    else if (c == '*') l.kind = LayerKind::full_attention;
    else if (c == '-') l.kind = LayerKind::mlp_only;
    else if (c == 'E') { l.kind = LayerKind::mlp_only; l.moe = true; }
    else return make_error(ErrorKind::corrupt, format("%s: hybrid_override_pattern: unknown layer code '%c' at %lld", origin.c_str(), c, static_cast<long long>(i)), origin);
    rule = "hybrid_override_pattern (M Mamba2, * attention, - MLP, E MoE)";
  } else if (kv_lora && *kv_lora > 0) {
    l.kind = LayerKind::mla_attention;
    rule = "kv_lora_rank present: multi-head latent attention on every layer";
  } else if (k.layer_types) {
    const Json& t = (*k.layer_types)[static_cast<size_t>(i)];
    const std::string name = t.is_string() ? t.get<std::string>() : "";
    if (name == "full_attention" || name == "attention") l.kind = LayerKind::full_attention;
    else if (name == "sliding_attention" || name == "sliding_window" || name == "chunked_attention") l.kind = LayerKind::sliding_attention;
    else if (name == "linear_attention") l.kind = LayerKind::linear_attention;
    else if (name == "mamba" || name == "mamba2") l.kind = LayerKind::mamba;
    else return make_error(ErrorKind::corrupt, format("%s: layer_types[%lld]: unknown layer type '%s'", origin.c_str(), static_cast<long long>(i), name.c_str()), origin);
    rule = "config layer_types";
  } else if (full_interval && *full_interval > 0 && k.lin_v_heads) {
    l.kind = ((i + 1) % *full_interval == 0) ? LayerKind::full_attention : LayerKind::linear_attention;
    rule = format("full_attention_interval %lld: every %lldth layer full attention, the rest linear attention",
                  static_cast<long long>(*full_interval), static_cast<long long>(*full_interval));
  } else if (sliding && *sliding > 0 && k.use_sliding.value_or(true)) {
    const int64_t pattern = swp_cfg.value_or(traits.sliding_window_pattern_default);
    if (pattern > 0) {
      l.kind = ((i + 1) % pattern == 0) ? LayerKind::full_attention : LayerKind::sliding_attention;
      rule = format("sliding_window %lld with a global layer every %lld layers%s", static_cast<long long>(*sliding),
                    static_cast<long long>(pattern), swp_cfg ? "" : " (architecture default; config has no sliding_window_pattern)");
    } else {
      l.kind = LayerKind::sliding_attention;
      rule = format("sliding_window %lld on every layer", static_cast<long long>(*sliding));
    }
  } else {
    l.kind = LayerKind::full_attention;
    rule = "no layer pattern in config: full attention on every layer";
  }
  return Ok{};
}

// spec.layers: each layer's kind, its sliding window, whether it routes to experts; and the rule's provenance.
Status build_layers(const TextStack& text, const LayerKeys& k, const MoeDims& moe, const MoePlacement& placement, const ArchitectureTraits& traits,
                    const std::string& origin, ModelSpec& spec) {
  const TextDims& d = text.d;
  std::string pattern_rule;
  for (int64_t i = 0; i < text.layers; ++i) {
    LayerSpec l;
    l.num_key_value_heads = d.kv_heads;
    l.head_dim_k = d.head_dim;
    l.head_dim_v = d.head_dim;
    PF_TRY(kind_ok, assign_layer_kind(l, i, k, text.hybrid_pattern, traits, origin, pattern_rule));
    (void)kind_ok;
    if (l.kind == LayerKind::sliding_attention) l.sliding_window = k.sliding.value_or(0);
    if (l.kind == LayerKind::sliding_attention && l.sliding_window <= 0) {
      return make_error(ErrorKind::corrupt, format("%s: layer %lld is sliding_attention but sliding_window is not set", origin.c_str(), static_cast<long long>(i)), origin);
    }
    if (moe.experts > 0 && text.hybrid_pattern.empty()) l.moe = placement.routes(i);
    spec.layers.push_back(l);
  }
  spec.provenance.push_back({"layer pattern", origin, pattern_rule});
  return Ok{};
}

// MTP layer count, attention biases, the output gate and use_qk_norm (which overrides `traits`).
Status read_attention_options(const ConfigView& cfg, const std::string& origin, ModelSpec& spec, ArchitectureTraits& traits, LayerWeightInputs& in) {
  PF_TRY(mtp_a, cfg.opt_size("num_nextn_predict_layers", 16));
  PF_TRY(mtp_b, cfg.opt_size("mtp_num_hidden_layers", 16));
  spec.mtp_layers = std::max<int64_t>(0, mtp_a.value_or(mtp_b.value_or(0)));
  if (spec.mtp_layers > 16) return make_error(ErrorKind::corrupt, format("%s: %lld MTP layers is not plausible", origin.c_str(), static_cast<long long>(spec.mtp_layers)), origin);
  in.mtp_own_embedding = mtp_a.has_value();
  PF_TRY(attention_bias_cfg, cfg.opt_bool("attention_bias"));
  in.attention_bias = attention_bias_cfg.value_or(false);
  PF_TRY(gate_cfg, cfg.opt_bool("attn_output_gate"));
  in.output_gate = gate_cfg.value_or(traits.attn_output_gate);
  PF_TRY(qk_norm_cfg, cfg.opt_bool("use_qk_norm"));
  if (qk_norm_cfg) traits.qk_norm = *qk_norm_cfg;
  return Ok{};
}

// Linear attention (Gated DeltaNet) and Mamba2 geometry, and the dtype of their recurrent state.
Status read_recurrent_keys(const ConfigView& cfg, Dtype model_dtype, const ArchitectureTraits& traits, LayerWeightInputs& in) {
  PF_TRY(lin_k_heads, cfg.opt_size("linear_num_key_heads", k_max_dim));
  PF_TRY(lin_dk, cfg.opt_size("linear_key_head_dim", k_max_dim));
  PF_TRY(lin_dv, cfg.opt_size("linear_value_head_dim", k_max_dim));
  PF_TRY(lin_kernel, cfg.opt_size("linear_conv_kernel_dim", k_max_dim));
  PF_TRY(mamba_heads, cfg.opt_size("mamba_num_heads", k_max_dim));
  PF_TRY(mamba_head_dim, cfg.opt_size("mamba_head_dim", k_max_dim));
  PF_TRY(mamba_groups, cfg.opt_size("n_groups", k_max_dim));
  PF_TRY(mamba_state, cfg.opt_size("ssm_state_size", k_max_dim));
  PF_TRY(mamba_kernel, cfg.opt_size("conv_kernel", k_max_dim));
  PF_TRY(conv_bias_cfg, cfg.opt_bool("use_conv_bias"));
  PF_TRY(ssm_dtype_a, cfg.opt_string("mamba_ssm_dtype"));
  PF_TRY(ssm_dtype_b, cfg.opt_string("mamba_ssm_cache_dtype"));
  in.lin_key_heads = lin_k_heads.value_or(0);
  in.lin_key_head_dim = lin_dk.value_or(0);
  in.lin_value_head_dim = lin_dv.value_or(0);
  in.lin_kernel = lin_kernel;
  in.mamba_heads = mamba_heads;
  in.mamba_head_dim = mamba_head_dim;
  in.mamba_groups = mamba_groups;
  in.mamba_state = mamba_state;
  in.mamba_kernel = mamba_kernel;
  in.conv_bias = conv_bias_cfg;
  // The model dtype (mamba_ssm_cache_dtype auto) unless the config or the architecture names one.
  in.ssm_dtype = model_dtype;
  if (auto sd = dtype_from_torch_name(ssm_dtype_a.value_or(ssm_dtype_b.value_or(traits.mamba_ssm_dtype_default)))) in.ssm_dtype = *sd;
  return Ok{};
}

// The MLA projections beyond kv_lora_rank / qk_rope_head_dim, and the sparse-attention indexer.
Status read_mla_keys(const ConfigView& cfg, LayerWeightInputs& in) {
  PF_TRY(q_lora, cfg.opt_size("q_lora_rank", k_max_dim));
  PF_TRY(nope, cfg.opt_size("qk_nope_head_dim", k_max_dim));
  PF_TRY(v_head, cfg.opt_size("v_head_dim", k_max_dim));
  PF_TRY(index_heads, cfg.opt_size("index_n_heads", k_max_dim));
  PF_TRY(index_dim, cfg.opt_size("index_head_dim", k_max_dim));
  in.q_lora = q_lora;
  in.nope = nope;
  in.v_head = v_head;
  in.index_heads = index_heads;
  in.index_dim = index_dim;
  return Ok{};
}

// The vision tower of a multimodal config (vision_config): its weights and geometry.
Status add_vision_weights(const ConfigView& cfg, const std::string& origin, const ArchitectureTraits& traits, int64_t text_hidden, ModelSpec& spec, WeightList& w) {
  const Json* vc = cfg.root().find("vision_config");
  if (!vc || !vc->is_object()) return Ok{};
  PF_TRY(vision, add_vision_tower(*vc, origin, traits.vision, text_hidden));
  for (auto& g : vision.weights) {
    spec.vision_params += g.params();
    w.add(g);
  }
  spec.vision_hidden_size = vision.hidden_size;
  spec.vision_depth = vision.depth;
  spec.vision_intermediate_size = vision.intermediate_size;
  spec.vision_max_tokens_per_image = vision.max_tokens_per_image;
  spec.vision_patches_per_token = vision.patches_per_token;
  spec.vision_resize_factor_px = vision.resize_factor_px;
  spec.vision_min_pixels = vision.min_pixels;
  spec.vision_video_max_groups = vision.video_max_groups;
  spec.vision_deepstack_levels = vision.deepstack_levels;
  if (!vision.assumption.empty()) spec.assumptions.push_back(vision.assumption);
  spec.provenance.push_back({"vision tower parameters", origin, vision.rule});
  return Ok{};
}

}  // namespace

Expected<ModelSpec> parse_hf_config(const Json& root, const std::string& origin) {
  if (!root.is_object()) {
    return make_error(ErrorKind::corrupt, format("%s: expected a JSON object, found %s", origin.c_str(), json_type_name(root)), origin);
  }
  ConfigView cfg(root, origin);
  ModelSpec spec;
  spec.source = origin;
  ArchitectureTraits traits;
  PF_TRY(found, read_architecture(cfg, origin, spec, traits));
  PF_TRY(dtype_ok, read_dtype(cfg, spec));
  (void)dtype_ok;
  PF_TRY(text, read_text_stack(cfg, origin, spec));
  const TextDims& d = text.d;
  PF_TRY(rotary_ok, read_rotary(cfg, origin, d.head_dim, spec));
  read_derived_max_model_len(cfg, spec);
  (void)rotary_ok;
  PF_TRY(moe, read_moe(cfg, origin, d.intermediate, spec));
  PF_TRY(placement, read_moe_placement(cfg));
  PF_TRY(keys, read_layer_keys(cfg, origin, text));
  read_mla_rotary(cfg, keys, spec);
  PF_TRY(layers_ok, build_layers(text, keys, moe, placement, traits, origin, spec));
  (void)layers_ok;

  LayerWeightInputs in;
  in.d = d;
  in.moe = moe;
  in.origin = origin;
  in.single_mixer = !text.hybrid_pattern.empty();
  in.kv_lora = keys.kv_lora;
  in.rope_dim_mla = keys.rope_dim_mla;
  in.lin_value_heads = keys.lin_v_heads.value_or(0);
  in.qwen35_names = spec.model_type.rfind("qwen3_5", 0) == 0;
  PF_TRY(attention_ok, read_attention_options(cfg, origin, spec, traits, in));
  (void)attention_ok;
  PF_TRY(recurrent_ok, read_recurrent_keys(cfg, spec.dtype, traits, in));
  (void)recurrent_ok;
  PF_TRY(mla_ok, read_mla_keys(cfg, in));
  (void)mla_ok;
  in.traits = traits;

  // Weights.
  WeightList w;
  for (auto& l : spec.layers) {
    PF_TRY(ok, add_layer_weights(w, l, in, Part::text));
    (void)ok;
  }
  w.add(WeightGroup{"model.embed_tokens", d.vocab, d.hidden, 1, Shard::vocab, Part::text, false, false, 1.0, 0});
  // An untied head is a linear layer vLLM can quantize (ParallelLMHead); the scheme says whether the engine does
  // (QuantScheme::lm_head_quantized: a ModelOpt checkpoint that quantizes it), else it stays in the model dtype.
  if (!spec.tie_word_embeddings) w.add(WeightGroup{"lm_head", d.vocab, d.hidden, 1, Shard::vocab, Part::text, true, false, 1.0, 0});
  w.vector("model.norm", d.hidden, Shard::replicated, Part::text);
  PF_TRY(mtp_ok, add_mtp_weights(w, spec, in));
  (void)mtp_ok;
  PF_TRY(vision_ok, add_vision_weights(cfg, origin, traits, d.hidden, spec, w));
  (void)vision_ok;

  if (!w.overflowed().empty()) {
    return make_error(ErrorKind::corrupt, format("%s: %s: parameter count overflows (the dimensions in the config are too large)", origin.c_str(),
                                                 w.overflowed().c_str()),
                      origin);
  }
  spec.weights = w.take();
  PF_TRY(cache_ok, check_cache_sizes(spec, origin));
  (void)cache_ok;
  spec.provenance.push_back({"parameters", origin, "sum of weight shapes derived from config (per-architecture layer layout: " +
                                                       (found ? found->source : std::string("default Llama-style layout")) + ")"});
  if (const Json* q = cfg.root().find("quantization_config")) {
    PF_TRY(scheme, parse_quantization_config(*q, origin));
    spec.quant = scheme;
  } else if (const Json* q2 = cfg.root().find("compression_config")) {
    PF_TRY(scheme, parse_quantization_config(*q2, origin));
    spec.quant = scheme;
  }
  if (!found) spec.provenance.push_back({"layer layout", origin, "default (architecture not in the traits catalogue)"});
  return spec;
}

Expected<ModelSpec> load_hf_config(const std::string& path) {
  PF_TRY(text, read_text_file(path));
  PF_TRY(json, parse_json(text, path));
  PF_TRY(spec, parse_hf_config(json, path));
  // Issue 16: GPTQ "dynamic" rules apply in the file's order (QuantScheme::gptq_dynamic), which the parsed object
  // (a sorted map) does not keep: the descriptor's keys are read from the text.
  if (spec.quant.gptq_dynamic.size() > 1) {
    const char* block = json.contains("quantization_config") ? "quantization_config" : "compression_config";
    PF_TRY(keys, object_keys_in_order(text, {block, "dynamic"}, path));
    order_gptq_dynamic(spec.quant, keys);
    spec.provenance.push_back({"quantization", path, format("%zu GPTQ dynamic rules applied in the file's order", spec.quant.gptq_dynamic.size())});
  }
  return spec;
}

}  // namespace preflight::model
