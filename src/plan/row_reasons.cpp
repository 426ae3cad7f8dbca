#include "plan/row_reasons.hpp"

#include <vector>

#include "base/fixed_text.hpp"
#include "base/text.hpp"
#include "base/units.hpp"

namespace preflight::plan {

ModelFacts model_facts(const model::ModelSpec& m) {
  ModelFacts f;
  const auto p = model::count_params(m);
  f.params = static_cast<double>(p.total);
  for (const auto& l : m.layers) {
    if (l.kv_shared) continue;
    if (l.kind == model::LayerKind::linear_attention || l.kind == model::LayerKind::mamba) ++f.state_layers;
    else if (l.kind != model::LayerKind::mlp_only) ++f.kv_layers;
  }
  std::vector<std::string> facts;
  const int64_t sliding = model::count_layers(m, model::LayerKind::sliding_attention);
  if (sliding > 0) facts.push_back(format("%lld sliding-window layers cache only their window", static_cast<long long>(sliding)));
  if (model::count_layers(m, model::LayerKind::mla_attention) > 0) facts.push_back("MLA: one compressed latent per token, not split by TP");
  if (m.num_experts > 0)
    facts.push_back(format("MoE: all %lld experts load (%.1fB params), %.1fB active per token", static_cast<long long>(m.num_experts), static_cast<double>(p.total) / 1e9,
                           static_cast<double>(p.active) / 1e9));
  std::string joined;
  for (const auto& x : facts) joined += (joined.empty() ? "" : "; ") + x;
  f.layout_free = std::move(joined);
  return f;
}

SharedText architecture_facts(const model::ModelSpec& m, const ModelFacts& f, const RowFit& fit) {
  if (f.state_layers == 0) return f.layout_free;
  FixedText r;
  r << "KV cache in " << f.kv_layers << " of " << static_cast<int64_t>(m.layers.size()) << " layers (" << f.state_layers << " recurrent layers keep a fixed state): ";
  r.fixed(static_cast<double>(fit.kv_bytes_per_token_rank) / 1024.0, 0) << " KiB per token per device";
  if (!f.layout_free.empty()) r << "; " << f.layout_free.str();
  return r.take();
}

std::string failure_reason(const RowFit& f, int64_t context, int64_t largest) {
  using estimate::Failure;
  FixedText r;
  switch (f.failure) {
    case Failure::weights_oom:
      r << "weights ";
      r.fixed(bytes_to_gib(f.weights_bytes), 1) << " GiB per device exceed the ";
      r.fixed(bytes_to_gib(f.requested_bytes), 1) << " GiB budget (";
      r.fixed(f.gpu_memory_utilization, 2) << " x ";
      r.fixed(bytes_to_gib(f.total_bytes), 1) << " GiB)";
      return r.take();
    case Failure::kv_negative:
      r << "no memory left for the KV cache after weights ";
      r.fixed(bytes_to_gib(f.weights_bytes), 1) << " GiB and activations (available ";
      r.fixed(bytes_to_gib(f.available_kv_bytes), 2) << " GiB)";
      return r.take();
    case Failure::max_model_len_too_large:
      r << "KV budget ";
      r.fixed(bytes_to_gib(f.available_kv_bytes), 2) << " GiB holds " << largest << " tokens per request, below the " << context << "-token context";
      return r.take();
    case Failure::unsupported_quantization: {
      std::string m = f.failure_message;
      if (const auto v = m.find("Value error, "); v != std::string::npos) m = m.substr(v + 13);
      for (auto& ch : m) if (ch == '\n') ch = ' ';
      return "engine rejects it: " + m;
    }
    case Failure::invalid_layout: return f.failure_message;
    case Failure::after_kv_oom: return f.failure_message;
    case Failure::mc2_transport: return f.failure_message;
    case Failure::none: break;
  }
  return "does not fit";
}

SharedText RowReasonMemo::failure(RowFit& f, int64_t context, int64_t largest) {
  using estimate::Failure;
  switch (f.failure) {
    case Failure::invalid_layout:
    case Failure::after_kv_oom:
    case Failure::mc2_transport: {  // failure_reason's text is the message
      const std::string& text = f.failure_message.str();
      for (const SharedText& kept : m_messages)
        if (kept.size() == text.size() && kept.str() == text) {
          f.failure_message = kept;
          return kept;
        }
      m_messages.push_back(f.failure_message);
      return f.failure_message;
    }
    case Failure::unsupported_quantization: return text(failure_reason(f, context, largest));  // reads the message
    default: break;
  }
  // What failure_reason reads of each kind; the fields another kind does not read are left at 0 in the key.
  FailureKey key{.failure = f.failure};
  if (f.failure == Failure::weights_oom) {
    key.weights_bytes = f.weights_bytes;
    key.requested_bytes = f.requested_bytes;
    key.gpu_memory_utilization = f.gpu_memory_utilization;
    key.total_bytes = f.total_bytes;
  } else if (f.failure == Failure::kv_negative) {
    key.weights_bytes = f.weights_bytes;
    key.available_kv_bytes = f.available_kv_bytes;
  } else if (f.failure == Failure::max_model_len_too_large) {
    key.available_kv_bytes = f.available_kv_bytes;
    key.context = context;
    key.largest = largest;
  }
  for (const auto& [k, text] : m_failures)
    if (k == key) return text;
  m_failures.emplace_back(key, SharedText(failure_reason(f, context, largest)));
  return m_failures.back().second;
}

SharedText RowReasonMemo::text(std::string text) {
  for (const SharedText& kept : m_texts)
    if (kept.size() == text.size() && kept.str() == text) return kept;
  m_texts.emplace_back(std::move(text));
  return m_texts.back();
}

SharedText RowReasonMemo::facts(const model::ModelSpec& m, const ModelFacts& facts, const RowFit& fit) {
  if (facts.state_layers == 0) return facts.layout_free;
  if (m_model != &m || m_facts != &facts) {
    m_model = &m;
    m_facts = &facts;
    m_facts_texts.clear();
  }
  for (const auto& [kv, text] : m_facts_texts)
    if (kv == fit.kv_bytes_per_token_rank) return text;
  m_facts_texts.emplace_back(fit.kv_bytes_per_token_rank, architecture_facts(m, facts, fit));
  return m_facts_texts.back().second;
}

}  // namespace preflight::plan
