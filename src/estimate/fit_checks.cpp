// The layout and quantization checks a fit makes before sizing anything (fit_checks.hpp).
#include "estimate/fit_checks.hpp"
#include "estimate/fit_terms.hpp"

#include <cctype>

#include "base/text.hpp"
#include "base/units.hpp"
#include "engine/scheduler_checks.hpp"
#include "engine/version_label.hpp"
#include "engine/vllm_gguf_architectures.hpp"
#include "engine/vllm_gguf_types.hpp"
#include "model/gguf_reader.hpp"

namespace preflight::estimate::checks {

using model::ModelSpec;

// Parallel layout checks (vLLM ParallelConfig / model verify_with_parallel_config); false when refused.
bool layout_accepted(FitEstimate& e, const ModelSpec& m, const Deployment& dep) {
  if (std::string why = decode_context_parallel_rejection(m, e.tensor_parallel_size, dep.decode_context_parallel_size); !why.empty()) {
    e.failure = Failure::invalid_layout;
    e.failure_message = std::move(why);
    return false;
  }
  const int64_t tp = e.tensor_parallel_size, pp = e.pipeline_parallel_size;
  if (m.num_attention_heads % tp != 0) {
    e.failure = Failure::invalid_layout;
    e.failure_message = format("ValueError: Total number of attention heads (%lld) must be divisible by tensor parallel size (%lld).",
                               static_cast<long long>(m.num_attention_heads), static_cast<long long>(tp));
    return false;
  }
  // Every expert-parallel rank must hold at least one routed expert (vLLM determine_expert_map gives
  // num_experts // ep_size to each rank).
  if (e.expert_parallel_size > 1 && m.num_experts > 0 && e.expert_parallel_size > m.num_experts) {
    e.failure = Failure::invalid_layout;
    e.failure_message = format("ValueError: expert parallel size (%lld = data_parallel_size %lld x tensor_parallel_size %lld) is larger than the number of "
                               "experts (%lld): every expert-parallel rank must hold at least one expert",
                               static_cast<long long>(e.expert_parallel_size), static_cast<long long>(e.data_parallel_size), static_cast<long long>(tp),
                               static_cast<long long>(m.num_experts));
    return false;
  }
  if (m.num_hidden_layers < pp) {
    e.failure = Failure::invalid_layout;
    e.failure_message = format("ValueError: pipeline parallel size (%lld) is larger than the number of layers (%lld)", static_cast<long long>(pp),
                               static_cast<long long>(m.num_hidden_layers));
    return false;
  }
  // Issue 15: VLLM_PP_LAYER_PARTITION must name every stage and every layer; heterogeneous stages one card each.
  if (pp > 1) {
    if (auto split = pp_layer_partition(m.num_hidden_layers, pp, dep.pp_layer_partition); !split) {
      e.failure = Failure::invalid_layout;
      e.failure_message = split.error().message;
      return false;
    }
  }
  if (!dep.stage_devices.empty() && static_cast<int64_t>(dep.stage_devices.size()) != pp) {
    e.failure = Failure::invalid_layout;
    e.failure_message = format("%zu stage devices for pipeline parallel size %lld: expected one per stage", dep.stage_devices.size(), static_cast<long long>(pp));
    return false;
  }
  return true;
}

namespace {

// The transformers config class an engine message names ('Qwen3VLConfig' object has no attribute ...): the model class
// of config.json's "architectures" without its task suffix (transformers names XForCausalLM's and
// XForConditionalGeneration's config XConfig: Qwen3MoeForCausalLM -> Qwen3MoeConfig, Qwen3VLForConditionalGeneration ->
// Qwen3VLConfig as seeds/001 section 4 prints it, DeepseekV3ForCausalLM -> DeepseekV3Config). The suffix starts at the
// last "For" followed by a capital.
std::string config_class_name(const std::string& architecture) {
  if (architecture.empty()) return "PretrainedConfig";
  size_t cut = std::string::npos;
  for (size_t at = architecture.find("For"); at != std::string::npos; at = architecture.find("For", at + 1))
    if (at > 0 && at + 3 < architecture.size() && std::isupper(static_cast<unsigned char>(architecture[at + 3]))) cut = at;
  return architecture.substr(0, cut) + "Config";
}

// What vLLM raises first for m's GGUF tensors whose ggml type the version does not run: a linear or embedding layer at load
// (where the version checks there), else the first such tensor in the profile run; "" when it runs them all or no list
// covers the version. `at_load`: the first (vLLM stops before 'Model loading took'), else in the profile run.
struct GgufTypeStop {
  std::string message;
  bool at_load = false;
};
GgufTypeStop gguf_type_refusal(const ModelSpec& m, const engine::EngineProfile& engine) {
  const auto& catalog = engine::shipped_vllm_gguf_types();
  if (!catalog) return {catalog.error().message, false};
  const engine::VllmGgufTypeList* list = engine::vllm_gguf_type_list(*catalog, engine.engine, engine.rule_version());
  if (!list) return {};
  const auto type_id = [](const std::string& name) {
    for (uint32_t id = 0; id < 256; ++id)
      if (name == model::ggml_type_name(id)) return id;
    return 0u;
  };
  const model::WeightGroup* at_load = nullptr;
  const model::WeightGroup* at_run = nullptr;
  for (const auto& g : m.weights) {
    if (g.stored_format.empty() || list->takes(g.stored_format)) continue;
    if (!at_load && list->load_check && !g.expert) at_load = &g;
    if (!at_run) at_run = &g;
  }
  const model::WeightGroup* first = at_load ? at_load : at_run;
  if (!first) return {};
  return {engine::vllm_gguf_type_refusal(*catalog, *list, first->stored_format, type_id(first->stored_format), first->module, first->expert), at_load != nullptr};
}

// Issue 16 (gguf36): the first line of `lines` that starts as the engine's weights line ("Model loading took ..."), or
// lines.size().
size_t weights_line_index(const std::vector<std::string>& lines, const engine::EngineProfile& engine) {
  const std::string head = engine.weights_line.substr(0, engine.weights_line.find('{'));
  if (head.empty()) return lines.size();
  for (size_t i = 0; i < lines.size(); ++i)
    if (lines[i].compare(0, head.size(), head) == 0) return i;
  return lines.size();
}

}  // namespace

// Quantization accepted by this engine on this platform; false when refused.
bool quantization_accepted(FitEstimate& e, const ModelSpec& m, const engine::EngineProfile& engine, const Deployment& dep) {
  const std::string flag = !dep.quantization.empty() ? to_lower(dep.quantization) : to_lower(m.quant.method);
  e.quantization = flag;
  // GGUF is read by vLLM's own loader on CUDA / ROCm (and by llama.cpp); vLLM-Ascend's platform refuses it like any method
  // outside its list (quant30: "gguf quantization is currently not supported in npu.").
  if (!flag.empty() && (flag != "gguf" || engine.platform == "npu") && !engine.accepts_quantization(flag)) {
    e.failure = Failure::unsupported_quantization;
    std::string msg = engine.quantization_rejection;
    const auto pos = msg.find("{q}");
    if (pos != std::string::npos) msg.replace(pos, 3, flag);
    e.failure_message = "pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig\n  Value error, " + msg;
    return false;
  }
  // Issue 16 (gguf36): a GGUF checkpoint of a model type vLLM's GGUF loader maps to no GGUF architecture stops before
  // the weights load (engine/vllm_gguf_architectures): a file's own config in transformers' GGUF reader, a Hugging Face
  // config (a variant of the model) in the loader. A VL model's top-level model_type is not kept (ModelSpec holds the
  // text config's): not checked. Its tensor types are checked after sizing (gguf_type_stop: vLLM reads them first).
  if (flag == "gguf" && engine.engine == "vllm" && m.vision_hidden_size == 0 && m.vision_params == 0) {
    const auto& archs = engine::shipped_vllm_gguf_architectures();
    if (!archs) {
      e.failure = Failure::unsupported_quantization;
      e.failure_message = archs.error().message;
      return false;
    }
    if (std::string why = engine::vllm_gguf_architecture_refusal(*archs, engine.engine, engine.rule_version(), m.model_type, m.quant.method == "gguf");
        !why.empty()) {
      e.failure = Failure::unsupported_quantization;
      e.failure_message = std::move(why);
      return false;
    }
  }
  // Issue 16: a ModelOpt checkpoint whose untied head is quantized loads only on the versions that give ParallelLMHead
  // ModelOpt's linear method (engine.modelopt_lm_head_quantized); elsewhere the loader refuses the head's scales.
  if (engine.modelopt_lm_head_quantized && starts_with(flag, "modelopt") && !m.tie_word_embeddings && terms::deployed_scheme(m, dep).lm_head_quantized &&
      !engine.applies(engine.modelopt_lm_head_quantized)) {
    e.failure = Failure::unsupported_quantization;
    std::string msg = engine.modelopt_lm_head_load_error;
    const auto pos = msg.find("{arch}");
    if (pos != std::string::npos) msg.replace(pos, 6, m.architecture.empty() ? std::string("the model") : m.architecture);
    e.failure_message = msg;
    return false;
  }
  if (flag == "fp8" && !engine.fp8_requires.empty()) {
    e.failure = Failure::unsupported_quantization;
    std::string msg = engine.fp8_failure;
    const auto pos = msg.find("{config_class}");
    if (pos != std::string::npos) msg.replace(pos, 14, config_class_name(m.architecture));
    e.failure_message = msg;
    return false;
  }
  return true;
}

Status scheduler_batch_accepted(FitEstimate& e, const engine::EngineProfile& engine, const Deployment& dep) {
  const auto& checks = engine::shipped_scheduler_checks();
  if (!checks) return checks.error();
  // EngineArgs (from 0.10.1, V1): max_num_seqs = min(default, max_num_batched_tokens) when --max-num-seqs is not given.
  if (const auto* cap = checks->find(engine, "cap_default"); cap && !dep.max_num_seqs && !engine.v0_lines && e.max_num_seqs > e.max_num_batched_tokens) {
    if (dep.explain)
      e.assumptions.push_back(format("max_num_seqs %lld = max_num_batched_tokens: %s %s lowers its default max_num_seqs (%lld) to max_num_batched_tokens "
                                     "(data/engines/scheduler_checks.json %s)",
                                     static_cast<long long>(e.max_num_batched_tokens), engine.engine.c_str(), engine::version_label(engine).c_str(),
                                     static_cast<long long>(e.max_num_seqs), cap->id.c_str()));
    e.max_num_seqs = e.max_num_batched_tokens;
  }
  const auto* refuse = checks->find(engine, "refuse");
  if (!refuse || e.max_num_batched_tokens >= e.max_num_seqs) return Ok{};
  std::string message = refuse->message;
  for (const auto& [name, value] : {std::pair{"{max_num_batched_tokens}", e.max_num_batched_tokens}, std::pair{"{max_num_seqs}", e.max_num_seqs}})
    if (const auto at = message.find(name); at != std::string::npos) message.replace(at, std::string(name).size(), std::to_string(value));
  // Named by the setting the deployment gave (the flag, a case's field, a log's argument): the other is the engine's default.
  const char* named = dep.max_num_seqs ? "--max-num-seqs" : "--max-num-batched-tokens";
  return make_error(ErrorKind::invalid_argument,
                    format("max_num_seqs %lld (%s) exceeds max_num_batched_tokens %lld (%s), and %s %s stops before loading anything: %s "
                           "(vLLM SchedulerConfig; data/engines/scheduler_checks.json %s); give --max-num-batched-tokens of at least %lld or a smaller --max-num-seqs",
                           static_cast<long long>(e.max_num_seqs), dep.max_num_seqs ? "given" : "the engine's default",
                           static_cast<long long>(e.max_num_batched_tokens), dep.max_num_batched_tokens ? "given" : "the engine's default on this card",
                           engine.engine.c_str(), engine::version_label(engine).c_str(), message.c_str(), refuse->id.c_str(), static_cast<long long>(e.max_num_seqs)),
                    named);
}

// Issue 16 (spec35, gguf36): a GGUF file holding a tensor of a ggml type vLLM's GGUF kernels lack (engine/vllm_gguf_types).
// vLLM reads every tensor first, so the weights are sized and a weights OOM while loading comes before it; it then stops
// ahead of every later verdict (the profile run's, the KV cache's): at load for a linear or embedding layer (from 0.9.0:
// no 'Model loading took' line), else in the profile run (that line printed, nothing after it).
void gguf_type_stop(FitEstimate& e, const ModelSpec& m, const engine::EngineProfile& engine, const Deployment& dep) {
  if (engine.engine != "vllm" || m.quant.method != "gguf" || e.failure == Failure::weights_oom) return;  // no copy on a plan's other rows
  if (!dep.quantization.empty() && to_lower(dep.quantization) != "gguf") return;
  GgufTypeStop stop = gguf_type_refusal(m, engine);
  if (stop.message.empty()) return;
  e.fits = false;
  e.failure = Failure::unsupported_quantization;
  e.failure_message = std::move(stop.message);
  const size_t at = weights_line_index(e.lines, engine);
  if (at < e.lines.size()) e.lines.resize(stop.at_load ? at : at + 1);
}

}  // namespace preflight::estimate::checks
