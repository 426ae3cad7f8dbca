#include "deploy/deployment.hpp"
#include "deploy/model_dtype.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "base/json_util.hpp"
#include "base/json_writer.hpp"
#include "base/quote.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "device/device_names.hpp"
#include "deploy/engine_core.hpp"
#include "deploy/engine_env.hpp"
#include "engine/flag_versions.hpp"
#include "deploy/api_server_count.hpp"
#include "deploy/speculative_method.hpp"
#include "deploy/flag_json.hpp"
#include "device/device_platform.hpp"
#include "estimate/fit_terms.hpp"
#include "model/model_source.hpp"

namespace preflight::deploy {

namespace {

using device::k_max_device_text;

std::string number_text(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return format("%g", v);
}

constexpr int64_t k_max_num_batched_tokens = 2147483647;  // INT32_MAX: check_flags (hard35b)

void check_at_least_one(const std::optional<Given<int64_t>>& v, std::vector<std::string>& problems) {
  if (v && v->value < 1) problems.push_back(format("%s: expected an integer of at least 1, found %lld", v->origin.c_str(), static_cast<long long>(v->value)));
}

// vLLM's --limit-mm-per-prompt: a zero count keeps that modality out of the profile run. Other
// modalities (audio) are accepted and do not change the estimate. The object form of an image
// ('{"image": {"count": 1, "width": 1024, "height": 1024}}', vLLM >= 0.11.1 ImageDummyOptions) also sizes the
// dummy image of the encoder pass; "count" defaults to 999 there, as in vLLM's BaseDummyOptions.
Status apply_mm_limits(const Given<std::string>& limits, estimate::Deployment* d) {
  PF_TRY(j, read_flag_json(limits.value, limits.origin));  // issue 19 (hard34): within the JSON flags' size and depth
  if (j.is_discarded() || !j.is_object())
    return make_error(ErrorKind::invalid_argument,
                      format("%s: expected a JSON object such as '{\"image\": 1, \"video\": 0}', found '%s'", limits.origin.c_str(), one_line(limits.value, 200).c_str()));
  for (const auto& [modality, count] : j.items()) {
    const bool object_form = count.is_object();  // '{"image": {"count": 1, "width": 512}}'
    const Json default_count = 999;
    const Json& n = object_form ? (count.contains("count") ? count["count"] : default_count) : count;
    if (!n.is_number_integer() || n.get<int64_t>() < 0)
      return make_error(ErrorKind::invalid_argument, format("%s: the count for '%s' must be a non-negative integer", limits.origin.c_str(), one_line(modality, 60).c_str()));
    int64_t side[2] = {0, 0};
    const char* side_key[2] = {"width", "height"};
    for (int i = 0; object_form && modality == "image" && i < 2; ++i) {
      if (!count.contains(side_key[i])) continue;
      const Json& v = count[side_key[i]];
      if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > (1 << 20))
        return make_error(ErrorKind::invalid_argument,
                          format("%s: the image %s must be an integer from 1 to 1048576 pixels", limits.origin.c_str(), side_key[i]));
      side[i] = v.get<int64_t>();
    }
    if (!d) continue;
    if (modality == "video") d->no_video = n.get<int64_t>() == 0;
    if (modality == "image") {
      d->no_images = n.get<int64_t>() == 0;
      d->image_dummy_width = side[0];
      d->image_dummy_height = side[1];
    }
  }
  return Ok{};
}

// What vLLM itself says when the ranks do not fit the visible devices (issue 15), after our message: with
// DP, the first local DP rank whose device range runs past them (vllm/v1/engine/utils.py
// CoreEngineProcManager: DP rank r takes devices [r x world, (r + 1) x world)); without, the multiproc
// executor's assertion (vllm/v1/executor/multiproc_executor.py, https://github.com/vllm-project/vllm/issues/28997).
// Empty when the ranks fit and only leave devices idle (vLLM starts; preflight still refuses the count).
std::string engine_rank_message(int64_t devices, int64_t world, int64_t dp, const std::string& platform) {
  if (world * dp <= devices) return "";
  if (dp > 1 && world <= devices) {
    const int64_t r = devices / world;  // the first DP rank whose range does not fit
    std::string base;
    for (int64_t i = 0; i < devices; ++i) base += (i == 0 ? "" : ",") + std::to_string(i);
    return format("; vLLM: Exception: Error setting %s: local range: [%lld, %lld) base value: \"%s\"", device_control_env_var(platform).c_str(),
                  static_cast<long long>(r * world), static_cast<long long>((r + 1) * world), base.c_str());
  }
  return format("; vLLM: AssertionError: local_world_size (%lld) must be less than or equal to the number of visible devices (%lld).", static_cast<long long>(world),
                static_cast<long long>(devices));
}

// VLLM_PP_LAYER_PARTITION as vllm/distributed/utils.py get_pp_indices reads it: integers split on ",", one
// per stage (its messages); the sum is checked against the model's layers by the estimate.
Expected<std::vector<int64_t>> parse_pp_layer_partition(const Given<std::string>& given, int64_t pp) {
  std::vector<int64_t> parts;
  for (const auto& item : split(given.value, ',')) {
    const std::string t = trim(item);
    char* end = nullptr;
    const long long v = t.empty() ? 0 : std::strtoll(t.c_str(), &end, 10);
    if (t.empty() || end == nullptr || *end != '\0')
      return make_error(ErrorKind::invalid_argument, format("%s: ValueError: Invalid partition string: %s", given.origin.c_str(), one_line(given.value, 80).c_str()));
    parts.push_back(v);
  }
  if (static_cast<int64_t>(parts.size()) != pp)
    return make_error(ErrorKind::invalid_argument,
                      format("%s: ValueError: len(partitions)=%zu does not match pp_size=%lld.", given.origin.c_str(), parts.size(), static_cast<long long>(pp)));
  return parts;
}

// The stages' cards of a comma-separated device list (see deployment.hpp), resolved one by one.
Status resolve_stage_devices(const DeviceInput& input, const std::vector<std::string>& names, const device::DeviceSpec& first, const device::DeviceCatalog& devices,
                             estimate::Deployment& d, std::vector<std::string>& assumptions) {
  if (names.size() < 2) return Ok{};
  if (static_cast<int64_t>(names.size()) != d.pipeline_parallel_size)
    return make_error(ErrorKind::invalid_argument, format("%s: %zu devices named for pipeline parallel size %lld: expected one per stage, in rank order ('%s')",
                                                          input.origin.c_str(), names.size(), static_cast<long long>(d.pipeline_parallel_size), one_line(input.text, 200).c_str()));
  d.stage_devices.clear();
  for (size_t s = 0; s < names.size(); ++s) {
    device::DeviceSpec dev = first;
    if (s > 0) {
      PF_TRY(resolved, resolve_device({trim(names[s]), input.origin, DeviceForm::name, std::nullopt, ""}, devices, assumptions));
      dev = std::move(resolved);
    }
    if (dev.platform != first.platform)
      return make_error(ErrorKind::invalid_argument, format("%s: stage %zu is a %s device (%s), stage 0 a %s device (%s): one engine runs every stage",
                                                            input.origin.c_str(), s, dev.platform.c_str(), dev.id.c_str(), first.platform.c_str(), first.id.c_str()));
    const double total = s == 0 && d.device_total_bytes ? *d.device_total_bytes : dev.usable_total_bytes();
    d.stage_devices.push_back({dev.id, total});
  }
  return Ok{};
}

}  // namespace

namespace {

// Issue 15: a drafter that is its own checkpoint ("model": eagle, eagle3, draft_model, dflash) is read the way
// the target is (catalogue, --models DIR, local hub cache; model::resolve_model). EAGLE heads that cannot be read
// keep the assumed head of the target's shape (said in the assumptions); a draft model or a DFlash drafter has no
// such shape to assume, so its absence is bad input (exit 2), never a silent 0.
Status resolve_drafter(estimate::SpeculativeConfig& spec, const Flags& f) {
  if (!spec.separate_checkpoint()) return Ok{};
  const std::string& origin = f.speculative_config->origin;
  const bool shape_assumable = spec.method == "eagle" || spec.method == "eagle3";
  if (spec.model.empty()) {
    if (shape_assumable) return Ok{};
    return make_error(ErrorKind::invalid_argument,
                      format("%s: method '%s' needs \"model\" (the drafter checkpoint): vLLM SpeculativeConfig raises "
                             "'The draft model config must be specified'", origin.c_str(), one_line(spec.method, 80).c_str()));
  }
  model::ResolveOptions ro;
  ro.extra_model_dirs = f.drafter_model_dirs;
  auto drafter = model::resolve_model(spec.model, ro);
  if (drafter) {
    spec.drafter = std::make_shared<const model::ModelSpec>(std::move(*drafter));
    return Ok{};
  }
  // Issue 19 (attack36): a drafter that was found but could not be read (a local folder whose config.json is malformed,
  // a FIFO, a path holding a control character) was sized as the assumed EAGLE head, exit 0, or said to be "not in the
  // catalogue": vLLM stops reading that config. Only a drafter found nowhere keeps the assumption.
  if (drafter.error().kind != ErrorKind::not_found)
    return make_error(drafter.error().kind, format("%s: drafter '%s' (method %s) cannot be read: %s", origin.c_str(), one_line(spec.model, 200).c_str(),
                                                   spec.method.c_str(), drafter.error().describe().c_str()));
  if (shape_assumable) return Ok{};
  return make_error(ErrorKind::invalid_argument,
                    format("%s: drafter '%s' (method %s): its config.json is not in the catalogue, a --models directory "
                           "(<org>__<name>/config.json) or the local Hugging Face / ModelScope cache, so its weights and "
                           "KV layers cannot be sized; download its config.json (e.g. hf download %s config.json) "
                           "or pass --models DIR (%s)",
                           origin.c_str(), one_line(spec.model, 200).c_str(), spec.method.c_str(), one_line(spec.model, 200).c_str(), drafter.error().message.c_str()));
}

}  // namespace

std::string model_dtype_refusal(const std::string& value, const std::string& origin, const device::DeviceSpec& dev) {
  if (model_dtype_flag(value) != model::Dtype::bf16 || dev.platform != "cuda" || std::find(dev.dtypes.begin(), dev.dtypes.end(), "bf16") != dev.dtypes.end())
    return "";
  return format("%s: ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your %s GPU has no bfloat16 "
                "(devices.json dtypes). You can use float16 instead by explicitly setting the `dtype` flag in CLI, for example: --dtype=half.",
                origin.c_str(), dev.id.c_str());
}

std::optional<model::Dtype> model_dtype_flag(const std::string& value) {
  const std::string v = to_lower(trim(value));
  if (v == "half" || v == "float16") return model::Dtype::f16;
  if (v == "bfloat16") return model::Dtype::bf16;
  if (v == "float" || v == "float32") return model::Dtype::f32;
  return std::nullopt;
}

namespace {
// Issue 15 (warmup32): --dtype applied to the model (vllm/config/model.py ModelConfig._get_and_verify_dtype: the value
// replaces the config's torch_dtype; the model is built in it, so every parameter a quantization method does not pack,
// the activations and an auto KV cache take it: Llama-3.1-8B with --dtype float32 on vLLM 0.19 prints 'weights memory:
// 29.98GiB', twice its bf16 14.99). A CUDA card without bfloat16 refuses it at worker start
// (vllm/v1/worker/gpu_worker.py _check_if_gpu_supports_dtype, the ValueError quoted).
Status apply_model_dtype(const Flags& f, const device::DeviceSpec& dev, model::ModelSpec& m, Resolved& r) {
  if (!f.dtype) return Ok{};
  const auto dtype = model_dtype_flag(f.dtype->value);
  if (!dtype) return Ok{};  // auto: the config's dtype, as the model reader resolved it
  if (std::string why = model_dtype_refusal(f.dtype->value, f.dtype->origin, dev); !why.empty()) return make_error(ErrorKind::invalid_argument, std::move(why));
  if (*dtype != m.dtype)
    r.assumptions.push_back(format("--dtype %s: the %s checkpoint is cast to %s (weights a quantization method does not pack, activations, an auto KV cache)",
                                   f.dtype->value.c_str(), model::dtype_name(m.dtype), model::dtype_name(*dtype)));
  m.dtype = *dtype;
  return Ok{};
}
}  // namespace

const std::vector<std::string>& known_kv_cache_dtypes() {
  static const std::vector<std::string> k_dtypes = {"auto", "fp8", "fp8_e4m3", "fp8_e5m2", "int8", "fp16", "bf16", "float16", "bfloat16"};
  return k_dtypes;
}

std::string device_control_env_var(const std::string& platform) {
  if (platform == "npu") return "ASCEND_RT_VISIBLE_DEVICES";
  if (platform == "cpu") return "CPU_VISIBLE_MEMORY_NODES";
  return "CUDA_VISIBLE_DEVICES";
}

Status check_flags(const Flags& f, const std::string& platform) {
  std::vector<std::string> problems;
  if (const auto& u = f.gpu_memory_utilization; u && !(std::isfinite(u->value) && u->value > 0 && u->value <= 1))
    problems.push_back(format("%s: expected a number in (0, 1], found %s", u->origin.c_str(), number_text(u->value).c_str()));
  for (const auto* v : {&f.tensor_parallel_size, &f.pipeline_parallel_size, &f.num_devices, &f.max_model_len, &f.max_num_seqs, &f.max_num_batched_tokens,
                         &f.data_parallel_size, &f.decode_context_parallel_size})
    check_at_least_one(*v, problems);
  // Issue 19 (hard35b): vLLM's V1 model runner keeps a step's tokens in int32 tensors (gpu_model_runner.py: input_ids of
  // max_num_tokens = max_num_batched_tokens, dtype torch.int32; query_start_loc int32); 2^62 was sized as given.
  if (const auto& b = f.max_num_batched_tokens; b && b->value > k_max_num_batched_tokens)
    problems.push_back(format("%s: max_num_batched_tokens %lld is above %lld, the most tokens one scheduler step can hold (vLLM's model runner indexes a "
                              "step's tokens in int32 tensors: input_ids, query_start_loc)", b->origin.c_str(), static_cast<long long>(b->value),
                              static_cast<long long>(k_max_num_batched_tokens)));
  const auto ok = [](const std::optional<Given<int64_t>>& v) { return !v || v->value >= 1; };
  const int64_t dp = f.data_parallel_size && ok(f.data_parallel_size) ? f.data_parallel_size->value : 1;
  // Issue 19 (hard33): DP x TP x PP is the device count every report prints and the divisor below; 10^18 x 16
  // overflowed to "-2446744073709551616 x H100-SXM".
  {
    int64_t world = 1;
    bool overflow = false;
    for (const auto* v : {&f.data_parallel_size, &f.tensor_parallel_size, &f.pipeline_parallel_size})
      if (*v && ok(*v)) overflow = overflow || __builtin_mul_overflow(world, (*v)->value, &world);
    if (overflow) {
      const auto& named = f.data_parallel_size ? f.data_parallel_size : f.tensor_parallel_size ? f.tensor_parallel_size : f.pipeline_parallel_size;
      return make_error(ErrorKind::invalid_argument,
                        format("%s: data x tensor x pipeline parallel sizes (%lld x %lld x %lld) multiply past a 64-bit device count", named->origin.c_str(),
                               static_cast<long long>(dp), static_cast<long long>(f.tensor_parallel_size ? f.tensor_parallel_size->value : 1),
                               static_cast<long long>(f.pipeline_parallel_size ? f.pipeline_parallel_size->value : 1)));
    }
  }
  if (f.num_devices && ok(f.num_devices) && ok(f.tensor_parallel_size) && ok(f.pipeline_parallel_size)) {
    const int64_t pp = f.pipeline_parallel_size ? f.pipeline_parallel_size->value : 1;
    const int64_t ranks = (f.tensor_parallel_size ? f.tensor_parallel_size->value * pp : pp) * dp;
    const char* what = f.tensor_parallel_size ? (dp > 1 ? "data x tensor x pipeline parallel ranks" : "tensor x pipeline parallel ranks")
                                              : (dp > 1 ? "data parallel x pipeline stages" : "pipeline stages");
    if (f.num_devices->value % ranks != 0)
      problems.push_back(format("%s: %lld devices do not divide into %s %lld", f.num_devices->origin.c_str(), static_cast<long long>(f.num_devices->value), what,
                                static_cast<long long>(ranks)) +
                         engine_rank_message(f.num_devices->value, ranks / dp, dp, platform));
  }
  // vLLM ParallelConfig.__post_init__ (above DP); below 0 (hard34: it was said to be above DP): pydantic's ge=0 from 0.23.
  if (const auto& local = f.data_parallel_size_local; local && (local->value < 0 || local->value > dp))
    problems.push_back(local->value < 0 ? format("%s: data_parallel_size_local (%lld) must be 0 or more (ParallelConfig.data_parallel_size_local: Field(ge=0) from "
                                                 "vLLM 0.23; a negative count starts no engine on the node)", local->origin.c_str(), static_cast<long long>(local->value))
                                        : format("%s: ValueError: data_parallel_size_local (%lld) must be <= data_parallel_size (%lld)", local->origin.c_str(),
                                                 static_cast<long long>(local->value), static_cast<long long>(dp)));
  if (f.speculative_config) {
    if (auto s = parse_speculative_config(*f.speculative_config); !s) problems.push_back(s.error().message);
  }
  if (f.compilation_config) {
    if (auto c = parse_compilation_config(*f.compilation_config); !c) problems.push_back(c.error().message);
  }
  // vllm/config/vllm.py OptimizationLevel: O0 .. O3.
  if (const auto& o = f.optimization_level; o && (o->value < 0 || o->value > 3))
    problems.push_back(format("%s: expected an optimization level 0, 1, 2 or 3 (vLLM OptimizationLevel), found %lld", o->origin.c_str(), static_cast<long long>(o->value)));
  if (const auto& dt = f.dtype; dt && to_lower(trim(dt->value)) != "auto" && !model_dtype_flag(dt->value))  // vllm/engine/arg_utils.py --dtype choices
    problems.push_back(format("%s: expected one of auto|half|float16|bfloat16|float|float32 (vLLM's --dtype), found '%s'", dt->origin.c_str(), one_line(dt->value, 60).c_str()));
  if (const auto& k = f.kv_cache_dtype) {
    bool known = false;
    std::string list;
    for (const auto& name : known_kv_cache_dtypes()) {
      known = known || to_lower(k->value) == name;
      list += (list.empty() ? "" : "|") + name;
    }
    if (!known) problems.push_back(format("%s: expected one of %s, found '%s'", k->origin.c_str(), list.c_str(), one_line(k->value, 60).c_str()));
  }
  if (f.limit_mm_per_prompt) {
    if (auto s = apply_mm_limits(*f.limit_mm_per_prompt, nullptr); !s) problems.push_back(s.error().message);
  }
  if (const auto& m = f.mamba_ssm_cache_dtype; m && estimate::terms::mamba_ssm_cache_bits(to_lower(m->value)) < 0)
    problems.push_back(format("%s: expected one of auto|float32|float16|bfloat16, found '%s'", m->origin.c_str(), one_line(m->value, 60).c_str()));
  if (const auto& t = f.device_total_bytes; t && !(std::isfinite(t->value) && t->value > 0))
    problems.push_back(format("%s: expected a positive total memory, found %s", t->origin.c_str(), number_text(t->value).c_str()));
  // CANN HCCL_BUFFSIZE: "The value must be an integer greater than or equal to 1" (MB).
  // Issue 19 (hard35): and at most what --env HCCL_BUFFSIZE takes (deploy/engine_env.hpp: its bytes fit an int64); 2^63 MB
  // gave "Available KV cache memory: -18014398509481958.00 GiB".
  if (const auto& h = f.hccl_buffsize_mb;
      h && !(std::isfinite(h->value) && h->value >= 1 && h->value <= static_cast<double>(k_max_hccl_buffsize_mb) && h->value == std::floor(h->value)))
    problems.push_back(format("%s: HCCL_BUFFSIZE must be an integer greater than or equal to 1 (MB; at most %lld), found %s", h->origin.c_str(),
                              static_cast<long long>(k_max_hccl_buffsize_mb), number_text(h->value).c_str()));
  if (const auto& v = f.npu_driver_version; v) {
    const auto parsed = engine::parse_npu_driver_version(v->value, v->origin);
    if (!parsed) problems.push_back(parsed.error().message);
  }
  // KernelConfig.moe_backend is a Literal of backend names; lower case, '_' and digits once normalized.
  if (const auto& mb = f.moe_backend) {
    const std::string name = engine::normalize_moe_backend(mb->value);
    const bool word = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'; });
    if (!word)
      problems.push_back(format("%s: expected a MoE backend name such as auto, triton, marlin, flashinfer_cutlass or flashinfer_b12x (vLLM KernelConfig.moe_backend), "
                                "found '%s'", mb->origin.c_str(), one_line(mb->value, 60).c_str()));
  }
  if (const auto& ic = f.interconnect; ic && !engine::parse_interconnect(ic->value))
    problems.push_back(format("%s: expected one of %s, found '%s'", ic->origin.c_str(), engine::interconnect_choices().c_str(), one_line(ic->value, 60).c_str()));
  if (problems.empty()) return Ok{};
  std::string message;
  for (const auto& p : problems) message += (message.empty() ? "" : "; ") + p;
  return make_error(ErrorKind::invalid_argument, message);
}

Expected<estimate::Deployment> deployment_from_flags(const Flags& f, const std::string& platform) {
  PF_TRY(checked, check_flags(f, platform));
  (void)checked;
  estimate::Deployment d;
  d.pipeline_parallel_size = f.pipeline_parallel_size ? f.pipeline_parallel_size->value : 1;
  if (f.data_parallel_size) d.data_parallel_size = f.data_parallel_size->value;
  if (f.enable_expert_parallel) d.enable_expert_parallel = f.enable_expert_parallel->value;
  if (f.decode_context_parallel_size) d.decode_context_parallel_size = f.decode_context_parallel_size->value;
  if (f.tensor_parallel_size) d.tensor_parallel_size = f.tensor_parallel_size->value;
  else if (f.num_devices) d.tensor_parallel_size = f.num_devices->value / (d.pipeline_parallel_size * d.data_parallel_size);
  if (f.speculative_config) {
    PF_TRY(spec, parse_speculative_config(*f.speculative_config));
    PF_TRY(read, resolve_drafter(spec, f));
    (void)read;
    d.speculative = std::move(spec);
  }
  if (f.gpu_memory_utilization) d.gpu_memory_utilization = f.gpu_memory_utilization->value;
  if (f.max_model_len) d.max_model_len = f.max_model_len->value;
  if (f.max_num_seqs) d.max_num_seqs = f.max_num_seqs->value;
  if (f.max_num_batched_tokens) d.max_num_batched_tokens = f.max_num_batched_tokens->value;
  if (f.kv_cache_dtype) d.kv_cache_dtype = to_lower(f.kv_cache_dtype->value);
  if (f.quantization) d.quantization = f.quantization->value;
  if (f.enforce_eager && f.enforce_eager->value) d.mode = estimate::ExecutionMode::eager;
  if (f.compilation_config) {
    PF_TRY(graph, parse_compilation_config(*f.compilation_config));
    d.graph_capture = std::move(graph);
  }
  if (f.optimization_level) d.graph_capture.optimization_level = f.optimization_level->value;
  if (f.attention_backend) d.graph_capture.attention_backend = to_upper(trim(f.attention_backend->value));
  if (f.moe_backend) d.moe_backend = engine::normalize_moe_backend(f.moe_backend->value);
  // cudagraph_mode NONE runs without graphs in every version, as --enforce-eager does.
  if (d.graph_capture.mode == estimate::CudagraphMode::none) d.mode = estimate::ExecutionMode::eager;
  if (f.skip_mm_profiling) d.skip_mm_profiling = f.skip_mm_profiling->value;
  if (f.enable_prefix_caching) d.enable_prefix_caching = f.enable_prefix_caching->value;
  if (f.enable_chunked_prefill) d.enable_chunked_prefill = f.enable_chunked_prefill->value;
  if (f.mamba_ssm_cache_dtype) d.mamba_ssm_cache_dtype = to_lower(f.mamba_ssm_cache_dtype->value);
  if (f.limit_mm_per_prompt) {
    PF_TRY(applied, apply_mm_limits(*f.limit_mm_per_prompt, &d));
    (void)applied;
  }
  // vLLM's --language-model-only sets the limit of every modality the model supports to 0 ("All limits of multimodal
  // modalities supported by the model are set to 0, running in text-only mode."), whatever --limit-mm-per-prompt says.
  if (f.language_model_only && f.language_model_only->value) {
    d.no_images = d.no_video = true;
    d.language_model_only = true;
  }
  if (f.device_total_bytes) d.device_total_bytes = f.device_total_bytes->value;
  if (f.hccl_buffsize_mb) d.hccl_buffsize_bytes = f.hccl_buffsize_mb->value * 1024 * 1024;
  if (f.npu_driver_version) d.npu_driver_version = f.npu_driver_version->value;
  if (f.interconnect) d.interconnect = engine::parse_interconnect(f.interconnect->value).value_or(engine::Interconnect::unknown);
  if (f.flashcomm1) d.flashcomm1 = f.flashcomm1->value;
  if (f.enable_dsa_cp) d.enable_dsa_cp = f.enable_dsa_cp->value;
  if (f.enable_shared_expert_dp) d.enable_shared_expert_dp = f.enable_shared_expert_dp->value;
  if (f.layer_sharding) d.layer_sharding = split(f.layer_sharding->value, ',');
  if (f.num_redundant_experts) d.num_redundant_experts = f.num_redundant_experts->value;
  if (f.dynamic_eplb) d.dynamic_eplb = f.dynamic_eplb->value;
  if (f.kv_producer) d.kv_producer = f.kv_producer->value;
  if (f.mlapo) d.mlapo = f.mlapo->value;
  if (f.flashinfer_sampler) d.flashinfer_sampler = f.flashinfer_sampler->value;
  if (f.rocm_moe_padding) d.moe_row_padding = f.rocm_moe_padding->value;
  d.quant_scheme = f.quant_scheme;
  if (f.pp_layer_partition) {
    PF_TRY(parts, parse_pp_layer_partition(*f.pp_layer_partition, d.pipeline_parallel_size));
    d.pp_layer_partition = std::move(parts);
  }
  return d;
}

Status check_decode_context_parallel(const model::ModelSpec& m, int64_t tp, int64_t dcp, const std::string& origin) {
  const std::string why = estimate::decode_context_parallel_rejection(m, tp, dcp);
  if (why.empty()) return Ok{};
  return make_error(ErrorKind::invalid_argument, origin + ": " + why);
}

std::string interconnect_assumption(const device::DeviceSpec& dev, const engine::InterconnectDefault& rule, int64_t tensor_parallel_size) {
  return format("assumed %s: %s (%s, form factor %s, TP %lld; %s); give --interconnect", engine::interconnect_name(rule.interconnect), rule.reason.c_str(),
                dev.id.c_str(), dev.form_factor.c_str(), static_cast<long long>(tensor_parallel_size), rule.source.c_str());
}

std::string no_interconnect_default(const device::DeviceSpec& dev, const engine::EngineProfile& eng, int64_t tensor_parallel_size) {
  return format("no interconnect default for %s at TP %lld (form factor '%s'): the NCCL buffers %s counts are left to the fixed multi-rank non-torch "
                "share; give --interconnect",
                dev.id.c_str(), static_cast<long long>(tensor_parallel_size), dev.form_factor.c_str(), eng.id.c_str());
}

namespace {

// Issue 15/16 (nccl): the interconnect of a deployment that does not give one, from the card's form factor and the TP
// size (engines.json overheads[].nccl_buffers.defaults). Said in the assumptions, with the band's alternatives, only
// where the version counts the NCCL buffers (elsewhere it shapes no number). Issue 15 (acc28): where the device name
// also names cards of another form factor (device::candidate_devices of `named`: "A100 80GB" is the SXM4 or the
// PCIe card), their form factor's default joins the band; the assumed card's stays the estimate.
void default_interconnect(const device::DeviceSpec& dev, const DeviceInput& named, const device::DeviceCatalog& catalog, const engine::EngineProfile& eng,
                          const engine::Overheads& oh, estimate::Deployment& dep, Resolved& r) {
  const engine::NcclBuffers* nb = oh.nccl_buffers.get();
  if (!nb || dep.tensor_parallel_size < 2) return;
  const bool counted = nb->counted_by(eng, dep.tensor_parallel_size);
  const engine::InterconnectDefault* rule = nb->default_for(dev.form_factor, dep.tensor_parallel_size);
  if (!rule) {
    if (counted)
      r.assumptions.push_back(no_interconnect_default(dev, eng, dep.tensor_parallel_size));
    return;
  }
  dep.interconnect = rule->interconnect;
  // Issue 15 (tpws): the interconnect also decides whether the version's FlashInfer all-reduce workspace is allocated
  // (it needs NVSwitch multicast), so the default shapes a number there too.
  const engine::AllreduceFusionWorkspace* ws = oh.allreduce_fusion_workspace.get();
  const bool workspace = ws && ws->max_input_bytes(dev.id, dep.tensor_parallel_size) > 0 &&
                         ws->allocated_by(eng, dep.tensor_parallel_size, dep.pipeline_parallel_size, dep.data_parallel_size, rule->interconnect);
  if (!counted && !workspace) return;
  // The cards the name leaves open, read only here, where the interconnect shapes a number (a size given with
  // --device-memory names none; a name whose first candidate is not the card resolved names none either).
  std::vector<const device::DeviceSpec*> candidates;
  if (!named.memory_bytes) candidates = device::candidate_devices(catalog, named.text);
  if (!candidates.empty() && candidates.front()->id != dev.id) candidates.clear();
  std::vector<engine::Interconnect> alternatives = rule->alternatives;
  std::string other_cards;
  for (const device::DeviceSpec* c : candidates) {
    if (c->id == dev.id || c->form_factor == dev.form_factor) continue;
    const engine::InterconnectDefault* other = nb->default_for(c->form_factor, dep.tensor_parallel_size);
    if (!other) continue;
    other_cards += format("%s%s (%s: %s)", other_cards.empty() ? "" : ", ", c->id.c_str(), c->form_factor.c_str(), engine::interconnect_name(other->interconnect));
    if (other->interconnect != rule->interconnect && std::find(alternatives.begin(), alternatives.end(), other->interconnect) == alternatives.end())
      alternatives.push_back(other->interconnect);
  }
  std::string band;
  for (const auto a : alternatives) band += std::string(band.empty() ? "" : ", ") + engine::interconnect_name(a);
  r.assumptions.push_back(interconnect_assumption(dev, *rule, dep.tensor_parallel_size) +
                          (other_cards.empty() ? "" : "; the device name also names " + other_cards) +
                          (band.empty() ? "" : "; interconnect_band: the estimate under " + band + " too"));
  r.interconnect_alternatives = std::move(alternatives);
}

}  // namespace

Status check_max_model_len(const model::ModelSpec& m, const std::optional<Given<int64_t>>& len, LongMaxModelLen allow, std::vector<std::string>& assumptions) {
  if (!len || m.derived_max_model_len <= 0 || len->value <= m.derived_max_model_len) return Ok{};
  // vllm/config/model.py, _get_and_verify_max_len (the wording of vLLM 0.6 onwards; the env var since 0.5.4).
  const std::string what = format("User-specified max_model_len (%lld) is greater than the derived max_model_len (%s in model's config.json).",
                                  static_cast<long long>(len->value), m.derived_max_model_len_text.c_str());
  if (allow == LongMaxModelLen::allowed) {
    assumptions.push_back(what + " VLLM_ALLOW_LONG_MAX_MODEL_LEN is set, so vLLM warns and takes it: RoPE positions beyond " +
                          std::to_string(m.derived_max_model_len) + " give NaN unless the model was trained for them");
    return Ok{};
  }
  return make_error(ErrorKind::invalid_argument,
                    format("%s: ValueError: %s To allow overriding this maximum, set the env var VLLM_ALLOW_LONG_MAX_MODEL_LEN=1. "
                           "VLLM_ALLOW_LONG_MAX_MODEL_LEN must be used with extreme caution.",
                           len->origin.c_str(), what.c_str()),
                    len->origin);
}

LongMaxModelLen long_max_model_len_from_env(const char* value) {
  const std::string v = value ? to_lower(trim(value)) : "";
  return v == "1" || v == "true" ? LongMaxModelLen::allowed : LongMaxModelLen::refused;
}

Expected<Resolved> resolve_deployment(const Inputs& in, const Catalogs& catalogs) {
  assert(catalogs.devices && catalogs.engines);
  Resolved r;
  PF_TRY(deployment, deployment_from_flags(in.flags, device_text_platform(in.device.text, in.device.platform)));
  if (const int64_t ep = deployment.data_parallel_size * deployment.tensor_parallel_size;
      deployment.enable_expert_parallel && in.model.num_experts > 0 && ep > in.model.num_experts) {
    const std::string origin = in.flags.enable_expert_parallel ? in.flags.enable_expert_parallel->origin : std::string("--enable-expert-parallel");
    return make_error(ErrorKind::invalid_argument,
                      format("%s: ValueError: expert parallel size (%lld = data_parallel_size %lld x tensor_parallel_size %lld) is larger than the number of "
                             "experts (%lld): every expert-parallel rank must hold at least one expert",
                             origin.c_str(), static_cast<long long>(ep), static_cast<long long>(deployment.data_parallel_size),
                             static_cast<long long>(deployment.tensor_parallel_size), static_cast<long long>(in.model.num_experts)));
  }
  // Issue 19 (hard33): the global expert slots, experts + redundant ones (EPLB), are summed in int64 by the estimate: a
  // case's num_redundant_experts of 2^63 - 1 wrapped negative and predicted 1.9e18 GiB of KV cache.
  if (int64_t slots = 0; in.flags.num_redundant_experts && __builtin_add_overflow(in.model.num_experts, deployment.num_redundant_experts, &slots))
    return make_error(ErrorKind::invalid_argument,
                      format("%s: %lld redundant experts beside the model's %lld overflow a 64-bit expert count", in.flags.num_redundant_experts->origin.c_str(),
                             static_cast<long long>(deployment.num_redundant_experts), static_cast<long long>(in.model.num_experts)));
  PF_TRY(dcp_ok, check_decode_context_parallel(in.model, deployment.tensor_parallel_size, deployment.decode_context_parallel_size,
                                                in.flags.decode_context_parallel_size ? in.flags.decode_context_parallel_size->origin
                                                                                      : std::string("--decode-context-parallel-size")));
  (void)dcp_ok;
  // Heterogeneous PP (issue 15): "A100-80G,L40S" names each stage's card; the first is the deployment's.
  DeviceInput first_stage = in.device;
  std::vector<std::string> stage_names;
  if (in.device.form == DeviceForm::name && in.device.text.find(',') != std::string::npos) {
    stage_names = split(in.device.text, ',');
    first_stage.text = trim(stage_names.front());
  }
  PF_TRY(dev, resolve_device(first_stage, *catalogs.devices, r.assumptions));
  PF_TRY(staged, resolve_stage_devices(in.device, stage_names, dev, *catalogs.devices, deployment, r.assumptions));
  (void)staged;
  if (!deployment.pp_layer_partition.empty() && in.model.num_hidden_layers > 0) {
    if (auto split = estimate::pp_layer_partition(in.model.num_hidden_layers, deployment.pipeline_parallel_size, deployment.pp_layer_partition); !split)
      return make_error(ErrorKind::invalid_argument, (in.flags.pp_layer_partition ? in.flags.pp_layer_partition->origin : std::string("VLLM_PP_LAYER_PARTITION")) +
                                                         ": " + split.error().message);
  }
  PF_TRY(eng, resolve_engine(in.engine, *catalogs.engines, dev.platform, r.assumptions, r.engine_version_basis));
  if (!in.engine.version_choice.empty()) r.assumptions.push_back(in.engine.version_choice);
  if (in.engine.build) {
    eng.build_named = in.engine.build;
    r.assumptions.push_back("engine build " + in.engine.build->text + " (" + in.engine.build_origin +
                            ") decides the rules with a build boundary (engines.json from_build / before_build / non_torch_increase_from_build)");
  }
  if (!eng.runs_on(dev.platform)) {
    const bool llama_only = dev.platform == "cpu" || dev.platform == "metal";
    return make_error(ErrorKind::invalid_argument,
                      format("%s runs on %s devices; %s is a device of platform '%s'%s", eng.id.c_str(), eng.platform.c_str(), dev.id.c_str(),
                             dev.platform.c_str(), llama_only ? " (llama.cpp runs there: a GGUF file with --engine llama.cpp)" : ""));
  }
  // Issue 15 (multinode32): the multi-node data-parallel flags as the engine's version takes them, and this node's ranks.
  PF_TRY(dp_ok, check_data_parallel_flags(in.flags, eng, deployment.tensor_parallel_size, deployment.pipeline_parallel_size, deployment.data_parallel_size,
                                          in.model.num_experts, dev.id, r.assumptions));
  (void)dp_ok;
  if (const auto& kv = in.flags.kv_cache_dtype) {  // issue 15 (v0eng29): a KV dtype the engine takes but cannot run on this card
    PF_TRY(kv_ok, check_kv_cache_dtype(eng, dev, *kv));
    (void)kv_ok;
  }
  // Issue 15 (v0eng30): what vLLM's V1 oracle sends back to V0 on this card (engine_cores.json v1_fallbacks).
  PF_TRY(core_ok, apply_v1_fallback(in.engine, dev, in.flags.kv_cache_dtype ? in.flags.kv_cache_dtype->value : std::string(), r.engine_version_basis, eng,
                                          r.assumptions, in.flags.attention_backend ? in.flags.attention_backend->value : std::string()));
  (void)core_ok;
  if (auto asc = check_api_server_count(in.flags, eng); !asc) return asc.error();  // hard34: after the oracle, which may have chosen V0
  if (auto spec = check_speculative_method(in.flags, eng, in.model, deployment, r.assumptions); !spec) return spec.error();  // spec35, user36
  const engine::Overheads* oh = catalogs.engines->overheads_for(eng, dev.platform);
  if (!oh) return make_error(ErrorKind::not_found, format("no overheads for %s on platform %s in the engine catalogue", eng.id.c_str(), dev.platform.c_str()));
  // A total stated in the device text replaces the catalogue's for a catalogue device.
  if (in.device.form == DeviceForm::free_text && dev.id != "stated-device" && !deployment.device_total_bytes) {
    if (auto total = stated_total_bytes(in.device.text)) {
      deployment.device_total_bytes = total;
      r.provenance.push_back(format("device total %.2f GiB from %s", bytes_to_gib(*total), in.device.origin.c_str()));
    }
  }
  const Flags& f = in.flags;
  auto note = [&](const char* field, const auto& given, const std::string& shown) {
    if (given) r.provenance.push_back(std::string(field) + " " + shown + " from " + given->origin);
  };
  note("tensor_parallel_size", f.tensor_parallel_size, f.tensor_parallel_size ? std::to_string(f.tensor_parallel_size->value) : "");
  note("pipeline_parallel_size", f.pipeline_parallel_size, f.pipeline_parallel_size ? std::to_string(f.pipeline_parallel_size->value) : "");
  note("num_devices", f.num_devices, f.num_devices ? std::to_string(f.num_devices->value) : "");
  note("data_parallel_size", f.data_parallel_size, f.data_parallel_size ? std::to_string(f.data_parallel_size->value) : "");
  note("data_parallel_size_local", f.data_parallel_size_local, f.data_parallel_size_local ? std::to_string(f.data_parallel_size_local->value) : "");
  note("data_parallel_start_rank", f.data_parallel_start_rank, f.data_parallel_start_rank ? std::to_string(f.data_parallel_start_rank->value) : "");
  note("headless", f.headless, f.headless && f.headless->value ? "true" : "false");
  note("data_parallel_rank", f.data_parallel_rank, f.data_parallel_rank ? std::to_string(f.data_parallel_rank->value) : "");  // issue 15 (dpep33)
  note("nnodes", f.nnodes, f.nnodes ? std::to_string(f.nnodes->value) : "");
  note("node_rank", f.node_rank, f.node_rank ? std::to_string(f.node_rank->value) : "");
  note("decode_context_parallel_size", f.decode_context_parallel_size, f.decode_context_parallel_size ? std::to_string(f.decode_context_parallel_size->value) : "");
  note("enable_expert_parallel", f.enable_expert_parallel, f.enable_expert_parallel && f.enable_expert_parallel->value ? "true" : "false");
  note("speculative_config", f.speculative_config, f.speculative_config ? f.speculative_config->value : "");
  note("pp_layer_partition", f.pp_layer_partition, f.pp_layer_partition ? f.pp_layer_partition->value : "");
  note("compilation_config", f.compilation_config, f.compilation_config ? f.compilation_config->value : "");
  note("optimization_level", f.optimization_level, f.optimization_level ? std::to_string(f.optimization_level->value) : "");
  note("attention_backend", f.attention_backend, f.attention_backend ? f.attention_backend->value : "");
  note("moe_backend", f.moe_backend, f.moe_backend ? f.moe_backend->value : "");
  note("gpu_memory_utilization", f.gpu_memory_utilization, f.gpu_memory_utilization ? format("%g", f.gpu_memory_utilization->value) : "");
  note("max_model_len", f.max_model_len, f.max_model_len ? std::to_string(f.max_model_len->value) : "");
  note("max_num_seqs", f.max_num_seqs, f.max_num_seqs ? std::to_string(f.max_num_seqs->value) : "");
  note("max_num_batched_tokens", f.max_num_batched_tokens, f.max_num_batched_tokens ? std::to_string(f.max_num_batched_tokens->value) : "");
  note("kv_cache_dtype", f.kv_cache_dtype, f.kv_cache_dtype ? f.kv_cache_dtype->value : "");
  note("quantization", f.quantization, f.quantization ? f.quantization->value : "");
  note("VLLM_ASCEND_ENABLE_FLASHCOMM1", f.flashcomm1, f.flashcomm1 && f.flashcomm1->value ? "1" : "0");
  note("enable_dsa_cp", f.enable_dsa_cp, f.enable_dsa_cp && f.enable_dsa_cp->value ? "true" : "false");
  note("enable_shared_expert_dp", f.enable_shared_expert_dp, f.enable_shared_expert_dp && f.enable_shared_expert_dp->value ? "true" : "false");
  note("layer_sharding", f.layer_sharding, f.layer_sharding ? f.layer_sharding->value : "");
  note("num_redundant_experts", f.num_redundant_experts, f.num_redundant_experts ? std::to_string(f.num_redundant_experts->value) : "");
  note("dynamic_eplb", f.dynamic_eplb, f.dynamic_eplb ? (f.dynamic_eplb->value ? "true" : "false") : "");
  note("kv_producer", f.kv_producer, f.kv_producer && f.kv_producer->value ? "true" : "false");
  note("VLLM_ASCEND_ENABLE_MLAPO", f.mlapo, f.mlapo && f.mlapo->value ? "1" : "0");
  note("sampler", f.flashinfer_sampler, f.flashinfer_sampler && f.flashinfer_sampler->value ? "flashinfer" : "native");
  note("VLLM_ROCM_MOE_PADDING", f.rocm_moe_padding, f.rocm_moe_padding && f.rocm_moe_padding->value ? "1" : "0");
  note("HCCL_BUFFSIZE", f.hccl_buffsize_mb, f.hccl_buffsize_mb ? format("%g MB", f.hccl_buffsize_mb->value) : "");
  note("NPU driver", f.npu_driver_version, f.npu_driver_version ? f.npu_driver_version->value : "");
  note("interconnect", f.interconnect, deployment.interconnect == engine::Interconnect::unknown ? "" : engine::interconnect_name(deployment.interconnect));
  if (!f.interconnect) default_interconnect(dev, first_stage, *catalogs.devices, eng, *oh, deployment, r);  // acc28: the first stage's name
  note("skip_mm_profiling", f.skip_mm_profiling, f.skip_mm_profiling && f.skip_mm_profiling->value ? "true" : "false");
  note("enable_prefix_caching", f.enable_prefix_caching, f.enable_prefix_caching && f.enable_prefix_caching->value ? "true" : "false");
  note("enable_chunked_prefill", f.enable_chunked_prefill, f.enable_chunked_prefill && f.enable_chunked_prefill->value ? "true" : "false");
  note("language_model_only", f.language_model_only, f.language_model_only && f.language_model_only->value ? "true" : "false");
  note("mamba_ssm_cache_dtype", f.mamba_ssm_cache_dtype, f.mamba_ssm_cache_dtype ? f.mamba_ssm_cache_dtype->value : "");
  // Issue 15: -O0 in a version with optimization levels runs without graphs (cudagraph_mode NONE unless one is given):
  // eager for the speed estimate too, as --enforce-eager.
  if (deployment.graph_capture.optimization_level == 0 && !deployment.graph_capture.mode && eng.applies(eng.optimization_levels)) {
    deployment.mode = estimate::ExecutionMode::eager;
    r.assumptions.push_back(format("-O0 on %s: cudagraph_mode NONE (vLLM OPTIMIZATION_LEVEL_00), no graphs and eager decode", eng.id.c_str()));
  }
  note("dtype", f.dtype, f.dtype ? f.dtype->value : "");
  r.model = in.model;
  PF_TRY(dtype_ok, apply_model_dtype(f, dev, r.model, r));
  (void)dtype_ok;
  // Issue 16 (quant33): --allow-deprecated-quantization, a flag of vLLM 0.14.0 on (argparse refuses it before).
  if (const auto& allow = f.allow_deprecated_quantization; allow && allow->value) {
    if (eng.engine == "vllm" || eng.engine == "vllm-ascend") {
      if (const auto& catalog = engine::shipped_flag_versions(); catalog) {
        const std::vector<engine::GivenFlag> given = {{"--allow-deprecated-quantization", ""}};
        if (const std::string refusal = engine::unrecognized_flags_refusal(*catalog, eng.engine, eng.rule_version(), given); !refusal.empty())
          return make_error(ErrorKind::invalid_argument, format("%s: %s (%s %s: %s)", allow->origin.c_str(), refusal.c_str(), eng.engine.c_str(),
                                                                eng.rule_version().text().c_str(), catalog->origin.c_str()));
      }
    }
    r.deprecated_quantization = engine::DeprecatedQuantization::allowed;
    r.provenance.push_back("allow_deprecated_quantization true from " + allow->origin);
  }
  r.device = std::move(dev);
  r.engine = std::move(eng);
  r.overheads = *oh;
  r.deployment = std::move(deployment);
  return r;
}

InterconnectBand across_interconnects(const Inputs& in, const Catalogs& catalogs, const Resolved& resolved) {
  InterconnectBand band;
  if (resolved.interconnect_alternatives.empty()) return band;
  std::vector<engine::Interconnect> domains = {resolved.deployment.interconnect};
  domains.insert(domains.end(), resolved.interconnect_alternatives.begin(), resolved.interconnect_alternatives.end());
  bool any_kv = false;
  for (const auto ic : domains) {
    Inputs at = in;
    at.flags.interconnect = Given<std::string>{engine::interconnect_name(ic), "interconnect band"};
    auto r = resolve_deployment(at, catalogs);
    if (!r) continue;
    r->deployment.explain = false;  // numbers and verdicts only
    const auto e = estimate::estimate_fit(r->model, r->device, r->engine, r->overheads, r->deployment);
    band.points.push_back({engine::interconnect_name(ic), ic == resolved.deployment.interconnect, e.fits, e.failure, e.kv_tokens, e.available_kv_bytes,
                           e.nccl_buffer_bytes, e.allreduce_workspace_bytes, e.max_concurrency});
    band.max_model_len = e.max_model_len;
    if (e.fits) ++band.fitting;
    band.available_kv_min_bytes = band.points.size() == 1 ? e.available_kv_bytes : std::min(band.available_kv_min_bytes, e.available_kv_bytes);
    band.available_kv_max_bytes = band.points.size() == 1 ? e.available_kv_bytes : std::max(band.available_kv_max_bytes, e.available_kv_bytes);
    if (e.num_blocks > 0) {
      band.kv_tokens_min = any_kv ? std::min(band.kv_tokens_min, e.kv_tokens) : e.kv_tokens;
      band.kv_tokens_max = any_kv ? std::max(band.kv_tokens_max, e.kv_tokens) : e.kv_tokens;
      any_kv = true;
    }
  }
  if (band.points.size() < 2) return InterconnectBand{};
  return band;
}

}  // namespace preflight::deploy
