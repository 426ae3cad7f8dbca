#include "cli/cmd_logs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "base/file.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "cli/args.hpp"
#include "cli/common.hpp"
#include "cli/help.hpp"
#include "cli/logs_case.hpp"
#include "cli/logs_dating.hpp"
#include "cli/cmd_llama.hpp"
#include "cli/cmd_plan.hpp"
#include "deploy/deployment.hpp"
#include "deploy/device_by_total.hpp"
#include "deploy/flag_json.hpp"
#include "deploy/version_band.hpp"
#include "device/device_spec.hpp"
#include "engine/engine_core.hpp"
#include "engine/engine_profile.hpp"
#include "engine/model_support.hpp"
#include "estimate/fit.hpp"
#include "estimate/printed_stage.hpp"
#include "logs/engine_log.hpp"
#include "logs/llama_cpp_log.hpp"
#include "model/model_source.hpp"
#include "model/quant_variant.hpp"
#include "cli/model_arg.hpp"
#include "plan/fit_search.hpp"
#include "report/render.hpp"

namespace preflight::cli {

namespace {

constexpr double k_device_total_match_fraction = 0.005;  // "29.49 GiB total capacity" is rounded to 0.01 GiB


template <typename T>
Json logged(const std::optional<logs::Logged<T>>& v) {
  if (!v) return Json();
  return Json{{"value", v->value}, {"line", v->line}};
}

Json evidence_json(const std::vector<logs::EvidenceLine>& lines) {
  Json a = Json::array();
  for (const auto& e : lines) a.push_back({{"line", e.line}, {"text", e.text}, {"rule", e.rule_id}});
  return a;
}

// user36 (issue 15, "a log's own flags are read back"): the data-parallel, expert-parallel, multi-node and speculative
// arguments the prediction takes from the log (logged_flags), as text with their lines, for the "engine args" line and
// --json; before, they were used but never shown.
std::vector<std::pair<std::string, std::pair<std::string, int64_t>>> logged_layout_args(const logs::EngineArgs& a) {
  std::vector<std::pair<std::string, std::pair<std::string, int64_t>>> out;
  auto num = [&](const char* name, const auto& v) {
    if (v) out.push_back({name, {std::to_string(v->value), v->line}});
  };
  auto flag = [&](const char* name, const auto& v) {
    if (v) out.push_back({name, {v->value ? "true" : "false", v->line}});
  };
  num("data_parallel_size", a.data_parallel_size);
  num("data_parallel_size_local", a.data_parallel_size_local);
  num("data_parallel_rank", a.data_parallel_rank);
  num("data_parallel_start_rank", a.data_parallel_start_rank);
  flag("headless", a.headless);
  num("nnodes", a.nnodes);
  num("node_rank", a.node_rank);
  flag("enable_expert_parallel", a.enable_expert_parallel);
  if (a.speculative_config) out.push_back({"speculative_config", {a.speculative_config->value, a.speculative_config->line}});
  return out;
}

// The logged engine arguments as deployment flags, each with its line as origin.
// The platform of the logged engine, which names vLLM's device-control variable in the rank messages.
std::string log_platform(const logs::EngineLog& log) { return log.engine == "vllm-ascend" ? "npu" : ""; }

deploy::Flags logged_flags(const logs::EngineArgs& a) {
  deploy::Flags f;
  auto take = [](const auto& logged, auto& into, const char* field) {
    if (logged) into = {logged->value, fmt::format("log line {}: {}", logged->line, field)};
  };
  take(a.tensor_parallel_size, f.tensor_parallel_size, "tensor_parallel_size");
  take(a.pipeline_parallel_size, f.pipeline_parallel_size, "pipeline_parallel_size");
  take(a.gpu_memory_utilization, f.gpu_memory_utilization, "gpu_memory_utilization");
  take(a.max_model_len, f.max_model_len, "max_model_len");
  take(a.max_num_seqs, f.max_num_seqs, "max_num_seqs");
  take(a.max_num_batched_tokens, f.max_num_batched_tokens, "max_num_batched_tokens");
  take(a.kv_cache_dtype, f.kv_cache_dtype, "kv_cache_dtype");
  take(a.dtype, f.dtype, "dtype");  // issue 15 (warmup32): the engine config's resolved dtype=torch.X
  take(a.quantization, f.quantization, "quantization");
  take(a.enforce_eager, f.enforce_eager, "enforce_eager");
  take(a.skip_mm_profiling, f.skip_mm_profiling, "skip_mm_profiling");
  take(a.enable_prefix_caching, f.enable_prefix_caching, "enable_prefix_caching");
  take(a.enable_chunked_prefill, f.enable_chunked_prefill, "enable_chunked_prefill");
  take(a.allow_deprecated_quantization, f.allow_deprecated_quantization, "allow_deprecated_quantization");
  take(a.mamba_ssm_cache_dtype, f.mamba_ssm_cache_dtype, "mamba_ssm_cache_dtype");
  take(a.limit_mm_per_prompt, f.limit_mm_per_prompt, "limit_mm_per_prompt");
  take(a.language_model_only, f.language_model_only, "language_model_only");
  take(a.data_parallel_size, f.data_parallel_size, "data_parallel_size");
  take(a.data_parallel_size_local, f.data_parallel_size_local, "data_parallel_size_local");
  take(a.headless, f.headless, "headless");  // issue 15 (multinode32): a headless node's own log
  take(a.data_parallel_start_rank, f.data_parallel_start_rank, "data_parallel_start_rank");
  take(a.data_parallel_address, f.data_parallel_address, "data_parallel_address");
  take(a.data_parallel_rpc_port, f.data_parallel_rpc_port, "data_parallel_rpc_port");
  take(a.data_parallel_backend, f.data_parallel_backend, "data_parallel_backend");
  take(a.data_parallel_hybrid_lb, f.data_parallel_hybrid_lb, "data_parallel_hybrid_lb");
  take(a.data_parallel_external_lb, f.data_parallel_external_lb, "data_parallel_external_lb");
  take(a.api_server_count, f.api_server_count, "api_server_count");
  take(a.data_parallel_rank, f.data_parallel_rank, "data_parallel_rank");  // issue 15 (dpep33)
  take(a.nnodes, f.nnodes, "nnodes");
  if (a.nnodes) {  // a Namespace(...) prints node_rank=0 and the master's defaults on every start: kept with --nnodes only
    take(a.node_rank, f.node_rank, "node_rank");
    take(a.master_addr, f.master_addr, "master_addr");
    take(a.master_port, f.master_port, "master_port");
  }
  take(a.decode_context_parallel_size, f.decode_context_parallel_size, "decode_context_parallel_size");
  take(a.enable_expert_parallel, f.enable_expert_parallel, "enable_expert_parallel");
  take(a.speculative_config, f.speculative_config, "speculative_config");
  take(a.hccl_buffsize, f.hccl_buffsize_mb, "HCCL_BUFFSIZE");
  take(a.flashcomm1, f.flashcomm1, "VLLM_ASCEND_ENABLE_FLASHCOMM1");
  take(a.mlapo, f.mlapo, "VLLM_ASCEND_ENABLE_MLAPO");
  take(a.flashinfer_sampler, f.flashinfer_sampler, "sampler");
  take(a.compilation_config, f.compilation_config, "compilation_config");  // issue 15
  take(a.optimization_level, f.optimization_level, "optimization_level");
  take(a.attention_backend, f.attention_backend, "attention_backend");
  take(a.moe_backend, f.moe_backend, "moe_backend");  // issue 15 (evid24)
  return f;
}

// What `preflight logs` takes.
struct LogsRequest {
  std::optional<std::string> device, engine, models;
  bool emit_case = false, json = false;
};

std::vector<Option> logs_options(LogsRequest& r) {
  return {text_flag("device", "D", r.device, "the device the log ran on, when the log does not say"),
          text_flag("engine", "E", r.engine, "the engine (vllm, vllm-ascend), when the log does not say"),
          models_dir_flag(r.models, "a directory with <org>__<name>/config.json"),
          switch_flag("emit-case", r.emit_case, "print the log as one validation case"), json_flag(r.json)};
}

const CommandText k_logs_text{
    R"(usage: preflight logs FILE [--device D] [--engine E] [--models DIR] [--emit-case] [--json]
       preflight explain FILE ...   (the same command))",
    R"(Reads a vLLM / vLLM-Ascend start-up log: versions, engine arguments (with their line numbers), the printed
memory lines, and the root cause of a failure (the highest-priority error signature, never the generic
"Engine core initialization failed") with its fix. When the model resolves, the printed lines are compared
with the prediction for the same arguments: weights, available KV, KV tokens, concurrency, and the engine's
per-term accounting where it prints it (vLLM-Ascend >= 0.19.1 "Actual usage: ... GiB for weights, ... peak
activation, ... non-torch memory, ... NPU graph memory", vLLM V0 "model weights take ...; non_torch_memory takes
...; PyTorch activation peak memory takes ...") against the fit's own terms; a row whose prediction sums
several terms says which.)",
    "",
    R"(exit: 0 no failure in the log (it started, or stops before any error), 1 the log shows a failure (its root cause
      named, or "unknown" when no signature matches), 2 bad input: unreadable, an engine argument out of range (the
      log line named), or a flag given twice)"};

// Issue 15 (v0eng29): the engine core the log shows, as deploy takes it.
std::optional<engine::EngineCore> logged_engine_core(const logs::EngineLog& log) {
  if (!log.engine_core) return std::nullopt;
  return log.engine_core->core == logs::EngineCoreShown::v0 ? engine::EngineCore::v0 : engine::EngineCore::v1;
}

// The engine the log states, resolved as validate resolves the case --emit-case writes for it (misc21): the fields of that
// case (engine, engine_version, engine_build, notes, source, the printed token lines) through deploy::recorded_engine_input,
// so that `logs` and `validate` of its case select one profile and one set of build rules. The origins name the log's
// lines. --engine wins over the log's engine and version (the emitted case does not carry it); the build stays, as fit
// --engine-build.
deploy::EngineInput log_engine_input(const logs::EngineLog& log, const LogsRequest& args, const std::string& path) {
  const deploy::EngineInput stated = printed_engine_versions(log);
  const auto& p = log.printed;
  auto value = [](const auto& v) { return v ? std::optional<double>(static_cast<double>(v->value)) : std::nullopt; };
  deploy::EngineInput in = deploy::recorded_engine_input(
      {.engine = log.engine == "unknown" ? std::nullopt : std::optional<std::string>(log.engine),
       .version = stated.version.empty() ? std::nullopt : std::optional<std::string>(stated.version),
       .notes = case_notes(log, path),
       .source = path,
       .build = stated.build,
       .engine_core = logged_engine_core(log),
       .kv_cache_tokens = value(p.kv_cache_tokens),
       .max_concurrency = value(p.max_concurrency),
       .concurrency_len = p.concurrency_len ? std::optional<int64_t>(p.concurrency_len->value) : std::nullopt});
  if (!stated.version.empty()) in.origin = stated.origin;
  if (log.engine_core) in.engine_core_origin = fmt::format("log line {}: {}", log.engine_core->line, log.engine_core->text);
  in.version_choice = stated.version_choice;
  if (stated.build) in.build_origin = stated.build_origin;
  if (args.engine) {
    in.engine = *args.engine;
    in.version.clear();
    in.origin = "--engine";
    in.version_choice.clear();
  }
  return in;
}

// Issue 15 (pp36): the total the log prints ("Free memory on device (F/T GiB)") picks the card among those the --device
// name answers to ("H20": the 96 GB card or the 141 GB H20-3e; deploy/device_by_total.hpp) and is the budget's total, as a
// total in a case's device text is (deploy resolve_deployment: "A total stated in the device text replaces the catalogue's").
void apply_printed_total(const logs::EngineLog& log, const device::DeviceCatalog& devices, deploy::DeviceInput& device_input, deploy::Flags& flags,
                         std::vector<std::string>& notes) {
  const auto& t = log.printed.device_total_gib;
  if (!t || device_input.text.empty()) return;
  const double total = t->value * k_gib;
  if (const device::DeviceSpec* d = deploy::candidate_by_total(devices, device_input.text, total)) {
    const device::DeviceMatch m = device::match_device(devices, device_input.text);
    if (m.device && d != m.device) {
      notes.push_back(fmt::format("--device {} names several cards; the {:.2f} GiB total the log prints (line {}) picks {} ({}), not the assumed {}",
                                  device_input.text, t->value, t->line, d->id, d->name, m.device->id));
      device_input.text = d->id;
    }
  }
  if (!flags.device_total_bytes) flags.device_total_bytes = deploy::Given<double>{total, fmt::format("log line {}: Free memory on device", t->line)};
}

FitOutcome run_fit(const logs::EngineLog& log, const LogsRequest& args, const std::string& path, const LineDating& dating) {
  FitOutcome out;
  out.dating = dating;
  // ux29 (the seed's eager trap): a log that ran eager says what that does to decode, figures or not.
  if (log.args.enforce_eager && log.args.enforce_eager->value)
    out.notes.push_back(fmt::format("enforce_eager=true (line {}): no graphs; every decode step dispatches its operators one by one from Python, so decode "
                                    "runs several times slower than in graph mode (shared/seeds/001 section 5: 10.3 against 58.9 tok/s, Qwen3-VL-8B on a "
                                    "910B3); drop --enforce-eager unless a graph failure forced it, and measure speed without it",
                                    log.args.enforce_eager->line));
  if (!log.args.model) {
    out.notes.push_back("the log does not name the model; no prediction");
    return out;
  }
  model::ResolveOptions ro;
  if (const auto& d = args.models) ro.extra_model_dirs.push_back(*d);
  const std::string name = log.args.model->value;
  auto spec = model::resolve_model(name, ro);
  if (!spec && base_name(name) != name) spec = model::resolve_model(base_name(name), ro);
  // ux33: a published quantized checkpoint (plan's own start lines serve one by its hub id; the seed's folder is named as
  // one) is its base model in the variant it is published in, as fit sizes it.
  const auto published = spec ? std::nullopt : published_checkpoint_of_folder(name);
  if (published) spec = model::resolve_model(published->base_model, ro);
  if (!spec) {
    out.notes.push_back("model '" + name + "' from line " + std::to_string(log.args.model->line) + " cannot be resolved (" + spec.error().describe() +
                        "); pass --models DIR or run 'preflight fit' with a catalogue id");
    return out;
  }
  deploy::Flags flags = logged_flags(log.args);
  if (published) {
    const auto& variants = model::load_variant_catalog();
    const auto v = variants ? model::find_variant(*variants, published->variant) : Expected<const model::QuantVariant*>(variants.error());
    if (!v) {
      out.notes.push_back(v.error().describe());
      return out;
    }
    if ((*v)->quantized() && !flags.quantization) flags.quantization = deploy::Given<std::string>{(*v)->engine_quantization, "the checkpoint " + published->repo};
    flags.quant_scheme = (*v)->scheme;
    out.notes.push_back(published->assumption);
  }
  flags.drafter_model_dirs = ro.extra_model_dirs;  // a speculative drafter's config, read like the logged model
  if (auto checked = deploy::check_flags(flags, log_platform(log)); !checked) {
    out.bad_input = checked.error();
    return out;
  }
  auto devices = device::load_device_catalog();
  if (!devices) {
    out.notes.push_back(devices.error().describe());
    return out;
  }
  const bool npu = log.engine == "vllm-ascend";
  const double oom_total_bytes = log.diagnosis.oom && log.diagnosis.oom->total_bytes ? *log.diagnosis.oom->total_bytes : 0.0;
  deploy::DeviceInput device_input{args.device.value_or(""), "--device", deploy::DeviceForm::name};
  apply_printed_total(log, *devices, device_input, flags, out.notes);
  if (device_input.text.empty() && oom_total_bytes > 0) {
    for (const auto& candidate : devices->devices) {
      if ((candidate.platform == "npu") != npu) continue;
      // A printed total (else nominal) identifies a card; a memory-class estimate (issue 15) is not evidence of which card it is.
      const double known_total = candidate.runtime_total_bytes.value_or(candidate.memory_bytes);
      if (std::abs(known_total - oom_total_bytes) <= k_device_total_match_fraction * oom_total_bytes) {
        device_input = {candidate.id, "the out-of-memory message", deploy::DeviceForm::name};
        flags.device_total_bytes = deploy::Given<double>{oom_total_bytes, fmt::format("log line {}: total capacity", log.diagnosis.oom->line)};
        out.notes.push_back(fmt::format("device {}: its runtime total matches the {:.2f} GiB total capacity in the out-of-memory message", candidate.id,
                                   bytes_to_gib(oom_total_bytes)));
        break;
      }
    }
  }
  if (device_input.text.empty()) {
    out.notes.push_back("the device is not named in the log; pass --device D for a prediction");
    return out;
  }
  auto engines = engine::load_engine_catalog();
  if (!engines) {
    out.notes.push_back(engines.error().describe());
    return out;
  }
  deploy::EngineInput engine_input = log_engine_input(log, args, path);  // issue 15: an undated log is dated by its lines too
  // date37 (issue 15): the formats of its printed lines bound the version of a log that states none.
  const bool v0_shown = log.engine_core && log.engine_core->core == logs::EngineCoreShown::v0;
  apply_line_dating(out.dating, engine_input, {*spec, device_input, engine_input, flags}, {&*devices, &*engines}, v0_shown);
  auto resolved = deploy::resolve_deployment({*spec, device_input, engine_input, flags}, {&*devices, &*engines});
  if (!resolved) {
    if (resolved.error().kind == ErrorKind::invalid_argument) out.bad_input = resolved.error();
    else out.notes.push_back(resolved.error().describe());
    return out;
  }
  for (const auto& a : resolved->assumptions) out.notes.push_back(a);
  const device::DeviceSpec* dev = &resolved->device;
  const engine::EngineProfile* eng = &resolved->engine;
  const engine::Overheads* oh = &resolved->overheads;
  const estimate::Deployment& d = resolved->deployment;
  const model::ModelSpec* run_model = &resolved->model;  // the logged dtype applied (issue 15, warmup32)
  auto est = estimate::estimate_fit(*run_model, *dev, *eng, *oh, d);
  for (const auto& a : est.assumptions)  // user36: what the prediction assumed (the drafter, a default utilization), as fit says it
    if (std::find(out.notes.begin(), out.notes.end(), a) == out.notes.end()) out.notes.push_back(a);
  out.fixes = plan::search_fixes(*run_model, *dev, *eng, *oh, d, est).fixes;
  // ux29: eager with a known card: what it decodes, and (note_graph_mode) what graph mode would give on the same deployment.
  if (d.mode == estimate::ExecutionMode::eager && est.fits)
    if (auto speed = speed_for_fit({}, *run_model, *dev, *eng, d, est); speed && speed->single_stream_tokens_per_s > 0) {
      std::string figures = fmt::format("eager decode predicted at {:.1f} tok/s single stream on {} at {} tokens of context", speed->single_stream_tokens_per_s,
                                        dev->id, with_thousands(speed->context_tokens));
      if (auto graph = graph_mode_note(*speed, {}, *run_model, *dev, *eng, *oh, d, est)) figures += "; " + *graph;
      out.notes.push_back(figures);
    }
  out.model_id = spec->id.empty() ? name : spec->id;
  out.device_id = dev->id;
  out.engine_id = eng->id;
  out.engine_input = engine_input;
  out.build_rules = eng->build_rules();
  const auto& kv_stage = log.printed.available_kv_stage;
  auto printed = estimate::printed_available_kv(est, *eng, kv_stage ? std::optional<int64_t>(kv_stage->value) : std::nullopt,
                                                kv_stage ? fmt::format("log line {}: the (Worker_PP{}) prefix", kv_stage->line, kv_stage->value) : std::string("log"));
  if (!printed) {
    out.bad_input = printed.error();
    return out;
  }
  if (!printed->rule.empty()) out.notes.push_back(printed->rule);
  if (out.dating.applied) {
    out.version_band = line_dating_band(out.dating, {*spec, device_input, engine_input, flags}, {&*devices, &*engines}, v0_shown);
    // The versions whose registry lacks the architecture, said only where the window reaches below its first release.
    const auto first = engine::first_version_with(resolved->engine.engine, resolved->model.architecture);
    if (!out.version_band.points.empty() && first && (!out.dating.lo || *out.dating.lo < *first))
      out.versions_left_out = deploy::versions_left_out(*engines, *resolved);
  } else if (resolved->engine_version_basis == deploy::VersionBasis::newest_assumed) {
    out.version_band = deploy::across_versions({*spec, device_input, engine_input, flags}, {&*devices, &*engines});
    if (!out.version_band.points.empty()) out.versions_left_out = deploy::versions_left_out(*engines, *resolved);
  }
  out.printed_kv = *printed;
  out.fit = std::move(est);
  return out;
}

struct Compared {
  std::string what;
  std::optional<double> printed;
  int64_t line = 0;
  std::optional<double> predicted;
  int precision = 2;
  std::string note;  // which of the estimate's terms the predicted figure sums, where it splits a term differently
};

std::vector<Compared> compare(const logs::EngineLog& log, const FitOutcome& f) {
  std::vector<Compared> rows;
  const auto& p = log.printed;
  const estimate::FitEstimate* e = f.fit ? &*f.fit : nullptr;
  auto row = [&](const std::string& what, auto printed, std::optional<double> predicted, int precision) {
    Compared c{what, std::nullopt, 0, predicted, precision};
    if (printed) { c.printed = static_cast<double>(printed->value); c.line = printed->line; }
    if (c.printed || c.predicted) rows.push_back(c);
  };
  row("weights per device (GiB)", p.weights_gib, e ? std::optional<double>(bytes_to_gib(e->weights_bytes)) : std::nullopt, 2);
  row("available KV cache (GiB)", p.available_kv_gib, f.printed_kv ? std::optional<double>(bytes_to_gib(f.printed_kv->bytes)) : std::nullopt, 2);
  row("KV cache size (tokens)", p.kv_cache_tokens, e ? std::optional<double>(static_cast<double>(e->kv_tokens)) : std::nullopt, 0);
  row("maximum concurrency (x)", p.max_concurrency, e ? std::optional<double>(e->max_concurrency) : std::nullopt, 2);
  // Issue 15 (v0eng29): the block count, where the log prints one (vLLM V0's "# GPU blocks: N, # CPU blocks: M", which
  // prints no "GPU KV cache size" line; vLLM-Ascend's "# npu blocks").
  if (p.num_gpu_blocks) row("KV cache blocks", p.num_gpu_blocks, e ? std::optional<double>(static_cast<double>(e->num_blocks)) : std::nullopt, 0);
  // Issue 15: the engine's per-term accounting (vLLM-Ascend's "Actual usage:" line, vLLM V0's memory profiling
  // summary), each term beside the fit's own. A row appears when the log printed the term.
  auto gib = [&](double bytes) { return e ? std::optional<double>(bytes_to_gib(bytes)) : std::nullopt; };
  auto term_row = [&](const std::string& what, const auto& printed, std::optional<double> predicted, const std::string& note) {
    if (!printed) return;
    row(what, printed, predicted, 2);
    if (e && !note.empty()) rows.back().note = note;
  };
  term_row("requested memory (GiB)", p.requested_gib, gib(e ? e->requested_bytes : 0), "");
  // The engine's torch peak covers every allocation of the profile run, the MoE all-gather rows included; the fit
  // keeps those rows as their own term.
  // Issue 15 (evid24): so does it the workspaces a --moe-backend keeps from the profile run on.
  const bool allgather = e && e->moe_allgather_bytes > 0;
  const bool backend_ws = e && e->moe_backend_workspace_bytes > 0;
  term_row("peak activation (GiB)", p.activation_peak_gib, gib(e ? e->activation_bytes + e->moe_allgather_bytes + e->moe_backend_workspace_bytes : 0),
           allgather ? "predicted = activation peak + MoE all-gather rows (the engine's torch peak holds both)"
           : backend_ws ? "predicted = activation peak + MoE backend workspace (the engine's torch peak holds both)" : "");
  // The HCCL buffers of the EP communicators are created during the profile run, so the engine counts them as
  // non-torch memory (docs/logs.md); the fit keeps them as their own term.
  // Issue 15/16 (nccl): so are the NCCL buffers vLLM before PR #25359 counts, and (issue 15, tpws) vLLM 0.19's FlashInfer
  // all-reduce workspace.
  const bool communicators = e && e->ep_communicator_bytes > 0;
  const bool nccl = e && e->nccl_buffer_bytes > 0;
  const bool fi_workspace = e && e->allreduce_workspace_bytes > 0;
  term_row("non-torch memory (GiB)", p.non_torch_gib, gib(e ? e->non_torch_bytes + e->ep_communicator_bytes + e->nccl_buffer_bytes + e->allreduce_workspace_bytes : 0),
           communicators ? "predicted = non-torch + EP communicator buffers (the engine measures both as non-torch)"
           : nccl        ? "predicted = non-torch + NCCL buffers (the engine measures both as non-torch)"
           : fi_workspace ? "predicted = non-torch + FlashInfer all-reduce workspace (the engine measures both as non-torch)"
                          : "");
  term_row("graph memory (GiB)", p.graph_gib, gib(e ? e->graph_bytes : 0), "");
  term_row("KV cache reserve (GiB)", p.kv_reserve_gib, gib(e ? e->available_kv_bytes : 0), "");
  // The encoder pass, where the log states it: its budget and how many largest items it encodes.
  const bool pass = e && e->encoder_budget_tokens > 0;
  if (p.encoder_budget_tokens || pass) {
    row("encoder budget (tokens)", p.encoder_budget_tokens, pass ? std::optional<double>(static_cast<double>(e->encoder_budget_tokens)) : std::nullopt, 0);
    const std::string predicted = pass && e->encoder_profiles_video ? "video" : "image";
    const std::string printed = p.encoder_modality ? p.encoder_modality->value : predicted;
    row("encoder " + printed + " items profiled" + (pass && printed != predicted ? " (predicted: " + predicted + ")" : std::string()), p.encoder_items,
        pass ? std::optional<double>(static_cast<double>(e->encoder_items)) : std::nullopt, 0);
  }
  return rows;
}

// Issue 15 (misc950): the engine resolution of `logs --json`: the profile, the version and build with the lines they
// came from, and each rule with a build boundary as the build decided it.
Json resolution_json(const FitOutcome& f) {
  const auto& in = f.engine_input;
  Json rules = Json::array();
  for (const auto& r : f.build_rules) rules.push_back({{"rule", r.rule}, {"boundary", r.boundary}, {"holds", r.holds}, {"effect", r.effect}});
  return {{"profile", f.engine_id},
          {"version", in.version.empty() ? Json() : Json(in.version)},
          {"version_from", in.version.empty() ? Json() : Json(in.origin)},
          {"version_choice", in.version_choice.empty() ? Json() : Json(in.version_choice)},
          {"build", in.build ? Json(in.build->text) : Json()},
          {"build_from", in.build ? Json(in.build_origin) : Json()},
          {"build_rules", rules}};
}

// date37 (issue 15): the lines that bound the version, the window and what it decided.
void print_line_dating(const LineDating& d) {
  if (d.lines.empty()) return;
  fmt::print("\nversion window from the formats of the printed lines (data/engines/line_formats.json, {}): {}\n", d.engine,
             d.empty_window ? "empty, the lines belong to different releases" : d.window_text());
  for (const auto& l : d.lines)
    fmt::print("  line {}: {} ({}): {}\n", l.line, l.record,
               l.version_min.empty() ? "up to " + l.version_max : l.version_max.empty() ? l.version_min + " or later" : l.version_min + " - " + l.version_max, l.text);
  if (!d.decision.empty()) fmt::print("  {}\n", d.decision);
}

Json line_dating_json(const LineDating& d) {
  Json lines = Json::array();
  for (const auto& l : d.lines)
    lines.push_back({{"line", l.line}, {"record", l.record}, {"version_min", l.version_min.empty() ? Json() : Json(l.version_min)},
                     {"version_max", l.version_max.empty() ? Json() : Json(l.version_max)}, {"text", l.text}});
  return {{"engine", d.engine}, {"from", d.lo ? Json(d.lo->text()) : Json()}, {"to", d.hi ? Json(d.hi->text()) : Json()}, {"empty", d.empty_window},
          {"lines", lines}, {"profiles", d.profiles}, {"dated", d.applied}, {"decision", d.decision}};
}

void print_resolution(const FitOutcome& f) {
  const auto& in = f.engine_input;
  fmt::print("  engine {}: version {}{}", f.engine_id,
             !in.version.empty() ? in.version
             : f.dating.applied  ? "not stated, dated by the formats of its printed lines to " + f.dating.window_text()
             : f.version_band.points.empty() ? std::string("not stated")
                                             : std::string("not stated, nothing in the log dates it: the newest profile, and every version below"),
             in.version.empty() ? "" : " (" + in.origin + ")");
  if (in.build) fmt::print(", build {} ({})", in.build->text, in.build_origin);
  fmt::print("\n");
  for (const auto& r : f.build_rules) fmt::print("  build rule {} ({}): {}: {}\n", r.rule, r.boundary, r.holds ? "holds" : "does not hold", r.effect);
}

void print_text(const logs::EngineLog& log, const FitOutcome& f, const std::string& path) {
  fmt::print("log: {} ({} lines), engine {}\n", path, log.line_count, log.engine);
  std::string versions;
  auto add_version = [&](const char* name, const auto& v) {
    if (v) versions += fmt::format("{}{} {} (line {})", versions.empty() ? "" : ", ", name, v->value, v->line);
  };
  add_version("vllm", log.versions.vllm);
  add_version("vllm-ascend", log.versions.vllm_ascend);
  add_version("torch", log.versions.torch);
  add_version("torch_npu", log.versions.torch_npu);
  add_version("CANN", log.versions.cann);
  add_version("MindIE", log.versions.mindie);
  fmt::print("versions: {}\n", versions.empty() ? "not stated" : versions);
  if (const auto& c = log.engine_core)
    fmt::print("engine core: {} (line {}: {})\n", c->core == logs::EngineCoreShown::v0 ? "V0" : "V1", c->line, c->text);
  std::string args;
  const auto& a = log.args;
  auto add = [&](const char* name, const std::string& v, int64_t line) { args += fmt::format("{}{}={} (line {})", args.empty() ? "" : ", ", name, v, line); };
  if (a.model) add("model", a.model->value, a.model->line);
  if (a.tensor_parallel_size) add("tensor_parallel_size", std::to_string(a.tensor_parallel_size->value), a.tensor_parallel_size->line);
  if (a.pipeline_parallel_size) add("pipeline_parallel_size", std::to_string(a.pipeline_parallel_size->value), a.pipeline_parallel_size->line);
  if (a.decode_context_parallel_size)
    add("decode_context_parallel_size", std::to_string(a.decode_context_parallel_size->value), a.decode_context_parallel_size->line);
  for (const auto& [name, v] : logged_layout_args(a)) add(name.c_str(), v.first, v.second);  // user36: the DP+EP, multi-node and speculative flags the prediction read
  if (a.max_model_len) add("max_model_len", std::to_string(a.max_model_len->value), a.max_model_len->line);
  if (a.gpu_memory_utilization) add("gpu_memory_utilization", fixed(a.gpu_memory_utilization->value, 2), a.gpu_memory_utilization->line);
  if (a.max_num_seqs) add("max_num_seqs", std::to_string(a.max_num_seqs->value), a.max_num_seqs->line);
  if (a.max_num_batched_tokens) add("max_num_batched_tokens", std::to_string(a.max_num_batched_tokens->value), a.max_num_batched_tokens->line);
  if (a.quantization) add("quantization", a.quantization->value, a.quantization->line);
  if (a.kv_cache_dtype) add("kv_cache_dtype", a.kv_cache_dtype->value, a.kv_cache_dtype->line);
  if (a.dtype) add("dtype", a.dtype->value, a.dtype->line);
  if (a.enforce_eager) add("enforce_eager", a.enforce_eager->value ? "true" : "false", a.enforce_eager->line);
  if (a.skip_mm_profiling) add("skip_mm_profiling", a.skip_mm_profiling->value ? "true" : "false", a.skip_mm_profiling->line);
  if (a.enable_prefix_caching) add("enable_prefix_caching", a.enable_prefix_caching->value ? "true" : "false", a.enable_prefix_caching->line);
  if (a.enable_chunked_prefill) add("enable_chunked_prefill", a.enable_chunked_prefill->value ? "true" : "false", a.enable_chunked_prefill->line);
  if (a.allow_deprecated_quantization)
    add("allow_deprecated_quantization", a.allow_deprecated_quantization->value ? "true" : "false", a.allow_deprecated_quantization->line);
  if (a.limit_mm_per_prompt) add("limit_mm_per_prompt", a.limit_mm_per_prompt->value, a.limit_mm_per_prompt->line);
  if (a.language_model_only) add("language_model_only", a.language_model_only->value ? "true" : "false", a.language_model_only->line);
  if (a.mamba_ssm_cache_dtype) add("mamba_ssm_cache_dtype", a.mamba_ssm_cache_dtype->value, a.mamba_ssm_cache_dtype->line);
  if (a.flashinfer_sampler) add("sampler", a.flashinfer_sampler->value ? "flashinfer" : "native", a.flashinfer_sampler->line);
  if (a.compilation_config) add("compilation_config", a.compilation_config->value, a.compilation_config->line);
  if (a.optimization_level) add("optimization_level", std::to_string(a.optimization_level->value), a.optimization_level->line);
  if (a.attention_backend) add("attention_backend", a.attention_backend->value, a.attention_backend->line);
  if (a.moe_backend) add("moe_backend", a.moe_backend->value, a.moe_backend->line);
  fmt::print("engine args: {}\n", args.empty() ? "not stated" : args);
  const auto& d = log.diagnosis;
  if (d.class_id.empty()) {
    fmt::print("\nno failure found{}\n", log.started ? "; the server started" : "");
  } else {
    fmt::print("\nroot cause: {} ({})\n", d.title, d.class_id);
    for (const auto& e : d.evidence) fmt::print("  line {}: {}\n", e.line, e.text);
    if (d.oom) {
      fmt::print("  requested {:.2f} MiB", d.oom->requested_bytes / k_mib);
      if (d.oom->total_bytes) fmt::print(", total {:.2f} GiB", bytes_to_gib(*d.oom->total_bytes));
      if (d.oom->allocated_bytes) fmt::print(", allocated {:.2f} GiB", bytes_to_gib(*d.oom->allocated_bytes));
      if (d.oom->free_bytes) fmt::print(", free {:.2f} MiB", *d.oom->free_bytes / k_mib);
      fmt::print("\n");
    }
    if (!d.reasoning.empty()) fmt::print("why: {}\n", d.reasoning);
    fmt::print("fix: {}\n", d.fix);
    for (const auto& s : d.symptoms) fmt::print("symptom, explained by the cause above: line {}: {}\n", s.line, s.text);
    for (const auto& s : d.secondary) fmt::print("also seen: {}\n", s);
    if (!d.source.empty()) fmt::print("source: {}\n", d.source);
  }
  for (const auto& w : d.warnings) fmt::print("warning: line {}: {}\n", w.line, w.text);
  const auto rows = compare(log, f);
  if (!rows.empty() || f.fit) {
    fmt::print("\nprinted vs predicted{}:\n", f.fit ? fmt::format(" (preflight fit: {} on {}, {})", f.model_id, f.device_id, f.engine_id) : "");
    fmt::print("  {:<28} {:>16} {:>16}\n", "", "printed", "predicted");
    for (const auto& r : rows) {
      const std::string printed = r.printed ? fixed(*r.printed, r.precision) + fmt::format(" (l.{})", r.line) : "-";
      const std::string predicted = r.predicted ? fixed(*r.predicted, r.precision) : "-";
      fmt::print("  {:<28} {:>16} {:>16}\n", r.what, printed, predicted);
    }
    for (const auto& r : rows) {
      if (!r.note.empty()) fmt::print("  {}: {}\n", r.what, r.note);
    }
    if (f.fit) {
      fmt::print("  verdict: preflight predicts {}", f.fit->fits ? "it fits" : "it does not fit");
      if (!f.fit->fits) fmt::print(" ({}): {}", estimate::failure_name(f.fit->failure), f.fit->failure_message.str());
      fmt::print("\n");
      for (const auto& fix : f.fixes) fmt::print("  fix: {}\n", fix);
      print_resolution(f);
    }
  }
  if (!f.version_band.points.empty()) {
    fmt::print("\n{}", f.dating.applied ? report::render_version_band(f.version_band, {use_color()}, "version not stated; the versions the formats of its printed lines allow, " +
                                                                                                  f.dating.window_text())
                                         : report::render_version_band(f.version_band, {use_color()}));
    if (!f.versions_left_out.empty()) fmt::print("  {}\n", f.versions_left_out);
  }
  print_line_dating(f.dating);
  for (const auto& n : f.notes) fmt::print("note: {}\n", n);
}

}  // namespace

CommandHelp logs_help() {
  static LogsRequest scratch;
  return {k_logs_text, logs_options(scratch)};
}

int cmd_logs(const std::vector<std::string>& argv) {
  LogsRequest req;
  auto positional = parse_options(argv, logs_options(req));
  if (!positional) return report_error(positional.error());
  if (positional->size() != 1) {
    return report_error(make_error(ErrorKind::invalid_argument, command_usage("logs")));
  }
  const std::string path = (*positional)[0];
  auto text = read_text_file(path);
  if (!text) return report_error(text.error());
  if (const size_t lines = logs::count_log_lines(*text); lines > logs::k_max_log_lines)
    return report_error(make_error(ErrorKind::invalid_argument,
                                   fmt::format("{}: {} lines, more than the {} a log is read for (each line is held while it is read); cut it to the start-up "
                                               "and the failure",
                                               path, lines, logs::k_max_log_lines),
                                   path));
  if (logs::is_llama_cpp_log(*text)) return cmd_logs_llama_cpp(path, *text, req.json);  // llama.cpp's own lines (cli/cmd_llama)
  auto sigs = logs::load_signatures();
  if (!sigs) return report_error(sigs.error());
  const logs::EngineLog log = logs::parse_engine_log(*text, *sigs);
  if (auto checked = deploy::check_flags(logged_flags(log.args), log_platform(log)); !checked) return report_error(make_error(ErrorKind::invalid_argument, checked.error().message, path));
  const bool memory = log.diagnosis.memory || log.printed.weights_gib || log.printed.kv_cache_tokens || log.printed.available_kv_gib || log.printed.num_gpu_blocks;
  // date37 (issue 15): the lines whose words date the engine (the log's engine, --engine's, else vLLM's records).
  std::string dating_engine = req.engine ? to_lower(trim(req.engine->substr(0, req.engine->find('@')))) : log.engine;
  if (dating_engine != "vllm-ascend") dating_engine = "vllm";
  const LineDating dating = scan_line_dating(*text, dating_engine);
  FitOutcome f;
  f.dating = dating;
  if (memory) f = run_fit(log, req, path, dating);
  if (f.bad_input) return report_error(make_error(f.bad_input->kind, f.bad_input->message, path));
  const int rc = log.diagnosis.class_id.empty() ? k_exit_ok : k_exit_fail;
  if (req.emit_case) {
    std::cout << dump_json(case_line(log, f, path)) << "\n";
    // ux28: a log with no engine-args line gives a case with no model, which validate can only skip: said on stderr.
    if (!log.args.model)
      std::cerr << "preflight: note: " << path << " names no model (no engine-args or config line): the case's \"model\" is null; add it before validate\n";
    return rc;
  }
  if (!req.json) {
    print_text(log, f, path);
    return rc;
  }
  Json j = report::envelope("logs");
  j["file"] = path;
  j["line_count"] = log.line_count;
  j["engine"] = log.engine;
  j["started"] = log.started;
  if (const auto& c = log.engine_core)  // issue 15 (v0eng29)
    j["engine_core"] = {{"core", c->core == logs::EngineCoreShown::v0 ? "v0" : "v1"}, {"line", c->line}, {"text", c->text}};
  j["versions"] = {{"vllm", logged(log.versions.vllm)}, {"vllm_ascend", logged(log.versions.vllm_ascend)}, {"torch", logged(log.versions.torch)},
                   {"torch_npu", logged(log.versions.torch_npu)}, {"cann", logged(log.versions.cann)}, {"mindie", logged(log.versions.mindie)}};
  const auto& a = log.args;
  j["engine_args"] = {{"model", logged(a.model)}, {"tensor_parallel_size", logged(a.tensor_parallel_size)}, {"pipeline_parallel_size", logged(a.pipeline_parallel_size)},
                      {"max_model_len", logged(a.max_model_len)}, {"gpu_memory_utilization", logged(a.gpu_memory_utilization)},
                      {"max_num_seqs", logged(a.max_num_seqs)}, {"max_num_batched_tokens", logged(a.max_num_batched_tokens)},
                      {"quantization", logged(a.quantization)}, {"kv_cache_dtype", logged(a.kv_cache_dtype)}, {"dtype", logged(a.dtype)},
                      {"enforce_eager", logged(a.enforce_eager)}, {"skip_mm_profiling", logged(a.skip_mm_profiling)},
                      {"enable_prefix_caching", logged(a.enable_prefix_caching)}, {"enable_chunked_prefill", logged(a.enable_chunked_prefill)},
                      {"allow_deprecated_quantization", logged(a.allow_deprecated_quantization)},
                      {"limit_mm_per_prompt", logged(a.limit_mm_per_prompt)},
                      {"language_model_only", logged(a.language_model_only)},
                      {"flashinfer_sampler", logged(a.flashinfer_sampler)}, {"compilation_config", logged(a.compilation_config)},
                      {"optimization_level", logged(a.optimization_level)}, {"attention_backend", logged(a.attention_backend)},
                      {"moe_backend", logged(a.moe_backend)}};
  if (a.decode_context_parallel_size) j["engine_args"]["decode_context_parallel_size"] = logged(a.decode_context_parallel_size);  // issue 15 (dcp)
  for (const auto& [name, v] : std::initializer_list<std::pair<const char*, Json>>{  // user36: the layout and speculative arguments read back
           {"data_parallel_size", logged(a.data_parallel_size)}, {"data_parallel_size_local", logged(a.data_parallel_size_local)},
           {"data_parallel_rank", logged(a.data_parallel_rank)}, {"data_parallel_start_rank", logged(a.data_parallel_start_rank)},
           {"headless", logged(a.headless)}, {"nnodes", logged(a.nnodes)}, {"node_rank", logged(a.node_rank)},
           {"enable_expert_parallel", logged(a.enable_expert_parallel)}, {"speculative_config", logged(a.speculative_config)}})
    j["engine_args"][name] = v;
  const auto& d = log.diagnosis;
  Json diag = {{"class", d.class_id.empty() ? Json() : Json(d.class_id)}, {"title", d.title}, {"fix", d.fix}, {"source", d.source}, {"memory", d.memory},
               {"reasoning", d.reasoning}, {"evidence", evidence_json(d.evidence)}, {"symptoms", evidence_json(d.symptoms)},
               {"warnings", evidence_json(d.warnings)}, {"secondary", d.secondary}};
  if (d.oom) {
    diag["oom"] = {{"requested_bytes", d.oom->requested_bytes}, {"total_bytes", d.oom->total_bytes ? Json(*d.oom->total_bytes) : Json()},
                   {"allocated_bytes", d.oom->allocated_bytes ? Json(*d.oom->allocated_bytes) : Json()},
                   {"free_bytes", d.oom->free_bytes ? Json(*d.oom->free_bytes) : Json()}, {"line", d.oom->line}};
  }
  j["diagnosis"] = diag;
  Json cmp = Json::array();
  for (const auto& r : compare(log, f)) {
    cmp.push_back({{"what", r.what}, {"printed", r.printed ? Json(*r.printed) : Json()}, {"line", r.line}, {"predicted", r.predicted ? Json(*r.predicted) : Json()},
                   {"note", r.note.empty() ? Json() : Json(r.note)}});
  }
  j["printed_vs_predicted"] = cmp;
  if (f.fit) {
    j["fit"] = {{"model", f.model_id}, {"device", f.device_id}, {"engine", f.engine_id}, {"fits", f.fit->fits}, {"failure", estimate::failure_name(f.fit->failure)},
                {"failure_message", f.fit->failure_message}, {"fixes", f.fixes}};
    j["engine_resolution"] = resolution_json(f);
    if (!f.version_band.points.empty()) {
      j["version_band"] = report::version_band_to_json(f.version_band);
      j["version_band"]["left_out"] = f.versions_left_out;
    }
  }
  if (!f.dating.lines.empty()) j["version_window"] = line_dating_json(f.dating);
  j["notes"] = f.notes;
  print_json(j);
  return rc;
}

}  // namespace preflight::cli
