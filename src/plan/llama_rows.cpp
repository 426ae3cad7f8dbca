#include "plan/llama_rows.hpp"

#include <algorithm>
#include <memory>

#include "base/text.hpp"
#include "base/units.hpp"
#include "estimate/llama_cpp.hpp"
#include "estimate/llama_cpp_quant.hpp"

namespace preflight::plan {

namespace {

constexpr int64_t k_llama_ctx_pad = 256;  // llama-context.cpp: n_ctx = GGML_PAD(n_ctx, 256)

bool caches_kv(model::LayerKind k) {
  return k == model::LayerKind::full_attention || k == model::LayerKind::sliding_attention || k == model::LayerKind::mla_attention;
}

// llama.cpp's sliding-window layer pattern (llama_hparams::is_swa: layer il slides when il % p < p - 1) that the model's
// layer kinds follow, or 0 when they follow none (then every layer is counted with the whole context: an upper bound).
int64_t swa_pattern_of(const model::ModelSpec& m) {
  int64_t full = 0, sliding = 0;
  for (const auto& l : m.layers) (l.kind == model::LayerKind::sliding_attention ? sliding : full) += caches_kv(l.kind) ? 1 : 0;
  if (sliding == 0 || full == 0 || static_cast<int64_t>(m.layers.size()) % full != 0) return 0;
  const int64_t p = static_cast<int64_t>(m.layers.size()) / full;
  for (size_t il = 0; il < m.layers.size(); ++il)
    if ((m.layers[il].kind == model::LayerKind::sliding_attention) != (static_cast<int64_t>(il) % p < p - 1)) return 0;
  return p;
}

// Issue 16 (llamacpp33): an MLA layer's attention as the checkpoint states it: the latent (kv_lora_rank = kv_b_proj's
// in_features, rope = the latent cache less it) and the decompressed heads (v_head_dim = o_proj's in_features / heads,
// qk_nope_head_dim = kv_b_proj's out_features / heads - v_head_dim), read from the layer's weight groups.
estimate::LlamaMlaGeometry mla_geometry(const model::ModelSpec& m, const model::LayerSpec& l) {
  estimate::LlamaMlaGeometry g;
  const int64_t heads = m.num_attention_heads;
  const model::WeightGroup *kv_b = nullptr, *o_proj = nullptr;
  for (const auto& w : m.weights) {
    if (w.part != model::Part::text) continue;
    if (!kv_b && ends_with(w.module, ".self_attn.kv_b_proj")) kv_b = &w;
    if (!o_proj && ends_with(w.module, ".self_attn.o_proj")) o_proj = &w;
  }
  if (!kv_b || !o_proj || heads <= 0 || kv_b->cols <= 0 || kv_b->cols >= l.mla_cache_dim) return g;
  g.n_head = heads;
  g.kv_lora_rank = kv_b->cols;
  g.rope_dim = l.mla_cache_dim - kv_b->cols;
  g.head_v = o_proj->cols / heads;
  g.head_k = kv_b->rows / heads - g.head_v + g.rope_dim;
  return g;
}

// The model as llama.cpp will hold it after convert_hf_to_gguf.py: its text weights in the row's storage (the fit's
// weight groups; the vision tower and MTP layers are not in the text GGUF), the input embedding and the output head.
estimate::LlamaCppModelShape shape_of(const model::ModelSpec& m, const estimate::Deployment& d, const std::string& variant_id,
                                      std::vector<std::string>& assumptions) {
  estimate::LlamaCppModelShape s;
  s.architecture = m.architecture;
  s.n_layer = m.num_hidden_layers;
  s.n_embd = m.hidden_size;
  s.n_head = m.num_attention_heads;
  s.n_ff = m.intermediate_size;
  s.n_vocab = m.vocab_size;
  s.n_head_kv = m.num_key_value_heads > 0 ? m.num_key_value_heads : m.num_attention_heads;
  s.head_k = s.head_v = m.head_dim > 0 ? m.head_dim : (m.num_attention_heads > 0 ? m.hidden_size / m.num_attention_heads : 0);
  int64_t kv_layers = 0, recurrent = 0;
  bool mla = false;
  for (const auto& l : m.layers) {
    if (caches_kv(l.kind)) {
      if (kv_layers++ == 0 && l.kind != model::LayerKind::mla_attention && l.num_key_value_heads > 0) {
        s.n_head_kv = l.num_key_value_heads;
        s.head_k = l.head_dim_k > 0 ? l.head_dim_k : s.head_k;
        s.head_v = l.head_dim_v > 0 ? l.head_dim_v : s.head_v;
      }
      if (l.kind == model::LayerKind::mla_attention && !mla) {
        mla = true;
        s.n_head_kv = 1;
        s.head_k = l.mla_cache_dim;
        s.head_v = 0;
        s.mla = mla_geometry(m, l);
      }
      if (l.kind == model::LayerKind::sliding_attention) s.n_swa = std::max(s.n_swa, l.sliding_window);
    } else if (l.kind == model::LayerKind::linear_attention || l.kind == model::LayerKind::mamba) {
      ++recurrent;
      s.recurrent_state_bytes_per_seq += static_cast<uint64_t>(l.conv_channels * l.conv_len + l.ssm_heads * l.ssm_head_dim * l.ssm_state_dim) * 4u;
    }
  }
  s.kv_layers = m.layers.empty() ? m.num_hidden_layers : kv_layers;
  s.swa_pattern = s.n_swa > 0 ? swa_pattern_of(m) : 0;
  if (s.n_swa > 0 && s.swa_pattern == 0)
    assumptions.push_back("sliding-window layers that follow no llama.cpp layer pattern: every layer's KV counted at -c cells (an upper bound)");
  if (recurrent)
    assumptions.push_back(format("%lld recurrent layers: their f32 conv and ssm state per slot as llama.cpp's RS buffer (not checked against a real load)",
                                 static_cast<long long>(recurrent)));
  estimate::GroupBytes own;
  const estimate::GroupBytes* g = d.group_bytes && d.group_bytes->bytes.size() == m.weights.size() ? d.group_bytes : &(own = estimate::group_bytes_for(m, d));
  // llamacpp32: a GGUF preset sized tensor by tensor as llama-quantize types it (its mix and the K-quant fallback).
  const auto preset = estimate::gguf_preset_of_variant(variant_id);
  const estimate::GgufPresetBytes mix = preset ? estimate::gguf_preset_bytes(m, *preset) : estimate::GgufPresetBytes{};
  if (preset && mix.fallback_tensors > 0)
    assumptions.push_back(format("%s: %lld tensors have a row width that %s's K-quant block (256) does not divide, so llama-quantize writes them in its "
                                 "fallback type (Q4_K -> Q5_0, Q5_K -> Q5_1, Q6_K -> Q8_0: src/llama-quant.cpp llama_tensor_get_type)",
                                 estimate::gguf_preset_name(*preset), static_cast<long long>(mix.fallback_tensors), estimate::gguf_preset_name(*preset)));
  for (size_t i = 0; i < m.weights.size() && i < g->bytes.size(); ++i) {
    const auto& w = m.weights[i];
    if (w.part != model::Part::text) continue;
    // A GGUF model's tensors are sized as stored (their ggml type); a checkpoint's groups in the row's storage.
    const double group = w.stored_bytes > 0 ? w.stored_bytes * static_cast<double>(w.count) : preset ? mix.group_bytes[i] : g->bytes[i];
    const uint64_t bytes = static_cast<uint64_t>(std::max(0.0, group));
    s.weight_bytes += bytes;
    if (w.module == "model.embed_tokens" || w.module == "token_embd.weight") s.token_embd_bytes += bytes;
    if (w.module == "lm_head" || w.module == "output.weight") s.output_bytes += bytes;
  }
  s.tied_output = s.output_bytes == 0;
  if (s.tied_output) s.output_bytes = s.token_embd_bytes;
  return s;
}

}  // namespace

LlamaServerContext llama_server_context(int64_t context_tokens, int64_t concurrency) {
  LlamaServerContext c;
  c.slots = std::max<int64_t>(1, concurrency);
  const int64_t per_slot = (std::max<int64_t>(1, context_tokens) + k_llama_ctx_pad - 1) / k_llama_ctx_pad * k_llama_ctx_pad;
  c.ctx_size = per_slot * c.slots;
  return c;
}

std::string llama_ctx_train_warning(const model::ModelSpec& m, const LlamaServerContext& server) {
  const int64_t n_ctx_seq = server.ctx_size / std::max<int64_t>(1, server.slots), train = m.max_position_embeddings;
  if (train <= 0 || n_ctx_seq <= train) return "";
  return format("llama.cpp prints 'llama_context: n_ctx_seq (%lld) > n_ctx_train (%lld) -- possible training context overflow' and starts "
                "(src/llama-context.cpp at b7342, a warning, not vLLM's max_model_len refusal; n_ctx_train is the GGUF's context_length, the "
                "config's max_position_embeddings that convert_hf_to_gguf.py writes): positions past %lld are outside what the model was "
                "trained on and its RoPE is not stretched to them unless the command adds the model card's YaRN flags (--rope-scaling yarn "
                "--rope-scale F --yarn-orig-ctx N), so answers degrade past %lld tokens",
                static_cast<long long>(n_ctx_seq), static_cast<long long>(train), static_cast<long long>(train), static_cast<long long>(train));
}

namespace {

// The routed experts' bytes in the row's storage.
double routed_expert_bytes(const model::ModelSpec& m, const estimate::Deployment& d) {
  estimate::GroupBytes own;
  const estimate::GroupBytes* g = d.group_bytes && d.group_bytes->bytes.size() == m.weights.size() ? d.group_bytes : &(own = estimate::group_bytes_for(m, d));
  double experts = 0;
  for (size_t i = 0; i < m.weights.size() && i < g->bytes.size(); ++i)
    if (m.weights[i].part == model::Part::text && m.weights[i].expert)
      experts += m.weights[i].stored_bytes > 0 ? m.weights[i].stored_bytes * static_cast<double>(m.weights[i].count) : g->bytes[i];
  return experts;
}

// Whether the CANN backend's GGML_OP_MUL_MAT_ID takes the row's expert type: F32 / F16 (llama.cpp PR #13042), Q8_0 / Q4_0
// (PR #13705, 2025-05-22); none else (K-quants 'not supported [CANN0]' in PR #14411's op test, MXFP4 never listed).
bool cann_takes_experts(const model::ModelSpec& m, const std::string& variant_id) {
  return variant_id == "gguf_q8_0" || variant_id == "gguf_q4_0" || (variant_id.empty() && !m.quant.quantized() && m.dtype == model::Dtype::f16);
}

}  // namespace

std::string llama_cann_expert_warning(const model::ModelSpec& m, const estimate::Deployment& d, const std::string& variant_id) {
  if (m.num_experts <= 0) return "";
  const double experts = routed_expert_bytes(m, d);
  const std::string source =
      "llama.cpp keeps a weight on the device only where the device's backend supports the op that reads it (llama-model.cpp "
      "weight_buft_supported), else in a host buffer, while the log still says every layer is offloaded; public CANN logs show it: gpt-oss-20b "
      "MXFP4 at b6115 on 8 x 910B4 (CPU_Mapped 10949.33 MiB, the NPUs 1242.03 MiB together) and Qwen3-30B-A3B Q4_0 on a 310P3 (CPU_AARCH64 "
      "15390.00 MiB, CANN0 48.80 MiB)";
  if (!cann_takes_experts(m, variant_id))
    return format("CANN: the routed experts (%.2f GiB) are in a type the CANN backend's MUL_MAT_ID does not take (F32 / F16 from llama.cpp PR #13042, "
                  "Q8_0 / Q4_0 from PR #13705), so they load in host memory, not on the NPU: sized so (the host's memory is not checked): %s",
                  bytes_to_gib(experts), source.c_str());
  return format("CANN: the routed experts (%.2f GiB) are Q8_0 / Q4_0 / F16, which the CANN backend's MUL_MAT_ID takes from llama.cpp PR #13705 "
                "(2025-05-22); a build before it, or a card whose backend refuses them (the 310P3 log), keeps them in host memory: %s",
                bytes_to_gib(experts), source.c_str());
}

void fit_llama_cpp_row(Candidate& c, const model::ModelSpec& m, const device::DeviceSpec& dev, const estimate::Deployment& d, int64_t concurrency,
                       std::optional<int64_t> build) {
  using estimate::Failure;
  if (c.fit.failure != Failure::none && c.fit.failure != Failure::weights_oom && c.fit.failure != Failure::kv_negative &&
      c.fit.failure != Failure::max_model_len_too_large && c.fit.failure != Failure::after_kv_oom)
    return;
  auto row = std::make_shared<LlamaRowBuffers>();
  const LlamaServerContext server = llama_server_context(c.context_tokens, concurrency);
  row->ctx_size = server.ctx_size;
  row->slots = server.slots;
  estimate::LlamaCppModelShape shape = shape_of(m, d, c.variant_id, row->assumptions);
  // llamacpp31: on CANN, experts of a type its MUL_MAT_ID does not take stay in host memory (llama_cann_expert_warning).
  if (dev.platform == "npu" && m.num_experts > 0 && !cann_takes_experts(m, c.variant_id))
    shape.host_expert_bytes = static_cast<uint64_t>(std::max(0.0, routed_expert_bytes(m, d)));
  estimate::LlamaCppOptions o;
  o.ctx_size = server.ctx_size;
  o.parallel = server.slots;
  o.build = build;
  const bool host = dev.platform == "cpu";
  if (!host) {
    o.n_gpu_layers = shape.n_layer + 1;  // the start command's -ngl 999: every layer and the output layer
    if (c.num_devices > 1) o.tensor_split.assign(static_cast<size_t>(c.num_devices), 1.0f);  // --split-mode layer, even split
    o.gpu_name = dev.platform == "cuda" ? "CUDA0" : dev.platform == "rocm" ? "ROCm0" : dev.platform == "npu" ? "CANN0" : "GPU0";
  }
  auto e = estimate::estimate_llama_cpp_model(shape, o);
  if (!e) {
    c.fit.fits = false;
    c.fit.failure = Failure::invalid_layout;
    c.fit.failure_message = "llama.cpp: " + e.error().message;
    return;
  }
  // The most any one device holds: the CPU's buffers on a host row, else each GPU's (the host's share on a GPU row is
  // the input embedding and small buffers, not checked against the host's memory).
  std::vector<std::pair<std::string, double>> per_device;
  for (const auto& b : e->buffers) {
    if (!host && b.device.rfind("CPU", 0) == 0) continue;
    if (!host && b.device == "AMX") continue;
    const std::string name = host ? "CPU" : b.device;
    auto it = std::find_if(per_device.begin(), per_device.end(), [&](const auto& p) { return p.first == name; });
    if (it == per_device.end()) per_device.emplace_back(name, static_cast<double>(b.bytes));
    else it->second += static_cast<double>(b.bytes);
  }
  for (const auto& [name, bytes] : per_device)
    if (bytes > row->device_bytes) {
      row->device_bytes = bytes;
      row->device = name;
    }
  row->model_bytes = static_cast<double>(e->model_buffer_bytes);
  row->kv_bytes = static_cast<double>(e->kv_buffer_bytes);
  row->compute_bytes = static_cast<double>(e->compute_buffer_bytes);
  row->output_bytes = static_cast<double>(e->output_buffer_bytes);
  row->rs_bytes = static_cast<double>(e->rs_buffer_bytes);
  row->formulas = e->formulas;
  row->assumptions.insert(row->assumptions.end(), e->assumptions.begin(), e->assumptions.end());
  if (!host) row->assumptions.push_back("the GPU runtime's own context (a few hundred MiB a card) is not counted");
  if (std::string w = llama_ctx_train_warning(m, server); !w.empty()) row->assumptions.push_back(std::move(w));
  if (dev.platform == "npu") {
    const std::string variant = c.variant_id;
    if (std::string w = llama_cann_expert_warning(m, d, variant); !w.empty()) row->assumptions.push_back(std::move(w));
  }
  c.fit.kv_tokens = e->n_ctx;
  c.fit.max_concurrency = static_cast<double>(server.slots);
  c.fit.available_kv_bytes = row->kv_bytes;
  c.fit.requested_bytes = row->device_bytes;
  c.fit.fits = row->device_bytes <= c.fit.total_bytes;
  c.fit.failure = c.fit.fits ? Failure::none : Failure::after_kv_oom;
  c.fit.failure_message = c.fit.fits ? SharedText()
                                     : SharedText(format("llama.cpp at -c %lld -np %lld needs %.2f GiB on %s (model %.2f + KV %.2f + compute %.2f + output %.2f GiB"
                                                         "%s), above its %.2f GiB",
                                                         static_cast<long long>(server.ctx_size), static_cast<long long>(server.slots),
                                                         bytes_to_gib(row->device_bytes), host ? dev.id.c_str() : row->device.c_str(), bytes_to_gib(row->model_bytes),
                                                         bytes_to_gib(row->kv_bytes), bytes_to_gib(row->compute_bytes), bytes_to_gib(row->output_bytes),
                                                         c.num_devices > 1 ? ", summed over the cards" : "", bytes_to_gib(c.fit.total_bytes)));
  c.fit.llama = std::move(row);
}

}  // namespace preflight::plan
