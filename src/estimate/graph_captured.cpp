// The CUDA graph term of the versions that capture after KV sizing (issue 15, warmup33): see estimate/graph_captured.hpp.
#include "estimate/graph_captured.hpp"

#include <algorithm>

#include "base/text.hpp"
#include "base/units.hpp"
#include "engine/capture_rules.hpp"

namespace preflight::estimate::terms {

Expected<CaptureSizes> captured_graph_sizes(const model::ModelSpec& m, const engine::EngineProfile& engine, const std::string& device_id, const Deployment& dep,
                                            CudagraphMode mode, int64_t max_num_seqs, int64_t max_num_batched_tokens) {
  const auto& g = dep.graph_capture;
  const bool before_011 = engine.applies(engine::capture_rules(engine).piecewise_grid_of_8);
  if (before_011 && !g.mode && mode == CudagraphMode::full_and_piecewise) mode = CudagraphMode::piecewise;
  CaptureInputs in{.max_num_seqs = max_num_seqs,
                   .max_num_batched_tokens = max_num_batched_tokens,
                   .decode_query_len = dep.speculative.method.empty() ? 1 : 1 + std::max<int64_t>(0, dep.speculative.num_speculative_tokens),
                   .default_ceiling = engine.cudagraph_default_ceiling(device_id),
                   .capture_sizes = g.capture_sizes,
                   .max_capture_size = g.max_capture_size,
                   .mode = mode};
  const bool flags = !g.capture_sizes.empty() || g.max_capture_size;
  if (!flags) in.max_capture_size = engine::model_max_capture_size(engine, m.architecture);
  if (!before_011 || flags || in.max_capture_size) return cudagraph_capture_sizes(in);
  // vLLM 0.10 (vllm/config/__init__.py VllmConfig._set_cudagraph_sizes): cuda_graph_sizes [min(max_num_seqs x 2, 512)],
  // batch_size_capture_list = [1, 2, 4] + range(8, ceiling + 1, 8), those above max_num_batched_tokens dropped.
  CaptureSizes c;
  if (mode == CudagraphMode::none) return c;
  // hard34: the product saturates, as vLLM's Python integers do not wrap (2^62 sequences wrapped to a negative ceiling).
  const int64_t ceiling = std::min(capture_ceiling_from_seqs(max_num_seqs, in.decode_query_len, in.default_ceiling), std::max<int64_t>(1, max_num_batched_tokens));
  for (const int64_t s : {int64_t{1}, int64_t{2}, int64_t{4}})
    if (s <= ceiling) c.piecewise.push_back(s);
  for (int64_t s = 8; s <= ceiling; s += 8) c.piecewise.push_back(s);
  if (mode == CudagraphMode::full) c.full = std::move(c.piecewise);
  return c;
}

Expected<std::optional<Term>> estimate_captured_graphs(const model::ModelSpec& m, const StageLayout& lay, const engine::EngineProfile& engine,
                                                       const engine::Overheads& oh, const std::string& device_id, const Deployment& dep,
                                                       bool graph_in_budget, int64_t max_num_seqs, int64_t max_num_batched_tokens) {
  const engine::CapturedGraphCost& cost = engine::captured_graph_cost(oh);
  if (graph_in_budget || !cost.modelled() || max_num_seqs <= 0 || max_num_batched_tokens <= 0 ||
      !engine.applies(engine::capture_rules(engine).graph_captured_after_kv))
    return std::optional<Term>();
  std::string fallback;
  const CudagraphMode mode = resolve_cudagraph_mode(engine, dep, device_id, &fallback);
  if (mode == CudagraphMode::none) return std::optional<Term>();
  PF_TRY(sizes, captured_graph_sizes(m, engine, device_id, dep, mode, max_num_seqs, max_num_batched_tokens));
  const auto pw = static_cast<int64_t>(sizes.piecewise.size()), full = static_cast<int64_t>(sizes.full.size());
  const int64_t layers = std::clamp<int64_t>(lay.first_layers, 0, static_cast<int64_t>(m.layers.size()));
  int64_t moe_layers = 0;
  for (int64_t i = 0; i < layers; ++i) moe_layers += m.layers[static_cast<size_t>(i)].moe ? 1 : 0;
  // Issue 15 (graph34): from 0.11 the per-graph part is the rank's share (engine/capture_rules.hpp graph_captured_per_graph_by_tp).
  const int64_t tp_share = engine.applies(engine::capture_rules(engine).graph_captured_per_graph_by_tp) ? std::max<int64_t>(1, dep.tensor_parallel_size) : 1;
  const double per_graph = cost.per_graph_bytes / static_cast<double>(tp_share) + static_cast<double>(layers) * cost.per_layer_bytes +
                           static_cast<double>(moe_layers) * cost.per_moe_layer_bytes;
  const double bytes = static_cast<double>(pw + full) * per_graph;
  if (!dep.explain) return std::optional<Term>(Term{"graph capture", bytes, bytes * oh.band_fraction, {}, {}});
  std::string notes = fallback;
  for (const auto& n : sizes.notes) notes += (notes.empty() ? "" : "; ") + n;
  const int64_t largest = std::max(sizes.piecewise.empty() ? 0 : sizes.piecewise.back(), sizes.full.empty() ? 0 : sizes.full.back());
  const double mib = 1024.0 * 1024.0;
  const std::string tp_text = tp_share > 1 ? format(" / TP %lld", static_cast<long long>(tp_share)) : std::string();
  return std::optional<Term>(
      Term{"graph capture", bytes, bytes * oh.band_fraction,
           format("captured after KV allocation, outside the budget (needs the 1 - util headroom): (PIECEWISE %lld + FULL %lld) graphs x (%.2f MiB%s + %lld layers x "
                  "%.3f MiB + %lld MoE layers x %.3f MiB) (largest %lld tokens%s%s; %s)",
                  static_cast<long long>(pw), static_cast<long long>(full), cost.per_graph_bytes / mib, tp_text.c_str(), static_cast<long long>(layers),
                  cost.per_layer_bytes / mib,
                  static_cast<long long>(moe_layers), cost.per_moe_layer_bytes / mib, static_cast<long long>(largest), notes.empty() ? "" : "; vLLM: ",
                  notes.c_str(), cost.source.c_str()),
           {{"graph_bytes", bytes},
            {"in_budget", 0.0},
            {"captured_piecewise_graphs", static_cast<double>(pw)},
            {"captured_full_graphs", static_cast<double>(full)},
            {"per_graph_tp_share", static_cast<double>(tp_share)},
            {"layers", static_cast<double>(layers)},
            {"moe_layers", static_cast<double>(moe_layers)},
            {"captured_largest_tokens", static_cast<double>(largest)}}});
}

}  // namespace preflight::estimate::terms
