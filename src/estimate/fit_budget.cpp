// The KV budget of a fit on its card and the per-rank tree (estimate/fit_budget.hpp), per
// shared/reference/engine-memory-accounting.md sections 1.2 and 4.2. Split out of fit.cpp (perfest37).
#include "estimate/fit_budget.hpp"

#include <algorithm>
#include <cmath>

#include "base/text.hpp"
#include "base/units.hpp"

namespace preflight::estimate::budget {

KvBudget kv_budget(FitEstimate& e, const engine::EngineProfile& engine, const engine::Overheads& oh, const Deployment& dep, const terms::StageLayout& lay,
                   const terms::StageWeights& weights, const terms::ProfileRun& run, double non_torch_band) {
  KvBudget k;
  const bool graph_counted = e.graph_in_budget && dep.mode == ExecutionMode::graph;
  e.requested_bytes = e.total_bytes * e.gpu_memory_utilization;
  if (engine.requested_ceil) e.requested_bytes = std::ceil(e.requested_bytes);
  double available = e.requested_bytes - e.weights_bytes - e.activation_bytes - e.non_torch_bytes - e.nccl_buffer_bytes - e.allreduce_workspace_bytes - e.ep_communicator_bytes -
                     e.moe_allgather_bytes - e.moe_backend_workspace_bytes;
  if (graph_counted) available -= e.graph_bytes;
  available = std::floor(std::floor(available) / e.kv_budget_divisor);
  // The last PP stage: fewer layers, the head and the sampler. Its budget in first-stage layer units
  // (blocks scale with the layers a stage caches) decides num_blocks when it is the tighter one.
  double available_blocks = available;
  k.first_stage = k.last_stage = available;
  if (lay.pp > 1 && !dep.kv_cache_memory_bytes) {
    // Every stage on its own card (issue 15): the first with the embedding (and encoder), the middle ones
    // their layers, the last the head and the sampler. num_blocks from the tightest, in first-stage layer units.
    e.stages = terms::estimate_stage_budgets(lay, weights, dep,
                                             {.device_id = e.device_id, .total_bytes = e.total_bytes, .utilization = e.gpu_memory_utilization,
                                              .requested_ceil = engine.requested_ceil, .non_torch_bytes = e.non_torch_bytes,
                                              .graph_bytes = graph_counted ? e.graph_bytes : 0.0, .first_activation_bytes = e.activation_bytes,
                                              .middle_activation_bytes = run.phases.text_forward.bytes, .last_activation_bytes = run.last_stage_peak_bytes,
                                              // every stage's MoE layers gather the same rows, and every stage's TP group holds its NCCL
                                              // buffers: beside its communicators
                                              .ep_communicator_bytes = e.ep_communicator_bytes + e.moe_allgather_bytes + e.nccl_buffer_bytes + e.allreduce_workspace_bytes +
                                                                       e.moe_backend_workspace_bytes,
                                              .kv_budget_divisor = e.kv_budget_divisor});
    if (!e.stages.empty()) {
      if (!dep.stage_devices.empty() && dep.explain)
        e.assumptions.push_back("heterogeneous stages: each stage's requested memory is its own card's total x util; the non-torch, graph and "
                                "activation terms are the engine's for the platform on every card, and the after-KV margin and speed use stage 0's card");
      k.first_stage = e.stages.front().available_kv_bytes;
      k.last_stage = e.stages.back().available_kv_bytes;
      available_blocks = terms::stage_blocks_budget(lay, e.stages);
      for (const auto& st : e.stages) available = std::min(available, st.available_kv_bytes);  // the lowest of the printed lines
      if (dep.explain)
        for (const auto& st : e.stages)
          e.provenance.push_back(format("PP stage %lld on %s: layers %lld-%lld%s, %.2f GiB available", static_cast<long long>(st.stage), st.device_id.c_str(),
                                        static_cast<long long>(st.first_layer), static_cast<long long>(st.first_layer + st.layers - 1),
                                        st.stage == 0 ? " + embedding" : st.stage == lay.pp - 1 ? " + head + sampler" : "", bytes_to_gib(st.available_kv_bytes)));
    }
  }
  if (dep.kv_cache_memory_bytes) {
    available = available_blocks = *dep.kv_cache_memory_bytes;
    k.first_stage = k.last_stage = available;
    if (dep.explain) e.assumptions.push_back(format("KV budget given as %.0f bytes (--kv-cache-memory-bytes): profiling skipped", available));
  }
  k.available = available;
  k.available_blocks = available_blocks;
  k.band = dep.kv_cache_memory_bytes ? 0.0 : std::sqrt(std::pow(e.activation_bytes * oh.band_fraction, 2) + std::pow(non_torch_band, 2) +
                                                       (e.graph_in_budget ? std::pow(e.graph_bytes * oh.band_fraction, 2) : 0.0)) / e.kv_budget_divisor;
  k.band_high = k.band;
  const bool flashinfer_alternative = engine.sampler_logit_copies_if_flashinfer < engine.sampler_logit_copies;
  if (dep.flashinfer_sampler && dep.explain) {  // issue 15: the path is stated, so the band needs no FlashInfer side
    const bool fi = *dep.flashinfer_sampler && flashinfer_alternative;
    e.assumptions.push_back(format("sampling path stated (%s): the sampler run takes %.1f logits copies (%s)", *dep.flashinfer_sampler ? "FlashInfer" : "native",
                                   fi ? engine.sampler_logit_copies_if_flashinfer : engine.sampler_logit_copies,
                                   fi ? "FlashInfer top-k/top-p instead of the native full sort" : engine.sampler_source.c_str()));
  }
  if (!dep.kv_cache_memory_bytes && lay.pp == 1 && flashinfer_alternative && !dep.flashinfer_sampler) {
    // Versions that sample with FlashInfer whenever it is installed: the prediction keeps the native sort,
    // and the high side of the band reaches the FlashInfer path's smaller sampler run.
    const auto& ph = run.phases;
    const double alt_sampler = engine.sampler_logit_copies_if_flashinfer * ph.sampler_unit_bytes + engine.sampler_fixed_bytes + run.held_hidden_bytes;
    const double alt_peak = std::max({ph.text_forward.bytes + ph.encoder_held_bytes, ph.vision_encoder.bytes, alt_sampler + ph.encoder_held_bytes});
    const double saved = std::max(0.0, e.activation_bytes - alt_peak);
    if (saved > 0) {
      k.band_high = k.band + saved;  // one-sided, added
      if (dep.explain)
        e.assumptions.push_back(format("%s samples with FlashInfer when flashinfer is installed (the vLLM Docker images): its sampler run is %.2f GiB instead of the native "
                                     "sort's %.2f, so the KV budget can be up to %.2f GiB larger, which the high end of the band allows for; "
                                     "VLLM_USE_FLASHINFER_SAMPLER=0 makes the native path (this estimate) certain; a log that prints 'Using FlashInfer for top-p & top-k "
                                     "sampling.' took the FlashInfer path (--flashinfer-sampler)",
                                     engine.id.c_str(), bytes_to_gib(alt_sampler), bytes_to_gib(e.activation_sampler_bytes), bytes_to_gib(saved)));
    }
  }
  return k;
}

namespace {

// The terms the KV budget subtracts from the requested memory, in the order the fit states them; `graph`: the graph
// capture is one of them. Shared by the budget's rule and the per-rank tree's.
std::string budget_terms(const FitEstimate& e, bool graph) {
  std::string rule = "requested - weights - activation peak - non-torch";
  if (e.nccl_buffer_bytes > 0) rule += " - NCCL buffers";
  if (e.allreduce_workspace_bytes > 0) rule += " - all-reduce workspace";
  if (graph) rule += " - graph";
  if (e.ep_communicator_bytes > 0) rule += " - EP communicators";
  if (e.moe_allgather_bytes > 0) rule += " - MoE all-gather rows";
  if (e.moe_backend_workspace_bytes > 0) rule += " - MoE backend workspace";
  return rule;
}

}  // namespace

// The budget's formula as the estimate applied it.
std::string budget_rule(const FitEstimate& e, const Deployment& dep) {
  std::string rule = budget_terms(e, e.graph_in_budget && dep.mode == ExecutionMode::graph);
  if (e.kv_budget_divisor > 1) rule = "(" + rule + format(") / %g", e.kv_budget_divisor);
  return rule;
}

// The per-rank tree: one entry for PP 1, else the first stage (encoder, embedding) and the last (head, sampler).
std::vector<RankFootprint> rank_footprints(const FitEstimate& e, const terms::StageLayout& lay, const terms::StageWeights& weights, const terms::ProfileRun& run,
                                           const Term& non_torch, const Term& graph, const KvBudget& budget, const KvGeometry& kv, const engine::Overheads& oh,
                                           bool explain) {
  const std::string kv_rule = !explain ? std::string()
                                       : budget_terms(e, e.graph_in_budget && graph.bytes > 0) +
                                             (e.kv_budget_divisor > 1 ? format(", / %g", e.kv_budget_divisor) : std::string());
  RankFootprint first;
  first.stage = lay.pp > 1 ? "first" : "all";
  first.weights = weights.first;
  first.activation = run.phases;
  first.non_torch = non_torch;
  first.graph = graph;
  first.kv = kv;
  first.available_kv = {"available KV", budget.first_stage, budget.band, kv_rule, {}};
  if (explain) first.available_kv.inputs = {{"requested_bytes", e.requested_bytes}};
  if (lay.pp == 1) return {first};
  RankFootprint last = first;
  last.rank = (lay.pp - 1) * lay.tp;
  last.stage = "last";
  last.weights = weights.last;
  last.activation.vision_encoder = {"vision encoder", 0, 0, "the encoder runs on the first stage", {}};
  last.activation.encoder_held_bytes = 0;
  last.activation.peak = {"activation peak", run.last_stage_peak_bytes, run.last_stage_peak_bytes * oh.band_fraction, "max(text forward, sampler run)", {}};
  first.activation.sampler_run = {"sampler run", 0, 0, "only the last stage samples", {}};
  last.available_kv = {"available KV", budget.last_stage, budget.band, kv_rule, {}};
  if (explain) last.available_kv.inputs = {{"requested_bytes", e.requested_bytes}};
  return {first, last};
}

}  // namespace preflight::estimate::budget
