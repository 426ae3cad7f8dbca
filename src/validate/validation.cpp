#include "validate/validation.hpp"
#include "validate/validation_line.hpp"

#include <algorithm>
#include <cmath>
#include <cctype>
#include <cstdlib>
#include <limits>
#include <memory>
#include <sstream>
#include <utility>

#include "base/file.hpp"
#include "base/json_keys.hpp"
#include "base/quote.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "deploy/deployment.hpp"
#include "deploy/variant_rules.hpp"
#include "device/device_spec.hpp"
#include "engine/attention_backends.hpp"
#include "engine/engine_core.hpp"
#include "engine/engine_profile.hpp"
#include "engine/speed_profile.hpp"
#include "estimate/llama_cpp.hpp"
#include "estimate/printed_stage.hpp"
#include "estimate/speed.hpp"
#include "model/model_source.hpp"
#include "model/quant_variant.hpp"
#include "validate/case_flags.hpp"
#include "validate/validation_summary.hpp"
#include "engine/version_label.hpp"

namespace preflight::validate {

namespace {

double pct(double predicted, double observed) {
  if (observed == 0) return predicted == 0 ? 0 : 100;
  return std::fabs(predicted - observed) / std::fabs(observed) * 100.0;
}

std::string first_token(const std::string& text) {
  const auto pos = text.find_first_of(" (");
  return pos == std::string::npos ? text : text.substr(0, pos);
}

// The case line's text fields other than the observations: which model, device and engine it ran.
struct CaseInputs {
  std::optional<std::string> hint, engine, engine_version, engine_detail, notes, source;
  std::optional<engine::EngineBuild> engine_build;  // issue 15 (build): "0.17.0rc2.dev66+g9d0b7c8e9"
  // Issue 15 (v0eng29): "engine_core" ("v0" | "v1"), else the environment's VLLM_USE_V1 (0: V0, 1: V1).
  std::optional<engine::EngineCore> engine_core;
};

// What the case observed: printed memory lines, the verdict, the measured decode speed.
struct Observed {
  std::optional<double> weights_gib, available_kv_gib, kv_cache_tokens, max_concurrency;
  std::optional<int64_t> concurrency_len;
  // Issue 15 (pp35): the PP rank of the worker whose "Available KV cache memory" line available_kv_gib is (its
  // (Worker_PPn...) prefix); unset: the stage the engine's printing rule names (estimate/printed_stage).
  std::optional<int64_t> available_kv_stage;
  std::optional<bool> fits;
  std::optional<std::string> failure;
  std::optional<double> tokens_per_s;
  bool any_memory_or_verdict() const { return weights_gib || available_kv_gib || kv_cache_tokens || max_concurrency || fits; }
};

// The catalogues and options every case is run against.
struct CaseContext {
  const device::DeviceCatalog& devices;
  const engine::EngineCatalog& engines;
  const engine::SpeedCatalog& speeds;
  const ValidateOptions& options;
  const model::ResolveOptions& resolve;
};

// id, model and device into the row; the other inputs returned.
Expected<CaseInputs> read_case_inputs(const JsonObject& c, const std::string& file, int line_no, CaseResult& row) {
  CaseInputs in;
  PF_TRY(id, c.opt_string("id"));
  row.id = id.value_or(format("%s:%d", base_name(file).c_str(), line_no));
  PF_TRY(model_name, c.opt_string("model"));
  PF_TRY(hint, c.opt_string("config_hint"));
  PF_TRY(device_text, c.opt_string("device"));
  PF_TRY(engine_text, c.opt_string("engine"));
  PF_TRY(engine_version, c.opt_string("engine_version"));
  PF_TRY(engine_detail, c.opt_string("engine_detail"));
  PF_TRY(notes, c.opt_string("notes"));
  PF_TRY(source, c.opt_string("source"));
  row.model = model_name.value_or("");
  row.device = device_text.value_or("");
  in.hint = hint;
  in.engine = engine_text;
  in.engine_version = engine_version;
  in.engine_detail = engine_detail;
  in.notes = notes;
  in.source = source;
  PF_TRY(build_text, c.opt_string("engine_build"));
  if (build_text) {
    PF_TRY(build, engine::parse_engine_build(*build_text, format("%s:%d (case %s): engine_build", file.c_str(), line_no, one_line(row.id, 120).c_str())));
    in.engine_build = build;
  }
  PF_TRY(core_text, c.opt_string("engine_core"));
  if (core_text) {
    const std::string core = to_lower(trim(*core_text));
    if (core != "v0" && core != "v1")
      return make_error(ErrorKind::invalid_argument,
                        format("%s:%d (case %s): engine_core: expected v0 or v1, found '%s'", file.c_str(), line_no, one_line(row.id, 120).c_str(), quoted_case_text(*core_text).c_str()), file);
    in.engine_core = core == "v0" ? engine::EngineCore::v0 : engine::EngineCore::v1;
  } else if (const Json* env = c.find("env"); env && env->is_object()) {
    if (const auto it = env->find("VLLM_USE_V1"); it != env->end()) {
      const std::string v = it->is_string() ? trim(it->get<std::string>()) : it->dump();
      if (v == "0" || v == "1") in.engine_core = v == "0" ? engine::EngineCore::v0 : engine::EngineCore::v1;
    }
  }
  return in;
}

Expected<Observed> read_observed(const JsonObject& c) {
  Observed o;
  PF_TRY(o_weights, c.opt_number("weights_gib"));
  PF_TRY(o_kv, c.opt_number("available_kv_gib"));
  PF_TRY(o_tokens, c.opt_number("kv_cache_tokens"));
  PF_TRY(o_conc, c.opt_number("max_concurrency"));
  PF_TRY(o_conc_len, c.opt_int("concurrency_len"));
  PF_TRY(o_kv_stage, c.opt_int("available_kv_stage"));
  PF_TRY(o_fits, c.opt_bool("fits"));
  PF_TRY(o_failure, c.opt_string("failure"));
  PF_TRY(o_speed, c.opt_number("tokens_per_s"));
  // What an engine prints as a size, a count or a rate is never negative (available_kv_gib is: vLLM prints a
  // negative KV budget before it fails), and a request holds at least one token. A negative one was compared as it
  // was ("observed -1, predicted 2.586e+05: 25856100.00%", exit 0) and weighed in the accuracy figures (issue 19).
  for (const auto& [field, value] : {std::pair{"weights_gib", o_weights}, std::pair{"kv_cache_tokens", o_tokens}, std::pair{"max_concurrency", o_conc},
                                     std::pair{"tokens_per_s", o_speed}}) {
    if (value && *value < 0)
      return make_error(ErrorKind::corrupt, format("%s: %s is %g, expected a number >= 0 (the engine printed no negative one)", c.origin().c_str(), field, *value), c.origin());
  }
  if (o_conc_len && *o_conc_len < 1)
    return make_error(ErrorKind::corrupt, format("%s: concurrency_len is %lld, expected a token count >= 1", c.origin().c_str(), static_cast<long long>(*o_conc_len)), c.origin());
  o.weights_gib = o_weights;
  o.available_kv_gib = o_kv;
  o.kv_cache_tokens = o_tokens;
  o.max_concurrency = o_conc;
  o.concurrency_len = o_conc_len;
  o.available_kv_stage = o_kv_stage;
  o.fits = o_fits;
  o.failure = o_failure;
  o.tokens_per_s = o_speed;
  return o;
}

// Model: catalogue / --models dir by id, then the config hint. Unresolved: the names tried, for the skip reason.
struct CaseModel {
  std::optional<model::ModelSpec> spec;
  std::string tried;
  std::optional<Error> corrupt;  // a checkpoint was found but a file of it is corrupt (a descriptor, config.json)
};

CaseModel resolve_case_model(const std::string& hint, const model::ResolveOptions& resolve, CaseResult& row) {
  Expected<model::ModelSpec> spec = make_error(ErrorKind::not_found, "no model");
  std::vector<std::string> tried;
  for (const auto& candidate : {row.model, first_token(hint)}) {
    if (candidate.empty()) continue;
    spec = model::resolve_model(candidate, resolve);
    tried.push_back(candidate);
    if (spec) {
      if (candidate != row.model) row.assumptions.push_back("architecture from config_hint " + candidate);
      return {*spec, {}, {}};
    }
    if (spec.error().kind == ErrorKind::corrupt) return {{}, candidate, spec.error()};
  }
  CaseModel out;
  for (auto& t : tried) out.tried += (out.tried.empty() ? "" : ", ") + t;
  return out;
}

// Whether a checkpoint stating `method` already is of the variant reading `flag` ("awq" and "awq",
// "modelopt" and "modelopt_fp4"): then its own descriptor describes it better than the variant.
bool same_method(const std::string& method, const std::string& flag) {
  auto norm = [](std::string s) {
    s = to_lower(s);
    for (auto& ch : s) if (ch == '-') ch = '_';
    return s;
  };
  const std::string a = norm(method), b = norm(flag);
  return !a.empty() && !b.empty() && (a.rfind(b, 0) == 0 || b.rfind(a, 0) == 0);
}

// The case's quantization text as people write it ("w8a8 (ascend w8a8_dynamic)", "AWQ int4", "GGUF
// Q4_K_M"), read by the variant list (model/quant_variant). A checkpoint whose own descriptor the
// model resolved to keeps its scheme; a base config the case names gets the variant's storage and
// --quantization. Text the list does not name is an invalid_argument error naming the case and the field. Returns the variant whose engine rules the deployment meets: the one
// applied, or the one the checkpoint's own descriptor is (nullptr: none of the list).
Expected<const model::QuantVariant*> apply_case_quantization(const JsonObject& c, const model::ModelSpec& spec, const std::string& where, deploy::Flags& flags,
                                                             CaseResult& row) {
  PF_TRY(quant, c.opt_string("quantization"));
  const auto& catalog = model::load_variant_catalog();
  if (!catalog) return catalog.error();
  const std::string text = quant.value_or("");
  PF_TRY(case_engine, c.opt_string("engine"));
  const model::QuantVariant* v = model::variant_from_text(*catalog, text, case_engine.value_or(""));
  const model::QuantVariant* own = spec.quant.quantized() ? model::variant_of_checkpoint(*catalog, spec.quant) : nullptr;
  // Issue 16 (quant26): the bare name of the method the case's own checkpoint states ("compressed-tensors" for a
  // checkpoint whose config.json quantization_config says so) names that checkpoint's descriptor, scheme and all.
  // same_method is symmetric and keeps lengths, so with equal lengths it is equality up to case and '-' / '_'.
  if (const std::string bare = trim(text); !v && spec.quant.quantized() && same_method(spec.quant.method, bare) && bare.size() == spec.quant.method.size()) {
    row.assumptions.push_back("quantization '" + text + "': the method of the checkpoint's own descriptor (" + spec.quant.source + "), whose scheme is kept" +
                              (own ? ": variant " + own->id + " (" + own->name + ")" : ": per-module formats no single variant of the list has"));
    return own;
  }
  if (!v) {
    // Issue 16: text no variant of the list names is bad input, never a --quantization the fit reads as "not modelled;
    // weights in model dtype". not_found: run_case lists the case as unreadable and evaluates the others (quant26).
    std::string known;
    for (const auto& k : catalog->variants) known += (known.empty() ? "" : ", ") + k.id;
    return make_error(ErrorKind::not_found,
                      format("%s: quantization '%s': no variant of data/variants/quant_variants.json is named in it; known variants: %s", where.c_str(),
                             quoted_case_text(text).c_str(),
                             known.c_str()),
                      where);
  }
  if (!v->quantized()) return own;  // "none" / "bf16" text: a quantized checkpoint is still what the engine loads
  if (same_method(spec.quant.method, v->engine_quantization)) {
    // The checkpoint's own descriptor decides; it names the variant it is when the list has one.
    row.assumptions.push_back("quantization '" + text + "': the checkpoint's own descriptor (" + spec.quant.source + ") is kept" +
                              (own ? ", variant " + own->id + " (" + own->name + ")" : ", per-module formats no single variant of the list has"));
    // A ModelSlim checkpoint's descriptor is read only with the flag on most vLLM-Ascend versions (issues 15/16).
    if (v->engine_quantization == "ascend") flags.quantization = deploy::Given<std::string>{v->engine_quantization, where + ": quantization"};
    return own;
  }
  flags.quantization = deploy::Given<std::string>{v->engine_quantization, where + ": quantization"};
  flags.quant_scheme = v->scheme;
  row.assumptions.push_back("quantization '" + text + "' read as variant " + v->id + " (" + v->name + ") applied to " + spec.id);
  return v;
}

// Issue 16: the variant's engine rules for the engine version the case names (else the profile's newest),
// the device family and the model kind, as `fit --variant` and `plan` apply them: a rejection is the
// predicted verdict unsupported_quantization with the engine's own message; a kernel fallback an assumption.
void apply_case_variant_rules(const model::QuantVariant* v, const deploy::Resolved& resolved, estimate::FitEstimate& est, CaseResult& row) {
  if (!v) return;
  const auto rule = deploy::apply_variant_rules(*v, resolved, est, row.assumptions);
  if (!rule) return;
  row.assumptions.push_back(format("variant %s is rejected by %s %s on %s (%s): %s", v->id.c_str(), resolved.engine.engine.c_str(),
                                   engine::version_label(resolved.engine).c_str(), resolved.device.id.c_str(), resolved.device.family.c_str(), rule->message.c_str()));
}

// Issues 15/16: the case's "checkpoint_quantization": what the served checkpoint itself is ("w8a8 (msModelSlim)"),
// apart from the --quantization flag the command passed ("quantization"). When the model resolved to a config of
// another format (a config_hint of the original), the checkpoint is that variant of it: the variant's storage
// becomes the checkpoint's own scheme. An msModelSlim checkpoint's config.json has no quantization_config:
// msModelSlim's saver removes it (msmodelslim/core/quant_service/modelslim_v1/save/ascendv1.py
// remove_quantization_config, github.com/Ascend/msmodelslim at 3de0a3c) and an FP8 original is cast to BF16 first
// (data/engines/quantized_checkpoints.json "casts"). nullopt: the resolved spec already is the checkpoint.
Expected<std::optional<model::ModelSpec>> checkpoint_spec(const JsonObject& c, const model::ModelSpec& spec, const std::string& where, CaseResult& row) {
  PF_TRY(text, c.opt_string("checkpoint_quantization"));
  if (!text) return std::optional<model::ModelSpec>();
  const auto& catalog = model::load_variant_catalog();
  if (!catalog) return catalog.error();
  PF_TRY(case_engine, c.opt_string("engine"));
  const model::QuantVariant* v = model::variant_from_text(*catalog, *text, case_engine.value_or(""));
  if (!v)
    return make_error(ErrorKind::invalid_argument,
                      format("%s: checkpoint_quantization '%s': no variant of data/variants/quant_variants.json is named in it", where.c_str(),
                             quoted_case_text(*text).c_str()),
                      where);
  if (v->quantized() ? same_method(spec.quant.method, v->engine_quantization) : !spec.quant.quantized()) return std::optional<model::ModelSpec>();
  model::ModelSpec out = spec;
  out.quant = v->scheme;
  out.quant.source = where + ": checkpoint_quantization";
  out.quant.config_quant_method.clear();
  out.exact_weight_bytes.reset();  // the resolved config's shards are not this checkpoint's
  row.assumptions.push_back("checkpoint_quantization '" + *text + "': the checkpoint is variant " + v->id + " (" + v->name + ") of " + spec.id +
                            (v->engine_quantization == "ascend" ? ", its config.json without quantization_config (msModelSlim's saver removes it)" : ""));
  return std::optional<model::ModelSpec>(std::move(out));
}

// A CPU case's read bandwidth from its "threads", "cpu" (a data/devices/cpus.json name) and
// "memory_peak_bytes_per_s" (the installed memory, when the source states it); nullopt without threads.
Expected<std::optional<estimate::LlamaCpuBandwidth>> cpu_case_bandwidth(const JsonObject& c) {
  PF_TRY(threads, c.opt_int("threads"));
  if (!threads) return std::optional<estimate::LlamaCpuBandwidth>();
  PF_TRY(cpu, c.opt_string("cpu"));
  PF_TRY(peak, c.opt_number("memory_peak_bytes_per_s"));
  PF_TRY(cpus, device::load_cpu_catalog());
  PF_TRY(bw, estimate::llama_cpp_cpu_run_bandwidth(cpus, {.threads = *threads, .cpu = cpu.value_or(""), .memory_peak_bytes_per_s = peak}));
  return std::optional<estimate::LlamaCpuBandwidth>(bw);
}

// The decode speed at the case's concurrency against the observed tokens_per_s. Returns the reason
// the case is skipped, or nullopt when the comparison went into `row`.
// speed_engine: the speed catalogue's engine (the resolved profile's, or "mindie" for a MindIE case).
Expected<std::optional<std::string>> compare_speed(const JsonObject& c, const model::ModelSpec& spec, const deploy::Resolved& resolved, const estimate::FitEstimate& est,
                                                   const CaseContext& ctx, const std::string& speed_engine, double observed_tokens_per_s, CaseResult& row) {
  const device::DeviceSpec* matched = &resolved.device;
  const estimate::Deployment& d = resolved.deployment;
  const std::string& platform = matched->platform;
  const engine::SpeedProfile* sp = ctx.speeds.find(speed_engine, platform, matched->id);
  if (!sp) return std::optional<std::string>("no speed profile for " + speed_engine + " on " + platform);
  if (est.failure == estimate::Failure::weights_oom) {
    return std::optional<std::string>(format("weights (%.1f GiB per device) exceed the device: partial CPU offload is not modelled", bytes_to_gib(est.weights_bytes)));
  }
  PF_TRY(split_mode, c.opt_string("split_mode"));  // issue 20: llama.cpp's --split-mode as the source states it
  if (split_mode && *split_mode == "row")
    return std::optional<std::string>("llama.cpp --split-mode row (a synchronisation per matrix multiplication; the only multi-GPU mode before github.com/ggml-org/llama.cpp/pull/4766) is not modelled");
  PF_TRY(conc, c.opt_int("concurrency"));
  estimate::SpeedWorkload work;
  work.concurrency = {conc.value_or(1)};
  PF_TRY(case_context, c.opt_int("decode_context_tokens"));  // issue 20: the context a case decoded at, when its source states it
  work.context_tokens = case_context && *case_context > 0 ? *case_context : ctx.options.decode_context_tokens;
  PF_TRY(case_version, c.opt_string("engine_version"));  // issue 20: old engine versions decode eager
  PF_TRY(case_detail, c.opt_string("engine_detail"));
  work.engine_version = case_version.value_or(case_detail.value_or(""));
  if (platform == "cpu") {  // issue 20: llama.cpp on a CPU reads at its threads' / socket's rate, from what the case records
    PF_TRY(cpu_bw, cpu_case_bandwidth(c));
    if (!cpu_bw) return std::optional<std::string>("llama.cpp on a CPU: the case records no threads (llama.cpp's --threads / n_threads)");
    work.bandwidth_bytes_per_s = cpu_bw->bytes_per_s;
    row.assumptions.push_back("CPU read bandwidth " + cpu_bw->formula + ", limited by " + cpu_bw->limit + " (estimate/llama_cpp.hpp)");
  }
  const auto speed = estimate::estimate_speed(spec, *matched, *sp, ctx.speeds, d, work);
  if (speed.points.empty()) return std::optional<std::string>(speed.assumptions.empty() ? std::string("speed not estimable") : speed.assumptions.back().str());
  row.assumptions.insert(row.assumptions.end(), speed.assumptions.begin(), speed.assumptions.end());
  row.assumptions.push_back(format("decode at context %lld (%s)", static_cast<long long>(work.context_tokens),
                                   case_context ? "the case's decode_context_tokens" : "not stated by the case"));
  const auto& pt = speed.points.front();
  row.fields.push_back({"tokens_per_s", observed_tokens_per_s, pt.per_stream_tokens_per_s, pct(pt.per_stream_tokens_per_s, observed_tokens_per_s), pt.per_stream_low,
                        pt.per_stream_high});
  row.speed_profile = sp->engine + "/" + sp->platform;
  row.speed_terms = {{"bytes", pt.terms.weight_bytes + pt.terms.kv_bytes + pt.terms.state_bytes},
                     {"copy_bandwidth", speed.bandwidth_bytes_per_s},
                     {"compute_s", pt.terms.compute_s},
                     {"eager", speed.mode == "eager" ? 1.0 : 0.0},
                     {"dispatch_ops", speed.dispatch_ops_per_step},
                     {"moe_layers", static_cast<double>(speed.moe_layers)},
                     {"allreduce_latency_units", speed.allreduce_latency_units},
                     {"allreduce_fixed_latency_s", speed.allreduce_fixed_latency_s},
                     {"communication_bandwidth_s", pt.terms.communication_bandwidth_s},
                     {"concurrency", static_cast<double>(pt.concurrency)},
                     {"predicted_step_s", pt.terms.step_s},
                     {"observed_step_s", 1.0 / observed_tokens_per_s}};
  return std::optional<std::string>();
}

// The verdict, the budget terms and each observed memory field against the prediction.
Status compare_memory(const estimate::FitEstimate& est, const deploy::Resolved& resolved, const Observed& o, const std::string& where, CaseResult& row) {
  const estimate::Deployment& d = resolved.deployment;
  row.predicted_fits = est.fits;
  row.platform = resolved.overheads.platform;
  row.memory_terms = {{"requested", est.requested_bytes},
                      {"weights", est.weights_bytes},
                      {"activation", est.activation_bytes},
                      {"non_torch", est.non_torch_bytes},
                      // issue 15 (nt018): 1 where the worker counts only the non-torch increase since its init snapshot
                      {"non_torch_increase", est.non_torch_counted == engine::NonTorchCounted::increase ? 1.0 : 0.0},
                      {"graph", est.graph_bytes},
                      {"graph_in_budget", est.graph_in_budget && d.mode == estimate::ExecutionMode::graph ? 1.0 : 0.0},
                      {"ep_communicators", est.ep_communicator_bytes},  // issue 15: NPU EP HCCL buffers, subtracted
                      {"moe_allgather", est.moe_allgather_bytes},  // issue 15: A2 EP's DP all-gather MoE rows, subtracted
                      {"kv_budget_divisor", est.kv_budget_divisor},     // issue 15: the 310P worker halves the budget
                      // issue 15/16 (nccl): the NCCL buffers counted before vLLM PR #25359 (from source, not fitted), subtracted;
                      // where they apply they replace the fixed multi-rank share
                      {"nccl_buffers", est.nccl_buffer_bytes},
                      // issue 15 (tpws): vLLM 0.19's FlashInfer all-reduce workspace (from source, not fitted), subtracted
                      {"allreduce_workspace", est.allreduce_workspace_bytes},
                      // issue 15 (evid24): the workspaces a --moe-backend keeps from the profile run (from source, not fitted), subtracted
                      {"moe_backend_workspace", est.moe_backend_workspace_bytes},
                      {"multi_rank", est.tensor_parallel_size * est.pipeline_parallel_size * est.data_parallel_size > 1 && est.nccl_buffer_bytes <= 0 ? 1.0 : 0.0},
                      {"text_activation_unit", est.activation_text_unit_bytes},
                      {"encoder_held", est.activation_encoder_held_bytes},
                      {"text_workspace", est.activation_text_workspace_bytes},  // issue 15: GDN chunked-prefill workspace
                      {"text_moe_routed", est.activation_text_moe_routed_bytes},  // issue 15 (npumoe): MoE all-to-all routed rows
                      {"drafter_buffers", est.activation_drafter_buffers_bytes},  // issue 15 (dsv32r): MTP drafter buffers, every phase
                      {"drafter_held", est.activation_drafter_held_output_bytes},  // issue 15 (dsv32r, hyb): target tensors held for the drafter, text forward
                      {"sampler_run", est.activation_sampler_bytes},
                      {"vision_unit", est.activation_vision_unit_bytes},
                      {"vision_pixels", est.activation_vision_pixel_bytes},  // issue 15: pixel values in the encoder pass
                      // issue 15 (vis28): a pass derived tensor by tensor (no fitted unit): its live tensors beside the pixels
                      {"vision_live_tensors", est.activation_vision_unit_bytes > 0 ? 0.0 : est.activation_vision_bytes - est.activation_vision_pixel_bytes},
                      {"available", est.available_kv_bytes},
                      {"kv_tokens", static_cast<double>(est.kv_tokens)},
                      {"max_concurrency", est.max_concurrency},
                      // Issue 15: the whole model's KV the engine's PP check compares with the smallest stage (0: per stage).
                      {"pp_whole_model_kv", est.pp_whole_model_check ? est.pp_whole_model_kv_bytes : 0.0},
                      // The regime tools/fit_overheads.py --loo breaks the figures down by.
                      {"regime_moe", resolved.model.num_experts > 0 ? 1.0 : 0.0},
                      {"regime_hybrid", est.state_bytes_per_sequence_rank > 0 ? 1.0 : 0.0},
                      {"regime_tp", static_cast<double>(est.tensor_parallel_size)},
                      {"regime_pp", static_cast<double>(est.pipeline_parallel_size)},
                      {"regime_dp", static_cast<double>(est.data_parallel_size)},
                      {"regime_ep", d.enable_expert_parallel ? 1.0 : 0.0},
                      {"regime_quantized", !est.quantization.empty() || d.quant_scheme ? 1.0 : 0.0}};
  // Issue 15 (warmup33): the captured-graph term's multipliers (graphs [/ TP], graphs x layers, graphs x MoE layers), which
  // tools/fit_overheads.py --graph-captured fits the engines.json graph_captured_* constants on; 0 where the term is not that.
  for (const auto& t : est.terms) {
    if (t.name != "graph capture") continue;
    double graphs = 0, layers = -1, moe_layers = 0, tp_share = 1;
    for (const auto& [name, value] : t.inputs) {
      if (name == "captured_piecewise_graphs" || name == "captured_full_graphs") graphs += value;
      if (name == "per_graph_tp_share" && value >= 1) tp_share = value;
      if (name == "layers") layers = value;
      if (name == "moe_layers") moe_layers = value;
    }
    if (layers < 0) continue;
    row.memory_terms["graph_captured_graphs"] = graphs / tp_share;  // issue 15 (graph34): the per-graph part's multiplier
    row.memory_terms["graph_captured_layer_graphs"] = graphs * layers;
    row.memory_terms["graph_captured_moe_layer_graphs"] = graphs * moe_layers;
  }
  row.predicted_failure = failure_name(est.failure);
  row.predicted_failure_message = est.fits ? "" : est.failure_message;
  row.verdict_depends_on = est.verdict_depends_on;
  row.observed_fits = o.fits;
  row.observed_failure = o.failure.value_or("");
  if (!o.fits && o.available_kv_gib && *o.available_kv_gib < 0) row.observed_fits = false;
  if (!o.fits && (o.kv_cache_tokens || o.max_concurrency)) row.observed_fits = true;
  auto compare = [&](const std::string& field, std::optional<double> observed, double predicted, std::optional<double> low = std::nullopt,
                     std::optional<double> high = std::nullopt) {
    if (!observed) return;
    row.fields.push_back({field, *observed, predicted, pct(predicted, *observed), low, high});
  };
  // Issue 15: from vLLM 0.21 (PR #41069) the token line is int(concurrency x max_model_len), so where a case records both
  // lines, the token count is the concurrency line again (the seed's 53,739 = int(1.64x x 32,768)), not a second observation.
  if (resolved.engine.tokens_rule == engine::TokensRule::concurrency_x_len && o.kv_cache_tokens && o.max_concurrency && o.concurrency_len &&
      std::fabs(*o.kv_cache_tokens - *o.max_concurrency * static_cast<double>(*o.concurrency_len)) <= 0.005 * static_cast<double>(*o.concurrency_len) + 1.0)
    row.assumptions.push_back(format("printed kv_cache_tokens %.0f is the concurrency line again: %s prints int(concurrency x max_model_len) "
                                     "(vLLM PR #41069), %.2fx x %lld",
                                     *o.kv_cache_tokens, resolved.engine.id.c_str(), *o.max_concurrency, static_cast<long long>(*o.concurrency_len)));
  if (est.failure != estimate::Failure::invalid_layout && est.failure != estimate::Failure::unsupported_quantization) {
    compare("weights_gib", o.weights_gib, bytes_to_gib(est.weights_bytes));
    // Issue 15 (pp35): a PP case's printed line is the stage that printed it, not the tightest stage's budget.
    PF_TRY(printed, estimate::printed_available_kv(est, resolved.engine, o.available_kv_stage, where + ": available_kv_stage"));
    if (o.available_kv_gib && !printed.rule.empty()) row.assumptions.push_back(printed.rule);
    compare("available_kv_gib", o.available_kv_gib, bytes_to_gib(printed.bytes), bytes_to_gib(printed.low_bytes), bytes_to_gib(printed.high_bytes));
    if (est.num_blocks > 0) {
      compare("kv_cache_tokens", o.kv_cache_tokens, static_cast<double>(est.kv_tokens), static_cast<double>(est.kv_tokens_low), static_cast<double>(est.kv_tokens_high));
      compare("max_concurrency", o.max_concurrency, est.max_concurrency);
    }
  }
  return Ok{};
}

// Issue 15 (acc28): a case that states no interconnect, on a version that counts the NCCL buffers, leaves the other
// plausible interconnects open (deploy::across_interconnects: the 4-GPU board, the PCIe card a name without a form factor
// also names), an unknown input like the sampling path: the available-KV and token bands stretch by how far they move it.
void widen_by_interconnect_band(const deploy::Inputs& in, const CaseContext& ctx, const deploy::Resolved& resolved, const estimate::FitEstimate& est,
                                CaseResult& row) {
  const deploy::InterconnectBand band = deploy::across_interconnects(in, {&ctx.devices, &ctx.engines}, resolved);
  if (band.points.empty()) return;
  for (auto& f : row.fields) {
    if (!f.low || !f.high) continue;
    if (f.field == "available_kv_gib") {
      *f.low += bytes_to_gib(band.available_kv_min_bytes - est.available_kv_bytes);
      *f.high += bytes_to_gib(band.available_kv_max_bytes - est.available_kv_bytes);
    } else if (f.field == "kv_cache_tokens" && band.kv_tokens_max > 0) {
      *f.low += static_cast<double>(band.kv_tokens_min - est.kv_tokens);
      *f.high += static_cast<double>(band.kv_tokens_max - est.kv_tokens);
    }
  }
  row.assumptions.push_back(format("the available-KV and token bands also span the interconnect band: %.2f - %.2f GiB available over %zu interconnects",
                                   bytes_to_gib(band.available_kv_min_bytes), bytes_to_gib(band.available_kv_max_bytes), band.points.size()));
}

// Issue 15: a case the estimate refuses only because of the vision encoder's profiling pass, whose printed concurrency is
// what the same deployment gives without that pass (--skip-mm-profiling; printed to 0.01), says so on its row. The
// predicted verdict stays: the case records no flag that leaves the pass out (the seed's Qwen3.8-27B on vLLM-Ascend
// 0.23.0 prints 1.64x = 41 blocks / 25, which the estimate without the pass gave exactly until issue 15 npuact's
// live-tensor text forward made it 40 blocks, 1.60x; with the pass 0.28x).
void note_lines_without_encoder_pass(const model::ModelSpec& spec, const deploy::Resolved& resolved, const estimate::FitEstimate& est, const Observed& o,
                                     CaseResult& row) {
  if (est.fits || !o.max_concurrency || (o.fits && !*o.fits)) return;
  const auto alt = estimate::fit_without_encoder_pass(spec, resolved.device, resolved.engine, resolved.overheads, resolved.deployment, est);
  if (!alt || std::fabs(alt->max_concurrency - *o.max_concurrency) > 0.005 + 1e-9) return;
  row.assumptions.push_back(format("the printed lines are a run without the vision encoder's profiling pass: with --skip-mm-profiling the estimate is "
                                   "%.2fx and %lld tokens (printed %.2fx), with the pass (%.2f GiB) %.2fx; the case records no flag that leaves the pass "
                                   "out (--skip-mm-profiling, every --limit-mm-per-prompt at 0, --language-model-only), so the verdict is predicted with it",
                                   alt->max_concurrency, static_cast<long long>(alt->kv_tokens), *o.max_concurrency, bytes_to_gib(est.activation_vision_bytes),
                                   est.max_concurrency));
}

// Issue 15: nothing states or dates the case's version, so the newest profile is scored; the row also carries the
// prediction under every profile of the engine (deploy::across_versions) and says what it spans.
void note_version_band(const deploy::Inputs& in, const CaseContext& ctx, const deploy::Resolved& resolved, CaseResult& row) {
  row.version_band = deploy::across_versions(in, {&ctx.devices, &ctx.engines});
  const auto& band = row.version_band;
  if (band.points.empty()) return;
  row.assumptions.push_back(format("no version stated or dated: %s, the newest profile, is scored; across the %zu %s profiles (%s to %s) the KV cache "
                                   "is %lld-%lld tokens and %d of %zu fit (version_band)",
                                   resolved.engine.id.c_str(), band.points.size(), resolved.engine.engine.c_str(), band.points.front().engine_id.c_str(),
                                   band.points.back().engine_id.c_str(), static_cast<long long>(band.kv_tokens_min), static_cast<long long>(band.kv_tokens_max),
                                   band.fitting, band.points.size()));
}

// Issue 16 (mindie34): MindIE Service has no vLLM-style profile in engines.json. A MindIE case's model, cards and
// checkpoint are resolved as on vLLM-Ascend (its worldSize recorded as tensor_parallel_size: weight bytes and all-reduces
// per card are the same sums), with no version: the engine version, detail, notes and source date a vLLM profile,
// and none of them names one for MindIE. Only the decode speed is compared, on the speed catalogue's mindie/npu profile
// (data/engines/speed.json); MindIE's static KV pool is `fit --engine mindie`'s (estimate/mindie), not vLLM's.
bool is_mindie_case(const CaseInputs& inputs) { return inputs.engine && to_lower(trim(*inputs.engine)) == "mindie"; }

CaseInputs as_vllm_ascend_layout(CaseInputs inputs) {
  inputs.engine = "vllm-ascend";
  inputs.engine_version.reset();
  inputs.engine_detail.reset();
  inputs.notes.reset();
  inputs.source.reset();
  inputs.engine_build.reset();
  inputs.engine_core.reset();
  return inputs;
}

// One case line: read, resolved, predicted and compared into a row of `report` (evaluated or
// skipped with a reason). Errors are bad input: malformed JSON, a field of the wrong type, a bad flag.
// Issue 15, heterogeneous PP: "stage_devices": one catalogue name per pipeline stage, in rank order, as the one
// comma-separated --device list fit takes. Issue 19 (attack36): a stage_devices that was no array was passed over (the case
// ran on its "device" alone), an entry that was no string was its JSON text ("unknown device '5'"), and a name holding a
// comma named two stages. Each is the case's bad input, naming the field.
Expected<std::optional<std::string>> stage_device_names(const JsonObject& c, const std::string& where) {
  const Json* stages = c.find("stage_devices");
  if (!stages) return std::optional<std::string>{};
  const auto bad = [&](const std::string& why) {
    return make_error(ErrorKind::invalid_argument,
                      format("%s: stage_devices: %s; expected one catalogue device name per pipeline stage, in rank order, such as [\"A100-80G\", \"L40S\"]",
                             where.c_str(), why.c_str()),
                      where);
  };
  if (!stages->is_array() || stages->empty()) return bad(stages->is_array() ? std::string("an empty array") : format("a JSON %s, not an array", stages->type_name()));
  std::string names;
  for (const auto& n : *stages) {
    if (!n.is_string()) return bad(format("an entry is a JSON %s, not a name", n.type_name()));
    const std::string name = n.get<std::string>();
    if (trim(name).empty() || name.find(',') != std::string::npos) return bad(format("'%s' is not one device name", one_line(name, 80).c_str()));
    names += (names.empty() ? "" : ",") + name;
  }
  return std::optional<std::string>{names};
}

Status run_case(const std::string& line, const std::string& file, int line_no, const CaseContext& ctx, ValidationReport& report) {
  CaseResult row;
  row.file = file;
  // Issue 19 (hard31): a case is preflight's own record, written or edited by hand: a key it repeats is refused, not the
  // last one read silently (two "num_devices" of a copy-edited line).
  PF_TRY(json, parse_owned_json(line, format("%s:%d", file.c_str(), line_no)));
  JsonObject c(json, format("%s:%d", file.c_str(), line_no));
  PF_TRY(read_inputs, read_case_inputs(c, file, line_no, row));
  const bool mindie = is_mindie_case(read_inputs);
  const CaseInputs inputs = mindie ? as_vllm_ascend_layout(read_inputs) : read_inputs;
  auto skip = [&](const std::string& reason) -> Status {
    row.skipped = true;
    row.skip_reason = reason;
    ++report.skipped;
    report.rows.push_back(row);
    return Ok{};
  };
  PF_TRY(o, read_observed(c));
  if (!o.any_memory_or_verdict() && !o.tokens_per_s) return skip("no observed memory field, verdict or speed");
  if (mindie && !o.tokens_per_s)
    return skip("a MindIE case without tokens_per_s: validate compares MindIE's decode speed only (its KV pool: fit --engine mindie)");
  const std::string where = format("%s:%d (case %s)", file.c_str(), line_no, one_line(row.id, 120).c_str());
  PF_TRY(flags, read_case_flags(c, where, o.concurrency_len));
  flags.drafter_model_dirs = ctx.options.model_dirs;  // a speculative drafter's config, read like the case's model
  CaseModel found = resolve_case_model(inputs.hint.value_or(""), ctx.resolve, row);
  // Issue 16: a corrupt file of the checkpoint the case names (its quant_model_description.json,
  // hf_quant_config.json, config.json) is bad input naming that file, as in fit (exit 2), never a quiet skip.
  if (found.corrupt) return make_error(ErrorKind::corrupt, where + ": model " + found.tried + ": " + found.corrupt->describe(), found.corrupt->context);
  // ux28: a case `logs --emit-case` wrote from a log that names no model has neither field; "(tried )" said nothing.
  if (!found.spec)
    return skip(found.tried.empty() ? std::string("no model named: the case's model and config_hint are null or empty (a log excerpt without its engine-args "
                                                  "line gives none); add the model id or a config.json path")
                                    : "model not resolvable (tried " + found.tried + ")");
  // ux31: a case with no device (logs --emit-case on a log that names no card) was skipped as "device not in the
  // catalogue and no total memory stated: " with nothing after the colon.
  if (trim(row.device).empty() && !c.find("stage_devices"))
    return skip("no device named: the case's device is null or empty (a log that names no card gives none; `preflight logs FILE --device D --emit-case` "
                "writes it); add the card");
  PF_TRY(own_checkpoint, checkpoint_spec(c, *found.spec, where, row));
  const model::ModelSpec& spec = own_checkpoint ? *own_checkpoint : *found.spec;
  deploy::Inputs in;
  in.model = spec;
  in.device = {row.device, where + ": device", deploy::DeviceForm::free_text};
  // Issue 15, heterogeneous PP: "stage_devices": one catalogue name per pipeline stage, in rank order.
  PF_TRY(stage_names, stage_device_names(c, where));
  if (stage_names) in.device = {*stage_names, where + ": stage_devices", deploy::DeviceForm::name};
  // The engine as the case records it, resolved by the step `logs` takes for the case it emits (misc21).
  in.engine = deploy::recorded_engine_input({.engine = inputs.engine,
                                             .version = inputs.engine_version,
                                             .detail = inputs.engine_detail,
                                             .notes = inputs.notes,
                                             .source = inputs.source,
                                             .build = inputs.engine_build,
                                             .engine_core = inputs.engine_core,
                                             .kv_cache_tokens = o.kv_cache_tokens,
                                             .max_concurrency = o.max_concurrency,
                                             .concurrency_len = o.concurrency_len});
  in.flags = flags;
  in.flags.quantization.reset();
  auto rules_of = apply_case_quantization(c, spec, where, in.flags, row);
  if (!rules_of && rules_of.error().kind == ErrorKind::not_found) {  // issue 16 (quant26): this case alone, not the run
    ++report.unreadable;
    return skip("unreadable: " + rules_of.error().message);
  }
  if (!rules_of) return rules_of.error();
  auto resolved = deploy::resolve_deployment(in, {&ctx.devices, &ctx.engines});
  // Issue 15 (graph34): a recorded external-LB start of a model without experts, which vLLM 0.21+ refuses at config time
  // ("Non-MoE models do not support external data parallel mode"), is scored as a start that does not happen: the case is
  // resolved without its external-LB flags for the card and engine, and the fit is the refusal.
  std::optional<Error> refused;
  if (!resolved && (in.flags.data_parallel_rank || in.flags.data_parallel_external_lb)) {
    deploy::Inputs bare = in;
    bare.flags.data_parallel_rank.reset();
    bare.flags.data_parallel_external_lb.reset();
    if (auto again = deploy::resolve_deployment(bare, {&ctx.devices, &ctx.engines}); again) {
      refused = deploy::non_moe_external_data_parallel_refusal(in.flags, again->engine, again->deployment.data_parallel_size, again->model.num_experts);
      if (refused && refused->message != resolved.error().message) refused.reset();  // another refusal came first: that one is the case's
      if (refused) resolved = std::move(again);
    }
  }
  if (!resolved) return skip(resolved.error().message);
  // Issue 19 (hard33's leftover): a recorded attention_backend is checked as fit checks --attention-backend (a name the
  // version's enum lacks is vLLM's ValueError at start-up). A case records a run, so such a name is unreadable input.
  if (const auto& b = flags.attention_backend) {
    auto names = engine::load_attention_backends();
    if (!names) return names.error();
    auto ok = engine::check_attention_backend(*names, resolved->engine, b->value, b->origin);
    if (!ok) {
      ++report.unreadable;
      return skip("unreadable: " + ok.error().message);
    }
    if (!ok->empty()) row.assumptions.push_back(*ok);
  }
  row.assumptions.insert(row.assumptions.end(), resolved->assumptions.begin(), resolved->assumptions.end());
  row.engine = mindie ? std::string("mindie") : resolved->engine.id;
  if (mindie)
    row.assumptions.push_back("MindIE case: model, cards and weights laid out as on " + resolved->engine.id +
                              " (worldSize = tensor_parallel_size); decode speed on the mindie/npu speed profile; memory fields are not compared");
  else if (resolved->engine_version_basis == deploy::VersionBasis::newest_assumed)
    note_version_band(in, ctx, *resolved, row);
  // The model as resolved: a case's dtype (vLLM's --dtype) is applied to it (deploy::resolve_deployment; issue 15, warmup32).
  auto est = refused ? estimate::refused_fit(resolved->device, resolved->engine, resolved->deployment, *refused)
                     : estimate::estimate_fit(resolved->model, resolved->device, resolved->engine, resolved->overheads, resolved->deployment);
  // Issue 15/16 (plan28): a recorded max_model_len above the model's derived length is vLLM's ValueError at config time
  // (deploy::check_max_model_len, as fit refuses --max-model-len and plan --context): the case is evaluated as the engine
  // would run it, refused before anything is sized. A case records no VLLM_ALLOW_LONG_MAX_MODEL_LEN; a length read from
  // the printed concurrency line is one the engine took, and is not checked.
  PF_TRY(recorded_len, c.opt_int("max_model_len"));
  if (std::vector<std::string> allowed; recorded_len) {
    if (auto len_ok = deploy::check_max_model_len(spec, deploy::Given<int64_t>{*recorded_len, where + ": max_model_len"}, deploy::LongMaxModelLen::refused, allowed);
        !len_ok) {
      est = estimate::refused_fit(resolved->device, resolved->engine, resolved->deployment, len_ok.error());
      est.failure = estimate::Failure::max_model_len_too_large;
    }
  }
  row.assumptions.insert(row.assumptions.end(), est.assumptions.begin(), est.assumptions.end());
  apply_case_variant_rules(*rules_of, *resolved, est, row);
  if (o.tokens_per_s) {
    PF_TRY(speed_skip, compare_speed(c, resolved->model, *resolved, est, ctx, mindie ? std::string("mindie") : resolved->engine.engine, *o.tokens_per_s, row));
    if (speed_skip) return skip(*speed_skip);
    if (mindie || !o.any_memory_or_verdict()) {
      ++report.evaluated;
      report.rows.push_back(row);
      return Ok{};
    }
  }
  PF_TRY(compared, compare_memory(est, *resolved, o, where, row));
  (void)compared;
  widen_by_interconnect_band(in, ctx, *resolved, est, row);
  note_lines_without_encoder_pass(spec, *resolved, est, o, row);
  ++report.evaluated;
  report.rows.push_back(row);
  return Ok{};
}

}  // namespace

// Every case's result is kept for the summary (about 25 KB for an evaluated case, 1.6 KB for an unreadable one), so
// a 64 MiB file of 20 million "{}" lines took 21 GB before it was killed (issue 19). 10,000 cases in one run: ~250 MB
// and a few minutes; the published record sets hold a few hundred.
constexpr int k_max_validation_cases = 10'000;
// One case is one JSON object of about 1 KB; a 60 MB line (an array of 30 million numbers) parsed to a 1 GB tree.
// 2 MiB still reads a case with a 1 MB field, so that field's own error names it (cut), and parses to ~40 MB at most.
constexpr size_t k_max_case_line_bytes = 2u << 20;

struct ValidationCatalogs {
  device::DeviceCatalog devices;
  engine::EngineCatalog engines;
  engine::SpeedCatalog speeds;
};

Expected<std::shared_ptr<const ValidationCatalogs>> load_validation_catalogs() {
  PF_TRY(devices, device::load_device_catalog());
  PF_TRY(engines, engine::load_engine_catalog());
  PF_TRY(speeds, engine::load_speed_catalog());
  return std::shared_ptr<const ValidationCatalogs>(new ValidationCatalogs{std::move(devices), std::move(engines), std::move(speeds)});
}

Status run_validation_line(const std::string& line, const std::string& file, int line_no, const ValidationCatalogs& catalogs, const ValidateOptions& options,
                           ValidationReport& report) {
  if (trim(line).empty()) return Ok{};
  if (line.size() > k_max_case_line_bytes)
    return make_error(ErrorKind::invalid_argument,
                      format("%s: line %d: a case of %zu bytes, more than the %zu accepted for one case", file.c_str(), line_no, line.size(), k_max_case_line_bytes), file);
  model::ResolveOptions resolve;
  resolve.extra_model_dirs = options.model_dirs;
  const CaseContext ctx{catalogs.devices, catalogs.engines, catalogs.speeds, options, resolve};
  ++report.cases;
  return run_case(line, file, line_no, ctx, report);
}

Expected<ValidationReport> run_validation(const std::vector<std::string>& files, const ValidateOptions& options) {
  ValidationReport report;
  PF_TRY(devices, device::load_device_catalog());
  PF_TRY(engines, engine::load_engine_catalog());
  PF_TRY(speeds, engine::load_speed_catalog());
  model::ResolveOptions resolve;
  resolve.extra_model_dirs = options.model_dirs;
  const CaseContext ctx{devices, engines, speeds, options, resolve};
  // The limits first, over every file, so that a run over them is refused before any case is evaluated.
  int counted = 0;
  for (const auto& file : files) {
    PF_TRY(text, read_text_file(file));
    std::istringstream lines(text);
    std::string line;
    for (int line_no = 1; std::getline(lines, line); ++line_no) {
      if (trim(line).empty()) continue;
      if (line.size() > k_max_case_line_bytes) {
        return make_error(ErrorKind::invalid_argument, format("%s: line %d: a case of %zu bytes, more than the %zu accepted for one case", file.c_str(), line_no,
                                                              line.size(), k_max_case_line_bytes),
                          file);
      }
      if (++counted > k_max_validation_cases) {
        return make_error(ErrorKind::invalid_argument,
                          format("%s: line %d: more than %d cases in one validate run (each case's result is held for the summary); split the file", file.c_str(),
                                 line_no, k_max_validation_cases),
                          file);
      }
    }
  }
  for (const auto& file : files) {
    PF_TRY(text, read_text_file(file));
    std::istringstream lines(text);
    std::string line;
    int line_no = 0;
    while (std::getline(lines, line)) {
      ++line_no;
      if (trim(line).empty()) continue;
      ++report.cases;
      PF_TRY(ok, run_case(line, file, line_no, ctx, report));
      (void)ok;
    }
  }
  summarise_validation(report);
  return report;
}

}  // namespace preflight::validate
