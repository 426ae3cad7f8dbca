#include "base/build_info.hpp"
#include "cli/cli.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <iostream>
#include <string>
#include <system_error>
#include <vector>

#include "base/quote.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "cli/args.hpp"
#include "cli/cmd_bw.hpp"
#include "cli/cmd_plan.hpp"
#include "cli/engine_flags.hpp"
#include "cli/serve_line_flags.hpp"
#include "cli/common.hpp"
#include "cli/help.hpp"
#include "cli/std_streams.hpp"
#include "cli/cmd_doctor.hpp"
#include "cli/cmd_llama.hpp"
#include "cli/cmd_mindie.hpp"
#include "cli/cmd_logs.hpp"
#include "cli/model_arg.hpp"
#include "cli/quant_descriptor_refusal.hpp"
#include "cli/cmd_bench.hpp"
#include "cli/cmd_calibrate.hpp"
#include "cli/cmd_catalogue.hpp"
#include "cli/cmd_report.hpp"
#include "deploy/deployment.hpp"
#include "deploy/engine_core.hpp"
#include "deploy/engine_settings.hpp"
#include "deploy/variant_rules.hpp"
#include "device/device_spec.hpp"
#include "engine/attention_backends.hpp"
#include "engine/engine_profile.hpp"
#include "engine/flag_versions.hpp"
#include "deploy/version_band.hpp"
#include "engine/model_support.hpp"
#include "engine/quantization_methods.hpp"
#include "engine/quantized_checkpoints.hpp"
#include "model/context_length.hpp"
#include "model/model_catalog.hpp"
#include "model/model_source.hpp"
#include "model/quant_variant.hpp"
#include "plan/fit_search.hpp"
#include "plan/launch.hpp"
#include "plan/planner.hpp"
#include "report/render.hpp"
#include "report/render_plan.hpp"
#include "validate/validation.hpp"

namespace preflight::cli {

namespace {

const char* k_usage = R"(preflight: will this model run on this accelerator, with this engine, and how?

usage: preflight <command> [args] [--json]

)";

const char* k_usage_tail = R"(MODEL is a catalogue id (Qwen/Qwen3-8B), a local directory or config.json, a .gguf file, or a hub
reference: hf:org/name[@rev] (Hugging Face, HF_ENDPOINT), ms:org/name[@rev] (ModelScope, MODELSCOPE_DOMAIN),
with /file.gguf after the name for one GGUF file. A hub model is read from the Hugging Face / ModelScope
cache when present, else only its metadata is fetched (config, safetensors headers by range request,
never weights) into $XDG_CACHE_HOME/preflight/hub; --offline uses that cache only, --refresh refetches.

examples:
  preflight inspect Qwen/Qwen3-8B
  preflight fit Qwen/Qwen3-VL-8B-Instruct --device 910B3 --engine vllm-ascend@0.23 --max-model-len 32768
  preflight fit Qwen/Qwen3-32B --device H100 --tensor-parallel-size 2 --json
  preflight fit Qwen/Qwen3-VL-8B-Instruct --device 910B3 --skip-mm-profiling   # no vision encoder in the profile run
  preflight fit Qwen/Qwen3-8B --device 910B3 --engine mindie                # MindIE Service's KV pool and config
  preflight fit model.gguf --engine llama.cpp --device cpu                    # llama.cpp's buffers on this host
  preflight plan --device 910B3 --context 32768
  preflight plan Qwen/Qwen3.6-27B --devices 910B4,910B3,H100 --markdown
  preflight validate ../shared/validation/seed-cases.jsonl --models ../shared/models

exit codes: 0 success (fit: it fits), 1 it does not fit / target not met (bw: the measurement failed; bench:
  requests failed, an unreachable server included), 2 bad input or usage, 3 environment or network failure
  (hub unreachable, timeout, an output that cannot be written). A pipe closed by its reader (preflight ... | head) ends preflight by SIGPIPE.
environment: NO_COLOR or TERM=dumb disables colour; PREFLIGHT_DEVICE_OVERRIDES names a measured-device file;
  PREFLIGHT_CUDART_LIB / PREFLIGHT_ACL_LIB name the CUDA / AscendCL runtime library for bw;
  HF_TOKEN / HUGGING_FACE_HUB_TOKEN / ~/.cache/huggingface/token and MODELSCOPE_API_TOKEN authenticate
  hub requests (never printed or cached).
)";

// What `preflight inspect` takes.
struct InspectRequest {
  ModelFlags model;
  std::optional<std::string> variant;
  bool json = false;
};

std::vector<Option> inspect_options(InspectRequest& r) {
  return join({{text_flag("variant", "NAME", r.variant, "the weights of a quantized variant of the model, sized without its checkpoint (the names fit,\nplan and validate take: w8a8, w4a8_dynamic, awq, fp8_block, ...; an unknown name lists them)")},
               model_options(r.model),
               {json_flag(r.json)}});
}

const CommandText k_inspect_text{
    "usage: preflight inspect MODEL [--variant NAME] [--models DIR] [--offline|--refresh] [--json]",
    R"(Exact model facts from config.json, safetensors headers or GGUF tensor infos (never the weights): layers by
kind, parameters (total, text, vision, active per token, MTP), weight bytes per storage format, KV bytes per
token per cache dtype, and where each fact came from.)",
    R"(MODEL: a catalogue id, a directory, a config.json, a .gguf file, or hf:org/name[@rev] / ms:org/name[@rev]; or the hub id of
a published quantized checkpoint (vllm-ascend/Qwen3-32B-W8A8) when no copy is here: its base model's facts with the
weights of the variant it is published in, as fit sizes it.)",
    R"(exit: 0, 2 bad input (the model cannot be read: the message names the file and what is wrong; a flag given twice),
      3 network or environment failure (hub unreachable, timeout))"};

int cmd_inspect(const std::vector<std::string>& argv) {
  InspectRequest r;
  auto positional = parse_options(argv, inspect_options(r));
  if (!positional) return report_error(positional.error());
  if (positional->size() != 1) return report_error(make_error(ErrorKind::invalid_argument, command_usage("inspect")));
  auto ro = model_arg_options(r.model);
  if (!ro) return report_error(ro.error());
  // quant34 (issue 16): a published quantized checkpoint's hub id, as fit takes it: its base model in the variant it is
  // published in (one resolution: cli/model_arg).
  auto resolved = resolve_model_or_checkpoint((*positional)[0], *ro);
  if (!resolved) return report_error(resolved.error());
  if (resolved->published) {
    auto own = published_checkpoint_variant(*resolved->published, (*positional)[0], r.variant, std::nullopt);
    if (!own) return report_error(own.error());
    r.variant = *own;
  }
  model::ModelSpec* spec = &resolved->spec;
  if (r.variant) {
    // Session 30 (issue 16: one variant list in every command): the variant's storage scheme in place of the checkpoint's,
    // as fit --variant sizes it; the checkpoint's own tensor bytes no longer describe it.
    const auto& catalog = model::load_variant_catalog();
    if (!catalog) return report_error(catalog.error());
    auto v = model::find_variant(*catalog, *r.variant);
    if (!v) return report_error(v.error());
    if ((*v)->quantized()) {
      spec->quant = (*v)->scheme;
      spec->exact_weight_bytes.reset();
    }
    spec->assumptions.push_back(fmt::format("variant {}: {}, sized from the config without its checkpoint ({})", (*v)->id, (*v)->name, (*v)->layout));
  }
  if (r.json) print_json(report::inspect_to_json(*spec));
  else std::cout << report::render_inspect(*spec, {use_color()});
  return k_exit_ok;
}

// What `preflight fit` takes: the deployment as vLLM's flags, the speed section's workload, model resolution.
struct FitRequest {
  std::optional<std::string> device, engine;
  std::optional<std::string> engine_build;             // issue 15 (build): "0.17.0rc2.dev66+g9d0b7c8e9"
  std::optional<std::string> device_memory, platform;  // issue 15: a card outside the catalogue
  std::optional<std::string> variant;
  deploy::Flags flags;
  SpeedFlags speed;
  ModelFlags model;
  ServeLineFlags serve_line;  // ux32: the rest of a pasted `vllm serve` line
  bool json = false;
};

std::vector<Option> fit_options(FitRequest& r) {
  return join({{text_flag("device", "D", r.device, "catalogue device or alias (910B3, Ascend910B3, H100, A100-80G); see `preflight devices`"),
                text_flag("device-memory", "SIZE", r.device_memory, "memory as the runtime reports it (24GiB, 24GB): replaces --device's, or alone a\ngeneric card of --platform (for cards outside the catalogue)"),
                text_flag("platform", "P", r.platform, "with --device-memory alone: cuda (default), npu, rocm or cpu", {"cuda", "npu", "rocm", "cpu"}),
                given_int("num-devices", "N", r.flags.num_devices, "devices in the deployment; without --tensor-parallel-size, TP = N / PP"),
                text_flag("engine", "E[@VERSION]", r.engine, "vllm, vllm-ascend, llama.cpp or mindie, optionally a version (vllm-ascend@0.23);\ndefault: the newest known for the device's platform"),
                text_flag("variant", "NAME", r.variant, "size a quantized variant of the model without its checkpoint (w8a8, w4a8_dynamic, awq,\nfp8_block, ...; the names plan and validate use; an unknown name lists them)")},
               deployment_options(r.flags), under("engine settings (plan takes them too):", engine_setting_options({r.flags, r.engine_build})),
               speed_options(r.speed), model_options(r.model), serve_line_options(r.serve_line), under("output:", {json_flag(r.json)})});
}

// --variant: the variant's storage and --quantization on the flags (issue 16). An unknown name is bad
// input (exit 2, the message lists the known ones); --quantization beside it is ambiguous.
Expected<const model::QuantVariant*> apply_variant(FitRequest& r) {
  if (!r.variant) return static_cast<const model::QuantVariant*>(nullptr);
  const auto& catalog = model::load_variant_catalog();
  if (!catalog) return catalog.error();
  PF_TRY(v, model::find_variant(*catalog, *r.variant));
  // ux33: the same method as the variant's (plan's start line for it carries --quantization ascend) is what the variant
  // sets; another one is a second, different answer.
  if (r.flags.quantization && (v->engine_quantization.empty() || r.flags.quantization->value != v->engine_quantization))
    return make_error(ErrorKind::invalid_argument, fmt::format("--variant {} sets --quantization {}; give one of the two", v->id,
                                                               v->engine_quantization.empty() ? "(none)" : v->engine_quantization));
  if (v->quantized()) r.flags.quantization = deploy::Given<std::string>{v->engine_quantization, "--variant " + v->id};
  r.flags.quant_scheme = v->scheme;
  return v;
}

// ux33: fit's MODEL and the variant it is sized in. A published quantized checkpoint's hub id that is not on this machine
// (plan's own start commands serve such ids) is its base model in the variant it is published in, as `--variant` would
// give it; a different --variant is refused. The checkpoint's own copy (a folder, the hub cache) is read when present.
// quant34: the resolution is model_arg's, shared with inspect and plan.
struct FitModel {
  model::ModelSpec spec;
  const model::QuantVariant* variant = nullptr;
};
Expected<FitModel> resolve_fit_model(FitRequest& r, const std::string& arg, const ModelArgOptions& ro) {
  PF_TRY(resolved, resolve_model_or_checkpoint(arg, ro));
  if (resolved.published) {
    const std::optional<std::string> quantization = r.flags.quantization ? std::optional<std::string>(r.flags.quantization->value) : std::nullopt;
    PF_TRY(own, published_checkpoint_variant(*resolved.published, arg, r.variant, quantization));
    r.variant = own;
  }
  PF_TRY(v, apply_variant(r));
  return FitModel{std::move(resolved.spec), v};
}

// The variant's rules for the resolved engine and device: a rejection becomes the verdict with the
// engine's own message (true); a kernel fallback an assumption.
// The assumption names the variant in one line (fit's own line for the storage scheme, the same name, gives way to
// it); its layout and sources, a paragraph for some formats, go to the provenance --json writes.
bool check_variant(const model::QuantVariant& v, const deploy::Resolved& resolved, estimate::FitEstimate& est) {
  std::erase(est.assumptions, v.scheme.detail);
  est.assumptions.push_back(fmt::format("variant {}: {} (its storage layout and sources: \"provenance\" in --json)", v.id, v.name));
  est.provenance.push_back(fmt::format("variant {} storage: {} ({})", v.id, v.layout, v.source));
  if (!deploy::apply_variant_rules(v, resolved, est, est.assumptions)) return false;
  // user36 (issue 16): the engine stops at the refusal, while it builds the model, so it prints none of the start-up lines
  // the sizing predicts ("Loading model weights took", "Available KV cache memory", "GPU KV cache size"); the sizes stay.
  est.lines.clear();
  return true;
}

// Issue 16 (quant30): `fit --variant` of a variant no start command serves (no published checkpoint of the model in it, no
// conversion recipe, not quantized by the engine at load) is refused with the line plan rejects that row with
// (plan::unservable_reason: "no start command: ..."), its sizes kept; before, fit said the variant fits while plan refused
// every row of it. Only for a deployment that fits, as plan's row (planner: the gap after the fit). True when refused.
bool refuse_unservable_variant(const model::QuantVariant& v, const deploy::Resolved& resolved, estimate::FitEstimate& est) {
  const auto& catalog = engine::shipped_quantized_catalog();
  if (!catalog || !v.quantized()) return false;
  plan::Candidate probe;
  probe.model_id = resolved.model.id;
  probe.variant = v.name;
  probe.variant_id = v.id;
  probe.quantization_flag = v.engine_quantization;
  probe.tensor_parallel_size = resolved.deployment.tensor_parallel_size;
  probe.pipeline_parallel_size = resolved.deployment.pipeline_parallel_size;
  probe.num_devices = probe.tensor_parallel_size * probe.pipeline_parallel_size;
  std::string gap = plan::unservable_reason(resolved.model, probe, resolved.engine, *catalog);
  if (gap.empty()) return false;
  est.fits = false;
  est.failure = estimate::Failure::unsupported_quantization;
  est.failure_message = std::move(gap);
  return true;
}

// Issue 16: a variant of a checkpoint published in another format (DeepSeek-V3 in FP8) is made from BF16
// weights; the assumption says from which and where plan prints the steps.
void note_variant_source(const model::QuantVariant& v, const model::ModelSpec& published, estimate::FitEstimate& est) {
  const auto& variants = model::load_variant_catalog();
  if (!v.quantized() || !published.quant.quantized() || !variants) return;
  const model::QuantVariant* own = model::variant_of_checkpoint(*variants, published.quant);
  if (own == &v) return;
  const auto& catalog = engine::shipped_quantized_catalog();
  const engine::QuantizedCheckpoint* release = catalog ? engine::find_checkpoint_by_repo(*catalog, plan::hub_repo_id(published.id)) : nullptr;
  const engine::ConversionRecipe* cast = catalog && own ? engine::find_cast(*catalog, own->id) : nullptr;
  const std::string how = release ? "from its BF16 original " + release->base_model
                          : cast  ? "after a cast to BF16 with " + cast->tool
                                  : std::string("from BF16 weights, and no cast of its format back to BF16 is known");
  est.assumptions.push_back(fmt::format("variant {} of {} (published as {}): made {}; `preflight plan {} --variant {} --commands` prints the steps with their disk "
                                        "and host RAM",
                                        v.id, published.id, own ? own->name : published.quant.detail, how, published.id, v.id));
}

// Issue 16 (the seeds' BF16 MoE whose 67 GB of experts all load on one 910B3): a model published unquantized whose
// weights do not fit its cards gets, as its first fix, the highest-precision quantized variant the engine serves on
// that card (plan's list for the model, eight-bit before four-bit) with which the same deployment fits, sized as
// `fit --variant` sizes it and held to the variant's engine rules.
// Issue 16 (quant27): a variant whose weights load but whose KV cache cannot hold one request at the deployment's
// max_model_len (vLLM's max_model_len ValueError) is offered with `--max-model-len N` after it: N is the largest
// context its KV budget holds for one request (estimate::kv_capacity_tokens: whole KV blocks, so the number vLLM's own
// "estimated maximum model length" search gives; capped at the derived max_model_len, above which vLLM rejects a
// user-specified max_model_len), and the variant sized again at N must fit. Only the highest-precision such variant,
// and only one of higher precision than the same-context fix (a lower one would give up context and precision both);
// the same-context fix always comes first. Empty when no variant fits at any context (weights that do not load, a
// budget negative before any KV, a variant the engine rejects on the card).
// Issue 16 (fitcons27): the same where the weights load but the KV cache does not hold one request; then the shorter
// context a variant holds is offered only above `longer_than_tokens`, the context `--max-model-len` gives the same
// weights (a variant at no more context than that gives up precision for nothing).
// A device given by --device-memory only (no catalogue record) gets no plan command, which needs a catalogue device.
struct VariantFixOptions {
  bool catalogue_device = true;    // the device is a catalogue record (false: --device-memory)
  int64_t longer_than_tokens = 0;  // a shorter-context fix must hold more tokens than this
};
std::vector<std::string> variant_fixes(const deploy::Resolved& resolved, const estimate::Deployment& d, const VariantFixOptions& options) {
  const auto& variants = model::load_variant_catalog();
  if (!variants) return {};
  std::vector<const model::QuantVariant*> tries;
  // No quantized-checkpoint list given: quantization_variants reads the shipped one itself.
  for (const auto& id : plan::quantization_variants(resolved.model, resolved.engine, nullptr, resolved.device.family)) {
    auto v = id.empty() ? Expected<const model::QuantVariant*>(nullptr) : model::find_variant(*variants, id);
    if (v && *v && (*v)->quantized()) tries.push_back(*v);
  }
  std::stable_sort(tries.begin(), tries.end(), [](const auto* a, const auto* b) { return plan::variant_rank(*a) < plan::variant_rank(*b); });
  // `len` > 0: the variant at --max-model-len len, which the plan command then asks for as its context (`too_long`: the
  // deployment's max_model_len, which its KV cache does not hold).
  const auto describe = [&](const model::QuantVariant& v, const estimate::FitEstimate& est, int64_t len, int64_t too_long) {
    const int64_t cards = est.tensor_parallel_size * est.pipeline_parallel_size * est.data_parallel_size;  // as render_fit's header counts them
    const std::string context_flag = len > 0 ? fmt::format(" --max-model-len {}", len) : "";
    std::string fix = fmt::format("--variant {}{} ({}): weights {:.2f} GiB per device, {} KV tokens, {:.2f}x on the same {} x {}", v.id, context_flag, v.name,
                                  bytes_to_gib(est.weights_bytes), with_thousands(est.kv_tokens), est.max_concurrency, cards, resolved.device.id);
    const bool at_model_max = len > 0 && len == model::max_model_len_of(resolved.model, 0);  // the KV cache holds more
    if (len > 0)
      fix += fmt::format(", {} ({} tokens do not fit)",
                         at_model_max ? "the model's maximum (vLLM's derived max_model_len)" : "the largest context its KV cache holds for one request", with_thousands(too_long));
    if (options.catalogue_device)
      // ux33: the plan row is this deployment's: the context, a named engine version and a given utilization go with it
      // (without them plan sized another: the newest version at 32,768 tokens).
      fix += fmt::format("; `preflight plan {} --devices {} --variant {}{}{}{} --commands` prints its checkpoint or the conversion", resolved.model.id,
                         resolved.device.id, v.id,
                         len > 0 ? fmt::format(" --context {}", len) : d.max_model_len ? fmt::format(" --context {}", *d.max_model_len) : "",
                         resolved.engine.version_named ? fmt::format(" --engine {}@{}", resolved.engine.engine, resolved.engine.version_named->text()) : "",
                         d.gpu_memory_utilization ? fmt::format(" --gpu-memory-utilization {}", *d.gpu_memory_utilization) : "");
    return fix;
  };
  std::vector<std::string> fixes;
  std::optional<std::string> shorter;
  for (const model::QuantVariant* v : tries) {
    estimate::Deployment with = d;
    with.quant_scheme = v->scheme;
    with.quantization = v->engine_quantization;
    with.explain = false;
    auto est = estimate::try_estimate_fit(resolved.model, resolved.device, resolved.engine, resolved.overheads, with);
    if (!est) continue;
    std::vector<std::string> notes;
    if (est->fits) {
      if (deploy::apply_variant_rules(*v, resolved, *est, notes)) continue;  // the engine rejects it on this card
      fixes.push_back(describe(*v, *est, 0, 0));
      break;
    }
    if (shorter || est->failure != estimate::Failure::max_model_len_too_large) continue;
    const int64_t len = plan::largest_context_held(resolved.model, *est);
    if (len <= 0 || len <= options.longer_than_tokens) continue;
    with.max_model_len = len;
    auto at_len = estimate::try_estimate_fit(resolved.model, resolved.device, resolved.engine, resolved.overheads, with);
    if (!at_len || !at_len->fits || deploy::apply_variant_rules(*v, resolved, *at_len, notes)) continue;
    shorter = describe(*v, *at_len, len, est->max_model_len);
  }
  if (shorter) fixes.push_back(*shorter);
  return fixes;
}

// Issue 19: the platform of the device fit names, which picks the engine's overheads record; empty where the device
// does not resolve (the whole engine catalogue is read, and resolve_deployment reports the device).
std::string named_device_platform(const deploy::DeviceInput& device, const device::DeviceCatalog& devices) {
  std::vector<std::string> ignored;
  const auto dev = deploy::resolve_device(device, devices, ignored);
  return dev ? dev->platform : std::string();
}

const CommandText k_fit_text{
    "usage: preflight fit MODEL --device D [flags] [--json]",
    R"(What vLLM / vLLM-Ascend will print at start-up on each device ("Model loading took", "Available KV cache
memory", "GPU KV cache size", "Maximum concurrency"), the memory terms behind them with their bands, the
verdict with the engine's own failure message and the cheapest fixes, then the decode speed.)",
    R"(MODEL: as inspect takes it, or the hub id of a published quantized checkpoint plan's start lines serve
(Eco-Tech/Qwen3.6-27B-w8a8) when no copy is here: sized as its base model in the variant it is published in.)",
    R"(exit: 0 fits, 1 does not fit (too large, with the engine's message; the engine rejects the variant or the
      checkpoint's quantization on that card or version, with its message; or no start command for this variant: no
      published checkpoint of the model in it and no conversion recipe, as plan rejects that row),
      2 bad input (a flag out of range names the flag, a flag given twice, and a number flag
      takes decimal digits only; a model whose values overflow; an unknown --variant; a --quantization name the engine version
      refuses, with its line (argparse's invalid choice to vLLM 0.12, ModelConfig's Unknown quantization method from 0.13,
      and from 0.14 a method the version deprecates, unless --allow-deprecated-quantization is given); a --variant that
      changes nothing on the model, such as mxfp4 on a model without MoE experts; an --attention-backend name vLLM lacks; a --max-model-len above the model's derived
      length, vLLM's ValueError, unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 is set; a setting only an Ascend NPU's engine
      reads, --hccl-buffsize or --npu-driver-version, on another platform's card),
      3 network or environment failure (hub unreachable, timeout))"};

// Issue 15 (v0eng30): VLLM_USE_V1 in the command's environment is the engine's (vllm/envs.py): 0 runs V0 where the version
// has it, as a log's VLLM_USE_V1=0 does.
Status take_engine_core_from_env(deploy::EngineInput& in) {
  const char* use_v1 = std::getenv("VLLM_USE_V1");
  PF_TRY(core, deploy::engine_core_from_env(use_v1));
  if (core) {
    in.engine_core = *core;
    in.engine_core_origin = "environment VLLM_USE_V1=" + trim(use_v1);
  }
  return Ok{};
}

// quant34 (issue 16): what the V0 engine (vLLM before 0.8.2) raises for a speculative config given with its flags that it
// cannot start (engine::speculative_serve_args: '[ngram]' without --ngram-prompt-lookup-max is V0's "ngram_prompt_lookup_max=None
// must be > 0" ValueError), prefixed with the flags given; "" from 0.8.2, for other engines, or when it starts.
std::string v0_speculative_refusal(const deploy::Flags& f, const engine::EngineProfile& engine, const std::string& model_type) {
  if (!f.speculative_config) return "";
  const auto& catalog = engine::shipped_flag_versions();
  if (!catalog) return "";
  const auto args = engine::speculative_serve_args(*catalog, engine.engine, engine.rule_version(), f.speculative_config->value, model_type);
  return args ? "" : f.speculative_config->origin + ": " + args.error().message;
}

// What the named engine version's own parser or model registry refuses, as its exit code (nullopt: nothing). Issue 16
// (arch31): "32k" where the version's parser takes a plain integer is argparse's refusal (exit 2); a named vLLM version
// whose model registry lacks the architecture stops `vllm serve` with "Model architectures [...] are not supported for
// now" (exit 1, the first version that has it named); one missing from preflight's list is said, never refused.
std::optional<int> engine_version_refusal(const deploy::Flags& flags, deploy::Resolved& resolved) {
  if (const std::string why = human_readable_flag_refusal(flags, resolved.engine); !why.empty())
    return report_error(make_error(ErrorKind::invalid_argument, why));
  if (const std::string why = speculative_flag_version_refusal(flags, resolved.engine); !why.empty())
    return report_error(make_error(ErrorKind::invalid_argument, why));
  if (const std::string why = compilation_config_refusal(flags, resolved.engine); !why.empty())  // hard35b
    return report_error(make_error(ErrorKind::invalid_argument, why));
  if (const std::string why = v0_speculative_refusal(flags, resolved.engine, resolved.model.model_type); !why.empty())  // quant34
    return report_error(make_error(ErrorKind::invalid_argument, why));
  if (std::string note = v0_speculative_note(flags, resolved.engine); !note.empty()) resolved.assumptions.push_back(std::move(note));
  if (!resolved.engine.version_named) return std::nullopt;
  const auto arch = engine::shipped_architecture_check(resolved.engine, resolved.model.architecture);
  if (arch.verdict == engine::ArchitectureVerdict::unsupported) {
    std::fprintf(stderr, "preflight: %s\n", clip_text(strip_terminal_controls(arch.message), k_max_error_bytes).c_str());
    return k_exit_fail;
  }
  if (arch.verdict == engine::ArchitectureVerdict::not_listed || arch.verdict == engine::ArchitectureVerdict::supported_with_note)
    resolved.assumptions.push_back(arch.message);
  return std::nullopt;
}

// quant34 (issue 16): --allow-deprecated-quantization echoed beside the numbers, as the pasted flags are: where the method the
// start passes (its --quantization, a variant's, else the checkpoint's quant_method) is one the version deprecates, the flag
// is what lets it load (vLLM logs a warning instead of ModelConfig's ValueError) and the start line needs it; else it
// changes nothing, and that is said.
void note_deprecated_quantization(deploy::Resolved& resolved, const deploy::Flags& flags) {
  if (resolved.deprecated_quantization != engine::DeprecatedQuantization::allowed) return;
  const auto& catalog = engine::shipped_quantization_methods();
  if (!catalog) return;
  const engine::EngineProfile& e = resolved.engine;
  const std::string method = flags.quantization ? flags.quantization->value : resolved.model.quant.quantized() ? resolved.model.quant.method : "";
  const std::string at = e.engine + " " + e.rule_version().text();
  if (!method.empty() && !engine::deprecated_quantization_refusal(*catalog, e.engine, e.rule_version(), method).empty())
    resolved.assumptions.push_back(fmt::format("--allow-deprecated-quantization: {} deprecates {}; with the flag it loads, vLLM logging \"The quantization method {} "
                                               "is deprecated and will be removed in future versions of vLLM.\" (vllm/config/model.py _verify_quantization), and "
                                               "the start line needs the flag ({})",
                                               at, method, method, catalog->origin));
  else if (method.empty())
    resolved.assumptions.push_back(fmt::format("--allow-deprecated-quantization: no quantization method is loaded on {}; the flag changes nothing here", at));
  else
    resolved.assumptions.push_back(fmt::format("--allow-deprecated-quantization: {} does not deprecate {}; the flag changes nothing here ({})", at, method, catalog->origin));
}

// Issue 16: --variant sizes a vLLM / vLLM-Ascend deployment; the llama.cpp and MindIE fits size the files they are given.
Status refuse_variant_on_own_sizing_engines(const std::vector<std::string>& argv) {
  for (const auto& a : argv) {
    if (a != "--variant" && a.rfind("--variant=", 0) != 0) continue;
    if (llama_cpp_engine_requested(argv))
      return make_error(ErrorKind::invalid_argument, "--variant with --engine llama.cpp: llama.cpp's fit sizes the GGUF file it is given (its own tensor "
                                                     "types); `preflight plan MODEL --engine llama.cpp --variant gguf_q4_k_m` sizes a preset and prints its conversion");
    if (mindie_engine_requested(argv))
      return make_error(ErrorKind::invalid_argument, "--variant with --engine mindie: MindIE's fit sizes the checkpoint it is given (its own "
                                                     "quant_model_description.json); `preflight fit MODEL --device D --variant NAME` sizes a variant on vLLM-Ascend");
  }
  return Ok{};
}

int cmd_fit(const std::vector<std::string>& argv) {
  if (auto ok = refuse_variant_on_own_sizing_engines(argv); !ok) return report_error(ok.error());
  if (llama_cpp_engine_requested(argv)) return cmd_fit_llama_cpp(argv);  // llama.cpp's own memory model (cli/cmd_llama)
  if (mindie_engine_requested(argv)) return cmd_fit_mindie(argv);  // MindIE Service's static KV pool (cli/cmd_mindie)
  FitRequest r;
  auto positional = parse_options(argv, fit_options(r));
  if (!positional) return report_error(positional.error());
  if (positional->size() != 1 || (!r.device && !r.device_memory)) return report_error(make_error(ErrorKind::invalid_argument, command_usage("fit")));
  std::optional<double> device_memory;
  if (r.device_memory) {
    auto bytes = device::parse_memory_size(*r.device_memory, "--device-memory");
    if (!bytes) return report_error(bytes.error());
    device_memory = *bytes;
  }
  if (auto checked = deploy::check_flags(r.flags, deploy::device_text_platform(r.device.value_or(""), r.platform.value_or(""))); !checked)
    return report_error(checked.error());
  auto ro = model_arg_options(r.model);
  if (!ro) return report_error(ro.error());
  auto fit_model = resolve_fit_model(r, (*positional)[0], *ro);
  if (!fit_model) return report_error(fit_model.error());
  const model::QuantVariant* const* variant = &fit_model->variant;
  model::ModelSpec* spec = &fit_model->spec;
  r.flags.drafter_model_dirs = ro->extra_model_dirs;  // issue 15: a speculative drafter's config, read like MODEL
  auto devices = device_memory ? device::load_device_catalog() : device::load_device_catalog_for(r.device.value_or(""));  // issue 19: one record
  if (!devices) return report_error(devices.error());
  deploy::Inputs in{*spec, {r.device.value_or(""), "--device", deploy::DeviceForm::name, device_memory, r.platform.value_or("")},
                    {r.engine.value_or(""), "", "--engine", "", "", deploy::UnknownVersion::error}, r.flags};
  // Issue 15/16 (misc21): --engine-version is --engine E@V's version: the memory profile and the speed rules alike.
  if (auto version = deploy::apply_engine_version(in.engine, r.speed.engine_version, "--engine-version"); !version) return report_error(version.error());
  // Issue 19: only the engine records this engine, version and platform can select are parsed.
  auto engines = engine::load_engine_catalog_for({in.engine.engine, in.engine.version, named_device_platform(in.device, *devices)});
  if (!engines) return report_error(engines.error());
  if (const std::string v = deploy::stated_engine_version(in.engine); !v.empty()) r.speed.engine_version = v;
  if (r.engine_build) {
    auto build = engine::parse_engine_build(*r.engine_build, "--engine-build");
    if (!build) return report_error(build.error());
    in.engine.build = *build;
    in.engine.build_origin = "--engine-build";
  }
  if (auto core = take_engine_core_from_env(in.engine); !core) return report_error(core.error());
  auto resolved = deploy::resolve_deployment(in, {&*devices, &*engines});
  if (!resolved) return report_error(resolved.error());
  add_serve_line_notes(r.serve_line, resolved->engine.engine, resolved->assumptions);  // ux32: a pasted `vllm serve` line
  if (const std::string why = serve_line_version_refusal(r.serve_line, resolved->engine); !why.empty())
    return report_error(make_error(ErrorKind::invalid_argument, why));
  // Issue 15/16 (plan28): a setting only an Ascend NPU's stack reads, on another card, can never apply (plan rejects
  // such a row with the same message).
  if (const std::string why = deploy::npu_only_setting_refusal(resolved->deployment, resolved->device); !why.empty())
    return report_error(make_error(ErrorKind::invalid_argument, why));
  if (auto len_ok = deploy::check_max_model_len(resolved->model, r.flags.max_model_len, deploy::long_max_model_len_from_env(std::getenv("VLLM_ALLOW_LONG_MAX_MODEL_LEN")),
                                                resolved->assumptions);
      !len_ok)
    return report_error(len_ok.error());
  // Issue 19: a name vLLM's attention-backend enum lacks is refused at start-up with the engine's ValueError.
  if (const auto& b = r.flags.attention_backend) {
    auto names = engine::load_attention_backends();
    if (!names) return report_error(names.error());
    auto ok = engine::check_attention_backend(*names, resolved->engine, b->value, b->origin);
    if (!ok) return report_error(ok.error());
    if (!ok->empty()) resolved->assumptions.push_back(*ok);  // issue 15 (eng31): ignored by the version, or a suffix removed
  }
  // Issue 16 (quant29, quant33): a --quantization the engine version refuses stops `vllm serve` (exit 2): argparse's choices to
  // 0.12, ModelConfig's list from 0.13, a method the version deprecates from 0.14 (without --allow-deprecated-quantization).
  if (r.flags.quantization && !*variant)
    if (auto ok = deploy::check_quantization_choice(*resolved, *r.flags.quantization); !ok) return report_error(ok.error());
  if (const auto refused = engine_version_refusal(r.flags, *resolved)) return *refused;
  note_deprecated_quantization(*resolved, r.flags);
  const model::ModelSpec& model = resolved->model;
  const device::DeviceSpec* dev = &resolved->device;
  const engine::EngineProfile* eng = &resolved->engine;
  const engine::Overheads* oh = &resolved->overheads;
  estimate::Deployment d = resolved->deployment;
  const bool auto_len = !d.max_model_len;
  // A model whose values overflow is bad input (exit 2), never "does not fit".
  auto est = estimate::try_estimate_fit(model, *dev, *eng, *oh, d);
  if (!est) return report_error(est.error());
  auto search = plan::search_fixes(model, *dev, *eng, *oh, d, *est);
  // Without --max-model-len, report the largest context the card holds (vLLM's -1 / auto).
  if (auto_len && !est->fits && est->failure == estimate::Failure::max_model_len_too_large && search.largest_context > 0) {
    d.max_model_len = search.largest_context;
    est = estimate::try_estimate_fit(model, *dev, *eng, *oh, d);
    if (!est) return report_error(est.error());
    est->assumptions.push_back(fmt::format("max_model_len reduced to {}, the largest context the KV budget holds (like --max-model-len auto)", search.largest_context));
    search = plan::search_fixes(model, *dev, *eng, *oh, d, *est);
    // Issue 15 (fitcons27): the bands below describe this deployment, at the context fit chose, not at the model's full one.
    in.flags.max_model_len = deploy::Given<int64_t>{search.largest_context, "fit's largest context"};
  }
  // ux29: the model's own assumptions too (a folder with missing shards sized from the architecture; a config key absent),
  // which inspect showed and fit left out.
  est->assumptions.insert(est->assumptions.end(), model.assumptions.begin(), model.assumptions.end());
  est->assumptions.insert(est->assumptions.end(), resolved->assumptions.begin(), resolved->assumptions.end());
  est->provenance.insert(est->provenance.end(), resolved->provenance.begin(), resolved->provenance.end());
  // Issue 16: a checkpoint that already is a variant of the list (read from its own descriptor) meets that
  // variant's engine rules too: an FP8 checkpoint on a V100 gets vLLM's capability message, not "fits".
  const model::QuantVariant* rules_of = *variant;
  if (!rules_of && !r.flags.quantization && model.quant.quantized())
    if (const auto& catalog = model::load_variant_catalog(); catalog) rules_of = model::variant_of_checkpoint(*catalog, model.quant);
  bool rejected = rules_of && check_variant(*rules_of, *resolved, *est);
  // Issue 16 (quant26): a variant that changes nothing on this model (MXFP4 on a model without experts) is bad input;
  // an engine rule that rejects it comes first (its message is what the engine prints).
  if (const std::string none = *variant && !rejected ? model::variant_without_effect(**variant, model) : ""; !none.empty())
    return report_error(make_error(ErrorKind::invalid_argument, fmt::format("--variant {}: {}", (*variant)->id, none), "--variant"));
  // As plan: after the fit, so a deployment the engine refuses or that does not fit keeps that verdict.
  if (*variant && !rejected && est->fits) rejected = refuse_unservable_variant(**variant, *resolved, *est);
  if (rejected) search.fixes.clear();  // no layout makes the engine load it
  // user37 (issue 16): --quantization ascend on a checkpoint without its config file stops `vllm serve` before any weight.
  if (!rejected) rejected = refuse_missing_descriptor(*resolved, r.flags, {*variant != nullptr, (*positional)[0], r.device.value_or("")}, *est, search.fixes);
  // Issue 16 (fitcons27): a KV cache that cannot hold one request (max_model_len_too_large, kv_negative) gets the variant
  // fix too: quantized weights leave the KV cache more room. Fixes keep search_fixes' order of cost; a variant (a
  // conversion on the same cards) goes after the flags that change nothing but the engine's arguments and before the
  // first fix that adds cards.
  const bool variant_can_help = est->failure == estimate::Failure::weights_oom || est->failure == estimate::Failure::max_model_len_too_large ||
                                est->failure == estimate::Failure::kv_negative;
  if (!*variant && !r.flags.quantization && !model.quant.quantized() && variant_can_help)
    if (auto fixes = variant_fixes(*resolved, d, {.catalogue_device = !device_memory, .longer_than_tokens = search.largest_context}); !fixes.empty()) {
      const auto at = search.fixes.begin() + static_cast<std::ptrdiff_t>(std::min(search.more_devices_at, search.fixes.size()));
      search.fixes.insert(at, fixes.begin(), fixes.end());
    }
  if (*variant) note_variant_source(**variant, *spec, *est);
  auto speed = speed_for_fit(r.speed, model, *dev, *eng, d, *est);
  // No speed profile for the engine on this platform leaves the speed out; any other error is bad input: a speed
  // overlay (PREFLIGHT_SPEED_OVERRIDES, calibrate --save's file) that does not load was dropped in silence, the table
  // without its speed section and exit 0 (issue 19).
  if (!speed && speed.error().kind != ErrorKind::not_found) return report_error(speed.error());
  if (speed && est->fits)
    if (auto note = graph_mode_note(*speed, r.speed, model, *dev, *eng, *oh, d, *est)) speed->assumptions.push_back(*note);  // ux29
  // Issue 15: nothing states or dates the version -> the band over versions (resolve_deployment said which, as validate reads it).
  // A variant the engine refuses has no band of fits over versions or interconnects (it would say "fits" beside the refusal).
  const auto band = resolved->engine_version_basis == deploy::VersionBasis::newest_assumed && !rejected ? deploy::across_versions(in, {&*devices, &*engines})
                                                                                                        : deploy::VersionBand{};
  // Issue 15/16 (nccl): the interconnect assumed -> the band over the plausible ones.
  const auto ic_band = rejected ? deploy::InterconnectBand{} : deploy::across_interconnects(in, {&*devices, &*engines}, *resolved);
  if (r.json) {
    Json j = report::fit_to_json(model, *est, search.largest_context);
    j["fixes"] = search.fixes;
    if (!band.points.empty()) j["version_band"] = report::version_band_to_json(band);
    if (!band.points.empty()) j["version_band"]["left_out"] = deploy::versions_left_out(*engines, *resolved);
    if (!ic_band.points.empty()) j["interconnect_band"] = report::interconnect_band_to_json(ic_band);
    // Issue 16 (quant29): a deployment that does not run has no decode speed, as the text form prints none.
    if (est->fits) j["speed"] = speed ? report::speed_to_json(*speed) : Json({{"error", speed.error().describe()}});
    print_json(j);
  } else {
    std::cout << report::render_fit(model, *est, search.largest_context, search.fixes, {use_color()});
    if (est->fits && speed) std::cout << "\n" << report::render_speed(*speed, {use_color()});
    if (!band.points.empty()) std::cout << "\n" << report::render_version_band(band, {use_color()});
    if (const std::string out = band.points.empty() ? "" : deploy::versions_left_out(*engines, *resolved); !out.empty()) std::cout << "  " << out << "\n";
    if (!ic_band.points.empty()) std::cout << "\n" << report::render_interconnect_band(ic_band, {use_color()});
  }
  return est->fits ? k_exit_ok : k_exit_fail;
}

// What `preflight validate` takes.
struct ValidateRequest {
  std::optional<std::string> models;
  bool json = false;
};

std::vector<Option> validate_options(ValidateRequest& r) {
  return {models_dir_flag(r.models, "a directory with <org>__<name>/config.json"), json_flag(r.json)};
}

const CommandText k_validate_text{
    "usage: preflight validate FILE.jsonl... [--models DIR] [--json]",
    R"(Runs recorded deployments (the schema of shared/validation/README.md) through the estimator: per case the
predicted against the observed value of every field and the verdict, then per field the number of cases and
the median / p90 / max absolute % error. Cases that cannot be resolved are listed as skipped, with the reason.
Each case is evaluated with the inputs it records, nothing more: no flag is taken from its notes or inferred
from its observed outcome, so a case whose recorded inputs give the wrong answer shows as wrong. Inputs are
checked as fit checks its flags (utilization in (0, 1], sizes at least 1, a known kv_cache_dtype).)",
    "",
    R"(exit: 0, 2 bad input: a malformed file or a bad recorded value (file, line, case and field named), a flag given twice; a case whose
      quantization names no variant, or whose attention_backend its engine version lacks, is listed as skipped
      ("unreadable: ...", the reason) and every other case is evaluated and reported, then the exit is 2)"};

int cmd_validate(const std::vector<std::string>& argv) {
  ValidateRequest r;
  auto positional = parse_options(argv, validate_options(r));
  if (!positional) return report_error(positional.error());
  if (positional->empty()) return report_error(make_error(ErrorKind::invalid_argument, command_usage("validate")));
  validate::ValidateOptions options;
  if (r.models) options.model_dirs.push_back(*r.models);
  auto report = validate::run_validation(*positional, options);
  if (!report) return report_error(report.error());
  if (r.json) {
    Json j = report::envelope("validate");
    j.update(validate::validation_to_json(*report));
    print_json(j);
  } else {
    std::cout << report::render_validation(*report, {use_color()});
  }
  return report->unreadable > 0 ? k_exit_usage : k_exit_ok;
}

template <class Request>
std::function<CommandHelp()> help_of(const CommandText& text, std::vector<Option> (*options)(Request&)) {
  return [&text, options] {
    static Request scratch;
    return CommandHelp{text, options(scratch)};
  };
}


}  // namespace

const std::vector<Command>& commands() {
  static const std::vector<Command> k_commands = {
      {"inspect", {{"inspect MODEL", "exact model facts: layers, parameters, weight bytes, KV bytes per token"}}, help_of(k_inspect_text, inspect_options), cmd_inspect, {}},
      {"fit", {{"fit MODEL --device D", "what vLLM / vLLM-Ascend will print at start-up, the verdict, and the speed (--engine mindie / llama.cpp: their own sizing)"}}, help_of(k_fit_text, fit_options), cmd_fit, {}},
      {"plan",
       {{"plan --device D", "what this hardware runs: every catalogue model that fits, ranked, with its start command"},
        {"plan MODEL [--devices ..]", "what this model needs: the cheapest device count, layout and quantization per device"}},
       plan_help, cmd_plan, {}},
      {"validate", {{"validate FILE.jsonl...", "compare predictions with recorded deployments"}}, help_of(k_validate_text, validate_options), cmd_validate, {}},
      {"models", {{"models", "the embedded model catalogue"}}, catalogue_help, cmd_models, {}},
      {"logs", {{"logs FILE", "an engine log: versions, args, printed vs predicted, root cause and fix (alias: explain)"}}, logs_help, cmd_logs, {"explain"}},
      {"doctor", {{"doctor", "check the CANN / driver / Python stack, lock files and deploy script (--root, --script, --fix)"}}, doctor_help, cmd_doctor, {}},
      {"devices", {{"devices", "the device catalogue (with your measured overrides)"}}, catalogue_help, cmd_devices, {}},
      {"engines", {{"engines", "the engine catalogue (versions, defaults, accepted quantization)"}}, catalogue_help, cmd_engines, {}},
      {"bw", {{"bw [--target host|cuda|npu] [--save --device D]", "measure memory bandwidth (copy counted read + write)"}}, bw_help, cmd_bw, {}},
      {"bench",
       {{"bench --url URL --model NAME [--concurrency 1,4,16,64 | --request-rate R] [--save]", "measure a live OpenAI-compatible server (TTFT, TPOT, ITL, throughput)"}},
       bench_help, cmd_bench, {}},
      {"calibrate", {{"calibrate [--db FILE]", "refit speed-model efficiency from stored bench runs; error before/after"}}, calibrate_help, cmd_calibrate, {}},
      {"report", {{"report --html FILE [--from-db FILE] [--run ID]", "one self-contained HTML report of a stored bench sweep"},
                  {"report --compare RUN_A RUN_B [--html FILE]", "engine A/B: stored sweeps side by side, differences with their spread"}}, report_help, cmd_report, {}},
      {"version", {{"version", ""}}, version_help, cmd_version, {"--version"}},
  };
  return k_commands;
}

const Command* find_command(const std::string& name) {
  for (const auto& c : commands()) {
    if (c.name == name) return &c;
    for (const auto& a : c.aliases) if (a == name) return &c;
  }
  return nullptr;
}

namespace {

int run_command(const std::vector<std::string>& args);

}  // namespace

int run(int argc, char** argv) {
  const StandardStreams streams = reserve_standard_descriptors();
  // Issue 19: fmt::print throws std::system_error when its write fails (standard error on a full disk): a progress or
  // error line that cannot be written ends the command as an environment failure, never with std::terminate (exit 134).
  try {
    return finish_output(run_command(std::vector<std::string>(argv + 1, argv + argc)), streams);
  } catch (const std::system_error& e) {
    std::fprintf(stderr, "preflight: cannot write to a standard stream: %s\n", e.what());
    return k_exit_environment;
  }
}

namespace {

// The --engine value a word names when a user types an engine where a command goes; nullptr for any other word.
const char* engine_named_as_command(const std::string& word) {
  const std::string w = to_lower(word);
  if (w == "mindie" || w == "mindie-service") return "mindie";
  if (w == "llama" || w == "llama.cpp" || w == "llamacpp" || w == "llama-server" || w == "llama-cpp") return "llama.cpp";
  if (w == "vllm") return "vllm";
  if (w == "vllm-ascend") return "vllm-ascend";
  return nullptr;
}

int run_command(const std::vector<std::string>& args) {
  const std::string usage = std::string(k_usage) + render_command_list(commands()) + "\n" + k_usage_tail;
  // user37: `preflight help fit` (git's and many CLIs' form) is `preflight fit --help`; it printed the command list.
  if (args.size() > 1 && args[0] == "help") {
    std::vector<std::string> asked(args.begin() + 1, args.end());
    asked.insert(asked.begin() + 1, "--help");
    return run_command(asked);
  }
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::cout << usage;
    return args.empty() ? k_exit_usage : k_exit_ok;
  }
  const std::string name = args[0];
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  const Command* command = find_command(name);
  if (!command) {
    std::vector<std::string> names;
    for (const auto& c : commands()) {
      names.push_back(c.name);
      for (const auto& a : c.aliases) if (a.rfind("--", 0) != 0) names.push_back(a);
    }
    std::string message = "unknown command '" + one_line(name, 60) + "'";
    const auto near = nearest_names(name, names, 1);
    // ux31: an engine typed as a command ("preflight mindie ...", "preflight llama ...") is told where engines go.
    if (const char* engine = engine_named_as_command(name)) message += fmt::format("; {} is an engine: preflight fit MODEL --device D --engine {} (plan takes it too)", engine, engine);
    else if (!near.empty()) message += "; did you mean " + near[0];
    fmt::print(stderr, "preflight: {} (preflight --help lists commands)\n", message);
    return k_exit_usage;
  }
  for (const auto& a : rest) {
    if (a == "--help" || a == "-h") {
      // ux28: fit and plan on MindIE / llama.cpp take that engine's own flags: its help, not vLLM's.
      if ((command->name == "fit" || command->name == "plan") && mindie_engine_requested(rest)) std::cout << mindie_help_text(command->name);
      else if (command->name == "fit" && llama_cpp_engine_requested(rest)) std::cout << llama_cpp_help_text();
      else std::cout << (command->help ? render_help(command->help()) : usage);
      return k_exit_ok;
    }
  }
  return command->run(rest);
}

}  // namespace

}  // namespace preflight::cli
