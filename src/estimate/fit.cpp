// Memory arithmetic of vLLM V1 and vllm-ascend start-up, per shared/reference/engine-memory-accounting.md:
//   requested = total x util (sec 1.1; ceil on CUDA >= 0.14)
//   available = requested - weights - activation peak - non-torch increase [- graph estimate]   (1.2, 4.2)
//   pages, groups and num_blocks (sec 2-4), printed tokens and concurrency (2.3, 2.4).
// Weights are exact from the model's shapes and storage formats; activation peak, non-torch memory
// and graph memory are modelled from their mechanism with per-platform fitted factors (engines.json).
#include "estimate/fit.hpp"

#include <algorithm>
#include <cmath>

#include "base/checked.hpp"
#include "base/text.hpp"
#include "base/units.hpp"

namespace preflight::estimate {

using model::LayerKind;
using model::ModelSpec;
using model::Shard;
using model::WeightFormat;

const char* failure_name(Failure failure) {
  switch (failure) {
    case Failure::none: return "none";
    case Failure::invalid_layout: return "invalid_layout";
    case Failure::unsupported_quantization: return "unsupported_quantization";
    case Failure::weights_oom: return "weights_oom";
    case Failure::kv_negative: return "kv_negative";
    case Failure::max_model_len_too_large: return "max_model_len_too_large";
  }
  return "unknown";
}

model::QuantScheme scheme_for_flag(const std::string& raw, const model::QuantScheme& checkpoint) {
  const std::string q = to_lower(raw);
  if (q.empty() || q == to_lower(checkpoint.method) || (q == "ascend" && checkpoint.method == "ascend")) return checkpoint;
  model::QuantScheme s;
  s.method = q;
  s.source = "--quantization " + raw;
  s.ignore = {"lm_head", "embed_tokens", "mlp.gate", "shared_expert_gate", "visual", "conv1d"};
  if (q == "ascend") {
    s.linear_format = WeightFormat::modelslim_w8a8_dynamic;
    s.expert_format = WeightFormat::modelslim_w8a8_dynamic;
    s.detail = "ModelSlim W8A8 assumed for every linear layer (no quant_model_description.json read)";
  } else if (q == "fp8" || q == "fbgemm_fp8" || q == "ptpc_fp8") {
    s.linear_format = s.expert_format = WeightFormat::fp8_block;
    s.detail = "fp8 with 128x128 block scales assumed";
  } else if (q == "awq" || q == "gptq" || q == "awq_marlin" || q == "gptq_marlin") {
    s.linear_format = s.expert_format = WeightFormat::int4_group;
    s.group_size = 128;
    s.group_zero_point = q.rfind("awq", 0) == 0;
    s.detail = "int4 group 128 assumed";
  } else if (q == "compressed-tensors") {
    s.linear_format = s.expert_format = WeightFormat::int8_channel;
    s.detail = "compressed-tensors int8 per-channel assumed";
  } else if (q == "mxfp4") {
    s.expert_format = WeightFormat::mxfp4;
    s.detail = "mxfp4 experts assumed";
  } else if (q == "modelopt_fp4" || q == "nvfp4") {
    s.linear_format = s.expert_format = WeightFormat::nvfp4;
    s.group_size = 16;
    s.detail = "NVFP4 assumed";
  } else {
    s.detail = "quantization '" + raw + "' not modelled; weights in model dtype";
  }
  return s;
}

int cache_dtype_bytes(const std::string& kv_cache_dtype, const ModelSpec& m) {
  const std::string k = to_lower(kv_cache_dtype);
  if (k.rfind("fp8", 0) == 0 || k == "int8") return 1;
  if (k == "fp16" || k == "bf16" || k == "float16" || k == "bfloat16") return 2;
  return model::dtype_bits(m.dtype) / 8;
}

double weight_rank_share(const model::WeightGroup& g, int64_t tp) {
  switch (g.shard) {
    case Shard::replicated: return 1.0;
    case Shard::kv_heads: {
      if (g.kv_heads <= 0) return 1.0 / static_cast<double>(tp);
      const double per_rank = std::max<double>(1.0, static_cast<double>(g.kv_heads) / static_cast<double>(tp));
      return per_rank / static_cast<double>(g.kv_heads);
    }
    default: return 1.0 / static_cast<double>(tp);
  }
}

bool is_layer_weight(const model::WeightGroup& g) { return g.module.find("layers.*") != std::string::npos; }

ModelSpec sized_model(const ModelSpec& m, const Deployment& dep) {
  ModelSpec sized = m;
  sized.quant = dep.quant_scheme ? *dep.quant_scheme : scheme_for_flag(dep.quantization, m.quant);
  return sized;
}

namespace {

int64_t round_up(int64_t v, int64_t to) { return to > 1 ? (v + to - 1) / to * to : v; }

// Bytes an MXFP4 expert group takes once the engine has laid it out for its kernel (padding, a kept copy
// of the swizzled scales, fp32 biases); nullopt when the group is not an MXFP4 expert weight or bias.
std::optional<double> mxfp4_loaded_bytes(const model::ModelSpec& m, const model::WeightGroup& g, const engine::Mxfp4Layout& l, int64_t tp) {
  if (!g.expert) return std::nullopt;
  // The kernel pads each TP rank's slice of the intermediate size (vLLM mxfp4.py create_weights pads
  // intermediate_size_per_partition); expressed over all ranks so the TP share below divides it back.
  const int64_t full_i = m.moe_intermediate_size > 0 ? m.moe_intermediate_size : m.intermediate_size;
  const int64_t ranks = std::max<int64_t>(1, tp);
  const int64_t I = round_up(static_cast<int64_t>(ceil_div(static_cast<uint64_t>(full_i), static_cast<uint64_t>(ranks))), l.pad_intermediate) * ranks;
  const int64_t H = round_up(m.hidden_size, l.pad_hidden);
  const double E = static_cast<double>(g.count);
  auto fp4 = [](int64_t rows, int64_t cols) { return static_cast<double>(rows) * static_cast<double>(cols) / 2.0 + static_cast<double>(rows) * std::ceil(static_cast<double>(cols) / 32.0); };
  if (!g.linear) {  // biases: gate_up [2I], down [H]
    const int64_t rows = ends_with(g.module, "gate_up_proj.bias") ? 2 * I : ends_with(g.module, "down_proj.bias") ? H : 0;
    if (rows == 0) return std::nullopt;
    return E * static_cast<double>(rows) * (l.bias_fp32 ? 4.0 : static_cast<double>(model::dtype_bits(m.dtype) / 8));
  }
  if (model::module_format(m.quant, g.module, true) != model::WeightFormat::mxfp4) return std::nullopt;
  const bool down = ends_with(g.module, "down_proj");
  const int64_t rows = down ? H : I, cols = down ? I : H;
  double bytes = E * fp4(rows, cols);
  if (l.scale_copy_pad_n > 0)  // swizzled scales beside the originals: w13 is [2I, H], w2 [H, I]; N padded
    bytes += E * (down ? static_cast<double>(round_up(H, l.scale_copy_pad_n)) : static_cast<double>(round_up(2 * I, l.scale_copy_pad_n)) / 2.0) *
             std::ceil(static_cast<double>(cols) / 32.0);
  return bytes;
}

struct GroupPlan {
  std::vector<KvGroup> groups;
  int64_t group_size = 0;
  int64_t page_bytes = 0;
  int64_t block_size = 0;
};

}  // namespace

int64_t kv_capacity_tokens(const FitEstimate& e) {
  if (e.num_blocks <= 0 || e.groups.empty()) return 0;
  // Largest L whose per-request blocks fit in num_blocks.
  int64_t lo = 0, hi = std::max<int64_t>(1, e.num_blocks) * std::max<int64_t>(1, e.block_size) + 1;
  auto demand = [&](int64_t L) {
    int64_t blocks = 0;
    for (const auto& g : e.groups) {
      const int64_t n_groups = ceil_div(static_cast<uint64_t>(g.layers), static_cast<uint64_t>(std::max<int64_t>(1, e.group_size)));
      if (g.kind == "state") blocks += n_groups * g.blocks_per_request;
      else blocks += n_groups * static_cast<int64_t>(ceil_div(static_cast<uint64_t>(L), static_cast<uint64_t>(e.block_size)));
    }
    return blocks;
  };
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo + 1) / 2;
    if (demand(mid) <= e.num_blocks) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

FitEstimate estimate_fit(const ModelSpec& m, const device::DeviceSpec& device, const engine::EngineProfile& engine,
                         const engine::Overheads& oh, const Deployment& dep) {
  FitEstimate e;
  e.engine_id = engine.id;
  e.device_id = device.id;
  const int64_t tp = std::max<int64_t>(1, dep.tensor_parallel_size);
  const int64_t pp = std::max<int64_t>(1, dep.pipeline_parallel_size);
  e.tensor_parallel_size = tp;
  e.pipeline_parallel_size = pp;
  e.total_bytes = dep.device_total_bytes.value_or(device.usable_total_bytes());
  if (!dep.device_total_bytes && !device.runtime_total_bytes) {
    e.assumptions.push_back(format("%s: runtime total memory unknown; used the nominal %.2f GiB", device.id.c_str(), bytes_to_gib(device.memory_bytes)));
  }
  e.gpu_memory_utilization = dep.gpu_memory_utilization.value_or(engine.default_gpu_memory_utilization);
  if (!dep.gpu_memory_utilization) e.assumptions.push_back(format("gpu_memory_utilization %.2f (%s default)", e.gpu_memory_utilization, engine.id.c_str()));
  // vLLM get_batch_defaults: devices of >= 70 GiB that are not A100 get the larger batch defaults;
  // NPUs never do (get_device_total_memory raises there, so device memory reads as 0).
  const bool large_device = e.total_bytes >= 70.0 * k_gib && device.family != "ampere" && engine.platform != "npu";
  e.max_num_batched_tokens = dep.max_num_batched_tokens.value_or(large_device ? engine.max_num_batched_tokens_large_device : engine.max_num_batched_tokens);
  e.max_num_seqs = dep.max_num_seqs.value_or(large_device ? engine.max_num_seqs_large_device : engine.max_num_seqs);
  // V0 without chunked prefill (its default up to 32K context) schedules a whole prompt at once.
  if (const int64_t len = dep.max_model_len.value_or(m.max_position_embeddings);
      !dep.max_num_batched_tokens && engine.unchunked_prefill_up_to > 0 && len > 0 && len <= engine.unchunked_prefill_up_to)
    e.max_num_batched_tokens = std::max(e.max_num_batched_tokens, len);
  e.kv_cache_dtype = dep.kv_cache_dtype.empty() ? "auto" : dep.kv_cache_dtype;

  // Parallel layout checks (vLLM ParallelConfig / model verify_with_parallel_config).
  if (m.num_attention_heads % tp != 0) {
    e.failure = Failure::invalid_layout;
    e.failure_message = format("ValueError: Total number of attention heads (%lld) must be divisible by tensor parallel size (%lld).",
                               static_cast<long long>(m.num_attention_heads), static_cast<long long>(tp));
    return e;
  }
  if (m.num_hidden_layers < pp) {
    e.failure = Failure::invalid_layout;
    e.failure_message = format("ValueError: pipeline parallel size (%lld) is larger than the number of layers (%lld)", static_cast<long long>(pp),
                               static_cast<long long>(m.num_hidden_layers));
    return e;
  }

  // Quantization accepted by this engine on this platform.
  const std::string flag = !dep.quantization.empty() ? to_lower(dep.quantization) : to_lower(m.quant.method);
  e.quantization = flag;
  if (!flag.empty() && flag != "gguf" && !engine.accepts_quantization(flag)) {
    e.failure = Failure::unsupported_quantization;
    std::string msg = engine.quantization_rejection;
    const auto pos = msg.find("{q}");
    if (pos != std::string::npos) msg.replace(pos, 3, flag);
    e.failure_message = "pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig\n  Value error, " + msg;
    return e;
  }
  if (flag == "fp8" && !engine.fp8_requires.empty()) {
    e.failure = Failure::unsupported_quantization;
    std::string msg = engine.fp8_failure;
    const auto pos = msg.find("{config_class}");
    if (pos != std::string::npos) msg.replace(pos, 14, m.architecture.empty() ? std::string("Config") : m.architecture + "Config");
    e.failure_message = msg;
    return e;
  }
  ModelSpec sized = sized_model(m, dep);
  if (sized.quant.method != m.quant.method && (!dep.quantization.empty() || dep.quant_scheme)) e.assumptions.push_back(sized.quant.detail);
  e.weight_scheme = sized.quant.quantized() ? sized.quant.detail : std::string(model::dtype_name(sized.dtype));

  // Weights per rank (the stage with the most layers when PP > 1).
  // vLLM's get_pp_indices gives the remainder layers to the stages before the last, so the first stage
  // holds ceil(n / pp) layers and the embedding, the last floor(n / pp) layers and the head.
  const int64_t n_layers = std::max<int64_t>(1, m.num_hidden_layers);
  const int64_t first_layers = static_cast<int64_t>(ceil_div(static_cast<uint64_t>(n_layers), static_cast<uint64_t>(pp)));
  const int64_t last_layers = std::max<int64_t>(1, n_layers / pp);
  double computed_total = 0, computed_rank = 0, computed_last = 0;
  const engine::Mxfp4Layout* mxfp4 = sized.quant.expert_format == model::WeightFormat::mxfp4 ? engine.mxfp4_layout_for(device.id, device.family) : nullptr;
  double mxfp4_extra = 0;  // bytes the kernel layout adds over the checkpoint, all ranks
  for (const auto& g : sized.weights) {
    if (g.part == model::Part::mtp) continue;
    const double stored = model::weight_group_bytes(sized, g);
    computed_total += stored;
    double bytes = stored;
    if (mxfp4) {
      if (const auto loaded = mxfp4_loaded_bytes(sized, g, *mxfp4, tp)) {
        bytes = *loaded;
        mxfp4_extra += bytes - stored;
      }
    }
    const double base = weight_rank_share(g, tp);
    double share = base, last_share = base;
    if (is_layer_weight(g) && g.part == model::Part::text) {
      share *= static_cast<double>(first_layers) / static_cast<double>(n_layers);
      last_share *= static_cast<double>(last_layers) / static_cast<double>(n_layers);
    } else if (pp > 1 && g.module == "lm_head") {
      share = 0;  // on the last stage; the first holds the embedding
    } else if (pp > 1 && (g.part == model::Part::vision || (g.module == "model.embed_tokens" && !m.tie_word_embeddings))) {
      last_share = 0;  // the encoder and the embedding run on the first stage (a tied head keeps a copy on the last)
    }
    computed_rank += bytes * share;
    computed_last += bytes * last_share;
  }
  double weights = computed_rank;
  double weights_last = computed_last;
  std::string weights_rule = "sum over weight shapes x storage format, sharded by TP";
  if (mxfp4) {
    weights_rule += format("; MXFP4 experts as %s lays them out (+%.2f GiB: %s)", mxfp4->backend.c_str(), bytes_to_gib(mxfp4_extra), mxfp4->source.c_str());
    computed_total += mxfp4_extra;
  }
  if (m.exact_weight_bytes && computed_total > 0 && dep.quantization.empty() && !dep.quant_scheme) {
    const double exact = static_cast<double>(*m.exact_weight_bytes) + mxfp4_extra;
    weights = computed_rank * exact / computed_total;
    weights_last = computed_last * exact / computed_total;
    weights_rule = "exact checkpoint bytes (headers) x this rank's share";
  }
  // Persistent buffers allocated at load: rotary cos/sin cache (max_position x rotary_dim).
  if (m.max_position_embeddings > 0 && m.rotary_dim > 0) {
    const double element = oh.rope_cache_bytes_per_element;
    const double rope = static_cast<double>(m.max_position_embeddings) * static_cast<double>(m.rotary_dim) * element;
    weights += rope;
    weights_last += rope;
    weights_rule += format(" + rotary caches %lld x %lld x %.0f B (%s)", static_cast<long long>(m.max_position_embeddings),
                           static_cast<long long>(m.rotary_dim), element, oh.rope_cache_source.c_str());
  }
  // Qwen3-VL deepstack: one max_num_batched_tokens x text-hidden buffer per level, created with the
  // model (vLLM qwen3_vl.py __init__) on the stage that holds the encoder, so inside "Model loading took".
  if (m.vision_deepstack_levels > 0 && m.hidden_size > 0) {
    const double buffers = static_cast<double>(m.vision_deepstack_levels) * static_cast<double>(e.max_num_batched_tokens) *
                           static_cast<double>(m.hidden_size) * static_cast<double>(model::dtype_bits(m.dtype) / 8);
    weights += buffers;
    if (pp == 1) weights_last += buffers;
    weights_rule += format(" + deepstack buffers %lld levels x %lld batched tokens x hidden %lld", static_cast<long long>(m.vision_deepstack_levels),
                           static_cast<long long>(e.max_num_batched_tokens), static_cast<long long>(m.hidden_size));
  }
  e.weights_bytes = weights;
  e.terms.push_back({"weights", weights, 0, weights_rule});

  // Activation peak of the profile run. Its three phases run one after another, so the peak is the
  // largest of: the text forward over max_num_batched_tokens; the vision encoder over its profiling
  // budget; the sampler dummy run over min(max_num_seqs, batched tokens) rows of fp32 logits, with the
  // forward's hidden states still held. The sampler's multiple is the engine version's sampling path
  // (full sort ~10 copies, FlashInfer/Triton ~3, NPU logits only); it runs on every TP rank.
  const double b = static_cast<double>(model::dtype_bits(m.dtype) / 8);
  const double mlp_width = m.num_experts > 0 ? static_cast<double>(m.moe_intermediate_size * m.num_experts_per_tok) : static_cast<double>(m.intermediate_size);
  const int64_t sampler_rows = std::min(e.max_num_seqs, e.max_num_batched_tokens);
  e.activation_text_unit_bytes = static_cast<double>(e.max_num_batched_tokens) * (static_cast<double>(m.hidden_size) + 2.0 * mlp_width / static_cast<double>(tp)) * b;
  e.activation_sampler_unit_bytes = static_cast<double>(sampler_rows) * static_cast<double>(m.vocab_size) * 4.0;
  const double text_peak = oh.activation_bytes_per_batched_token_factor * e.activation_text_unit_bytes;
  e.activation_text_bytes = text_peak;
  const bool has_vision = m.vision_params > 0 || m.vision_hidden_size > 0;
  // max_model_len: the flag, else the model's own (it also sizes Qwen2-VL's dummy video below).
  const int64_t L = dep.max_model_len.value_or(m.max_position_embeddings > 0 ? m.max_position_embeddings : 4096);
  const double held_hidden = static_cast<double>(e.max_num_batched_tokens) * static_cast<double>(m.hidden_size) * b;
  e.activation_sampler_bytes = engine.sampler_logit_copies * e.activation_sampler_unit_bytes + engine.sampler_fixed_bytes + held_hidden;
  double vision_peak = 0, encoder_held = 0;
  const bool text_only = has_vision && dep.no_images && (dep.no_video || m.vision_video_max_groups == 0);
  if (text_only) e.assumptions.push_back("--limit-mm-per-prompt allows no image or video: the profile run is text only");
  if (engine.profiles_mm_encoder && !dep.skip_mm_profiling && has_vision && !text_only) {
    // vLLM's encoder budget: max(max_num_batched_tokens, tokens of the largest image), profiled with as
    // many largest images as fit in it (at least one); towers whose limit is not known: the budget itself.
    const int64_t per_image = m.vision_max_tokens_per_image;
    // The modality with the most tokens per item is profiled: a dummy video of as many largest-image groups
    // as max_model_len holds (capped) where the processor makes one, else the largest image.
    int64_t per_item = per_image;
    bool video = false;
    if (per_image > 0 && m.vision_video_max_groups > 0 && !dep.no_video) {
      const int64_t groups = std::clamp<int64_t>(L / per_image, 1, m.vision_video_max_groups);
      if (groups * per_image > per_image || dep.no_images) {
        per_item = groups * per_image;
        video = true;
      }
    }
    e.encoder_profiles_video = video;
    const int64_t budget = std::max(e.max_num_batched_tokens, per_item);
    const int64_t encoder_tokens = per_item > 0 ? std::max<int64_t>(1, budget / per_item) * per_item : budget;
    e.encoder_budget_tokens = budget;
    e.encoder_items = per_item > 0 ? encoder_tokens / per_item : 0;
    if (video)
      e.assumptions.push_back(format("the profile run encodes one dummy video of %lld tokens (%lld frames of the largest image; max_model_len %lld), larger than an image's %lld; "
                                     "--limit-mm-per-prompt '{\"video\": 0}' profiles the image instead",
                                     static_cast<long long>(per_item), static_cast<long long>(2 * per_item / per_image), static_cast<long long>(L),
                                     static_cast<long long>(per_image)));
    const double patches = static_cast<double>(encoder_tokens * std::max<int64_t>(1, m.vision_patches_per_token));
    // Per rank: the tower's attention heads and MLP are split by TP (vLLM's parallel linears; q, k, v and
    // the MLP's intermediate), the residual stream of [patches, hidden] is not.
    e.activation_vision_unit_bytes = patches *
                                     ((static_cast<double>(m.vision_intermediate_size) + 3.0 * static_cast<double>(m.vision_hidden_size)) / static_cast<double>(tp) +
                                      static_cast<double>(m.vision_hidden_size)) * b;
    vision_peak = oh.vision_activation_factor * e.activation_vision_unit_bytes;
    // The encoder outputs stay in the encoder cache through the text and sampler dummy runs (vLLM
    // profile_run clears it at the end): one text-hidden row per encoder token, and one more per
    // deepstack level.
    encoder_held = static_cast<double>(encoder_tokens) * static_cast<double>(m.hidden_size) *
                   static_cast<double>(1 + m.vision_deepstack_levels) * b;
  }
  e.activation_encoder_held_bytes = encoder_held;
  e.activation_vision_bytes = vision_peak;
  if (dep.skip_mm_profiling && has_vision)
    e.assumptions.push_back("--skip-mm-profiling: the vision encoder is left out of the profile run, so images at serve time draw on the 1 - util headroom");
  e.activation_bytes = std::max({text_peak + encoder_held, vision_peak, e.activation_sampler_bytes + encoder_held});
  // Under PP only the last stage computes logits and samples; the encoder runs on the first.
  const double activation_first = pp > 1 ? std::max(text_peak + encoder_held, vision_peak) : e.activation_bytes;
  const double activation_last = pp > 1 ? std::max(text_peak, e.activation_sampler_bytes) : e.activation_bytes;
  if (pp > 1) e.activation_bytes = activation_first;
  e.terms.push_back({"activation peak", e.activation_bytes, e.activation_bytes * oh.band_fraction,
                     format("max(text forward %.2f GiB = %.1f x %lld batched tokens x (hidden + 2 x mlp/TP) x %.0f B; vision encoder %.2f GiB; "
                            "sampler run %.2f GiB = %.1f x %lld seqs x vocab %lld x fp32 + %.0f MiB + held hidden states (%s))%s",
                            bytes_to_gib(text_peak), oh.activation_bytes_per_batched_token_factor, static_cast<long long>(e.max_num_batched_tokens), b,
                            bytes_to_gib(vision_peak), bytes_to_gib(e.activation_sampler_bytes), engine.sampler_logit_copies, static_cast<long long>(sampler_rows),
                            static_cast<long long>(m.vocab_size), engine.sampler_fixed_bytes / (1024.0 * 1024.0), engine.sampler_source.c_str(),
                            encoder_held > 0 ? format("; text and sampler runs + %.2f GiB of encoder outputs held in the encoder cache", bytes_to_gib(encoder_held)).c_str() : "")});
  e.non_torch_bytes = oh.non_torch_bytes + (tp * pp > 1 ? oh.non_torch_bytes * 0.5 : 0.0);
  // The band of the non-torch term is at least the spread the printed breakdowns show for the platform.
  const double non_torch_band = std::max(e.non_torch_bytes * oh.band_fraction, oh.non_torch_band_bytes);
  e.terms.push_back({"non-torch", e.non_torch_bytes, non_torch_band,
                     "runtime context, communicator buffers and workspaces (fitted; " + oh.evidence + ")"});
  e.graph_in_budget = oh.graph_memory_in_budget.value_or(engine.graph_memory_in_budget);
  e.graph_bytes = dep.mode == ExecutionMode::eager ? 0.0 : oh.graph_bytes;
  e.terms.push_back({"graph capture", e.graph_bytes, e.graph_bytes * oh.band_fraction,
                     dep.mode == ExecutionMode::eager ? "--enforce-eager: no graphs" :
                     (e.graph_in_budget ? "estimated before KV sizing and subtracted from the budget" : "captured after KV allocation, outside the budget (needs the 1 - util headroom)")});

  e.requested_bytes = e.total_bytes * e.gpu_memory_utilization;
  if (engine.requested_ceil) e.requested_bytes = std::ceil(e.requested_bytes);
  double available = e.requested_bytes - e.weights_bytes - e.activation_bytes - e.non_torch_bytes;
  if (e.graph_in_budget && dep.mode == ExecutionMode::graph) available -= e.graph_bytes;
  available = std::floor(available);
  // The last PP stage: fewer layers, the head and the sampler. Its budget in first-stage layer units
  // (blocks scale with the layers a stage caches) decides num_blocks when it is the tighter one.
  double available_blocks = available;
  if (pp > 1 && !dep.kv_cache_memory_bytes) {
    double last = e.requested_bytes - weights_last - activation_last - e.non_torch_bytes;
    if (e.graph_in_budget && dep.mode == ExecutionMode::graph) last -= e.graph_bytes;
    last = std::floor(last);
    available_blocks = std::min(available, last * static_cast<double>(first_layers) / static_cast<double>(last_layers));
    e.provenance.push_back(format("PP %lld: first stage %lld layers + embedding, %.2f GiB available; last stage %lld layers + head + sampler, %.2f GiB",
                                  static_cast<long long>(pp), static_cast<long long>(first_layers), bytes_to_gib(available),
                                  static_cast<long long>(last_layers), bytes_to_gib(last)));
    available = std::min(available, last);  // the lower of the printed lines
  }
  if (dep.kv_cache_memory_bytes) {
    available = available_blocks = *dep.kv_cache_memory_bytes;
    e.assumptions.push_back(format("KV budget given as %.0f bytes (--kv-cache-memory-bytes): profiling skipped", available));
  }
  e.available_kv_bytes = available;
  e.available_kv_band_bytes = dep.kv_cache_memory_bytes ? 0.0 : std::sqrt(std::pow(e.activation_bytes * oh.band_fraction, 2) + std::pow(non_torch_band, 2) +
                                        (e.graph_in_budget ? std::pow(e.graph_bytes * oh.band_fraction, 2) : 0.0));
  e.available_kv_band_high_bytes = e.available_kv_band_bytes;
  if (!dep.kv_cache_memory_bytes && pp == 1 && engine.sampler_logit_copies_if_flashinfer < engine.sampler_logit_copies) {
    // Versions that sample with FlashInfer whenever it is installed: the prediction keeps the native sort,
    // and the high side of the band reaches the FlashInfer path's smaller sampler run.
    const double alt_sampler = engine.sampler_logit_copies_if_flashinfer * e.activation_sampler_unit_bytes + engine.sampler_fixed_bytes + held_hidden;
    const double alt_peak = std::max({text_peak + encoder_held, vision_peak, alt_sampler + encoder_held});
    const double saved = std::max(0.0, e.activation_bytes - alt_peak);
    if (saved > 0) {
      e.available_kv_band_high_bytes = e.available_kv_band_bytes + saved;  // one-sided, added
      e.assumptions.push_back(format("%s samples with FlashInfer when flashinfer is installed (the vLLM Docker images): its sampler run is %.2f GiB instead of the native "
                                     "sort's %.2f, so the KV budget can be up to %.2f GiB larger, which the high end of the band allows for; "
                                     "VLLM_USE_FLASHINFER_SAMPLER=0 makes the native path (this estimate) certain",
                                     engine.id.c_str(), bytes_to_gib(alt_sampler), bytes_to_gib(e.activation_sampler_bytes), bytes_to_gib(saved)));
    }
  }
  e.terms.push_back({"available KV", available, e.available_kv_band_bytes, "requested - weights - activation peak - non-torch" +
                                                                               std::string(e.graph_in_budget && dep.mode == ExecutionMode::graph ? " - graph" : "")});

  // Cache geometry per rank.
  const int cb = cache_dtype_bytes(e.kv_cache_dtype, m);
  int64_t attn_layers = 0, state_layers = 0, sliding_layers = 0;
  int64_t attn_1tok = 0;        // K+V bytes of one token in one attention layer, this rank
  int64_t k_1tok = 0;           // K bytes only (NPU hybrid alignment)
  int64_t state_bytes = 0, conv_bytes = 0, ssm_bytes = 0;
  int64_t sliding_window = 0;
  for (const auto& l : m.layers) {
    if (l.kv_shared) continue;
    switch (l.kind) {
      case LayerKind::full_attention:
      case LayerKind::sliding_attention: {
        const int64_t h = std::max<int64_t>(1, l.num_key_value_heads / tp);
        attn_1tok = h * (l.head_dim_k + l.head_dim_v) * cb;
        k_1tok = h * l.head_dim_k * cb;
        if (l.kind == LayerKind::sliding_attention) { ++sliding_layers; sliding_window = l.sliding_window; }
        else ++attn_layers;
        break;
      }
      case LayerKind::mla_attention:
        attn_1tok = l.mla_cache_dim * cb + (l.indexer_head_dim > 0 ? l.indexer_head_dim + 4 : 0);
        k_1tok = (l.mla_cache_dim) * cb;
        ++attn_layers;
        break;
      case LayerKind::linear_attention:
      case LayerKind::mamba: {
        conv_bytes = (l.conv_channels / tp) * l.conv_len * static_cast<int64_t>(b);
        ssm_bytes = (l.ssm_heads / tp) * l.ssm_head_dim * l.ssm_state_dim * (model::dtype_bits(l.ssm_dtype) / 8);
        state_bytes = conv_bytes + ssm_bytes;
        ++state_layers;
        break;
      }
      default: break;
    }
  }
  e.max_model_len = L;
  if (!dep.max_model_len) e.assumptions.push_back(format("max_model_len %lld (the model's max_position_embeddings)", static_cast<long long>(L)));
  int64_t bs = engine.block_size;
  int64_t page = 0;  // common page bytes per layer per block
  const bool hybrid = state_layers > 0 && (attn_layers + sliding_layers) > 0;
  const int64_t state_blocks = engine.hybrid_mamba_mode == "align" ? 2 : 1;
  if (hybrid) {
    if (engine.hybrid_block_rule == engine::HybridBlockRule::npu_contiguous) {
      const int64_t ssm = std::max(conv_bytes, ssm_bytes), conv = std::min(conv_bytes, ssm_bytes);
      const int64_t attn_bs = 128 * static_cast<int64_t>(ceil_div(static_cast<uint64_t>(ssm), static_cast<uint64_t>(128 * k_1tok)));
      bs = std::max(bs, attn_bs);
      page = bs * attn_1tok + conv;
      e.provenance.push_back(format("hybrid block size %lld = 128 x ceil(ssm %lld / (128 x K %lld)); page = block x %lld + conv %lld (vllm-ascend patch_mamba_config >= 0.16)",
                                    static_cast<long long>(bs), static_cast<long long>(ssm), static_cast<long long>(k_1tok), static_cast<long long>(attn_1tok),
                                    static_cast<long long>(conv)));
    } else {
      const int64_t align = engine.hybrid_block_rule == engine::HybridBlockRule::npu_align128 ? 128 : std::max<int64_t>(16, engine.block_size);
      const int64_t attn_bs = align * static_cast<int64_t>(ceil_div(static_cast<uint64_t>(state_bytes), static_cast<uint64_t>(align * attn_1tok)));
      bs = std::max(bs, attn_bs);
      page = bs * attn_1tok;
      e.provenance.push_back(format("hybrid block size %lld = %lld x ceil(state %lld / (%lld x %lld)); state page padded to %lld", static_cast<long long>(bs),
                                    static_cast<long long>(align), static_cast<long long>(state_bytes), static_cast<long long>(align),
                                    static_cast<long long>(attn_1tok), static_cast<long long>(page)));
    }
  } else if (state_layers > 0) {
    page = state_bytes;
  } else {
    page = bs * attn_1tok;
  }
  e.block_size = bs;
  e.page_bytes = page;
  e.kv_bytes_per_token_rank = attn_1tok * (attn_layers + sliding_layers);
  e.state_bytes_per_sequence_rank = state_bytes * state_layers;

  // Pipeline parallelism: each stage caches only its own layers; the fullest stage sets num_blocks.
  if (pp > 1) {
    auto stage = [&](int64_t n) { return static_cast<int64_t>(ceil_div(static_cast<uint64_t>(n), static_cast<uint64_t>(pp))); };
    attn_layers = stage(attn_layers);
    sliding_layers = stage(sliding_layers);
    state_layers = stage(state_layers);
  }
  const int64_t T = e.max_num_batched_tokens;
  std::vector<std::pair<std::string, int64_t>> kinds;
  if (attn_layers > 0) kinds.emplace_back(m.layers.empty() || m.layers[0].kind != LayerKind::mla_attention ? "full_attention" : "mla_attention", attn_layers);
  if (sliding_layers > 0) kinds.emplace_back("sliding_attention", sliding_layers);
  if (state_layers > 0) kinds.emplace_back("state", state_layers);
  int64_t group_size = 0;
  if (kinds.size() == 1) {
    group_size = kinds[0].second;
  } else {
    int64_t lo = INT64_MAX, hi = 0;
    for (const auto& k : kinds) { lo = std::min(lo, k.second); hi = std::max(hi, k.second); }
    group_size = static_cast<double>(hi) < 1.5 * static_cast<double>(lo) ? hi : lo;
  }
  e.group_size = std::max<int64_t>(1, group_size);
  int64_t demand_blocks = 0;  // per request, all groups
  int64_t num_groups = 0;
  for (const auto& [kind, count] : kinds) {
    KvGroup g;
    g.kind = kind;
    g.layers = count;
    g.page_bytes = page;
    if (kind == "state") g.blocks_per_request = state_blocks;
    else if (kind == "sliding_attention") g.blocks_per_request = static_cast<int64_t>(ceil_div(static_cast<uint64_t>(std::min(sliding_window - 1 + T, L)), static_cast<uint64_t>(bs))) + 1;
    else g.blocks_per_request = static_cast<int64_t>(ceil_div(static_cast<uint64_t>(L), static_cast<uint64_t>(bs)));
    const int64_t n = static_cast<int64_t>(ceil_div(static_cast<uint64_t>(count), static_cast<uint64_t>(e.group_size)));
    num_groups += n;
    demand_blocks += n * g.blocks_per_request;
    e.groups.push_back(g);
  }

  if (page > 0 && available_blocks > 0) e.num_blocks = static_cast<int64_t>(available_blocks) / page / e.group_size;
  if (e.num_blocks > 0 && demand_blocks > 0) {
    e.max_concurrency = static_cast<double>(e.num_blocks) / static_cast<double>(demand_blocks);
    if (engine.tokens_rule == engine::TokensRule::concurrency_x_len) {
      e.kv_tokens = static_cast<int64_t>(e.max_concurrency * static_cast<double>(L));
    } else {
      e.kv_tokens = (num_groups > 1 ? e.num_blocks / num_groups : e.num_blocks) * bs;
    }
    auto tokens_at = [&](double avail) -> int64_t {
      if (avail <= 0) return 0;
      const int64_t nb = static_cast<int64_t>(avail) / page / e.group_size;
      if (engine.tokens_rule == engine::TokensRule::concurrency_x_len) return static_cast<int64_t>(static_cast<double>(nb) / static_cast<double>(demand_blocks) * static_cast<double>(L));
      return (num_groups > 1 ? nb / num_groups : nb) * bs;
    };
    e.kv_tokens_low = tokens_at(available_blocks - e.available_kv_band_bytes);
    e.kv_tokens_high = tokens_at(available_blocks + e.available_kv_band_high_bytes);
  }

  // Verdict, in the order the engine fails.
  if (e.weights_bytes + e.non_torch_bytes > e.total_bytes) {
    e.failure = Failure::weights_oom;
    e.failure_message = format("RuntimeError: %s out of memory while loading weights: %.2f GiB of weights per device, %.2f GiB total capacity",
                               engine.platform == "npu" ? "NPU" : "CUDA", bytes_to_gib(e.weights_bytes), bytes_to_gib(e.total_bytes));
  } else if (available <= 0 || e.num_blocks <= 0) {
    e.failure = Failure::kv_negative;
    e.failure_message = "ValueError: No available memory for the cache blocks. Try increasing gpu_memory_utilization when initializing the engine.";
  } else if (e.max_concurrency < 1.0) {
    e.failure = Failure::max_model_len_too_large;
    const double needed = static_cast<double>(demand_blocks) * static_cast<double>(page) * static_cast<double>(e.group_size);
    e.failure_message = format("ValueError: To serve at least one request with the models's max seq len (%lld), (%.2f GiB KV cache is needed, which is larger "
                               "than the available KV cache memory (%.2f GiB). Based on the available memory, the estimated maximum model length is %lld. "
                               "Try increasing gpu_memory_utilization or decreasing max_model_len when initializing the engine.",
                               static_cast<long long>(L), bytes_to_gib(needed), bytes_to_gib(available), static_cast<long long>(kv_capacity_tokens(e)));
  } else {
    e.fits = true;
  }
  if (e.fits && !e.graph_in_budget && dep.mode == ExecutionMode::graph &&
      e.requested_bytes + e.graph_bytes > e.total_bytes) {
    e.assumptions.push_back(format("graph capture (~%.2f GiB) must fit in the %.2f GiB left above gpu_memory_utilization", bytes_to_gib(e.graph_bytes),
                                   bytes_to_gib(e.total_bytes - e.requested_bytes)));
  }

  // Lines the engine prints.
  auto fill = [&](std::string text) {
    auto replace = [&](const std::string& key, const std::string& value) {
      const auto pos = text.find(key);
      if (pos != std::string::npos) text.replace(pos, key.size(), value);
    };
    replace("{weights_gib:.4f}", fixed(bytes_to_gib(e.weights_bytes), 4));
    replace("{weights_gib:g}", format("%g", std::round(bytes_to_gib(e.weights_bytes) * 100) / 100));
    replace("{kv_gib:.2f}", fixed(bytes_to_gib(available), 2));
    replace("{kv_gib:g}", format("%g", std::round(bytes_to_gib(available) * 100) / 100));
    replace("{kv_bytes}", format("%.0f", std::max(0.0, available)));
    replace("{total_bytes}", format("%.0f", e.total_bytes));
    return text;
  };
  if (!engine.weights_line.empty()) e.lines.push_back(fill(engine.weights_line));
  if (!engine.kv_line.empty()) e.lines.push_back(fill(engine.kv_line));
  if (e.num_blocks > 0) {
    const std::string size_line = "GPU KV cache size: " + with_thousands(e.kv_tokens) + " tokens";
    const std::string conc_line = "Maximum concurrency for " + with_thousands(L) + " tokens per request: " + fixed(e.max_concurrency, 2) + "x";
    if (engine.merged_token_line) e.lines.push_back(size_line + ", " + conc_line);
    else { e.lines.push_back(size_line); e.lines.push_back(conc_line); }
  }
  return e;
}

std::optional<FitEstimate> fit_without_encoder_pass(const ModelSpec& m, const device::DeviceSpec& device, const engine::EngineProfile& engine,
                                                    const engine::Overheads& oh, const Deployment& dep, const FitEstimate& base) {
  if (base.fits || dep.skip_mm_profiling || base.failure != Failure::max_model_len_too_large || base.activation_vision_bytes <= 0) return std::nullopt;
  Deployment without = dep;
  without.skip_mm_profiling = true;
  auto alt = estimate_fit(m, device, engine, oh, without);
  if (!alt.fits) return std::nullopt;
  return alt;
}

}  // namespace preflight::estimate
