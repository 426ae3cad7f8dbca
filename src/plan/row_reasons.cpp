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

}  // namespace preflight::plan
