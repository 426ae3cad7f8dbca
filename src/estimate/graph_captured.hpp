// estimate/graph_captured: the CUDA graph term where the engine captures after KV sizing, outside the budget (issue 15,
// warmup33): the graphs vLLM captures at this version and their cost per graph and decoder layer
// (engine/capture_rules.hpp), in place of the platform's flat prior.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/error.hpp"
#include "engine/engine_profile.hpp"
#include "estimate/fit.hpp"
#include "estimate/fit_terms.hpp"
#include "model/model_spec.hpp"

namespace preflight::estimate::terms {

// The capture sizes this version takes without capture flags: the grid of cudagraph_capture_sizes (fit_terms.hpp) from
// 0.11, or before it (engine/capture_rules.hpp piecewise_grid_of_8) PIECEWISE graphs of 1, 2, 4 and the multiples of 8
// up to min(max_num_seqs x decode query length x 2, the device's ceiling, max_num_batched_tokens); the model's own
// max_cudagraph_capture_size (gpt-oss: 1024, the 0.11 grid, not capped by max_num_seqs) where no capture flag is given.
// `mode`: the resolved cudagraph_mode (resolve_cudagraph_mode); before 0.11 its default FULL_AND_PIECEWISE is PIECEWISE.
// invalid_argument: the capture settings vLLM rejects (cudagraph_capture_sizes).
// min(max_num_seqs x decode query length x 2, default_ceiling), the product taken without wrapping (hard34: as vLLM's
// Python integers; a product past 64 bits is past any ceiling). Defined in fit_overhead_terms.cpp beside the grid.
int64_t capture_ceiling_from_seqs(int64_t max_num_seqs, int64_t decode_query_len, int64_t default_ceiling);

Expected<CaptureSizes> captured_graph_sizes(const model::ModelSpec& m, const engine::EngineProfile& engine, const std::string& device_id, const Deployment& dep,
                                            CudagraphMode mode, int64_t max_num_seqs, int64_t max_num_batched_tokens);

// What capture_model takes outside the budget ("Graph capturing finished in N secs, took X GiB"): graphs x (per graph +
// the first stage's decoder layers x per layer + its MoE layers x per MoE layer), the constants fitted on the printed
// figures (engines.json overheads[].graph_captured_*), in the versions engines.json graph_captured_after_kv names (V1 before
// 0.21). nullopt where it does not apply: another version, the graphs are in the budget,
// eager mode or cudagraph_mode NONE, no resolved max_num_seqs / max_num_batched_tokens, or the platform has no constants
// (then estimate_graph's prior). With `dep.explain` the term's inputs name the graph counts (captured_piecewise_graphs,
// captured_full_graphs: not the pre-capture estimate's names, whose log lines fit prints) and the layers.
Expected<std::optional<Term>> estimate_captured_graphs(const model::ModelSpec& m, const StageLayout& lay, const engine::EngineProfile& engine,
                                                       const engine::Overheads& oh, const std::string& device_id, const Deployment& dep,
                                                       bool graph_in_budget, int64_t max_num_seqs, int64_t max_num_batched_tokens);

}  // namespace preflight::estimate::terms
