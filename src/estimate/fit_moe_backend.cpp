// estimate/fit_moe_backend: the workspaces a MoE kernel backend chosen with --moe-backend keeps from the profile run on
// (issue 15, evid24; docs/memory-model.md, "The FlashInfer b12x MoE workspace"). The arithmetic is FlashInfer's
// (b12x_moe.py B12xMoEWrapper._allocate_buffers, blackwell_sm12x/moe_dispatch.py allocate_sm120_static_workspace and
// allocate_sm120_dynamic_workspace); every constant comes from engines.json overheads[].moe_backend_workspaces.
#include <algorithm>
#include <cmath>

#include "base/text.hpp"
#include "base/units.hpp"
#include "engine/moe_backend_workspace.hpp"
#include "estimate/fit_terms.hpp"
#include "engine/version_label.hpp"

namespace preflight::estimate::terms {

namespace {

int64_t align_up(int64_t v, int64_t to) { return (v + to - 1) / to * to; }
int64_t div_up(int64_t v, int64_t by) { return (v + by - 1) / by; }

// The record for this deployment's --moe-backend on this engine and card, or null.
const engine::MoeBackendWorkspace* record_for(const engine::Overheads& oh, const engine::EngineProfile& engine, const std::string& device_id, const std::string& backend) {
  if (!oh.moe_backend_workspaces) return nullptr;
  for (const auto& w : *oh.moe_backend_workspaces)
    if (w.allocated_by(engine, backend, device_id)) return &w;
  return nullptr;
}

// The expert weights' format: the experts' own where the scheme gives one, else the linear layers'.
model::WeightFormat expert_format(const model::QuantScheme& scheme) {
  return scheme.expert_format != model::WeightFormat::native ? scheme.expert_format : scheme.linear_format;
}

}  // namespace

MoeBackendWorkspaceSizes moe_backend_workspace_sizes(const engine::MoeBackendWorkspace& w, int64_t num_experts, int64_t top_k, int64_t hidden_size,
                                                     int64_t intermediate_per_partition, int64_t max_num_tokens) {
  MoeBackendWorkspaceSizes s;
  if (num_experts <= 0 || top_k <= 0 || hidden_size <= 0 || intermediate_per_partition <= 0 || max_num_tokens <= 0) return s;
  const int64_t E = num_experts, K = hidden_size;
  // Issue 19 (hard35): the routed rows saturate and every byte count is a double (exact below 2^53): a
  // --max-num-batched-tokens of 2^62 wrapped max_num_tokens x top_k (signed overflow) and the term printed 0.00 GiB.
  int64_t routed = 0;
  const bool saturated = __builtin_mul_overflow(max_num_tokens, top_k, &routed);
  if (saturated) routed = INT64_MAX;
  const double e = static_cast<double>(E), k_half = static_cast<double>(K / 2);
  const double scale_cols = static_cast<double>(align_up(K / w.scale_block, w.scale_column_align));
  s.dynamic = routed > w.static_cutover_routed_rows;
  s.static_rows = s.dynamic ? std::min(routed, w.static_cutover_routed_rows) : routed;
  const double rows_static = static_cast<double>(s.static_rows);
  // allocate_sm120_static_workspace: packed input, its scales, token map and weights (4 B each) per expert and row; three
  // [E] int32 vectors; compact_topk_ids of max(E, rows) int32; three [1] int32 barriers.
  s.static_bytes = e * rows_static * k_half + e * static_cast<double>(align_up(s.static_rows, w.scale_row_align)) * scale_cols + 2 * e * rows_static * 4 +
                   3 * e * 4 + std::max(e, rows_static) * 4 + 3 * 4;
  if (s.dynamic) {
    // allocate_sm120_dynamic_workspace (_dynamic_task_geometry): one extra tile per active expert at most.
    // Past 64 bits the tiles are counted in double from the unsaturated rows (routed > E there).
    const double tiles = saturated ? std::ceil(static_cast<double>(max_num_tokens) * static_cast<double>(top_k) / static_cast<double>(w.tile_rows)) + e - 1
                                   : static_cast<double>(routed / w.tile_rows + (routed % w.tile_rows != 0) + std::min(E, routed) - 1);
    s.dynamic_tiles = tiles < 9.2e18 ? static_cast<int64_t>(tiles) : INT64_MAX;
    const double rows = tiles * static_cast<double>(w.tile_rows);
    const double tasks = tiles * static_cast<double>(div_up(intermediate_per_partition, w.tile_columns));
    s.dynamic_bytes = rows * k_half + rows * scale_cols + 2 * rows * 4 + 6 * tasks * 4 + tiles * 4 + 2 * e * 4 + (e + 1) * 4 + 6 * 4;
  }
  s.output_bytes = static_cast<double>(max_num_tokens) * static_cast<double>(K) * static_cast<double>(w.output_bytes_per_element);
  s.layer_bytes = s.static_bytes + s.dynamic_bytes + s.output_bytes;
  return s;
}

Term estimate_moe_backend_workspace(const model::ModelSpec& m, const model::QuantScheme& scheme, const engine::Overheads& oh, const engine::EngineProfile& engine,
                                    const std::string& device_id, const StageLayout& lay, const Deployment& dep, int64_t expert_parallel_size,
                                    int64_t max_num_batched_tokens, std::vector<std::string>& assumptions) {
  const Term none{"MoE backend workspace", 0, 0, {}, {}};
  if (m.num_experts <= 0 || dep.moe_backend.empty()) return none;
  const std::string backend = engine::normalize_moe_backend(dep.moe_backend);
  const engine::MoeBackendWorkspace* w = record_for(oh, engine, device_id, backend);
  if (!w) return none;
  const std::string format_name = model::weight_format_name(expert_format(scheme));
  if (format_name != w->weight_format) {
    if (dep.explain)
      assumptions.push_back(format("--moe-backend %s takes %s expert weights only; with %s experts vLLM refuses it, so no workspace is counted (%s)", backend.c_str(),
                                   w->weight_format.c_str(), format_name.c_str(), w->conditions_source.c_str()));
    return none;
  }
  if (expert_parallel_size > 1) {
    if (dep.explain)
      assumptions.push_back(format("--moe-backend %s with expert parallelism: FlashInfer's B12xMoEWrapper raises NotImplementedError when the local experts are not all "
                                   "experts, so no workspace is counted (%s)", backend.c_str(), w->conditions_source.c_str()));
    return none;
  }
  // The MoE layers of the first stage (the only one at PP 1): each builds its own wrapper.
  int64_t layers = 0;
  for (int64_t i = 0; i < std::min<int64_t>(lay.first_layers, static_cast<int64_t>(m.layers.size())); ++i)
    if (m.layers[static_cast<size_t>(i)].moe) ++layers;
  if (layers == 0) return none;
  // vLLM's intermediate_size_per_partition: the expert width over the TP x DP ranks the experts are split across.
  const int64_t n = div_up(m.moe_intermediate_size, lay.expert_ranks());
  const MoeBackendWorkspaceSizes s = moe_backend_workspace_sizes(*w, m.num_experts, m.num_experts_per_tok, m.hidden_size, n, max_num_batched_tokens);
  const double bytes = s.layer_bytes * static_cast<double>(layers);
  if (lay.pp > 1 && dep.explain)
    assumptions.push_back(format("--moe-backend %s at PP %lld: every stage is given the first stage's %lld MoE layers of workspace", backend.c_str(),
                                 static_cast<long long>(lay.pp), static_cast<long long>(layers)));
  if (!dep.explain) return {none.name, bytes, 0, {}, {}};
  const double mib = 1024.0 * 1024.0;
  return {none.name, bytes, 0,
          format("--moe-backend %s: one B12xMoEWrapper per MoE layer, built in the profile run and kept, %lld layers x %.2f MiB (capacity max_num_batched_tokens %lld x "
                 "top_k %lld = %.0f routed rows over %lld experts, hidden %lld, expert width %lld per rank: static workspace of %lld rows %.2f MiB%s, output %.2f MiB) "
                 "on %s %s, %s (versions: %s; when: %s; layout: %s)",
                 backend.c_str(), static_cast<long long>(layers), s.layer_bytes / mib, static_cast<long long>(max_num_batched_tokens),
                 static_cast<long long>(m.num_experts_per_tok), static_cast<double>(max_num_batched_tokens) * static_cast<double>(m.num_experts_per_tok), static_cast<long long>(m.num_experts),
                 static_cast<long long>(m.hidden_size), static_cast<long long>(n), static_cast<long long>(s.static_rows), s.static_bytes / mib,
                 s.dynamic ? format(" + dynamic workspace of %lld tiles %.2f MiB", static_cast<long long>(s.dynamic_tiles), s.dynamic_bytes / mib).c_str() : "",
                 s.output_bytes / mib, engine.engine.c_str(), engine::version_label(engine).c_str(), device_id.c_str(), w->counted.source.c_str(), w->conditions_source.c_str(),
                 w->layout_source.c_str()),
          {{"moe_layers", static_cast<double>(layers)}, {"layer_bytes", s.layer_bytes}, {"static_bytes", s.static_bytes}, {"dynamic_bytes", s.dynamic_bytes},
           {"output_bytes", s.output_bytes}, {"max_num_tokens", static_cast<double>(max_num_batched_tokens)}}};
}

}  // namespace preflight::estimate::terms
