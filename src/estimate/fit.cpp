// Memory arithmetic of vLLM V1 and vllm-ascend start-up, per shared/reference/engine-memory-accounting.md:
//   requested = total x util (sec 1.1; ceil on CUDA >= 0.14)
//   available = requested - weights - activation peak - non-torch increase [- graph estimate]   (1.2, 4.2)
//   pages, groups and num_blocks (sec 2-4), printed tokens and concurrency (2.3, 2.4).
// The terms are computed one per function in fit_terms.cpp (weights, drafter), fit_profile.cpp (profile run),
// fit_overhead_terms.cpp (non-torch, communication, graph) and fit_kv.cpp (KV geometry); the flag and config
// readings are in fit_inputs.cpp, the verdict and the printed lines in fit_verdict.cpp, the budget and the per-rank
// tree in fit_budget.cpp. This file resolves the settings, checks the layout and quantization, and puts a fit's core
// (the terms before the budget, FitCoreMemo's entries) and its rest together.
#include "estimate/fit.hpp"

#include "estimate/fit_budget.hpp"
#include "estimate/fit_checks.hpp"
#include "estimate/fit_memo.hpp"
#include "estimate/fit_terms.hpp"
#include "estimate/fit_verdict.hpp"
#include "estimate/graph_captured.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <iterator>
#include <map>
#include <span>

#include "base/checked.hpp"
#include "base/fixed_text.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "model/context_length.hpp"
#include "model/quant_variant.hpp"
#include "engine/moe_backend_workspace.hpp"
#include "engine/nccl_buffers.hpp"
#include "engine/version_label.hpp"

namespace preflight::estimate {

using model::LayerKind;
using model::ModelSpec;
using model::Shard;
using model::WeightFormat;

namespace {

// Whether vLLM gives the card its large-device batch defaults (get_batch_defaults, below): part of a card's fit class.
// Issue 15: a unified-memory CUDA device (GB10) never does either: vLLM's NvmlCudaPlatform.get_device_total_memory
// reads pynvml.nvmlDeviceGetMemoryInfo, which has no answer on a card without its own memory, get_batch_defaults
// catches the error and takes device memory as 0 (a GB10 log at 0.13 prints "Chunked prefill is enabled with
// max_num_batched_tokens=2048", the small API-server default, on 119.7 GiB).
bool large_batch_device(double total_bytes, const device::DeviceSpec& device, const engine::EngineProfile& engine) {
  if (engine.platform == "cuda" && device.memory_kind == "unified") return false;
  return total_bytes >= 70.0 * k_gib && device.family != "ampere" && engine.platform != "npu";
}

// Defaults the engine version and the device decide (vLLM get_batch_defaults: devices of >= 70 GiB
// that are not A100 get the larger batch defaults; NPUs never do, as get_device_total_memory raises
// there and device memory reads as 0).
Status resolve_settings(FitEstimate& e, const ModelSpec& m, const device::DeviceSpec& device, const engine::EngineProfile& engine, const Deployment& dep) {
  e.total_bytes = dep.device_total_bytes.value_or(device.usable_total_bytes());
  if (!dep.device_total_bytes && !device.runtime_total_bytes && dep.explain) {
    if (!device.class_runtime_total_rule.empty()) e.assumptions.push_back(device.class_runtime_total_rule);
    else e.assumptions.push_back(format("%s: runtime total memory unknown and no measured %s %s card to scale from; used the nominal %.2f GiB", device.id.c_str(),
                                        device.vendor.c_str(), device.memory_kind.c_str(), bytes_to_gib(device.memory_bytes)));
  }
  e.gpu_memory_utilization = dep.gpu_memory_utilization.value_or(engine.default_gpu_memory_utilization);
  if (!dep.gpu_memory_utilization && dep.explain) e.assumptions.push_back(format("gpu_memory_utilization %.2f (%s default)", e.gpu_memory_utilization, engine.id.c_str()));
  const bool large_device = large_batch_device(e.total_bytes, device, engine);
  e.max_num_batched_tokens = dep.max_num_batched_tokens.value_or(large_device ? engine.max_num_batched_tokens_large_device : engine.max_num_batched_tokens);
  e.max_num_seqs = dep.max_num_seqs.value_or(large_device ? engine.max_num_seqs_large_device : engine.max_num_seqs);
  // V0 without chunked prefill (its default up to 32K context) schedules a whole prompt at once.
  if (const int64_t len = dep.max_model_len.value_or(model::max_model_len_of(m, 0));
      !dep.max_num_batched_tokens && !dep.enable_chunked_prefill.has_value() && engine.unchunked_prefill_up_to > 0 && len > 0 && len <= engine.unchunked_prefill_up_to)
    e.max_num_batched_tokens = std::max(e.max_num_batched_tokens, len);
  // Issue 15 (round 14): chunked prefill stated off (a V0 engine prints chunked_prefill_enabled=False; V0 on ROCm never
  // turns it on by itself, vLLM arg_utils _set_default_args_v0 does so only on CUDA above 32K) and no
  // --max-num-batched-tokens: SchedulerConfig sets max_num_batched_tokens = max(max_model_len, 2048), whatever the length.
  if (const int64_t len = dep.max_model_len.value_or(model::max_model_len_of(m, 0));
      !dep.max_num_batched_tokens && dep.enable_chunked_prefill == false && len > 0) {
    e.max_num_batched_tokens = std::max<int64_t>(len, 2048);
    if (dep.explain)
      e.assumptions.push_back(format("chunked prefill off (as stated), max_num_batched_tokens unset: max(max_model_len, 2048) = %lld tokens in the profile run "
                                     "(vLLM SchedulerConfig)", static_cast<long long>(e.max_num_batched_tokens)));
  }
  // Issue 19 (hard35): vLLM's SchedulerConfig checks the sizes it was given (vLLM-Ascend's scheduler, below, comes later).
  if (auto accepted = checks::scheduler_batch_accepted(e, engine, dep); !accepted) return accepted.error();
  // Issue 15: vLLM-Ascend 0.10.2 forces its Ascend scheduler (whole prompts) on non-MLA text-only models.
  const int64_t whole = terms::whole_prompt_batched_tokens(m, engine, e.max_num_batched_tokens, dep.max_model_len.value_or(model::max_model_len_of(m, 4096)));
  if (whole != e.max_num_batched_tokens && dep.explain)
    e.assumptions.push_back(format("max_num_batched_tokens %lld -> max_model_len %lld: %s %s turns its Ascend scheduler on for a non-MLA text-only model "
                                   "(chunked prefill off unless additional_config ascend_scheduler_config.enable_chunked_prefill), so the profile run forwards "
                                   "max_model_len tokens (%s)",
                                   static_cast<long long>(e.max_num_batched_tokens), static_cast<long long>(whole), engine.engine.c_str(),
                                   engine::version_label(engine).c_str(), engine.whole_prompt_prefill->source.c_str()));
  e.max_num_batched_tokens = whole;
  e.kv_cache_dtype = dep.kv_cache_dtype.empty() ? "auto" : dep.kv_cache_dtype;
  const auto& fams = engine.kv_budget_divided_families;
  if (std::find(fams.begin(), fams.end(), device.family) != fams.end()) {
    e.kv_budget_divisor = engine.kv_budget_divisor;
    if (dep.explain)
      e.assumptions.push_back(format("%s on %s (%s): the KV budget is divided by %g (%s)", engine.id.c_str(), device.id.c_str(), device.family.c_str(),
                                     engine.kv_budget_divisor, engine.kv_budget_divisor_source.c_str()));
  }
  return Ok{};
}

// The drafter's weights join the load line of the stage that runs it (the last; the only one at PP 1).
void add_drafter(FitEstimate& e, terms::StageWeights& weights, const terms::Drafter& drafter, const terms::StageLayout& lay, const Deployment& dep) {
  if (dep.speculative.method.empty()) return;
  e.drafter_layers = drafter.layers;
  e.drafter_weights_bytes = drafter.weights_bytes;
  if (lay.pp == 1) weights.first.bytes += drafter.weights_bytes;
  weights.last.bytes += drafter.weights_bytes;
  if (!dep.explain) return;
  e.assumptions.push_back(format("speculative decoding (%s, %lld tokens): %s", dep.speculative.method.c_str(),
                                 static_cast<long long>(dep.speculative.num_speculative_tokens),
                                 drafter.rule.empty() ? "no drafter weights or KV layers" : drafter.rule.c_str()));
  if (drafter.weights_bytes > 0) {
    weights.first.rule += format(" + drafter %.2f GiB (%s)", bytes_to_gib(drafter.weights_bytes), dep.speculative.method.c_str());
    weights.first.inputs.emplace_back("drafter_weights_bytes", drafter.weights_bytes);
  }
}

// Issues 15/16: what the engine runs a ModelSlim checkpoint as (its quantization stated only by
// quant_model_description.json) when --quantization is not given. vLLM-Ascend takes "ascend" from the
// descriptor only where a quantization_auto_detect "descriptor_file" record covers the version, from config.json's
// quantization_config through override_quantization_method where one covers it, else config.json's own
// quant_method; with neither, quant_config stays None and every layer is built unquantized in the model dtype.
struct FlaglessQuantization {
  bool applies = false;  // a ModelSlim checkpoint served without --quantization by an engine that knows "ascend"
  std::string method;    // what the engine runs: "ascend", config.json's own method, or "" (unquantized)
  std::string note;
};

// The note is an assumption of the estimate, so it is written only when the deployment explains itself.
FlaglessQuantization flagless_quantization(const ModelSpec& m, const engine::EngineProfile& engine, const Deployment& dep) {
  FlaglessQuantization out;
  if (!modelslim_without_quantization_flag(m, dep) || !engine.accepts_quantization("ascend")) return out;
  out.applies = true;
  const std::string& cfg = m.quant.config_quant_method;
  const auto* r = engine.auto_detect("descriptor_file");
  const auto* c = r || cfg.empty() ? nullptr : engine.auto_detect("config_quantization_config");
  out.method = r ? r->method : c ? c->method : cfg;
  if (!dep.explain) return out;
  const std::string who = engine.engine + " " + engine::version_label(engine);
  if (r) {
    out.note = format("%s without --quantization: quant_model_description.json is detected and the checkpoint runs as '%s'%s (%s)", who.c_str(), r->method.c_str(),
                      r->local_paths_only ? ", from a local directory only (a hub repo id is not looked into at this version)" : "", r->source.c_str());
  } else if (c) {
    out.note = format("%s without --quantization: config.json's quantization_config (quant_method '%s') selects '%s' (%s)", who.c_str(), cfg.c_str(), c->method.c_str(),
                      c->source.c_str());
  } else if (!cfg.empty()) {
    out.note = format("%s without --quantization: config.json keeps a quantization_config with quant_method '%s', which the engine takes instead of "
                      "quant_model_description.json (override_quantization_method selects 'ascend' only for one naming no quant_method); "
                      "fix: remove quantization_config from config.json, as msModelSlim's saver does, and pass --quantization ascend",
                      who.c_str(), cfg.c_str());
  } else {
    out.note = format("%s without --quantization: config.json has no quantization_config and this version does not read quant_model_description.json "
                      "on its own (no quantization_auto_detect record covers it), so vLLM leaves quant_config None and builds every layer unquantized "
                      "(UnquantizedLinearMethod, fused_moe/layer.py UnquantizedFusedMoEMethod.create_weights) in %s: weights sized as the unquantized "
                      "model, not as the int8 checkpoint; fix: add --quantization ascend",
                      who.c_str(), model::dtype_name(m.dtype));
  }
  return out;
}

// Issue 19: what a fit computes before its KV budget (resolve_settings, the layout and quantization checks, weights,
// drafter, profile run, NCCL buffers, non-torch, graph, EP communicators, MoE all-gather, MC2 transport), all of which
// read the card only through its fit class (estimate/fit_memo.hpp): the budget and what follows read its memory (fit_rest).
struct FitCore {
  FitEstimate e;          // filled up to the budget; device_id and total_bytes are those of the card it was computed on
  bool decided = false;   // the layout or the quantization was refused: `e` is the whole answer
  terms::StageLayout lay;
  terms::StageWeights weights;
  terms::Drafter drafter;
  terms::ProfileRun run;
  Term non_torch, graph;
  terms::Mc2TransportVerdict mc2;
  int64_t max_model_len = 0;
  // Planfast10: what the profile run read besides the model, engine, overheads, layout and deployment (which the memo's
  // entries of one deployment share): another class's core with the same three takes `run` as it is.
  bool run_made = false, run_shared = false;
  int64_t run_batched_tokens = 0, run_max_num_seqs = 0;
  double run_moe_routed_bytes = 0;
  // Planfast11: the weights as estimate_weights gave them (before the drafter and the per-layer extras) and what they
  // read of the card besides the memo's key (terms::fp8_marlin_fallback, terms::embedding_nz_copy_on, its MXFP4 layout)
  // and the batched tokens its class's settings give (deepstack buffers). Another class's core with the same takes them
  // as they are: the weights depend on the model, variant, layout and engine, not on the card's memory.
  terms::StageWeights weights_estimated;
  bool weights_made = false, weights_shared = false;
  bool weights_fp8_marlin = false, weights_embedding_nz = false;
  const engine::Mxfp4Layout* weights_mxfp4 = nullptr;
  int64_t weights_batched_tokens = 0;
  // Planfast11: the KV cache's shape (terms::estimate_kv_shape: it reads no budget), made by the first fit_rest of an
  // unexplained fit and taken by the other cards of the class, which differ in their budget alone.
  std::optional<KvGeometry> kv_shape;
  // Perfest37: without a kv_shape of its own, the shape of a core of another class that reads the same (fit_core), in the
  // same memo: its entry lives as long as this one (a memo's entries are cleared together).
  const KvGeometry* shared_shape = nullptr;
};

Expected<FitEstimate> fit_as_deployed(const ModelSpec& m, const device::DeviceSpec& device, const engine::EngineProfile& engine, const engine::Overheads& oh,
                                      const Deployment& dep, FitCoreMemo* memo);

// The deployments a FitCoreMemo serves (estimate/fit_memo.hpp): no text, no rank tree, the card's own total, one card.
bool memoizable(const Deployment& dep) { return !dep.explain && !dep.rank_tree && !dep.device_total_bytes && dep.stage_devices.empty(); }

Expected<FitEstimate> try_fit(const ModelSpec& m, const device::DeviceSpec& device, const engine::EngineProfile& engine, const engine::Overheads& oh,
                              const Deployment& dep, FitCoreMemo* memo) {
  const FlaglessQuantization flagless = flagless_quantization(m, engine, dep);
  if (!flagless.applies || flagless.method == "ascend") {
    auto e = fit_as_deployed(m, device, engine, oh, dep, memo);
    if (e && flagless.applies && dep.explain) e->assumptions.push_back(flagless.note);
    return e;
  }
  Deployment as_run = dep;
  as_run.group_bytes = nullptr;
  if (flagless.method.empty()) {
    model::QuantScheme unquantized;
    unquantized.source = m.quant.source;
    unquantized.detail = flagless.note;
    as_run.quant_scheme = unquantized;  // also keeps the checkpoint's int8 header bytes out of the weights
  } else {
    as_run.quantization = flagless.method;
  }
  auto e = fit_as_deployed(m, device, engine, oh, as_run, memo);
  if (!e) return e;
  if (!flagless.method.empty()) {
    if (dep.explain) e->assumptions.push_back(flagless.note);
    return e;
  }
  e->quantization.clear();  // the engine runs no quantization method (the note is among the assumptions)
  if (e->failure == Failure::weights_oom) e->failure_message = e->failure_message.str() + "; the ModelSlim checkpoint was built unquantized: add --quantization ascend";
  return e;
}
}  // namespace

Expected<FitEstimate> try_estimate_fit(const ModelSpec& m, const device::DeviceSpec& device, const engine::EngineProfile& engine, const engine::Overheads& oh,
                                       const Deployment& dep) {
  return try_fit(m, device, engine, oh, dep, nullptr);
}

Expected<FitEstimate> try_estimate_fit(FitCoreMemo& memo, const ModelSpec& m, const device::DeviceSpec& device, const engine::EngineProfile& engine,
                                       const engine::Overheads& oh, const Deployment& dep) {
  return try_fit(m, device, engine, oh, dep, &memo);
}

namespace {

// Fills `core` (a default FitCore) for `device`; an error leaves it partly filled.
// `siblings` (planfast10): the cores of other fit classes of the same memo key but the card (the same model, engine,
// overheads and deployment), oldest first; the last one's profile run is taken where the run read the same batch
// settings and routed rows, and (planfast11) the weights of any whose card read the same for them (FitCore). `cls`:
// the card's fit class (its MXFP4 layout), given with siblings.
Status fit_core(FitCore& core, const ModelSpec& m, const device::DeviceSpec& device, const engine::EngineProfile& engine, const engine::Overheads& oh,
                const Deployment& dep, std::span<const FitCore* const> siblings = {}, const FitClass* cls = nullptr) {
  const FitCore* sibling = siblings.empty() ? nullptr : siblings.back();
  FitEstimate& e = core.e;
  e.engine_id = engine.id;
  e.device_id = device.id;
  terms::StageLayout& lay = core.lay;
  lay = terms::stage_layout(m, dep.tensor_parallel_size, dep.pipeline_parallel_size, dep.data_parallel_size, dep.pp_layer_partition);
  if (dep.num_redundant_experts > 0 && dep.enable_expert_parallel && m.num_experts > 0)
    lay.expert_copies = static_cast<double>(m.num_experts + dep.num_redundant_experts) / static_cast<double>(m.num_experts);
  // Shared experts whole on every rank: vLLM's sequence-parallel MoE (DP > 1, EP, TP > 1), or, where vLLM-Ascend keeps
  // that off (issue 15, dsv32: engines.json shared_experts_whole_only_with_sp), its own shared-expert DP switches.
  if (engine.applies(engine.shared_experts_whole_only_with_sp))
    lay.sequence_parallel_moe = m.num_experts > 0 && lay.tp > 1 && (dep.flashcomm1 || dep.enable_shared_expert_dp);
  else
    lay.sequence_parallel_moe = dep.enable_expert_parallel && m.num_experts > 0 && lay.dp > 1 && lay.tp > 1;
  e.tensor_parallel_size = lay.tp;
  e.pipeline_parallel_size = lay.pp;
  e.data_parallel_size = lay.dp;
  e.decode_context_parallel_size = std::max<int64_t>(1, dep.decode_context_parallel_size);
  e.expert_parallel_size = dep.enable_expert_parallel && m.num_experts > 0 ? lay.expert_ranks() : 1;
  if (auto settled = resolve_settings(e, m, device, engine, dep); !settled) return settled.error();
  if (!checks::layout_accepted(e, m, dep) || !checks::quantization_accepted(e, m, engine, dep)) {
    core.decided = true;
    return Ok{};
  }
  const model::QuantScheme& scheme = terms::deployed_scheme(m, dep);  // sized_model(m, dep).quant, without copying the model
  if (scheme.method != m.quant.method && (!dep.quantization.empty() || dep.quant_scheme) && dep.explain) e.assumptions.push_back(scheme.detail);
  e.weight_scheme = dep.group_bytes && dep.group_bytes->for_model(m, scheme) ? dep.group_bytes->weight_scheme : SharedText(terms::weight_scheme_name(m, scheme));

  // Issue 19 (round 18): weights, profile run and KV read where their Expected holds them, not moved out (PF_TRY) again.
  terms::StageWeights& weights = core.weights;
  const FitCore* donor = nullptr;
  const bool keep_weights = cls && !dep.explain;  // an explained fit's texts name the card
  const bool fp8_marlin = keep_weights && terms::fp8_marlin_fallback(device, engine), embedding_nz = keep_weights && terms::embedding_nz_copy_on(device, engine);
  if (keep_weights)
    for (const FitCore* o : siblings)
      if (o->weights_made && o->weights_batched_tokens == e.max_num_batched_tokens && o->weights_mxfp4 == cls->mxfp4 && o->weights_fp8_marlin == fp8_marlin &&
          o->weights_embedding_nz == embedding_nz)
        donor = o;
  if (donor) {
    weights = donor->weights_estimated;
    core.weights_shared = true;
  } else {
    auto weights_result = terms::estimate_weights(m, scheme, device, engine, oh, dep, lay, e.max_num_batched_tokens);
    if (!weights_result) return weights_result.error();
    weights = std::move(*weights_result);
  }
  if (keep_weights) {  // for the classes after this one
    core.weights_estimated = weights;
    core.weights_made = true;
    core.weights_fp8_marlin = fp8_marlin;
    core.weights_embedding_nz = embedding_nz;
    core.weights_mxfp4 = cls->mxfp4;
    core.weights_batched_tokens = e.max_num_batched_tokens;
  }
  core.drafter = terms::estimate_drafter(m, scheme, dep, lay);
  const terms::Drafter& drafter = core.drafter;
  add_drafter(e, weights, drafter, lay, dep);
  // Per-layer extras sized on the first stage; the last stage holds them in proportion to its layers.
  const auto add_per_layer = [&](double first_stage_bytes) {
    weights.first.bytes += first_stage_bytes;
    weights.last.bytes += first_stage_bytes * static_cast<double>(lay.last_layers) / static_cast<double>(lay.first_layers);
  };
  e.dsa_cp_weights_bytes = terms::estimate_dsa_cp_extra(m, scheme, engine, dep, lay, weights.first.rule);
  add_per_layer(e.dsa_cp_weights_bytes);
  e.expert_scale_copy_bytes = terms::estimate_expert_scale_copies(m, scheme, engine, device.family, dep, lay, weights.first.rule);
  add_per_layer(e.expert_scale_copy_bytes);
  e.gate_fp32_extra_bytes = terms::estimate_gate_fp32_extra(m, engine, dep, lay, weights.first.rule);
  add_per_layer(e.gate_fp32_extra_bytes);
  e.sfa_mlapo_bytes = terms::estimate_sfa_mlapo_copies(m, scheme, engine, dep, lay, weights.first.rule);
  add_per_layer(e.sfa_mlapo_bytes);
  e.weights_bytes = weights.first.bytes;
  // The itemized budget, only where the caller keeps it (Deployment::memory_terms; a plan fits tens of thousands).
  const auto keep_term = [&](const Term& t) {
    if (dep.memory_terms) e.terms.push_back(t);
  };
  if (dep.memory_terms) e.terms.reserve(6);  // weights, activation peak, non-torch, NCCL buffers, graph, available KV: no regrowth
  keep_term(weights.first);

  // max_model_len: the flag, else the model's own (it also sizes Qwen2-VL's dummy video).
  const int64_t L = core.max_model_len = dep.max_model_len.value_or(model::max_model_len_of(m, 4096));
  const Term moe_all2all = terms::estimate_moe_all2all_rows(m, scheme, engine, device.family, dep, lay, e.expert_parallel_size, e.max_num_batched_tokens);
  terms::ProfileRun& run = core.run;
  if (sibling && sibling->run_made && sibling->run_batched_tokens == e.max_num_batched_tokens && sibling->run_max_num_seqs == e.max_num_seqs &&
      sibling->run_moe_routed_bytes == moe_all2all.bytes && sibling->max_model_len == L) {
    run = sibling->run;  // estimate_profile_run reads no card: the same inputs, the same run
    core.run_shared = true;
  } else {
    auto run_result = terms::estimate_profile_run(m, engine, oh, dep, lay, e.max_num_batched_tokens, e.max_num_seqs, L, moe_all2all.bytes);
    if (!run_result) return run_result.error();
    run = std::move(*run_result);
  }
  core.run_made = !dep.explain;  // an explained run holds the all-to-all assumption added below
  core.run_batched_tokens = e.max_num_batched_tokens;
  core.run_max_num_seqs = e.max_num_seqs;
  core.run_moe_routed_bytes = moe_all2all.bytes;
  if (dep.explain && moe_all2all.bytes > 0) run.assumptions.push_back("MoE all-to-all routed rows in the text forward: " + moe_all2all.rule);
  const auto& ph = run.phases;
  e.activation_text_unit_bytes = ph.text_unit_bytes;
  e.activation_sampler_unit_bytes = ph.sampler_unit_bytes;
  e.activation_text_bytes = ph.text_forward.bytes;
  e.activation_sampler_bytes = ph.sampler_run.bytes;
  e.activation_vision_unit_bytes = ph.vision_unit_bytes;
  e.activation_vision_bytes = ph.vision_encoder.bytes;
  e.activation_encoder_held_bytes = ph.encoder_held_bytes;
  e.activation_text_workspace_bytes = ph.text_workspace_bytes;
  e.activation_text_moe_routed_bytes = ph.text_moe_routed_bytes;
  e.activation_drafter_buffers_bytes = ph.drafter_buffers_bytes;
  e.activation_drafter_held_output_bytes = ph.drafter_held_output_bytes;
  e.activation_vision_pixel_bytes = ph.vision_pixel_bytes;
  e.encoder_profiles_video = run.encoder_profiles_video;
  e.encoder_budget_tokens = run.encoder_budget_tokens;
  e.encoder_items = run.encoder_items;
  e.activation_bytes = ph.peak.bytes;
  e.assumptions.insert(e.assumptions.end(), run.assumptions.begin(), run.assumptions.end());
  keep_term(ph.peak);
  // Issue 15/16 (nccl): the NCCL buffers the version counts, by interconnect; where they apply they replace the fixed
  // multi-rank share of the non-torch term. Issue 15 (tpws): vLLM 0.19's FlashInfer all-reduce workspace is a term beside them.
  const Term nccl = terms::estimate_nccl_buffers(oh, engine, device.family, lay, dep);
  e.nccl_buffer_bytes = nccl.bytes;
  core.non_torch = terms::estimate_non_torch(oh, engine, device.family, lay, dep.explain, nccl.bytes);
  const Term& non_torch = core.non_torch;
  e.non_torch_bytes = non_torch.bytes;
  e.non_torch_counted = terms::non_torch_counted(engine, oh, device.family);
  keep_term(non_torch);
  const Term fi_workspace = terms::estimate_allreduce_workspace(m, oh, engine, device.id, lay, dep, e.max_num_batched_tokens);
  e.allreduce_workspace_bytes = fi_workspace.bytes;
  for (const Term* t : {&nccl, &fi_workspace})
    if (t->bytes > 0) keep_term(*t);
  e.graph_in_budget = oh.graph_memory_in_budget.value_or(engine.graph_memory_in_budget);
  std::string fallback;
  auto graph_result = terms::estimate_graph(oh, engine, device.id, dep, e.graph_in_budget, e.max_num_seqs, e.max_num_batched_tokens, &fallback);
  if (!graph_result) return graph_result.error();
  core.graph = std::move(*graph_result);
  // Issue 15 (warmup33): captured after KV sizing, the graphs' own cost by count and layers instead of the prior.
  PF_TRY(captured, terms::estimate_captured_graphs(m, lay, engine, oh, device.id, dep, e.graph_in_budget, e.max_num_seqs, e.max_num_batched_tokens));
  if (captured) core.graph = std::move(*captured);
  const Term& graph = core.graph;
  if (dep.explain && !fallback.empty()) e.assumptions.push_back("--attention-backend FLASHINFER with speculative decoding: vLLM prints '" + fallback + "'");
  e.graph_bytes = graph.bytes;
  keep_term(graph);
  const Term ep_comms = terms::estimate_ep_communicators(m, engine, lay, e.expert_parallel_size, dep);
  e.ep_communicator_bytes = ep_comms.bytes;
  if (ep_comms.bytes > 0) keep_term(ep_comms);
  const Term eplb_warmup = terms::estimate_eplb_warmup(m, scheme, engine, e.expert_parallel_size, dep);
  e.ep_communicator_bytes += eplb_warmup.bytes;
  if (eplb_warmup.bytes > 0) keep_term(eplb_warmup);
  const Term moe_allgather = terms::estimate_moe_allgather(m, scheme, engine, device.family, dep, lay, e.expert_parallel_size, e.max_num_batched_tokens);
  e.moe_allgather_bytes = moe_allgather.bytes;
  if (moe_allgather.bytes > 0) keep_term(moe_allgather);
  const Term moe_backend = terms::estimate_moe_backend_workspace(m, scheme, oh, engine, device.id, lay, dep, e.expert_parallel_size, e.max_num_batched_tokens, e.assumptions);
  e.moe_backend_workspace_bytes = moe_backend.bytes;
  if (moe_backend.bytes > 0) keep_term(moe_backend);
  terms::estimate_square_attention_mask(e, engine, device, core.max_model_len);
  core.mc2 = terms::mc2_transport(m, engine, device.family, e.expert_parallel_size, dep);
  const terms::Mc2TransportVerdict& mc2 = core.mc2;
  if (mc2.state == terms::Mc2Transport::undecided) e.verdict_depends_on = mc2.text;
  if (mc2.state == terms::Mc2Transport::starts && dep.explain) e.assumptions.push_back(mc2.text);
  if ((mc2.state == terms::Mc2Transport::fails || mc2.state == terms::Mc2Transport::undecided) && dep.explain)
    e.assumptions.push_back("the MC2 transport's NPU driver versions (engines.json mc2_transport_source): " + engine.mc2_transport_source);
  // Perfest37: the KV cache's shape reads of the card only the batched tokens its class's settings give (a sliding window's
  // blocks per request): the rest of its inputs (the model, engine, layout, drafter, max_model_len, the KV cache dtype,
  // speculative tokens, prefix caching, SSM cache dtype and DCP) are the memo key's and the deployment's, which the
  // siblings share. A core of another class with the same batched tokens takes the shape a sibling's first fit made.
  if (!dep.explain)
    for (const FitCore* o : siblings)
      if (o->kv_shape && o->e.max_num_batched_tokens == e.max_num_batched_tokens) {
        core.shared_shape = &*o->kv_shape;
        break;
      }
  return Ok{};
}

// The rest of a fit after its core (fit_core): the KV budget on `e`'s card (its device_id and total_bytes), the KV
// geometry, the verdict and, where the deployment asks, the printed lines and the per-rank tree. Reads the card only
// through `e`.
Status fit_rest(FitEstimate& e, FitCore& core, const ModelSpec& m, const engine::EngineProfile& engine, const engine::Overheads& oh,
                const Deployment& dep) {
  const terms::StageLayout& lay = core.lay;
  const terms::StageWeights& weights = core.weights;
  const terms::Drafter& drafter = core.drafter;
  const terms::ProfileRun& run = core.run;
  const Term& non_torch = core.non_torch;
  const Term& graph = core.graph;
  const terms::Mc2TransportVerdict& mc2 = core.mc2;
  const int64_t L = core.max_model_len;
  const budget::KvBudget budget = budget::kv_budget(e, engine, oh, dep, lay, weights, run, non_torch.band_bytes);
  e.available_kv_bytes = budget.available;
  e.available_kv_band_bytes = budget.band;
  e.available_kv_band_high_bytes = budget.band_high;
  if (dep.memory_terms) e.terms.push_back({"available KV", budget.available, budget.band, dep.explain ? budget::budget_rule(e, dep) : std::string()});

  e.max_model_len = L;
  // Issue 15/16 (plan28): vLLM's default is the derived length (model/context_length.hpp); where rope scaling or a
  // shorter length key makes it differ from max_position_embeddings, the assumption quotes vLLM's own words for it.
  if (!dep.max_model_len && dep.explain)
    e.assumptions.push_back(m.derived_max_model_len > 0 && m.derived_max_model_len != m.max_position_embeddings
                                ? format("max_model_len %lld (vLLM's derived max_model_len: %s)", static_cast<long long>(L), m.derived_max_model_len_text.c_str())
                                : format("max_model_len %lld (the model's max_position_embeddings)", static_cast<long long>(L)));
  const int64_t spec_tokens = dep.speculative.method.empty() ? 0 : dep.speculative.num_speculative_tokens;
  terms::KvInputs kv_in{e.kv_cache_dtype, lay.pp > 1 ? 0 : drafter.layers, drafter.kv_elements_per_layer, spec_tokens, L, e.max_num_batched_tokens, budget.available_blocks,
                              budget.band, budget.band_high, dep.explain, dep.enable_prefix_caching,
                              std::max(0, terms::mamba_ssm_cache_bits(dep.mamba_ssm_cache_dtype)), dep.kv_scan};
  kv_in.decode_context_parallel_size = std::max<int64_t>(1, dep.decode_context_parallel_size);
  // A drafter's sliding-window layers are their own KV group where the version's rule says so (engines.json
  // drafter_sliding_kv_group), else full-attention layers of the target's group.
  const bool sliding_group = engine.applies(engine.drafter_sliding_kv_group);
  if (lay.pp == 1 && drafter.sliding_layers > 0 && sliding_group) {
    kv_in.drafter_sliding_layers = drafter.sliding_layers;
    kv_in.drafter_sliding_window = drafter.sliding_window;
  } else if (lay.pp == 1 && drafter.sliding_layers > 0 && dep.explain) {
    e.assumptions.push_back(format("the drafter's %lld sliding-window layer(s) counted as full attention: no drafter_sliding_kv_group rule for %s in engines.json",
                                   static_cast<long long>(drafter.sliding_layers), engine::version_label(engine).c_str()));
  }
  std::optional<KvGeometry> own_shape;
  // Issue 19 (planfast14): a core's shape is copied into this thread's scratch, whose vectors keep their blocks from one
  // fit to the next, with its groups set aside: they are copied once, into e.groups (emptied by the core's copy, it
  // keeps its block too), as nothing below reads kv.groups without the per-rank tree (a fresh copy of the whole shape
  // allocated its groups at each of ~48,000 fits of a whole-catalogue plan, then moved them into e.groups).
  thread_local KvGeometry core_shape_copy;
  KvGeometry* shape_of_fit = nullptr;
  if ((!core.kv_shape && !core.shared_shape) || dep.explain) {
    auto shape = terms::estimate_kv_shape(m, engine, lay, kv_in, e.provenance);
    if (!shape) return shape.error();
    own_shape = std::move(*shape);
    if (!dep.explain) core.kv_shape = *own_shape;  // an explained shape wrote its provenance lines: made per fit
    shape_of_fit = &*own_shape;
  } else if (!core.kv_shape) {  // another class's shape (perfest37), copied whole: it is not this core's to move from
    core_shape_copy = *core.shared_shape;
    e.groups = core.shared_shape->groups;
    shape_of_fit = &core_shape_copy;
  } else {
    KvGeometry& shape = *core.kv_shape;
    std::vector<KvGroup> groups = std::move(shape.groups);
    core_shape_copy = shape;
    shape.groups = std::move(groups);
    e.groups = shape.groups;
    if (dep.rank_tree) core_shape_copy.groups = shape.groups;
    shape_of_fit = &core_shape_copy;
  }
  KvGeometry& kv = *shape_of_fit;
  terms::kv_blocks_and_tokens(kv, engine, kv_in);  // reads no groups
  // Issue 19 (round 21): moved where nothing below reads kv.groups (the per-rank tree copies them), else copied.
  if (shape_of_fit != &core_shape_copy) {
    if (dep.rank_tree) e.groups = kv.groups;
    else e.groups = std::move(kv.groups);
  }
  e.block_size = kv.block_size;
  e.page_bytes = kv.page_bytes;
  e.group_size = kv.group_size;
  e.num_blocks = kv.num_blocks;
  e.kv_tokens = kv.kv_tokens;
  e.kv_tokens_low = kv.kv_tokens_low;
  e.kv_tokens_high = kv.kv_tokens_high;
  e.max_concurrency = kv.max_concurrency;
  terms::mark_stage_blocks(e.stages, lay, kv.page_bytes, kv.group_size);
  e.kv_bytes_per_token_rank = kv.kv_bytes_per_token;
  e.state_bytes_per_sequence_rank = kv.state_bytes_per_sequence;

  verdict::pp_whole_model_check(e, engine, budget.available, L);
  verdict::decide(e, engine, oh, kv, budget.available, L, dep, mc2);
  if (dep.explain) verdict::printed_lines(e, engine, budget.available, L);
  checks::gguf_type_stop(e, m, engine, dep);  // issue 16: after the lines, which it cuts where vLLM stops
  if (dep.rank_tree) e.ranks = budget::rank_footprints(e, lay, weights, run, non_torch, graph, budget, kv, oh, dep.explain);
  return Ok{};
}

// What of a card and a deployment the terms before the budget read (fit_core): the fit class of the card (see
// estimate/fit_memo.hpp) and the deployment fields a plan varies. Equal keys, equal cores but for the card's id and total.
struct CoreKey {
  const ModelSpec* model = nullptr;
  const engine::EngineProfile* engine = nullptr;
  const engine::Overheads* oh = nullptr;
  FitClass card;  // its `device` and `tensor_parallel_size` are those of the card it was made for: not compared
  int64_t tp = 1, pp = 1, dp = 1, dcp = 1;
  bool ep = false;
  std::optional<int64_t> max_model_len;
  bool no_video = false, skip_mm_profiling = false;
  std::optional<bool> enable_chunked_prefill;  // issue 15 (round 14): decides max_num_batched_tokens, so the activation
  engine::Interconnect interconnect = engine::Interconnect::unknown;
  std::string quantization;
  bool has_scheme = false;
  std::optional<bool> moe_row_padding;  // issue 15 (acc30): VLLM_ROCM_MOE_PADDING
};

// Whether `k` is the key of (m, engine, oh, card, dep): compared in place, without a key made for the lookup.
bool key_matches_but_card(const CoreKey& k, const ModelSpec& m, const engine::EngineProfile& engine, const engine::Overheads& oh, const Deployment& dep) {
  return k.model == &m && k.engine == &engine && k.oh == &oh && k.tp == dep.tensor_parallel_size && k.pp == dep.pipeline_parallel_size &&
         k.dp == dep.data_parallel_size && k.dcp == dep.decode_context_parallel_size && k.ep == dep.enable_expert_parallel &&
         k.max_model_len == dep.max_model_len && k.no_video == dep.no_video && k.skip_mm_profiling == dep.skip_mm_profiling &&
         k.enable_chunked_prefill == dep.enable_chunked_prefill && k.interconnect == dep.interconnect && k.has_scheme == dep.quant_scheme.has_value() &&
         k.moe_row_padding == dep.moe_row_padding && k.quantization == dep.quantization;
}

CoreKey core_key(const ModelSpec& m, const engine::EngineProfile& engine, const engine::Overheads& oh, const FitClass& card, const Deployment& dep) {
  return CoreKey{.model = &m, .engine = &engine, .oh = &oh, .card = card, .tp = dep.tensor_parallel_size, .pp = dep.pipeline_parallel_size,
                 .dp = dep.data_parallel_size, .dcp = dep.decode_context_parallel_size, .ep = dep.enable_expert_parallel, .max_model_len = dep.max_model_len,
                 .no_video = dep.no_video, .skip_mm_profiling = dep.skip_mm_profiling, .enable_chunked_prefill = dep.enable_chunked_prefill,
                 .interconnect = dep.interconnect, .quantization = dep.quantization, .has_scheme = dep.quant_scheme.has_value(),
                 .moe_row_padding = dep.moe_row_padding};
}

}  // namespace

struct FitCoreMemo::Entry {
  CoreKey key;
  FitCore core;
};

FitCoreMemo::FitCoreMemo() = default;
FitCoreMemo::~FitCoreMemo() = default;
void FitCoreMemo::clear() {
  for (auto& entry : m_entries) m_spare.push_back(std::move(entry));
  m_entries.clear();
  m_last = 0;
}

namespace {

bool names_family(const std::vector<std::string>& families, const std::string& family) {
  return std::find(families.begin(), families.end(), family) != families.end();
}

// Issue 19 (perfcls37): the family where a family list of the engine other than the NCCL domains names it (the terms
// that read them: resolve_settings' KV divisor, estimate_moe_allgather and mc2_transport, non_torch_counted,
// embedding_nz_copy_on, which prints it, estimate_square_attention_mask, estimate_expert_scale_copies,
// estimate_moe_all2all_rows), else empty; every list whatever its version range (a family it names keeps its class).
std::string family_named(const device::DeviceSpec& device, const engine::EngineProfile& engine) {
  const std::string& f = device.family;
  bool named = names_family(engine.kv_budget_divided_families, f) || names_family(engine.moe_allgather_families, f) ||
               names_family(engine.non_torch_absolute_families, f) || names_family(engine.embedding_nz_copy_families, f) ||
               (engine.square_attention_mask && names_family(engine.square_attention_mask->families, f));
  for (const auto& copy : engine.moe_dynamic_scale_copies) named = named || names_family(copy.families, f);
  for (const auto& r : engine.moe_all2all_rows) named = named || names_family(r.families, f);
  return named ? f : std::string();
}

// The rules that compare the family without printing it, one bit each (FitClass::family_bits): terms::fp8_marlin_fallback
// and large_batch_device (Ampere, Turing), and each NCCL domain that lists families (NcclBuffers::domain: two families
// of the same bits get the same domain at every interconnect). More domains than bits: the family keeps its own class.
uint64_t family_bits(const device::DeviceSpec& device, const engine::Overheads& oh, std::string& family) {
  uint64_t bits = device.family == "ampere" || device.family == "turing" ? 1u : 0u;
  if (!oh.nccl_buffers) return bits;
  const auto& domains = oh.nccl_buffers->domains;
  if (domains.size() > 63) {
    family = device.family;
    return bits;
  }
  for (size_t i = 0; i < domains.size(); ++i)
    if (names_family(domains[i].families, device.family)) bits |= uint64_t{1} << (i + 1);
  return bits;
}

}  // namespace

FitClass fit_class(const device::DeviceSpec& device, const engine::EngineProfile& engine, const engine::Overheads& oh, int64_t tp) {
  const auto& trtllm = engine.flashinfer_uniform_batch_devices;
  FitClass c;
  c.device = &device;
  c.engine = &engine;
  c.overheads = &oh;
  c.tensor_parallel_size = tp;
  c.large_batch = large_batch_device(device.usable_total_bytes(), device, engine);
  c.mxfp4 = engine.mxfp4_layout_for(device.id, device.family);
  c.graph_ceiling = engine.cudagraph_default_ceiling(device.id);
  c.trtllm = std::find(trtllm.begin(), trtllm.end(), device.id) != trtllm.end();
  c.family = family_named(device, engine);
  c.family_bits = family_bits(device, oh, c.family);
  c.platform = device.platform;
  if (oh.allreduce_fusion_workspace && oh.allreduce_fusion_workspace->max_input_bytes(device.id, tp) > 0) c.allreduce_card = device.id;
  if (oh.moe_backend_workspaces)
    for (const auto& w : *oh.moe_backend_workspaces)
      if (w.engine == engine.engine && engine.rule_applies(w.counted) && std::find(w.devices.begin(), w.devices.end(), device.id) != w.devices.end())
        c.moe_backend_card = device.id;
  return c;
}

struct FitCoreMemoAccess {
  // fit_as_deployed on a memoized deployment: the core of the card's class, computed once, then this card's budget.
  static Expected<FitEstimate> fit(FitCoreMemo& memo, const ModelSpec& m, const device::DeviceSpec& device, const engine::EngineProfile& engine,
                                   const engine::Overheads& oh, const Deployment& dep) {
    FitEstimate e;
    if (auto done = fit_into(e, memo, m, device, engine, oh, dep); !done) return done.error();
    return e;
  }

  // fit(), written into `e` (a plan's candidate keeps its fit in place: no moves of the estimate).
  static Status fit_into(FitEstimate& e, FitCoreMemo& memo, const ModelSpec& m, const device::DeviceSpec& device, const engine::EngineProfile& engine,
                         const engine::Overheads& oh, const Deployment& dep, const FitClass* given = nullptr) {
    // The caller's class where it was made for these inputs (planfast10), else this card's, made here.
    std::optional<FitClass> own;
    const FitClass& card = given && given->device == &device && given->engine == &engine && given->overheads == &oh &&
                                   given->tensor_parallel_size == dep.tensor_parallel_size
                               ? *given
                               : own.emplace(fit_class(device, engine, oh, dep.tensor_parallel_size));
    FitCore* core = nullptr;
    thread_local std::vector<const FitCore*> siblings;  // the cores of this deployment on other classes (planfast10), oldest first
    siblings.clear();
    // The last fit's entry first (fitcopy36): at most one entry matches a key and class, so it is the one the scan finds.
    if (memo.m_last < memo.m_entries.size()) {
      const auto& last = *memo.m_entries[memo.m_last];
      if (key_matches_but_card(last.key, m, engine, oh, dep) && last.key.card.same_class(card)) core = &memo.m_entries[memo.m_last]->core;
    }
    for (size_t i = 0; !core && i < memo.m_entries.size(); ++i) {
      const auto& entry = memo.m_entries[i];
      if (!key_matches_but_card(entry->key, m, engine, oh, dep)) continue;
      if (entry->key.card.same_class(card)) {
        core = &entry->core;
        memo.m_last = i;
        break;
      }
      siblings.push_back(&entry->core);
    }
    if (core) {
      ++memo.m_reused;
    } else {
      std::unique_ptr<FitCoreMemo::Entry> entry;
      if (memo.m_spare.empty()) {
        entry = std::make_unique<FitCoreMemo::Entry>();
      } else {  // a block clear() dropped, made afresh: the same default entry as make_unique's
        entry = std::move(memo.m_spare.back());
        memo.m_spare.pop_back();
        std::destroy_at(entry.get());
        std::construct_at(entry.get());
      }
      if (auto made = fit_core(entry->core, m, device, engine, oh, dep, siblings, &card); !made) return made.error();
      if (entry->core.run_shared) ++memo.m_runs_shared;
      if (entry->core.weights_shared) ++memo.m_weights_shared;
      if (entry->core.shared_shape) ++memo.m_shapes_shared;
      ++memo.m_computed;
      entry->key = core_key(m, engine, oh, card, dep);
      core = &entry->core;
      memo.m_last = memo.m_entries.size();
      memo.m_entries.push_back(std::move(entry));
    }
    e = core->e;
    e.device_id = device.id;
    e.total_bytes = device.usable_total_bytes();
    if (core->decided) return Ok{};
    return fit_rest(e, *core, m, engine, oh, dep);
  }
};

namespace {

Expected<FitEstimate> fit_as_deployed(const ModelSpec& m, const device::DeviceSpec& device, const engine::EngineProfile& engine, const engine::Overheads& oh,
                                      const Deployment& dep, FitCoreMemo* memo) {
  if (memo && memoizable(dep)) return FitCoreMemoAccess::fit(*memo, m, device, engine, oh, dep);
  FitCore core;
  if (auto made = fit_core(core, m, device, engine, oh, dep); !made) return made.error();
  if (core.decided) return std::move(core.e);
  FitEstimate e = std::move(core.e);
  if (auto done = fit_rest(e, core, m, engine, oh, dep); !done) return done.error();
  return e;
}

}  // namespace

Status try_estimate_fit_into(FitEstimate& out, FitCoreMemo& memo, const ModelSpec& m, const device::DeviceSpec& device, const engine::EngineProfile& engine,
                             const engine::Overheads& oh, const Deployment& dep, const FitClass* cls) {
  const FlaglessQuantization flagless = flagless_quantization(m, engine, dep);
  if (memoizable(dep) && (!flagless.applies || flagless.method == "ascend")) return FitCoreMemoAccess::fit_into(out, memo, m, device, engine, oh, dep, cls);
  auto e = try_fit(m, device, engine, oh, dep, &memo);
  if (!e) return e.error();
  out = std::move(*e);
  return Ok{};
}

}  // namespace preflight::estimate
