#include "plan/llama_rows.hpp"

#include <algorithm>
#include <memory>

#include "base/text.hpp"
#include "base/units.hpp"
#include "estimate/llama_cpp.hpp"

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

// The model as llama.cpp will hold it after convert_hf_to_gguf.py: its text weights in the row's storage (the fit's
// weight groups; the vision tower and MTP layers are not in the text GGUF), the input embedding and the output head.
estimate::LlamaCppModelShape shape_of(const model::ModelSpec& m, const estimate::Deployment& d, std::vector<std::string>& assumptions) {
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
  if (mla) assumptions.push_back("MLA layers: llama.cpp's cache taken as one K row of kv_lora_rank + rope dims per token, no V (not checked against a real load)");
  if (recurrent)
    assumptions.push_back(format("%lld recurrent layers: their f32 conv and ssm state per slot as llama.cpp's RS buffer (not checked against a real load)",
                                 static_cast<long long>(recurrent)));
  estimate::GroupBytes own;
  const estimate::GroupBytes* g = d.group_bytes && d.group_bytes->bytes.size() == m.weights.size() ? d.group_bytes : &(own = estimate::group_bytes_for(m, d));
  for (size_t i = 0; i < m.weights.size() && i < g->bytes.size(); ++i) {
    const auto& w = m.weights[i];
    if (w.part != model::Part::text) continue;
    // A GGUF model's tensors are sized as stored (their ggml type); a checkpoint's groups in the row's storage.
    const double group = w.stored_bytes > 0 ? w.stored_bytes * static_cast<double>(w.count) : g->bytes[i];
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

void fit_llama_cpp_row(Candidate& c, const model::ModelSpec& m, const device::DeviceSpec& dev, const estimate::Deployment& d, int64_t concurrency) {
  using estimate::Failure;
  if (c.fit.failure != Failure::none && c.fit.failure != Failure::weights_oom && c.fit.failure != Failure::kv_negative &&
      c.fit.failure != Failure::max_model_len_too_large && c.fit.failure != Failure::after_kv_oom)
    return;
  auto row = std::make_shared<LlamaRowBuffers>();
  const LlamaServerContext server = llama_server_context(c.context_tokens, concurrency);
  row->ctx_size = server.ctx_size;
  row->slots = server.slots;
  const estimate::LlamaCppModelShape shape = shape_of(m, d, row->assumptions);
  estimate::LlamaCppOptions o;
  o.ctx_size = server.ctx_size;
  o.parallel = server.slots;
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
