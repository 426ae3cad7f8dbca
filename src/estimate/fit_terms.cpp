// The memory terms of vLLM / vllm-ascend start-up, per shared/reference/engine-memory-accounting.md:
// weights (sec 9.1), the profile run's activation peak (1.1 step 3), non-torch and graph memory (1.2, 4.2).
// Weights are exact from the model's shapes and storage formats; the activation, non-torch and graph
// terms are modelled from their mechanism with per-platform fitted factors (engines.json "overheads").
#include "estimate/fit_terms.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "base/checked.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "estimate/vision_pass.hpp"
#include "model/vision_tower.hpp"

namespace preflight::estimate::terms {

using model::ModelSpec;

Expected<int64_t> checked_product(int64_t a, int64_t b, const std::string& what) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r))
    return make_error(ErrorKind::invalid_argument, format("%s: %lld x %lld overflows 64 bits", what.c_str(), static_cast<long long>(a), static_cast<long long>(b)), what);
  return r;
}

Expected<int64_t> checked_sum(int64_t a, int64_t b, const std::string& what) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r))
    return make_error(ErrorKind::invalid_argument, format("%s: %lld + %lld overflows 64 bits", what.c_str(), static_cast<long long>(a), static_cast<long long>(b)), what);
  return r;
}

StageLayout stage_layout(const ModelSpec& m, int64_t tp, int64_t pp, int64_t dp, const std::vector<int64_t>& partition) {
  StageLayout l;
  l.tp = std::max<int64_t>(1, tp);
  l.pp = std::max<int64_t>(1, pp);
  l.dp = std::max<int64_t>(1, dp);
  l.n_layers = std::max<int64_t>(1, m.num_hidden_layers);
  l.first_layers = static_cast<int64_t>(ceil_div(static_cast<uint64_t>(l.n_layers), static_cast<uint64_t>(l.pp)));
  l.last_layers = std::max<int64_t>(1, l.n_layers / l.pp);
  if (l.pp > 1 && l.n_layers >= l.pp) {
    // vLLM's split (or the given VLLM_PP_LAYER_PARTITION, checked by the caller); a bad one keeps the ends above.
    if (auto split = pp_layer_partition(l.n_layers, l.pp, partition)) {
      l.stage_layers = std::move(*split);
      l.first_layers = l.stage_layers.front();
      l.last_layers = l.stage_layers.back();
    }
  }
  return l;
}

namespace {

Expected<int64_t> round_up(int64_t v, int64_t to, const std::string& what) {
  if (to <= 1) return v;
  PF_TRY(padded, checked_sum(v, to - 1, what));
  return padded / to * to;
}

// The weights rule's inputs: the layout, and (issue 15, evid25) vLLM-Ascend's EPLB redundant experts where they scale the
// routed experts, named in `rule` as well.
std::vector<std::pair<std::string, double>> weights_inputs(std::string& rule, const Deployment& dep, const StageLayout& lay) {
  std::vector<std::pair<std::string, double>> inputs = {{"tensor_parallel_size", static_cast<double>(lay.tp)},
                                                        {"pipeline_parallel_size", static_cast<double>(lay.pp)},
                                                        {"stage_layers", static_cast<double>(lay.first_layers)}};
  if (lay.expert_copies == 1.0) return inputs;
  rule += format("; routed experts with %lld EPLB redundant expert(s): (E + R) / E = %.4f of them per rank (vLLM-Ascend eplb_config)",
                 static_cast<long long>(dep.num_redundant_experts), lay.expert_copies);
  inputs.emplace_back("num_redundant_experts", static_cast<double>(dep.num_redundant_experts));
  return inputs;
}

// Bytes an MXFP4 expert group takes once the engine has laid it out for its kernel (padding, a kept copy
// of the swizzled scales, fp32 biases); nullopt when the group is not an MXFP4 expert weight or bias.
Expected<std::optional<double>> mxfp4_loaded_bytes(const ModelSpec& m, const model::QuantScheme& scheme, const model::WeightGroup& g, const engine::Mxfp4Layout& l,
                                                   int64_t tp) {
  if (!g.expert) return std::optional<double>();
  // The kernel pads each TP rank's slice of the intermediate size (vLLM mxfp4.py create_weights pads
  // intermediate_size_per_partition); expressed over all ranks so the TP share below divides it back.
  const int64_t full_i = m.moe_intermediate_size > 0 ? m.moe_intermediate_size : m.intermediate_size;
  const int64_t ranks = std::max<int64_t>(1, tp);
  PF_TRY(i_rank, round_up(static_cast<int64_t>(ceil_div(static_cast<uint64_t>(full_i), static_cast<uint64_t>(ranks))), l.pad_intermediate, "moe_intermediate_size"));
  PF_TRY(I, checked_product(i_rank, ranks, "moe_intermediate_size"));
  PF_TRY(H, round_up(m.hidden_size, l.pad_hidden, "hidden_size"));
  PF_TRY(I2, checked_product(2, I, "moe_intermediate_size"));
  const double E = static_cast<double>(g.count);
  auto fp4 = [](int64_t rows, int64_t cols) { return static_cast<double>(rows) * static_cast<double>(cols) / 2.0 + static_cast<double>(rows) * std::ceil(static_cast<double>(cols) / 32.0); };
  if (!g.linear) {  // biases: gate_up [2I], down [H]
    const int64_t rows = ends_with(g.module, "gate_up_proj.bias") ? I2 : ends_with(g.module, "down_proj.bias") ? H : 0;
    if (rows == 0) return std::optional<double>();
    return std::optional<double>(E * static_cast<double>(rows) * (l.bias_fp32 ? 4.0 : static_cast<double>(model::dtype_bits(m.dtype) / 8)));
  }
  if (model::module_format(scheme, g.module, true) != model::WeightFormat::mxfp4) return std::optional<double>();
  const bool down = ends_with(g.module, "down_proj");
  const int64_t rows = down ? H : I, cols = down ? I : H;
  double bytes = E * fp4(rows, cols);
  if (l.scale_copy_pad_n > 0) {  // swizzled scales beside the originals: w13 is [2I, H], w2 [H, I]; N padded
    PF_TRY(n_down, round_up(H, l.scale_copy_pad_n, "hidden_size"));
    PF_TRY(n_up, round_up(I2, l.scale_copy_pad_n, "moe_intermediate_size"));
    bytes += E * (down ? static_cast<double>(n_down) : static_cast<double>(n_up) / 2.0) * std::ceil(static_cast<double>(cols) / 32.0);
  }
  return std::optional<double>(bytes);
}

// Issue 15: block-FP8 weights on a CUDA card without FP8 tensor cores (below SM 8.9: Ampere, Turing). vLLM serves
// them with the Marlin weight-only kernel (fp8.py: use_marlin = not has_device_capability(89)), and
// prepare_fp8_layer_for_marlin / prepare_moe_fp8_layer_for_marlin (vllm/model_executor/layers/quantization/utils/
// marlin_utils_fp8.py) turn the fp32 [ceil(N/128), ceil(K/128)] block scales into group scales [K/128, N] in the
// model dtype ("block-wise quantization -> group-wise quantization", repeat_interleave over block_n), inside
// load_model. The fp8 weight keeps 1 B per element (repacked to int32 words). Bytes of the loaded group, all ranks.
bool fp8_marlin_fallback(const device::DeviceSpec& device, const engine::EngineProfile& engine) {
  return engine.engine == "vllm" && engine.platform == "cuda" && (device.family == "ampere" || device.family == "turing");
}

double fp8_marlin_loaded_bytes(const ModelSpec& m, const model::QuantScheme& scheme, const model::WeightGroup& g) {
  const double rows = static_cast<double>(g.rows), cols = static_cast<double>(g.cols);
  const double groups = std::ceil(cols / static_cast<double>(std::max<int64_t>(1, scheme.block_cols)));
  return (rows * cols + groups * rows * static_cast<double>(model::dtype_bits(m.dtype) / 8)) * static_cast<double>(g.count);
}

// vLLM-Ascend quantizes a MoE layer's permuted rows to int8 (npu_dynamic_quant before the dispatch) for ModelSlim int8
// experts; the all-gather and all-to-all paths both hold those int8 rows.
bool int8_dispatched_experts(const model::QuantScheme& scheme) {
  return scheme.expert_format == model::WeightFormat::modelslim_w8a8 || scheme.expert_format == model::WeightFormat::modelslim_w8a8_dynamic ||
         scheme.expert_format == model::WeightFormat::modelslim_w4a8_dynamic;
}

// A DeepSeek sparse-attention (DSA) model: some layer carries an indexer.
bool has_sparse_indexer(const ModelSpec& m) {
  return std::any_of(m.layers.begin(), m.layers.end(), [](const model::LayerSpec& l) { return l.indexer_head_dim > 0; });
}

// An MLA model: some layer caches a latent (kv_lora_rank + qk_rope_head_dim).
bool has_mla_cache(const ModelSpec& m) {
  return std::any_of(m.layers.begin(), m.layers.end(), [](const model::LayerSpec& l) { return l.mla_cache_dim > 0; });
}

}  // namespace

const model::QuantScheme& deployed_scheme(const ModelSpec& m, const Deployment& dep) {
  if (dep.quant_scheme) return *dep.quant_scheme;
  if (dep.quantization.empty()) return m.quant;  // scheme_for_flag keeps the checkpoint's
  const std::string q = to_lower(dep.quantization);
  if (q == to_lower(m.quant.method) || (q == "ascend" && m.quant.method == "ascend")) return m.quant;
  // Otherwise the scheme depends on the flag alone: one per flag and thread (std::map never moves its values).
  thread_local std::map<std::string, model::QuantScheme> by_flag;
  auto it = by_flag.find(dep.quantization);
  if (it == by_flag.end()) it = by_flag.emplace(dep.quantization, scheme_for_flag(dep.quantization, m.quant)).first;
  return it->second;
}

std::string weight_scheme_name(const ModelSpec& m, const model::QuantScheme& scheme) {
  return scheme.quantized() ? scheme.detail : std::string(model::dtype_name(m.dtype));
}

double group_bytes(const ModelSpec& m, const model::QuantScheme& scheme, const model::SchemeFormats& formats, const model::WeightGroup& g) {
  // model::weight_group_bytes with spec.quant = scheme (keep the two in step).
  const int b = model::dtype_bits(m.dtype) / 8;
  if (scheme.linear_format == model::WeightFormat::packed_bits && g.cols > 1)
    return model::linear_weight_bytes(model::WeightFormat::packed_bits, g.rows, g.cols, scheme, b) * static_cast<double>(g.count);
  if (!g.linear) return static_cast<double>(g.params()) * b;
  const model::WeightFormat f = formats(g.module, g.expert);
  if (scheme.per_layer_rules()) return model::gptq_dynamic_group_bytes(m, scheme, f, g);
  return model::linear_weight_bytes(f, g.rows, g.cols, scheme, b) * static_cast<double>(g.count);
}

}  // namespace preflight::estimate::terms

namespace preflight::estimate {
GroupBytes group_bytes_for(const model::ModelSpec& m, const Deployment& dep) {
  GroupBytes out;
  out.model = &m;
  out.scheme = &terms::deployed_scheme(m, dep);
  out.weight_scheme = terms::weight_scheme_name(m, *out.scheme);
  const model::SchemeFormats formats(*out.scheme);
  out.bytes.reserve(m.weights.size());
  out.places.reserve(m.weights.size());
  out.formats.reserve(m.weights.size());
  for (const auto& g : m.weights) {
    out.bytes.push_back(terms::group_bytes(m, *out.scheme, formats, g));
    out.places.push_back(group_place(g));
    out.formats.push_back(formats(g.module, g.expert));
  }
  return out;
}

GroupPlace group_place(const model::WeightGroup& g) {
  return {.layer = g.part == model::Part::text && is_layer_weight(g),  // the part first: no text search for the rest
          .shared_expert = g.module.find(".shared_expert.") != std::string::npos,
          .lm_head = g.module == "lm_head",
          .embed_tokens = g.module == "model.embed_tokens"};
}
}  // namespace preflight::estimate

namespace preflight::estimate::terms {
namespace {
// Whether the model has a vision tower (the config's vision_config read into the spec).
bool has_vision_tower(const ModelSpec& m) { return m.vision_params > 0 || m.vision_hidden_size > 0; }

// Issue 15: whether a vLLM-family engine leaves the vision tower out of the model: with every modality of
// --limit-mm-per-prompt at 0 the tower modules are built as StageMissingLayer and their weights are skipped
// (`_mark_tower_model`, https://github.com/vllm-project/vllm/pull/32605 and, for every multimodal model,
// https://github.com/vllm-project/vllm/pull/32757, merged 2026-01-21: taken as vLLM >= 0.16; Qwen3.5's model builds its
// tower inside it). Earlier versions did so only for some models (PR #22299), so their profiles keep the tower.
bool vision_tower_skipped(const ModelSpec& m, const engine::EngineProfile& engine, const Deployment& dep) {
  // Both limits: Qwen-VL towers are marked for {"image", "video"}, and a model without video ignores the video limit.
  const bool has_vision = has_vision_tower(m);
  return has_vision && dep.no_images && dep.no_video && (engine.engine == "vllm" || engine.engine == "vllm-ascend") && engine::Version{0, 16, 0} <= engine.version_min;
}
// Issue 15: the second, FRACTAL_NZ copy vLLM-Ascend keeps of every vocab embedding (embed_tokens, lm_head) on the
// device families of engines.json embedding_nz_copy (310P); bytes on the first and on the last pipeline stage.
std::pair<double, double> embedding_nz_copy_bytes(const ModelSpec& m, const model::QuantScheme& scheme, const device::DeviceSpec& device,
                                                  const engine::EngineProfile& engine, const StageLayout& lay) {
  const auto& fams = engine.embedding_nz_copy_families;
  if (!engine.applies(engine.embedding_nz_copy) || std::find(fams.begin(), fams.end(), device.family) == fams.end())
    return {0.0, 0.0};
  const model::SchemeFormats formats(scheme);
  double first = 0, last = 0;
  for (const auto& g : m.weights) {
    if (g.part != model::Part::text || (g.module != "model.embed_tokens" && g.module != "lm_head")) continue;
    const double bytes = group_bytes(m, scheme, formats, g) * weight_rank_share(g, lay.tp);
    const bool head = g.module == "lm_head";
    if (lay.pp == 1 || !head) first += bytes;
    if (lay.pp == 1 || head || m.tie_word_embeddings) last += bytes;
  }
  return {first, last};
}

}  // namespace

Expected<StageWeights> estimate_weights(const ModelSpec& m, const model::QuantScheme& scheme, const device::DeviceSpec& device, const engine::EngineProfile& engine,
                                        const engine::Overheads& oh, const Deployment& dep, const StageLayout& lay, int64_t batched_tokens) {
  const bool skip_tower = vision_tower_skipped(m, engine, dep);
  double computed_total = 0, computed_rank = 0, computed_last = 0, computed_layer = 0;
  const engine::Mxfp4Layout* mxfp4 = scheme.expert_format == model::WeightFormat::mxfp4 ? engine.mxfp4_layout_for(device.id, device.family) : nullptr;
  double mxfp4_extra = 0;  // bytes the kernel layout adds over the checkpoint, all ranks
  const bool fp8_marlin = fp8_marlin_fallback(device, engine);
  double marlin_extra = 0;  // issue 15: block-FP8 scales as Marlin group scales, all ranks
  const bool bnb_dequant = scheme.bnb_double_quant && engine.engine == "vllm";  // issue 16: nested absmax to fp32 at load
  double bnb_extra = 0;
  // Issue 19 (round 13): groups' bytes, places and formats once per (model, scheme) where given (Deployment::group_bytes).
  const double* pre = dep.group_bytes ? dep.group_bytes->for_model(m, scheme) : nullptr;
  const GroupPlace* places = pre ? dep.group_bytes->places.data() : nullptr;
  const model::WeightFormat* pre_formats = pre ? dep.group_bytes->formats.data() : nullptr;
  std::optional<model::SchemeFormats> formats_held;
  if (!pre) formats_held.emplace(scheme);  // read only without the precomputed ones
  for (size_t i = 0; i < m.weights.size(); ++i) {
    const model::WeightGroup& g = m.weights[i];
    const auto format_of = [&] { return pre_formats ? pre_formats[i] : (*formats_held)(g.module, g.expert); };
    if (g.part == model::Part::mtp) continue;
    const double stored = pre ? pre[i] : group_bytes(m, scheme, *formats_held, g);
    computed_total += stored;
    if (skip_tower && g.part == model::Part::vision) continue;  // in the checkpoint, not loaded
    double bytes = stored;
    if (mxfp4) {
      PF_TRY(loaded, mxfp4_loaded_bytes(m, scheme, g, *mxfp4, lay.tp));
      if (loaded) {
        bytes = *loaded;
        mxfp4_extra += bytes - stored;
      }
    }
    if (fp8_marlin && g.linear && g.cols > 1 && format_of() == model::WeightFormat::fp8_block) {
      bytes = fp8_marlin_loaded_bytes(m, scheme, g);
      marlin_extra += bytes - stored;
    }
    if (bnb_dequant && g.linear && g.cols > 1 && format_of() == model::WeightFormat::bnb_nf4) {
      bytes = model::bnb_4bit_bytes(g.rows, g.cols, scheme.group_size, {.double_quant = false}) * static_cast<double>(g.count);
      bnb_extra += bytes - stored;
    }
    // Routed experts: 1 / (DP x TP) per rank; everything else (attention, dense and shared-expert MLPs,
    // embedding, head) is replicated per DP rank and split by TP inside it.
    const GroupPlace place = places ? places[i] : group_place(g);
    const bool whole_shared = lay.sequence_parallel_moe && place.shared_expert;
    const double base = whole_shared ? 1.0 : weight_rank_share(g, lay.tp) * (g.shard == model::Shard::expert ? lay.expert_share() : 1.0);
    double share = base, last_share = base;
    const bool text_layer = place.layer;
    if (text_layer) {
      share *= static_cast<double>(lay.first_layers) / static_cast<double>(lay.n_layers);
      last_share *= static_cast<double>(lay.last_layers) / static_cast<double>(lay.n_layers);
    } else if (lay.pp > 1 && place.lm_head) {
      share = 0;  // on the last stage; the first holds the embedding
    } else if (lay.pp > 1 && (g.part == model::Part::vision || (place.embed_tokens && !m.tie_word_embeddings))) {
      last_share = 0;  // the encoder and the embedding run on the first stage (a tied head keeps a copy on the last)
    }
    computed_rank += bytes * share;
    computed_last += bytes * last_share;
    if (text_layer) computed_layer += bytes * base / static_cast<double>(lay.n_layers);
  }
  double weights = computed_rank;
  double weights_last = computed_last;
  double shared = 0;
  const bool explain = dep.explain;
  std::string rule;
  std::vector<std::pair<std::string, double>> inputs;
  if (explain) {
    rule = "sum over weight shapes x storage format, sharded by TP";
    if (skip_tower)
      rule += std::string("; no vision tower (") + (dep.language_model_only ? "--language-model-only" : "--limit-mm-per-prompt allows no image or video") +
              ": vLLM builds it as StageMissingLayer, PR #32757)";
    inputs = weights_inputs(rule, dep, lay);
  }
  if (mxfp4) {
    if (explain) rule += format("; MXFP4 experts as %s lays them out (+%.2f GiB: %s)", mxfp4->backend.c_str(), bytes_to_gib(mxfp4_extra), mxfp4->source.c_str());
    computed_total += mxfp4_extra;
    if (explain) inputs.emplace_back("mxfp4_layout_extra_bytes", mxfp4_extra);
  }
  if (marlin_extra > 0) {
    if (explain) rule += format("; block-FP8 scales as Marlin group scales in the model dtype, no FP8 tensor cores on %s (+%.2f GiB all ranks)", device.id.c_str(),
                                bytes_to_gib(marlin_extra));
    computed_total += marlin_extra;
    if (explain) inputs.emplace_back("fp8_marlin_scale_extra_bytes", marlin_extra);
  }
  if (bnb_extra > 0) {
    if (explain) rule += format("; bitsandbytes nested absmax dequantized to fp32 at load (+%.2f GiB all ranks, vLLM bitsandbytes_loader _dequantize_dq)", bytes_to_gib(bnb_extra));
    computed_total += bnb_extra;
  }
  // Issues 15/16: loaded as stored with no flag or the flag naming the checkpoint's own method (--quantization ascend).
  if (m.exact_weight_bytes && computed_total > 0 && !dep.quant_scheme && (dep.quantization.empty() || to_lower(dep.quantization) == m.quant.method)) {
    const double exact = static_cast<double>(*m.exact_weight_bytes) + mxfp4_extra + marlin_extra + bnb_extra;
    weights = computed_rank * exact / computed_total;
    weights_last = computed_last * exact / computed_total;
    computed_layer = computed_layer * exact / computed_total;
    if (explain) {
      rule = "exact checkpoint bytes (headers) x this rank's share";
      inputs.emplace_back("checkpoint_bytes", static_cast<double>(*m.exact_weight_bytes));
    }
  }
  if (const auto [nz_first, nz_last] = embedding_nz_copy_bytes(m, scheme, device, engine, lay); nz_first + nz_last > 0) {
    weights += nz_first;
    weights_last += nz_last;
    if (explain) {
      rule += format(" + a FRACTAL_NZ copy of the vocab embeddings on %s (%.2f GiB: %s)", device.family.c_str(), bytes_to_gib(nz_first), engine.embedding_nz_copy->source.c_str());
      inputs.emplace_back("embedding_nz_copy_bytes", nz_first);
    }
  }
  // Persistent buffers allocated at load: rotary cos/sin cache (max_position x rotary_dim).
  if (m.max_position_embeddings > 0 && m.rotary_dim > 0) {
    const double element = oh.rope_cache_bytes_per_element;
    const double rope = static_cast<double>(m.max_position_embeddings) * static_cast<double>(m.rotary_dim) * element;
    weights += rope;
    weights_last += rope;
    shared += rope;
    if (explain) {
      rule += format(" + rotary caches %lld x %lld x %.0f B (%s)", static_cast<long long>(m.max_position_embeddings), static_cast<long long>(m.rotary_dim), element,
                     oh.rope_cache_source.c_str());
      inputs.emplace_back("rotary_cache_bytes", rope);
    }
  }
  // Qwen3-VL deepstack: one max_num_batched_tokens x text-hidden buffer per level, created with the
  // model (vLLM qwen3_vl.py __init__) on the stage that holds the encoder, so inside "Model loading took".
  if (m.vision_deepstack_levels > 0 && m.hidden_size > 0) {
    const double buffers = static_cast<double>(m.vision_deepstack_levels) * static_cast<double>(batched_tokens) * static_cast<double>(m.hidden_size) *
                           static_cast<double>(model::dtype_bits(m.dtype) / 8);
    weights += buffers;
    if (lay.pp == 1) weights_last += buffers;
    if (explain) {
      rule += format(" + deepstack buffers %lld levels x %lld batched tokens x hidden %lld", static_cast<long long>(m.vision_deepstack_levels),
                     static_cast<long long>(batched_tokens), static_cast<long long>(m.hidden_size));
      inputs.emplace_back("deepstack_buffer_bytes", buffers);
    }
  }
  const auto& sp_only = engine.shared_experts_whole_only_with_sp;
  const bool ascend_shared_rule = engine.applies(sp_only);
  if (explain && ascend_shared_rule && m.num_shared_experts > 0 && lay.tp > 1)
    rule += lay.sequence_parallel_moe ? format("; shared experts whole on every rank (shared-expert DP: %s)", sp_only->source.c_str())
                                      : format("; shared experts split by TP (%s)", sp_only->source.c_str());
  if (lay.dp > 1 && explain) {
    rule += format("; routed experts split over DP x TP = %lld ranks%s", static_cast<long long>(lay.expert_ranks()),
                   lay.sequence_parallel_moe && !ascend_shared_rule ? ", shared experts whole on every rank (sequence-parallel MoE)" : "");
    inputs.emplace_back("data_parallel_size", static_cast<double>(lay.dp));
  }
  StageWeights out;
  out.first = {"weights", weights, 0, rule, inputs};
  out.last = {"weights", weights_last, 0, rule, inputs};
  out.layer_bytes = computed_layer;
  out.shared_bytes = shared;
  if (explain) out.last.inputs[2].second = static_cast<double>(lay.last_layers);
  return out;
}

// EAGLE-3 heads predict over a reduced vocabulary: draft_vocab_size 32000 in the published heads
// (yuhuili/EAGLE3-LLaMA3.1-Instruct-8B config.json, https://huggingface.co/yuhuili/EAGLE3-LLaMA3.1-Instruct-8B),
// used when the drafter's own config is not read.
constexpr int64_t k_eagle3_draft_vocab = 32000;

namespace {

// Issue 15: a drafter sized from its own config (SpeculativeConfig::drafter), as vLLM builds it.
// Weights: every decoder layer of the drafter checkpoint in its own dtype and format, split by TP like the target's
// (vLLM loads the drafter inside GPUModelRunner.load_model's memory profiler, right after the target, so the one
// "Model loading took" line includes it: vllm/v1/worker/gpu_model_runner.py load_model, vLLM V1 0.10 - main 2026).
// EAGLE / EAGLE-3 / DFlash heads take the target's embedding (vllm/v1/spec_decode/eagle.py load_model shares
// embed_tokens when the head has none or the shapes match); DFlash also the target's lm_head (z-lab checkpoints ship
// neither: "DFlash uses the target model's embedding/lm_head"), plus a replicated fc over the target's hidden states
// of num_hidden_layers target layers (vllm/model_executor/models/qwen3_dflash.py _get_dflash_fc_input_size, no aux
// layer ids given); EAGLE fc over 2 (EAGLE-3: 3) hidden states. A draft_model loads whole (its own embedding and head).
// KV: every drafter decoder layer is an Attention with the drafter's KV heads and head_dim
// (qwen3_dflash.py get_draft_kv_cache_layer_names: all layers; a draft model's own layers), in the same KV cache spec,
// except the layers its config makes sliding-window (layer_types "sliding_attention" with sliding_window: the
// Attention gets per_layer_sliding_window, hence a SlidingWindowSpec and a KV group of its own in
// kv_cache_utils._get_kv_cache_groups_uniform_page_size); DFlash2 drafters are all sliding (vLLM PR #52816: "the DFlash2
// config is top-level is_causal=false with all-sliding layer_types", as backported in club-3090's
// models/qwen3.8-27b/vllm/patches/vllm-dflash2-backport, commit ea24343d).
Drafter drafter_from_config(const ModelSpec& m, const Deployment& dep, const StageLayout& lay) {
  const SpeculativeConfig& spec = dep.speculative;
  const ModelSpec& dm = *spec.drafter;
  Drafter d;
  const bool whole = spec.method == "draft_model";
  const bool shares_head = spec.method == "dflash";
  const model::SchemeFormats formats(dm.quant);
  for (const auto& g : dm.weights) {
    if (g.part != model::Part::text) continue;
    if (!whole && ends_with(g.module, "embed_tokens")) continue;
    if (shares_head && ends_with(g.module, "lm_head")) continue;
    d.weights_bytes += group_bytes(dm, dm.quant, formats, g) * weight_rank_share(g, lay.tp);
  }
  const double h = static_cast<double>(dm.hidden_size), target_h = static_cast<double>(m.hidden_size);
  double fc_inputs = 0;
  if (spec.method == "dflash") fc_inputs = static_cast<double>(dm.num_hidden_layers) * target_h;
  else if (spec.method == "eagle3") fc_inputs = 3.0 * target_h;
  else if (spec.method == "eagle") fc_inputs = 2.0 * h;
  // ReplicatedLinear (whole on every rank) built with the drafter's quant_config (qwen3_dflash.py, llama_eagle3.py:
  // `self.fc = ReplicatedLinear(..., quant_config=self.quant_config, prefix="fc")`), so it is stored in the drafter's
  // scheme unless that leaves "fc" out: a W4A16 DFlash2 requant stores it as int4 (syv-ai/qwen38-27b-rtx3090
  // drafter/quant_dflash2.py: "fc (5120 x 25600, the target-hidden-state projection) int4 GPTQ by default"; issue 15, hyb).
  model::WeightGroup fc_group;
  fc_group.module = "model.fc";
  fc_group.rows = dm.hidden_size;
  fc_group.cols = static_cast<int64_t>(fc_inputs);
  fc_group.linear = true;
  const double fc = fc_inputs > 0 ? group_bytes(dm, dm.quant, formats, fc_group) : 0.0;
  d.weights_bytes += fc;
  int64_t kv_elements = 0;
  for (const auto& l : dm.layers) {
    if (l.kv_shared || (l.kind != model::LayerKind::full_attention && l.kind != model::LayerKind::sliding_attention)) continue;
    ++d.layers;
    kv_elements = std::max<int64_t>(1, l.num_key_value_heads / lay.tp) * (l.head_dim_k + l.head_dim_v);
    if (l.kind == model::LayerKind::sliding_attention) {
      ++d.sliding_layers;
      d.sliding_window = l.sliding_window;
    }
  }
  d.kv_elements_per_layer = kv_elements;
  if (dep.explain)
    d.rule = format("drafter '%s' from its config (%s): %lld attention layer(s)%s of %lld K+V elements per token on this rank, "
                    "weights %.3f GiB%s%s", spec.model.c_str(), dm.source.c_str(), static_cast<long long>(d.layers),
                    d.sliding_layers > 0 ? format(" (%lld sliding-window, window %lld)", static_cast<long long>(d.sliding_layers),
                                                  static_cast<long long>(d.sliding_window)).c_str() : "",
                    static_cast<long long>(kv_elements), bytes_to_gib(d.weights_bytes),
                    whole ? " (whole checkpoint)" : shares_head ? " (embedding and lm_head shared with the target)" : " (embedding shared with the target)",
                    fc > 0 ? format(", fc %.0f x %.0f", fc_inputs, h).c_str() : "");
  return d;
}

}  // namespace

Drafter estimate_drafter(const ModelSpec& m, const model::QuantScheme& scheme, const Deployment& dep, const StageLayout& lay) {
  Drafter d;
  const SpeculativeConfig& spec = dep.speculative;
  if (!spec.has_drafter_layers()) return d;
  if (spec.drafter && spec.separate_checkpoint()) return drafter_from_config(m, dep, lay);
  const double tp = static_cast<double>(lay.tp);
  if (spec.mtp()) {
    // The checkpoint's MTP layers (inspect counts them); their embedding and head are the target's
    // (vLLM shares both when the shapes match), so only the decoder layer, eh_proj and norms load.
    // Issue 15: a scheme that leaves "mtp" modules unquantized (a checkpoint's exclude list, or a calibration tool's
    // variant: the Transformers model classes the tools quantize have no MTP modules, so the layers stay in the
    // original dtype) loads them in the model dtype.
    const model::QuantScheme unquantized;
    const bool mtp_kept = std::any_of(scheme.ignore.begin(), scheme.ignore.end(), [](const std::string& p) { return p.find("mtp") != std::string::npos; });
    const model::QuantScheme& mtp_scheme = mtp_kept ? unquantized : scheme;
    const model::SchemeFormats formats(mtp_scheme);
    // Issue 15: the MTP classes of num_nextn_predict_layers checkpoints (those that store their own embedding) build
    // the [embedding; hidden] projection as a plain torch nn.Linear, which no quantization method reaches, so it loads
    // in the model dtype whatever the checkpoint's scheme (vLLM vllm/model_executor/models/deepseek_mtp.py
    // DeepSeekMultiTokenPredictorLayer: `self.eh_proj = nn.Linear(config.hidden_size * 2, config.hidden_size, bias=False)`,
    // from PR #12755 (https://github.com/vllm-project/vllm/pull/12755) to the DeepSeek-V4-era tree of 2026).
    const bool own_embedding = std::any_of(m.weights.begin(), m.weights.end(), [](const model::WeightGroup& g) { return g.module == "model.mtp.embed_tokens"; });
    const double model_dtype_bytes = static_cast<double>(model::dtype_bits(m.dtype) / 8);
    for (const auto& g : m.weights) {
      if (g.part != model::Part::mtp || ends_with(g.module, "embed_tokens") || ends_with(g.module, "shared_head.head")) continue;
      const bool whole_shared = lay.sequence_parallel_moe && g.module.find(".shared_expert.") != std::string::npos;
      const bool plain_linear = own_embedding && g.module == "model.mtp.eh_proj";
      d.weights_bytes += (plain_linear ? static_cast<double>(g.params()) * model_dtype_bytes : group_bytes(m, mtp_scheme, formats, g)) *
                         (whole_shared ? 1.0 : weight_rank_share(g, lay.tp) * (g.shard == model::Shard::expert ? lay.expert_share() : 1.0));
    }
    d.layers = m.mtp_layers;
    if (dep.explain)
      d.rule = m.mtp_layers > 0 ? format("%lld MTP layer(s) from the config (embedding and head shared with the target)%s", static_cast<long long>(m.mtp_layers),
                                         mtp_kept && scheme.quantized() ? format(", in %s: the scheme leaves mtp modules unquantized", model::dtype_name(m.dtype)).c_str() : "")
                                : "the config has no MTP layers (num_nextn_predict_layers / mtp_num_hidden_layers): nothing sized";
    return d;
  }
  if (spec.method == "eagle" || spec.method == "eagle3") {
    // One decoder layer of the target's shape; EAGLE fuses [embedding; hidden] with fc (2h -> h), EAGLE-3
    // three target hidden states (3h -> h), takes [embedding; hidden] into q/k/v and has its own head.
    const bool three = spec.method == "eagle3";
    const double h = static_cast<double>(m.hidden_size), hd = static_cast<double>(m.head_dim > 0 ? m.head_dim : m.hidden_size / std::max<int64_t>(1, m.num_attention_heads));
    const double q = static_cast<double>(m.num_attention_heads) * hd, kv = static_cast<double>(std::max<int64_t>(1, m.num_key_value_heads)) * hd;
    const double in = three ? 2.0 * h : h;
    const double inter = static_cast<double>(m.intermediate_size > 0 ? m.intermediate_size : m.moe_intermediate_size);
    double params = in * (q + 2.0 * kv) + q * h + 3.0 * h * inter + (three ? 3.0 : 2.0) * h * h;
    if (three) params += static_cast<double>(k_eagle3_draft_vocab) * h;
    d.weights_bytes = params * static_cast<double>(model::dtype_bits(m.dtype) / 8) / tp;
    d.layers = 1;
    if (dep.explain)
      d.rule = format("%s head assumed to be one decoder layer of the target's shape%s (its config not read)", spec.method.c_str(),
                      three ? format(", draft vocabulary %lld", static_cast<long long>(k_eagle3_draft_vocab)).c_str() : "");
    return d;
  }
  if (dep.explain) d.rule = "drafter '" + spec.model + "' not read: its weights and KV layers are not sized";
  return d;
}

namespace {

// The vision encoder's dummy pass: vLLM's encoder budget is max(max_num_batched_tokens, tokens of the
// largest item), profiled with as many largest items as fit in it (at least one); towers whose limit is
// not known: the budget itself. The modality with the most tokens per item is profiled: a dummy video of
// as many largest-image groups as max_model_len holds (capped) where the processor makes one.
Expected<ProfileRun> encoder_pass(const ModelSpec& m, const engine::EngineProfile& engine, const engine::Overheads& oh, const Deployment& dep, const StageLayout& lay,
                                  int64_t batched_tokens, int64_t L, double b, int64_t pixels_per_patch, ProfileRun run) {
  const int64_t per_image = m.vision_max_tokens_per_image;
  int64_t per_item = per_image;
  bool video = false;
  if (per_image > 0 && m.vision_video_max_groups > 0 && !dep.no_video) {
    const int64_t groups = std::clamp<int64_t>(L / per_image, 1, m.vision_video_max_groups);
    PF_TRY(video_tokens, checked_product(groups, per_image, "vision_max_tokens_per_image (dummy video)"));
    if (video_tokens > per_image || dep.no_images) {
      per_item = video_tokens;
      video = true;
    }
  }
  run.encoder_profiles_video = video;
  const int64_t budget = std::max(batched_tokens, per_item);
  int64_t encoder_tokens = budget;
  run.encoder_items = 0;
  if (per_item > 0) {
    // Issue 15 (mm): the budget and the item count come from the largest item (vLLM MultiModalBudget), the
    // encoded item from the dummy data, which an image width/height in --limit-mm-per-prompt caps (vLLM >= 0.11.1).
    run.encoder_items = std::max<int64_t>(1, budget / per_item);
    int64_t encoded_per_item = per_item;
    const bool capped = !video && (dep.image_dummy_width > 0 || dep.image_dummy_height > 0);
    if (capped && engine.mm_dummy_size_options) {
      PF_TRY(tokens, model::dummy_image_tokens(m, dep.image_dummy_width, dep.image_dummy_height));
      encoded_per_item = tokens;
      if (dep.explain)
        run.assumptions.push_back(format("the dummy image is capped by --limit-mm-per-prompt (width %lld, height %lld px): %lld tokens each, not %lld; "
                                         "vLLM still prints the encoder budget of the largest image, and a larger image at serve time draws on the memory above the utilization",
                                         static_cast<long long>(dep.image_dummy_width), static_cast<long long>(dep.image_dummy_height),
                                         static_cast<long long>(encoded_per_item), static_cast<long long>(per_item)));
    } else if (capped && dep.explain) {
      run.assumptions.push_back(format("%s takes only counts in --limit-mm-per-prompt (dummy image width/height from vLLM 0.11.1, PR #25631): the largest image is profiled",
                                       engine.id.c_str()));
    }
    PF_TRY(t, checked_product(run.encoder_items, encoded_per_item, "vision_max_tokens_per_image (encoder budget)"));
    encoder_tokens = t;
  }
  run.encoder_budget_tokens = budget;
  if (video && dep.explain)
    run.assumptions.push_back(format("the profile run encodes one dummy video of %lld tokens (%lld frames of the largest image; max_model_len %lld), larger than an image's %lld; "
                                     "--limit-mm-per-prompt '{\"video\": 0}' profiles the image instead",
                                     static_cast<long long>(per_item), static_cast<long long>(2 * (per_item / per_image)), static_cast<long long>(L),
                                     static_cast<long long>(per_image)));
  PF_TRY(patch_count, checked_product(encoder_tokens, std::max<int64_t>(1, m.vision_patches_per_token), "vision_patches_per_token"));
  const double patches = static_cast<double>(patch_count);
  auto& ph = run.phases;
  // Issue 15 (vis28): on vLLM the pass of a tower whose forward was read is its live tensors at the peak
  // (estimate/vision_pass.cpp), not fitted. vLLM-Ascend keeps the fitted factor: the same count with its padded
  // attention (head_dim 72 -> 128) gives 4.88 GiB for the TP 2 two-image run that printed a 3.86 GiB peak
  // (docs/memory-model.md, "The encoder pass tensor by tensor"); generic ViT towers are not derived.
  const auto derived = pixels_per_patch > 0 ? vision_pass_per_patch(m, lay.tp, pixels_per_patch, b) : std::nullopt;
  if (derived) {
    ph.vision_unit_bytes = 0;
    ph.vision_pixel_bytes = patches * derived->pixel_bytes;
    ph.vision_encoder = {"vision encoder", patches * derived->bytes, 0, {}, {}};
    if (dep.explain) {
      ph.vision_encoder.rule = "patches x " + vision_pass_rule(m, *derived, pixels_per_patch, b);
      ph.vision_encoder.inputs = {{"patches", patches},
                                  {"attention_values_per_patch", derived->attention_values},
                                  {"mlp_values_per_patch", derived->mlp_values},
                                  {"position_values_per_patch", derived->position_values},
                                  {"deepstack_values_per_patch", derived->deepstack_values},
                                  {"pixel_bytes", ph.vision_pixel_bytes}};
    }
  } else {
    // Per rank: the tower's attention heads and MLP are split by TP (vLLM's parallel linears; q, k, v and
    // the MLP's intermediate), the residual stream of [patches, hidden] is not.
    ph.vision_unit_bytes = patches * ((static_cast<double>(m.vision_intermediate_size) + 3.0 * static_cast<double>(m.vision_hidden_size)) / static_cast<double>(lay.tp) +
                                      static_cast<double>(m.vision_hidden_size)) * b;
    // Issue 15 (cudabudget): the pixel values are whole on every rank (not split by TP): fp32 as the processor made them
    // plus the copy in the tower's dtype. Counted outside the fitted factor, so the peak does not halve with TP 2.
    ph.vision_pixel_bytes = patches * static_cast<double>(pixels_per_patch) * (4.0 + b);
    const double peak = oh.vision_activation_factor * ph.vision_unit_bytes + ph.vision_pixel_bytes;
    ph.vision_encoder = {"vision encoder", peak, 0, {}, {}};
    if (dep.explain) {
      ph.vision_encoder.rule = format("%.2f x patches x ((vision intermediate + 3 x vision hidden) / TP + vision hidden) x %.0f B%s", oh.vision_activation_factor, b,
                                      ph.vision_pixel_bytes > 0 ? format(" + patches x %lld pixel values x (4 + %.0f) B (fp32 and the tower-dtype copy, whole on every rank)",
                                                                         static_cast<long long>(pixels_per_patch), b).c_str() : "");
      ph.vision_encoder.inputs = {{"factor", oh.vision_activation_factor}, {"patches", patches}, {"unit_bytes", ph.vision_unit_bytes}, {"pixel_bytes", ph.vision_pixel_bytes}};
    }
  }
  // The encoder outputs stay in the encoder cache through the text and sampler dummy runs (vLLM
  // profile_run clears it at the end): one text-hidden row per encoder token, and one more per
  // deepstack level.
  ph.encoder_held_bytes = static_cast<double>(encoder_tokens) * static_cast<double>(m.hidden_size) * static_cast<double>(1 + m.vision_deepstack_levels) * b;
  return run;
}

}  // namespace

// Issue 15: the sampler's logits copies. vLLM 0.9.2-0.11.0 V1 samples with FlashInfer whenever flashinfer imports
// (vllm/v1/sample/ops/topk_topp_sampler.py TopKTopPSampler.__init__: VLLM_USE_FLASHINFER_SAMPLER unset counts as on),
// and flashinfer-python is an optional extra there (vLLM PR #21959, https://github.com/vllm-project/vllm/pull/21959),
// so the same version takes either path; each prints which ("Using FlashInfer for top-p & top-k sampling." or
// "FlashInfer is not available. Falling back to the PyTorch-native implementation ..."). A path the evidence states
// replaces the version's default; unstated, the default (the native sort) stands and the band's high side reaches
// the FlashInfer path (fit.cpp kv_budget).
namespace {

double sampler_copies(const engine::EngineProfile& engine, const Deployment& dep) {
  if (dep.flashinfer_sampler && *dep.flashinfer_sampler) return std::min(engine.sampler_logit_copies, engine.sampler_logit_copies_if_flashinfer);
  return engine.sampler_logit_copies;
}

}  // namespace

int64_t vision_pixels_per_patch(const ModelSpec& m) {
  for (const auto& g : m.weights)
    if (g.part == model::Part::vision && (g.module == "model.visual.patch_embed.proj" || g.module == "model.visual.embeddings.patch_embedding")) return g.cols;
  return 0;
}

// Issue 15 (hyb): an EAGLE-3 or DFlash drafter reads hidden states of several target layers. vLLM's target forward
// returns them beside its output (the model's `aux_hidden_state_layers`: before each of those decoder layers it
// appends `hidden_states + residual`, a new [num_tokens, hidden] tensor, to a list the forward returns;
// EagleModelMixin._maybe_add_hidden_state in vllm/model_executor/models/interfaces.py, the same loop in llama.py's
// forward), and the profile run's dummy forward does too
// (gpu_model_runner._dummy_run keeps `hidden_states, _ = outputs`; the V2 DFlash speculator's propose() concatenates
// them, `torch.cat(aux_hidden_states, dim=-1)`, vllm/v1/worker/gpu/spec_decode/dflash/speculator.py). From the last of
// those layers on they are all alive beside the layer's own activations, so the text forward's peak holds them:
// layers x max_num_batched_tokens x target hidden x dtype bytes on every rank (not split by TP). The layer count is
// what the drafter's fc takes: 3 for EAGLE-3, the drafter's num_hidden_layers for DFlash (as `fc_inputs` above).
// vLLM (CUDA / ROCm) only: vLLM-Ascend's fitted text factor is left as it was.
namespace {
double drafter_aux_hidden_bytes(const ModelSpec& m, const engine::EngineProfile& engine, const Deployment& dep, int64_t batched_tokens) {
  const SpeculativeConfig& spec = dep.speculative;
  if (engine.engine != "vllm" || batched_tokens <= 0 || spec.num_speculative_tokens <= 0) return 0.0;
  double layers = 0;
  if (spec.method == "eagle3") layers = 3;
  else if (spec.method == "dflash" && spec.drafter) layers = static_cast<double>(spec.drafter->num_hidden_layers);
  const double b = static_cast<double>(model::dtype_bits(m.dtype) / 8);
  return layers * static_cast<double>(batched_tokens) * static_cast<double>(m.hidden_size) * b;
}
}  // namespace

double gdn_prefill_workspace_bytes(const ModelSpec& m, const StageLayout& lay, int64_t batched_tokens) {
  const auto gdn = std::find_if(m.layers.begin(), m.layers.end(), [](const model::LayerSpec& l) { return l.kind == model::LayerKind::linear_attention; });
  if (gdn == m.layers.end() || batched_tokens <= 0 || lay.tp <= 0) return 0.0;
  // A Gated DeltaNet layer's ssm heads are its value heads (head dim dv, state dk); its key heads are read from the config.
  const double dk = static_cast<double>(gdn->ssm_state_dim), dv = static_cast<double>(gdn->ssm_head_dim);
  const double hv = static_cast<double>(gdn->ssm_heads) / static_cast<double>(lay.tp);
  const double hk = static_cast<double>(gdn->linear_num_key_heads) / static_cast<double>(lay.tp);
  const double b = static_cast<double>(model::dtype_bits(m.dtype) / 8);
  constexpr int64_t chunk = 64;  // chunk_local_cumsum(chunk_size=64), FLA_CHUNK_SIZE
  const double t = static_cast<double>(batched_tokens);
  const double chunks = static_cast<double>((batched_tokens + chunk - 1) / chunk);
  const double per_token = hv * (4.0 + static_cast<double>(chunk) * b + dk * b + 3.0 * dv * b) + 2.0 * hk * dk * b;
  return t * per_token + chunks * hv * dk * dv * b;
}

Expected<MtpDrafterProfile> mtp_drafter_profile_bytes(const ModelSpec& m, const engine::EngineProfile& engine, const Deployment& dep, const StageLayout& lay,
                                                      int64_t batched_tokens) {
  MtpDrafterProfile out;
  const auto* rule = engine.mtp_drafter_profile_rule();
  // Only the target's own MTP layers are checked (their layer is a decoder layer of the target's kind); one PP stage.
  if (!rule || !dep.speculative.mtp() || !dep.speculative.has_drafter_layers() || lay.pp != 1 || batched_tokens <= 0) return out;
  const int64_t dtype_bytes = model::dtype_bits(m.dtype) / 8;
  // hidden_states and inputs_embeds [T, hidden] in the model dtype, input_ids int32, positions int64, arange int32.
  PF_TRY(hidden_row, checked_product(m.hidden_size, dtype_bytes, "hidden_size x dtype bytes"));
  PF_TRY(two_rows, checked_product(hidden_row, int64_t{2}, "2 x hidden row"));
  PF_TRY(per_token, checked_sum(two_rows, int64_t{4 + 8 + 4}, "drafter buffer bytes per token"));
  PF_TRY(buffers, checked_product(batched_tokens, per_token, "max_num_batched_tokens x drafter buffer bytes per token"));
  int64_t rows = batched_tokens;
  const bool sp = dep.flashcomm1 && lay.tp > 1;
  if (sp && !rule->output_gathered_under_sp) rows = (batched_tokens + lay.tp - 1) / lay.tp;
  PF_TRY(held, checked_product(rows, hidden_row, "held output rows x hidden row"));
  out.buffers_bytes = static_cast<double>(buffers);
  out.held_output_bytes = static_cast<double>(held);
  out.source = rule->rule.source;
  return out;
}

Expected<ProfileRun> estimate_profile_run(const ModelSpec& m, const engine::EngineProfile& engine, const engine::Overheads& oh, const Deployment& dep,
                                          const StageLayout& lay, int64_t batched_tokens, int64_t max_num_seqs, int64_t L, double moe_routed_bytes) {
  // Three phases run one after another, so the peak is the largest of: the text forward over
  // max_num_batched_tokens; the vision encoder over its profiling budget; the sampler dummy run over
  // min(max_num_seqs, batched tokens) rows of fp32 logits, with the forward's hidden states still held.
  // The sampler's multiple is the engine version's sampling path (full sort ~10 copies, FlashInfer/Triton
  // ~3, NPU logits only); it runs on every TP rank.
  ProfileRun run;
  auto& ph = run.phases;
  const double b = static_cast<double>(model::dtype_bits(m.dtype) / 8);
  double mlp_width = static_cast<double>(m.intermediate_size);
  if (m.num_experts > 0) {
    PF_TRY(routed, checked_product(m.moe_intermediate_size, m.num_experts_per_tok, "moe_intermediate_size x num_experts_per_tok"));
    mlp_width = static_cast<double>(routed);
  }
  const int64_t sampler_rows = std::min(max_num_seqs, batched_tokens);
  const double tp = static_cast<double>(lay.tp);
  // Issue 15: where the platform's record carries the live tensors of one decoder layer (vLLM-Ascend), a dense model's
  // unit is their bytes at the layer's peak, with the graph or eager set as the deployment runs. A MoE layer's unit is
  // its live tensors besides the routed rows (router logits included) where its routed rows are derived
  // (moe_routed_bytes, added below outside the factor); elsewhere MoE keeps the fitted unit.
  const auto& live = oh.text_activation_live_tensors;
  const bool eager = dep.mode == ExecutionMode::eager;
  double widths[4] = {1.0, 0.0, 2.0, 0.0};  // hidden, attention output / TP, mlp / TP, router logits (routed experts)
  const std::optional<engine::MoeActivationWidths>* moe_widths = live ? (eager ? &live->moe_eager : &live->moe_graph) : nullptr;
  const bool moe_live = m.num_experts > 0 && moe_routed_bytes > 0 && moe_widths && moe_widths->has_value();
  if (live && m.num_experts == 0) {
    const engine::TextActivationWidths& w = eager ? live->eager : live->graph;
    widths[0] = w.hidden;
    widths[1] = w.attention_output;
    widths[2] = w.mlp;
  } else if (moe_live) {
    const engine::MoeActivationWidths& w = **moe_widths;
    widths[0] = w.hidden;
    widths[1] = w.attention_output;
    widths[2] = 0.0;
    widths[3] = w.router_logits;
  }
  const int64_t head_dim = m.head_dim > 0 ? m.head_dim : m.hidden_size / std::max<int64_t>(1, m.num_attention_heads);
  double attention_width = static_cast<double>(m.num_attention_heads) * static_cast<double>(head_dim);
  // An MLA layer's attention output is heads x v_head_dim, the input width of its o_proj (issue 15, npumoe).
  if (widths[1] > 0 && has_mla_cache(m))
    for (const auto& g : m.weights)
      if (g.part == model::Part::text && ends_with(g.module, "self_attn.o_proj")) {
        attention_width = static_cast<double>(g.cols);
        break;
      }
  ph.text_unit_bytes = static_cast<double>(batched_tokens) *
                       (widths[0] * static_cast<double>(m.hidden_size) + widths[1] * attention_width / tp + widths[2] * mlp_width / tp +
                        widths[3] * static_cast<double>(m.num_experts)) * b;
  const bool explain = dep.explain;
  // The unit's text, for the rules below (built only when they are: the plan sizes tens of thousands of rows without).
  const std::string unit_rule =
      !explain        ? std::string()
      : moe_live      ? format("(%.0f x hidden + %.0f x attention output/TP + %.0f x routed experts' router logits)", widths[0], widths[1], widths[3])
      : widths[1] > 0 ? format("(%.0f x hidden + %.0f x attention heads x head_dim/TP + %.0f x mlp/TP)", widths[0], widths[1], widths[2])
                    : format("(%s + %.0f x mlp/TP)", widths[0] == 1.0 ? "hidden" : format("%.0f x hidden", widths[0]).c_str(), widths[2]);
  ph.sampler_unit_bytes = static_cast<double>(sampler_rows) * static_cast<double>(m.vocab_size) * 4.0;
  // Issue 15: on vLLM (CUDA / ROCm, the Triton FLA kernels) a Gated DeltaNet layer's chunked-prefill workspace sits on
  // top of the fitted per-token peak; vLLM-Ascend's own kernels and fitted factors are left as they were.
  ph.text_workspace_bytes = engine.engine == "vllm" ? gdn_prefill_workspace_bytes(m, lay, batched_tokens) : 0.0;
  ph.text_moe_routed_bytes = std::max(0.0, moe_routed_bytes);
  const double text_peak = oh.activation_bytes_per_batched_token_factor * ph.text_unit_bytes + ph.text_workspace_bytes + ph.text_moe_routed_bytes;
  ph.text_forward = {"text forward", text_peak, 0, {}, {}};
  if (explain)
    ph.text_forward = {"text forward", text_peak, 0,
                     format("%.1f x %lld batched tokens x %s x %.0f B%s%s%s", oh.activation_bytes_per_batched_token_factor, static_cast<long long>(batched_tokens), unit_rule.c_str(), b,
                            live && m.num_experts == 0 ? format(" (the %s-mode live tensors of one decoder layer: %s)", eager ? "eager" : "graph", live->source.c_str()).c_str()
                            : moe_live ? format(" (the %s-mode live tensors of one MoE decoder layer at the expert combine: %s)", eager ? "eager" : "graph",
                                                live->moe_source.c_str()).c_str()
                                       : "",
                            ph.text_workspace_bytes > 0 ? format(" + %.3f GiB Gated DeltaNet chunked-prefill workspace", bytes_to_gib(ph.text_workspace_bytes)).c_str() : "",
                            ph.text_moe_routed_bytes > 0 ? format(" + %.3f GiB MoE all-to-all routed rows", bytes_to_gib(ph.text_moe_routed_bytes)).c_str() : ""),
                     {{"factor", oh.activation_bytes_per_batched_token_factor}, {"max_num_batched_tokens", static_cast<double>(batched_tokens)},
                      {"unit_bytes", ph.text_unit_bytes}, {"gdn_workspace_bytes", ph.text_workspace_bytes}, {"moe_routed_bytes", ph.text_moe_routed_bytes}}};
  const double held_hidden = static_cast<double>(batched_tokens) * static_cast<double>(m.hidden_size) * b;
  run.held_hidden_bytes = held_hidden;
  const double copies = sampler_copies(engine, dep);
  const double sampler = copies * ph.sampler_unit_bytes + engine.sampler_fixed_bytes + held_hidden;
  ph.sampler_run = {"sampler run", sampler, 0, {}, {}};
  if (explain)
    ph.sampler_run = {"sampler run", sampler, 0, format("%.1f x %lld seqs x vocab %lld x fp32 + %.0f MiB + held hidden states (%s)", copies,
                                                      static_cast<long long>(sampler_rows), static_cast<long long>(m.vocab_size),
                                                      engine.sampler_fixed_bytes / (1024.0 * 1024.0), engine.sampler_source.c_str()),
                    {{"copies", copies}, {"rows", static_cast<double>(sampler_rows)}, {"unit_bytes", ph.sampler_unit_bytes},
                     {"fixed_bytes", engine.sampler_fixed_bytes}, {"held_hidden_bytes", held_hidden}}};
  ph.vision_encoder = {"vision encoder", 0, 0, explain ? "not profiled" : "", {}};
  const bool has_vision = has_vision_tower(m);
  const bool text_only = has_vision && dep.no_images && (dep.no_video || m.vision_video_max_groups == 0);
  if (text_only && explain)
    run.assumptions.push_back(std::string(dep.language_model_only ? "--language-model-only" : "--limit-mm-per-prompt allows no image or video") +
                              ": the profile run is text only" +
                              (vision_tower_skipped(m, engine, dep) ? "; the vision tower is not loaded (vLLM >= 0.16: StageMissingLayer, PR #32757)" : ""));
  if (engine.profiles_mm_encoder && !dep.skip_mm_profiling && has_vision && !text_only) {
    // Issue 15 (cudabudget): the pixel values are counted on vLLM (CUDA / ROCm); vLLM-Ascend's fitted factor keeps them.
    // Issue 15 (vis28): with them (pixels > 0, so vLLM) a tower whose forward was read is derived tensor by tensor.
    const int64_t pixels = engine.engine == "vllm" ? vision_pixels_per_patch(m) : 0;
    PF_TRY(with_encoder, encoder_pass(m, engine, oh, dep, lay, batched_tokens, L, b, pixels, std::move(run)));
    run = std::move(with_encoder);
  }
  if (dep.skip_mm_profiling && has_vision && explain)
    run.assumptions.push_back("--skip-mm-profiling: the vision encoder is left out of the profile run, so images at serve time draw on the 1 - util headroom");
  PF_TRY(drafter, mtp_drafter_profile_bytes(m, engine, dep, lay, batched_tokens));
  ph.drafter_buffers_bytes = drafter.buffers_bytes;
  // Target tensors the drafter reads, held through the text forward: an MTP drafter's input (NPU rule above) and the
  // aux hidden states of EAGLE-3 / DFlash (vLLM); one field, which validate reports as drafter_held.
  const double aux_hidden = drafter_aux_hidden_bytes(m, engine, dep, batched_tokens);
  ph.drafter_held_output_bytes = drafter.held_output_bytes + aux_hidden;
  const double held = ph.encoder_held_bytes, vision_peak = ph.vision_encoder.bytes;
  const double buffers = ph.drafter_buffers_bytes, drafter_held = ph.drafter_held_output_bytes;
  double peak = std::max({text_peak + held + drafter_held, vision_peak, sampler + held}) + buffers;
  // Under PP only the last stage computes logits and samples; the encoder runs on the first.
  if (lay.pp > 1) {
    run.last_stage_peak_bytes = std::max(text_peak, sampler);
    peak = std::max(text_peak + held, vision_peak);
  } else {
    run.last_stage_peak_bytes = peak;
  }
  ph.peak = {"activation peak", peak, peak * oh.band_fraction, {}, {}};
  if (explain)
    ph.peak = {"activation peak", peak, peak * oh.band_fraction,
             format("max(text forward %.2f GiB = %.1f x %lld batched tokens x %s x %.0f B%s%s; vision encoder %.2f GiB; "
                    "sampler run %.2f GiB = %.1f x %lld seqs x vocab %lld x fp32 + %.0f MiB + held hidden states (%s))%s%s%s",
                    bytes_to_gib(text_peak), oh.activation_bytes_per_batched_token_factor, static_cast<long long>(batched_tokens), unit_rule.c_str(), b,
                    ph.text_workspace_bytes > 0 ? format(" + %.2f GiB GDN prefill workspace", bytes_to_gib(ph.text_workspace_bytes)).c_str() : "",
                    ph.text_moe_routed_bytes > 0 ? format(" + %.2f GiB MoE all-to-all routed rows", bytes_to_gib(ph.text_moe_routed_bytes)).c_str() : "", bytes_to_gib(vision_peak),
                    bytes_to_gib(sampler), copies, static_cast<long long>(sampler_rows), static_cast<long long>(m.vocab_size),
                    engine.sampler_fixed_bytes / (1024.0 * 1024.0), engine.sampler_source.c_str(),
                    held > 0 ? format("; text and sampler runs + %.2f GiB of encoder outputs held in the encoder cache", bytes_to_gib(held)).c_str() : "",
                    buffers > 0 ? format("; text forward + %.3f GiB target output held through the MTP drafter's pass; every phase + %.3f GiB MTP drafter buffers (%s)",
                                         bytes_to_gib(drafter.held_output_bytes), bytes_to_gib(buffers), drafter.source.c_str()).c_str()
                                : "",
                    aux_hidden > 0 ? format("; text forward + %.3f GiB of target hidden states held for the %s drafter (aux hidden state layers x %lld "
                                            "batched tokens x hidden %lld x %.0f B)", bytes_to_gib(aux_hidden), dep.speculative.method.c_str(),
                                            static_cast<long long>(batched_tokens), static_cast<long long>(m.hidden_size), b).c_str()
                                   : ""),
             {{"text_forward_bytes", text_peak}, {"vision_encoder_bytes", vision_peak}, {"sampler_run_bytes", sampler}, {"encoder_held_bytes", held},
              {"drafter_held_output_bytes", drafter_held}, {"drafter_buffers_bytes", buffers}}};
  if (explain && aux_hidden > 0) ph.peak.inputs.emplace_back("drafter_aux_hidden_bytes", aux_hidden);
  return run;
}

engine::NonTorchCounted non_torch_counted(const engine::EngineProfile& engine, const engine::Overheads& oh, const std::string& device_family) {
  const auto& absolute = engine.non_torch_absolute_families;
  if (engine.non_torch_counted != engine::NonTorchCounted::increase || !oh.non_torch_snapshot_bytes) return engine::NonTorchCounted::absolute;
  // Issue 15 (build): a named build older than the first one counting the increase still counts the absolute amount.
  if (engine.build_named && engine.non_torch_increase_from_build && engine::compare_engine_builds(*engine.build_named, *engine.non_torch_increase_from_build) < 0)
    return engine::NonTorchCounted::absolute;
  return std::find(absolute.begin(), absolute.end(), device_family) != absolute.end() ? engine::NonTorchCounted::absolute : engine::NonTorchCounted::increase;
}

Term estimate_nccl_buffers(const engine::Overheads& oh, const engine::EngineProfile& engine, const std::string& device_family, const StageLayout& lay,
                           const Deployment& dep) {
  const Term none{"NCCL buffers", 0, 0, {}, {}};
  const engine::NcclBuffers* nb = oh.nccl_buffers.get();
  if (!nb || !nb->counted_by(engine, lay.tp)) return none;
  const engine::NcclDomain* domain = nb->domain(dep.interconnect, device_family);
  if (!domain) return none;
  // A rank of a group of two reaches its one peer once per channel (ring and tree share the connection); a middle rank
  // of a larger group connects the ring and the tree chain: two peers (engines.json connection_source).
  const double connections = lay.tp > 2 ? 2.0 : 1.0;
  const double nvls = domain->nvls_bytes > 0 && lay.tp >= domain->nvls_min_ranks ? domain->nvls_bytes : 0.0;
  // Issue 15/16 (tp): where NCCL connects at init (vLLM's NCCL_CUMEM_ENABLE=0) each communicator also allocates its
  // proxy's shared point-to-point buffer (engines.json proxy_source).
  const double proxy = nb->proxy_shared_steps > 0 && engine.applies(nb->proxy_counted)
                           ? static_cast<double>(domain->p2p_channels) * static_cast<double>(nb->proxy_shared_steps) * domain->p2p_chunk_bytes
                           : 0.0;
  const double per_communicator = static_cast<double>(domain->channels) * connections * nb->connection_bytes + nvls + proxy;
  const double bytes = static_cast<double>(nb->communicators) * per_communicator;
  if (!dep.explain) return {"NCCL buffers", bytes, 0, {}, {}};
  const double mib = 1024.0 * 1024.0;
  const std::string proxy_text =
      proxy > 0 ? format(" + %lld p2p channels x %lld steps x %.0f KiB proxy buffer = %.0f MiB", static_cast<long long>(domain->p2p_channels),
                         static_cast<long long>(nb->proxy_shared_steps), domain->p2p_chunk_bytes / 1024.0, proxy / mib)
                : std::string();
  return {"NCCL buffers", bytes, 0,
          format("%lld communicators x (%lld channels x %.0f connection(s) x %.0f MiB%s%s) on %s, TP %lld, %s %s: inside the budget before vLLM "
                 "PR #25359 (%s; communicators: %s; per connection: %s; channels: %s%s)",
                 static_cast<long long>(nb->communicators), static_cast<long long>(domain->channels), connections, nb->connection_bytes / mib,
                 nvls > 0 ? format(" + %.0f MiB NVLS", nvls / mib).c_str() : "", proxy_text.c_str(), engine::interconnect_name(dep.interconnect),
                 static_cast<long long>(lay.tp), engine.engine.c_str(), engine.rule_version().text().c_str(), nb->counted.source.c_str(),
                 nb->communicators_source.c_str(), nb->connection_source.c_str(), domain->source.c_str(),
                 proxy > 0 ? ("; proxy buffer: " + nb->proxy_source).c_str() : ""),
          {{"communicators", static_cast<double>(nb->communicators)}, {"channels", static_cast<double>(domain->channels)}, {"connections_per_channel", connections},
           {"connection_bytes", nb->connection_bytes}, {"nvls_bytes", nvls}, {"proxy_shared_bytes", proxy}}};
}

Term estimate_non_torch(const engine::Overheads& oh, const engine::EngineProfile& engine, const std::string& device_family, const StageLayout& lay, bool explain,
                        double nccl_buffer_bytes) {
  // Issue 15/16 (nccl): where the NCCL buffer term applies it stands for the communicators the fixed share stood for.
  const bool multi_rank = lay.tp * lay.pp * lay.dp > 1 && nccl_buffer_bytes <= 0;
  // Issue 15 (nt018): a worker that counts only the non-torch increase since its init snapshot leaves out what the
  // device held at the snapshot (the runtime context, printed); the communicators come after it, so the multi-rank
  // share (a fraction of the absolute constant) is counted by both.
  const bool increase = non_torch_counted(engine, oh, device_family) == engine::NonTorchCounted::increase;
  const double single = increase ? oh.non_torch_bytes - *oh.non_torch_snapshot_bytes : oh.non_torch_bytes;
  const double bytes = single + (multi_rank ? oh.non_torch_bytes * oh.non_torch_multi_rank_fraction : 0.0);
  // The band of the non-torch term is at least the spread the printed breakdowns show for the platform.
  const double band = std::max(bytes * oh.band_fraction, oh.non_torch_band_bytes);
  if (!explain) return {"non-torch", bytes, band, {}, {}};
  if (increase)
    return {"non-torch", bytes, band,
            "non-torch increase since the worker's init snapshot: the fitted non-torch less the runtime context already there at the snapshot (" +
                engine.non_torch_counted_source + "; " + oh.non_torch_snapshot_source + ")",
            {{"non_torch_bytes", oh.non_torch_bytes}, {"snapshot_bytes", *oh.non_torch_snapshot_bytes}, {"multi_rank_bytes", bytes - single}}};
  const bool build_before = engine.build_named && engine.non_torch_increase_from_build && engine.non_torch_counted == engine::NonTorchCounted::increase &&
                            engine::compare_engine_builds(*engine.build_named, *engine.non_torch_increase_from_build) < 0;
  return {"non-torch", bytes, band,
          "runtime context, communicator buffers and workspaces (fitted; " + oh.evidence + ")" +
              (build_before ? "; the whole amount: build " + engine.build_named->text + " predates the increase count (" + engine.non_torch_increase_from_build_source + ")"
                            : std::string()),
          {{"non_torch_bytes", oh.non_torch_bytes}, {"multi_rank_fraction", multi_rank ? oh.non_torch_multi_rank_fraction : 0.0}}};
}

bool dsa_cp_on(const ModelSpec& m, const engine::EngineProfile& engine, const Deployment& dep, const StageLayout& lay) {
  const bool on = (engine.dsa_cp_switch == "flashcomm1" && dep.flashcomm1) || (engine.dsa_cp_switch == "additional_config" && dep.enable_dsa_cp);
  return on && lay.tp > 1 && has_sparse_indexer(m);
}

double estimate_dsa_cp_extra(const ModelSpec& m, const model::QuantScheme& scheme, const engine::EngineProfile& engine, const Deployment& dep,
                             const StageLayout& lay, std::string& rule) {
  if (!dsa_cp_on(m, engine, dep, lay)) return 0;
  const model::SchemeFormats formats(scheme);
  const double tp = static_cast<double>(lay.tp);
  const double split = 1.0 - 1.0 / tp;
  // Issue 15 (dsvtp16): on a prefill (kv producer) instance vLLM-Ascend takes another path
  // (utils.py enable_dsa_cp_with_layer_shard): every o_proj is a ShardedCPRowParallelOp (whole, no TP) and there is no
  // o_proj_full_pool; a layer named in additional_config layer_sharding ("q_b_proj", "o_proj") of a hidden layer
  // (not the MTP drafter's) is kept only on rank layer_idx % G of the shard_weight group (all world / PP ranks, DP
  // included: create_shard_weight_group(None)), plus prefetch_step + 1 = 2 whole-layer windows
  // (ops/layer_shard_linear.py post_process_after_loading). Rank 0 (the one that prints) keeps ceil(n / G) layers.
  const bool layer_shard = !engine.dsa_cp_layer_shard_source.empty() && dep.kv_producer && lay.pp == 1;
  auto sharded = [&](const char* name) {
    return layer_shard && std::find(dep.layer_sharding.begin(), dep.layer_sharding.end(), name) != dep.layer_sharding.end();
  };
  double whole_q_b = 0, whole_kv_b = 0, o_proj_layer = 0, o_proj_whole = 0;
  // Hidden layers of a sharded series: their count, bytes and weight-tensor bytes. Only `layer.weight` is sharded;
  // the per-channel scales of a quantized layer stay on every rank.
  struct Series {
    double bytes = 0, weight = 0;
    int64_t n = 0;
  } q_b_hidden, o_hidden;
  auto add = [&](Series& series, const model::WeightGroup& g, double bytes) {
    const int b = model::dtype_bits(m.dtype) / 8;
    const model::WeightFormat f = g.linear ? formats(g.module, g.expert) : model::WeightFormat::native;
    const double side = g.linear ? model::linear_weight_bytes(f, g.rows, 0, scheme, b) * static_cast<double>(g.count) : 0.0;
    series.bytes += bytes;
    series.weight += bytes - side;
    series.n += g.count;
  };
  for (const auto& g : m.weights) {
    if (g.part != model::Part::text && !(g.part == model::Part::mtp && dep.speculative.mtp())) continue;  // MTP layers load only as the drafter
    const bool hidden = g.part == model::Part::text;
    if (ends_with(g.module, "self_attn.q_b_proj")) {
      const double bytes = group_bytes(m, scheme, formats, g);
      if (hidden && sharded("q_b_proj")) {
        add(q_b_hidden, g, bytes);
      } else {
        whole_q_b += bytes * split;
      }
    }
    // kv_b_proj is dequantized into W_UK / W_UV in the model dtype and then disposed (sfa_v1.py process_weights_after_loading).
    else if (ends_with(g.module, "self_attn.kv_b_proj"))
      whole_kv_b += static_cast<double>(g.rows) * static_cast<double>(g.cols) * static_cast<double>(g.count) * (model::dtype_bits(m.dtype) / 8) * split;
    else if (ends_with(g.module, "self_attn.o_proj")) {
      const double bytes = group_bytes(m, scheme, formats, g);
      if (layer_shard && hidden && sharded("o_proj")) {
        add(o_hidden, g, bytes);
      } else if (layer_shard) {
        o_proj_whole += bytes * split;
      } else if (hidden && g.count > 0) {
        o_proj_layer = bytes / static_cast<double>(g.count);
      }
    }
  }
  const int64_t group = lay.tp * lay.dp;
  auto on_rank = [&](const Series& series) {  // held minus the 1/TP the weights term already counts
    if (series.n <= 0) return 0.0;
    const int64_t kept = (series.n + group - 1) / group + std::min<int64_t>(2, series.n);
    return series.bytes - series.weight + series.weight / static_cast<double>(series.n) * static_cast<double>(kept) - series.bytes / tp;
  };
  const double q_b_shard = on_rank(q_b_hidden), o_shard = on_rank(o_hidden);
  const double extra = whole_q_b + whole_kv_b + o_proj_layer + o_proj_whole + q_b_shard + o_shard;
  if (dep.explain) {
    if (layer_shard)
      rule += format(" + DSA context parallel on a prefill instance %.2f GiB (kv_b_proj as W_UK/W_UV %.2f and q_b_proj %.2f GiB whole instead of 1/%lld, "
                     "o_proj whole %.2f GiB; layer-sharded over %lld ranks, ceil(n/%lld) + 2 whole layers kept: q_b_proj %.2f, o_proj %.2f GiB beyond 1/%lld: %s; %s)",
                     bytes_to_gib(extra), bytes_to_gib(whole_kv_b), bytes_to_gib(whole_q_b), static_cast<long long>(lay.tp), bytes_to_gib(o_proj_whole),
                     static_cast<long long>(group), static_cast<long long>(group), bytes_to_gib(q_b_shard), bytes_to_gib(o_shard), static_cast<long long>(lay.tp),
                     engine.dsa_cp_layer_shard_source.c_str(), engine.dsa_cp_source.c_str());
    else
      rule += format(" + DSA context parallel %.2f GiB (q_b_proj %.2f and kv_b_proj as W_UK/W_UV %.2f GiB whole on every rank instead of 1/%lld, one full o_proj %.2f GiB: %s)",
                     bytes_to_gib(extra), bytes_to_gib(whole_q_b), bytes_to_gib(whole_kv_b), static_cast<long long>(lay.tp), bytes_to_gib(o_proj_layer),
                     engine.dsa_cp_source.c_str());
  }
  return extra;
}

double estimate_sfa_mlapo_copies(const ModelSpec& m, const model::QuantScheme& scheme, const engine::EngineProfile& engine, const Deployment& dep,
                                 const StageLayout& lay, std::string& rule) {
  const auto* mlapo = engine.sfa_mlapo_rule();
  if (!mlapo || !dep.mlapo.value_or(mlapo->default_on) || !has_sparse_indexer(m) || dsa_cp_on(m, engine, dep, lay)) return 0;
  const model::SchemeFormats formats(scheme);
  // sfa_v1.py process_weights_after_loading: "mlapo only supports W8A8 quantization in SFA scenario" (the fused
  // q_a / kv_a projection's method must be AscendW8A8LinearMethod, ModelSlim's static W8A8).
  for (const auto& g : m.weights)
    if (g.part == model::Part::text && ends_with(g.module, "self_attn.q_a_proj") && formats(g.module, g.expert) != model::WeightFormat::modelslim_w8a8) return 0;
  // _process_weights_for_fused_mlapo: wd_qkv = cat(kv_a, q_a) in int8 with deq_scale_qkv (float32 for a bf16 model)
  // and quant_bias_qkv (int32) per row; wu_q = the rank's q_b_proj (q_proj) weight, int8, with qb_deq_scl and qb_qt_bias
  // per row (trans_rope_weight makes each a new contiguous tensor).
  constexpr double k_row_vectors_bytes = 4.0 + 4.0;
  double bytes = 0;
  for (const auto& g : m.weights) {
    const bool drafter = g.part == model::Part::mtp && dep.speculative.mtp() && lay.pp == 1;  // the MTP layers sit on the last stage
    if (g.part != model::Part::text && !drafter) continue;
    const double stage = g.part == model::Part::text ? static_cast<double>(lay.first_layers) / static_cast<double>(lay.n_layers) : 1.0;
    const double rows = static_cast<double>(g.rows) * static_cast<double>(g.count);
    if (ends_with(g.module, "self_attn.q_a_proj") || ends_with(g.module, "self_attn.kv_a_proj_with_mqa"))
      bytes += rows * (static_cast<double>(g.cols) + k_row_vectors_bytes) * stage;
    else if (ends_with(g.module, "self_attn.q_b_proj"))
      bytes += rows / static_cast<double>(lay.tp) * (static_cast<double>(g.cols) + k_row_vectors_bytes) * stage;
  }
  if (dep.explain && bytes > 0)
    rule += format(" + MLAPO weights %.3f GiB (fused q_a / kv_a and this rank's q_b_proj in int8, kept beside the originals: %s)", bytes_to_gib(bytes),
                   mlapo->rule.source.c_str());
  return bytes;
}

double estimate_expert_scale_copies(const ModelSpec& m, const model::QuantScheme& scheme, const engine::EngineProfile& engine, const std::string& device_family,
                                    const Deployment& dep, const StageLayout& lay, std::string& rule) {
  double total = 0;
  std::optional<model::SchemeFormats> formats;  // built only where a rule applies (every fit of a plan passes here)
  for (const auto& copy : engine.moe_dynamic_scale_copies) {
    if (!engine.rule_applies(copy.rule) || std::find(copy.families.begin(), copy.families.end(), device_family) == copy.families.end()) continue;
    if (!formats) formats.emplace(scheme);
    double bytes = 0;
    for (const auto& g : m.weights) {
      const bool drafter = g.part == model::Part::mtp && dep.speculative.mtp() && lay.pp == 1;  // the MTP layers sit on the last stage
      if (!g.expert || !g.linear || (g.part != model::Part::text && !drafter)) continue;
      if ((*formats)(g.module, g.expert) != model::WeightFormat::modelslim_w8a8_dynamic) continue;
      // vLLM stacks gate and up into w13 (2 x moe_intermediate output channels, split by TP when the experts are) and
      // keeps down as w2, whose hidden output channels a TP-sharded expert keeps whole ([experts, hidden, 1] scales):
      // with expert parallel this rank holds experts / (DP x TP) whole experts, without it every expert.
      const bool w2 = ends_with(g.module, "down_proj");
      const double per_channel = w2 ? copy.w2_bytes_per_channel : copy.w13_bytes_per_channel;
      const double share = w2 && !dep.enable_expert_parallel ? 1.0 : weight_rank_share(g, lay.tp) * lay.expert_share();
      const double stage = g.part == model::Part::text ? static_cast<double>(lay.first_layers) / static_cast<double>(lay.n_layers) : 1.0;
      const double channels = static_cast<double>(g.rows) * static_cast<double>(g.count);
      bytes += channels * per_channel * share * stage;
    }
    total += bytes;
    if (dep.explain && bytes > 0)
      rule += format(" + expert scale copies %s %.3f GiB (%.0f B per w13 and %.0f B per w2 channel: %s)", copy.tensors.c_str(), bytes_to_gib(bytes),
                     copy.w13_bytes_per_channel, copy.w2_bytes_per_channel, copy.rule.source.c_str());
  }
  return total;
}

double estimate_gate_fp32_extra(const ModelSpec& m, const engine::EngineProfile& engine, const Deployment& dep, const StageLayout& lay, std::string& rule) {
  const auto& fp32 = engine.moe_gate_fp32;
  if (!engine.applies(fp32)) return 0;
  // vLLM's is_deepseek_mla: the models whose attention is MLA (kv_lora_rank set).
  const bool mla = std::any_of(m.layers.begin(), m.layers.end(), [](const model::LayerSpec& l) { return l.kind == model::LayerKind::mla_attention; });
  const double widen = 4.0 - static_cast<double>(model::dtype_bits(m.dtype) / 8);
  if (!mla || m.num_experts == 0 || widen <= 0) return 0;
  double bytes = 0;
  for (const auto& g : m.weights) {
    const bool drafter = g.part == model::Part::mtp && dep.speculative.mtp() && lay.pp == 1;  // the MTP layers sit on the last stage
    if (g.part != model::Part::text && !drafter) continue;
    if (g.stored_bytes > 0 || !(ends_with(g.module, "mlp.gate") || ends_with(g.module, "mlp.gate.e_score_correction_bias"))) continue;
    const double stage = g.part == model::Part::text ? static_cast<double>(lay.first_layers) / static_cast<double>(lay.n_layers) : 1.0;
    bytes += static_cast<double>(g.params()) * widen * stage;
  }
  if (dep.explain && bytes > 0) rule += format(" + the MoE router in fp32 %.3f GiB (%s)", bytes_to_gib(bytes), fp32->source.c_str());
  return bytes;
}

// CANN HCCL_BUFFSIZE: "Each communicator occupies 2 x HCCL_BUFFSIZE memory, which is used for receiving and
// sending memory"; default 200 (MB, i.e. MiB: vllm-ascend sizes it in units of 1024 x 1024)
// (https://www.hiascend.com/document/detail/en/canncommercial/800/apiref/envvar/envref_07_0080.html). A
// communicator created with an hccl_buffer_size option takes that size instead (HcclCommConfig has priority).
constexpr double k_hccl_buffsize_default_bytes = 200.0 * 1024 * 1024;

Term estimate_ep_communicators(const ModelSpec& m, const engine::EngineProfile& engine, const StageLayout& lay, int64_t expert_parallel_size, const Deployment& dep) {
  // Issue 15: versions that build every MoE token dispatcher with expert parallel off open the same communicators on
  // the MoE group (DP x TP ranks; one rank: not counted, no evidence that a one-rank group takes buffers).
  const auto& without_ep = engine.moe_hccl_communicators_without_ep;
  const bool ep_off_opens = engine.applies(without_ep) && m.num_experts > 0 && lay.tp * lay.dp > 1;
  if ((expert_parallel_size <= 1 && !ep_off_opens) || engine.ep_hccl_communicators.empty()) return {"EP communicators", 0, 0, {}, {}};
  const double buffsize = dep.hccl_buffsize_bytes.value_or(k_hccl_buffsize_default_bytes);
  // Issue 15 (evid23): before vLLM-Ascend PR #3073 no group had its own hccl_buffer_size, so each takes HCCL_BUFFSIZE,
  // the TP group too; the fitted multi-rank non-torch share holds the TP group at the default, so only its excess
  // 2 x (HCCL_BUFFSIZE - 200 MiB) is added here.
  const bool every_group = engine.applies(engine.hccl_every_group_at_buffsize);
  double bytes = 0;
  std::string groups;
  for (const auto& c : engine.ep_hccl_communicators) {
    if (c.needs_dp && lay.dp <= 1) continue;
    const double buffer = c.buffer_mib > 0 && !every_group ? c.buffer_mib * 1024 * 1024 : buffsize;
    bytes += 2.0 * buffer;
    if (dep.explain) groups += format("%s%s %.0f MiB", groups.empty() ? "" : ", ", c.group.c_str(), buffer / (1024 * 1024));
  }
  if (every_group && lay.tp > 1) {
    const double tp_excess = 2.0 * (buffsize - k_hccl_buffsize_default_bytes);
    bytes += tp_excess;
    if (dep.explain) groups += format(", tp %.0f MiB (2 x %.0f MiB beyond the default the non-torch share holds)", buffsize / (1024 * 1024), tp_excess / 2 / (1024 * 1024));
  }
  if (!dep.explain) return {"EP communicators", bytes, 0, {}, {}};
  return {"EP communicators", bytes, 0,
          format("2 x the HCCL buffer of each communicator the MoE dispatchers open at model construction (%s; HCCL_BUFFSIZE %.0f MiB%s): %s%s%s", groups.c_str(),
                 buffsize / (1024 * 1024), dep.hccl_buffsize_bytes ? "" : ", the CANN default", engine.ep_hccl_source.c_str(),
                 expert_parallel_size > 1 ? "" : ("; expert parallel off, opened all the same: " + without_ep->source).c_str(),
                 every_group ? ("; this build gives every group HCCL_BUFFSIZE: " + engine.hccl_every_group_at_buffsize->source).c_str() : ""),
          {{"hccl_buffsize_bytes", buffsize}, {"expert_parallel_size", static_cast<double>(expert_parallel_size)}}};
}

// Issue 15 (evid26): vLLM-Ascend's dynamic EPLB, read at f8315f5 (vLLM 0.16) and c69291e (0.17); the warm-up is the same
// in every tag from v0.11.0rc1 to main. NPUModelRunner.profile_run calls eplb_warmup() first (worker/model_runner_v1.py),
// which builds VllmEplbAdaptor and runs EplbUpdator.warm_up_eplb (eplb/eplb_updator.py): a one-element dist.P2POp isend /
// irecv to every other rank through dist.batch_isend_irecv on the default process group, whose HCCL communicator nothing
// opened before, so it takes 2 x HCCL_BUFFSIZE (the group is created by init_process_group without an hccl_buffer_size
// option). VllmEplbAdaptor.init_buffer_tensor (eplb/adaptor/vllm_adaptor.py) allocates num_local_experts buffers, each a
// torch.empty_like of every expert tensor of the first MoE layer's first local expert (W8A8: w13, w2, the fp32 w13 scale
// and the w2 scale). Both happen after the weights are measured and before determine_available_memory's peak, so they
// come off the KV budget.
Term estimate_eplb_warmup(const ModelSpec& m, const model::QuantScheme& scheme, const engine::EngineProfile& engine, int64_t expert_parallel_size,
                          const Deployment& dep) {
  if (!dep.dynamic_eplb || expert_parallel_size <= 1 || m.num_experts <= 0 || engine.ep_hccl_communicators.empty()) return {"EPLB warm-up", 0, 0, {}, {}};
  const double buffsize = dep.hccl_buffsize_bytes.value_or(k_hccl_buffsize_default_bytes);
  const model::SchemeFormats formats(scheme);
  double expert_bytes = 0;  // one expert of one MoE layer, as stored
  for (const auto& g : m.weights)
    if (g.expert && g.part == model::Part::text && g.count > 0) expert_bytes += group_bytes(m, scheme, formats, g) / static_cast<double>(g.count);
  const double local_experts = static_cast<double>(m.num_experts + dep.num_redundant_experts) / static_cast<double>(expert_parallel_size);
  const double bytes = 2.0 * buffsize + local_experts * expert_bytes;
  if (!dep.explain) return {"EPLB warm-up", bytes, 0, {}, {}};
  return {"EPLB warm-up", bytes, 0,
          format("dynamic EPLB warm-up in the profile run (vLLM-Ascend eplb_updator.py warm_up_eplb, eplb/adaptor/vllm_adaptor.py at f8315f5): "
                 "2 x HCCL_BUFFSIZE %.0f MiB for the default group's communicator + %.0f local expert slots x %.1f MiB (one expert of one layer)",
                 buffsize / (1024 * 1024), local_experts, expert_bytes / (1024 * 1024)),
          {{"hccl_buffsize_bytes", buffsize}, {"local_experts", local_experts}, {"expert_bytes", expert_bytes}}};
}

// The largest MC2 token capacity vLLM-Ascend's defaults give (ascend_forward_context.py set_mc2_tokens_capacity: the
// largest graph capture size, at most 512 by default, or min(max_num_reqs x decode query length, 512) without graphs).
constexpr int64_t k_mc2_capacity_default_max_tokens = 512;

Term estimate_moe_allgather(const ModelSpec& m, const model::QuantScheme& scheme, const engine::EngineProfile& engine, const std::string& device_family,
                            const Deployment& dep, const StageLayout& lay, int64_t expert_parallel_size, int64_t batched_tokens) {
  const auto& fams = engine.moe_allgather_families;
  // Issue 15 (a2ag): select_moe_comm_method takes ALLGATHER whenever expert parallel is off (EP group of 1), at any
  // token count; with EP on, only above the MC2 capacity.
  const bool ep = expert_parallel_size > 1;
  if (m.num_experts <= 0 || (ep && batched_tokens <= k_mc2_capacity_default_max_tokens) || std::find(fams.begin(), fams.end(), device_family) == fams.end())
    return {"MoE all-gather rows", 0, 0, {}, {}};
  const double b = static_cast<double>(model::dtype_bits(m.dtype) / 8);
  const bool int8_rows = int8_dispatched_experts(scheme);
  const double inter_bytes = int8_rows ? 1.0 : b;
  const double n = static_cast<double>(lay.dp) * static_cast<double>(batched_tokens);
  const double rows = n * static_cast<double>(m.num_experts_per_tok);
  const double h = static_cast<double>(m.hidden_size);
  // With EP every rank holds whole experts; without it vLLM's FusedMoEParallelConfig shards every expert's
  // intermediate over TP x DP (the MoE layer's flattened TP group), so each permuted row is moe_intermediate / (TP x DP) wide.
  const int64_t inter_ranks = ep ? 1 : std::max<int64_t>(1, lay.expert_ranks());
  const double inter = static_cast<double>(ceil_div(static_cast<uint64_t>(m.moe_intermediate_size), static_cast<uint64_t>(inter_ranks)));
  const double bytes = n * h * b + rows * (inter * inter_bytes + h * b);
  if (!dep.explain) return {"MoE all-gather rows", bytes, 0, {}, {}};
  return {"MoE all-gather rows", bytes, 0,
          format("profile run on the %s MoE path: N = DP %lld x %lld batched tokens gathered (N x hidden %lld x %.0f B) + R = N x top_k %lld rows "
                 "at the down projection (R x moe_intermediate %lld%s x %.0f B in + R x hidden x %.0f B out) (%s)",
                 ep ? "DP all-gather" : "all-gather (expert parallel off)", static_cast<long long>(lay.dp), static_cast<long long>(batched_tokens),
                 static_cast<long long>(m.hidden_size), b, static_cast<long long>(m.num_experts_per_tok), static_cast<long long>(m.moe_intermediate_size),
                 ep ? "" : format(" / %lld TP x DP ranks", static_cast<long long>(inter_ranks)).c_str(), inter_bytes, b, engine.moe_allgather_source.c_str()),
          {{"gathered_tokens", n}, {"rows", rows}, {"hidden_size", h}, {"moe_intermediate_size", static_cast<double>(m.moe_intermediate_size)}, {"moe_intermediate_per_rank", inter}}};
}

Term estimate_moe_all2all_rows(const ModelSpec& m, const model::QuantScheme& scheme, const engine::EngineProfile& engine, const std::string& device_family,
                               const Deployment& dep, const StageLayout& lay, int64_t expert_parallel_size, int64_t batched_tokens) {
  const Term none{"MoE all-to-all rows", 0, 0, {}, {}};
  if (m.num_experts <= 0 || expert_parallel_size <= 1 || batched_tokens <= 0 || engine.moe_all2all_rows.empty()) return none;
  const bool int8_experts = int8_dispatched_experts(scheme);
  const char* mode = dep.mode == ExecutionMode::eager ? "eager" : "graph";
  for (const auto& r : engine.moe_all2all_rows) {
    if (!r.rule.covers(engine.rule_version()) || std::find(r.families.begin(), r.families.end(), device_family) == r.families.end()) continue;
    if ((r.int8_experts_only && !int8_experts) || batched_tokens <= r.above_tokens) continue;
    const bool split = std::find(r.tokens_split_by_tp_in.begin(), r.tokens_split_by_tp_in.end(), mode) != r.tokens_split_by_tp_in.end();
    const int64_t tokens = split ? static_cast<int64_t>(ceil_div(static_cast<uint64_t>(batched_tokens), static_cast<uint64_t>(std::max<int64_t>(1, lay.tp)))) : batched_tokens;
    const double rows = static_cast<double>(tokens) * static_cast<double>(m.num_experts_per_tok);
    const double b = static_cast<double>(model::dtype_bits(m.dtype) / 8);
    const double int8_rows = int8_experts ? r.int8_rows : 0.0;
    const double model_rows = r.model_dtype_rows + (int8_experts ? 0.0 : r.unquantized_input_rows);
    const double bytes = rows * static_cast<double>(m.hidden_size) * (model_rows * b + int8_rows);
    if (!dep.explain) return {"MoE all-to-all rows", bytes, 0, {}, {}};
    return {"MoE all-to-all rows", bytes, 0,
            format("R = %lld tokens%s x top_k %lld rows, %.0f x R x hidden %lld x %.0f B + %.0f x R x hidden x 1 B (int8) at the expert combine (%s)",
                   static_cast<long long>(tokens), split ? format(" (%lld / TP %lld)", static_cast<long long>(batched_tokens), static_cast<long long>(lay.tp)).c_str() : "",
                   static_cast<long long>(m.num_experts_per_tok), model_rows, static_cast<long long>(m.hidden_size), b, int8_rows, r.rule.source.c_str()),
            {{"rows", rows}, {"hidden_size", static_cast<double>(m.hidden_size)}, {"model_dtype_rows", model_rows}, {"int8_rows", int8_rows}}};
  }
  return none;
}

namespace {

// The undecided text for a driver not stated, made once per (engine's two versions, EP ranks) and thread, and shared
// by every row that asks (issue 19: a plan asks on each of its 16+ rank A2 EP rows, none with a driver stated). The
// key is the versions' text, not the profile's address, so a profile at a freed one's address never reads its text.
SharedText mc2_driver_not_stated(const engine::EngineProfile& engine, long long ranks) {
  const std::string& failing = engine.mc2_transport_driver_failing.text;
  const std::string& fixed = engine.mc2_transport_driver_fixed.text;
  struct Made {
    std::string failing, fixed;
    long long ranks;
    SharedText text;
  };
  thread_local std::vector<Made> made;  // a few entries: the EP sizes of 2 - 16 nodes on one or two profiles
  for (const Made& k : made)
    if (k.ranks == ranks && k.failing == failing && k.fixed == fixed) return k.text;
  if (made.size() >= 64) made.clear();
  made.push_back({failing, fixed, ranks,
                  format("the NPU driver version, not stated: expert parallel over %lld A2 ranks dispatches the profile run's first pass through MC2 "
                         "(aclnnMoeDistributeDispatch), which opens RDMA queue pairs to the other node's ranks; on NPU driver %s it failed with 'Failed to "
                         "allocate resource[qp] ... Reason: Memory resources are exhausted' with memory free, on %s it started "
                         "(vllm-ascend #9005; engines.json mc2_transport_source); give --npu-driver-version (npu-smi info) to decide",
                         ranks, failing.c_str(), fixed.c_str())});
  return made.back().text;
}

}  // namespace

// select_moe_comm_method takes MC2 on A2 at world_size_across_dp / PP >= 16 and tokens within the capacity, from 0.18
// only with at most 24 experts per device (0.13 - 0.17 had no expert bound; the bound is applied to all: a miss above it).
// The engine's two driver versions are parsed by the catalogue loader; only a stated driver is parsed here.
Mc2TransportVerdict mc2_transport(const ModelSpec& m, const engine::EngineProfile& engine, const std::string& device_family, int64_t expert_parallel_size,
                                  const Deployment& dep) {
  const auto& fams = engine.moe_allgather_families;
  if (engine.mc2_transport_source.empty() || expert_parallel_size < 16 || m.num_experts / expert_parallel_size > 24 ||
      std::find(fams.begin(), fams.end(), device_family) == fams.end())
    return {};
  const std::string& npu_driver_version = dep.npu_driver_version;
  const engine::NpuDriverVersion& lo = engine.mc2_transport_driver_failing;
  const engine::NpuDriverVersion& hi = engine.mc2_transport_driver_fixed;
  const auto ranks = static_cast<long long>(expert_parallel_size);
  if (npu_driver_version.empty()) return {Mc2Transport::undecided, mc2_driver_not_stated(engine, ranks)};
  const auto given = engine::parse_npu_driver_version(npu_driver_version, "npu_driver_version");
  if (!given) return {Mc2Transport::undecided, mc2_driver_not_stated(engine, ranks)};
  if (compare_npu_driver_versions(*given, hi) >= 0) {
    if (!dep.explain) return {Mc2Transport::starts, {}};
    return {Mc2Transport::starts, format("NPU driver %s, at or above %s: the MC2 dispatch over %lld A2 ranks is taken to allocate its RDMA queue pairs (%s)",
                                         npu_driver_version.c_str(), hi.text.c_str(), ranks, engine.mc2_transport_source.c_str())};
  }
  if (compare_npu_driver_versions(*given, lo) <= 0)
    return {Mc2Transport::fails,
            format("NPU function error: call aclnnMoeDistributeDispatch failed, error code is 561000 ... EI0007: Failed to allocate resource[qp] ... "
                   "Reason: Memory resources are exhausted. (the profile run's MC2 dispatch over %lld A2 ranks on NPU driver %s, at or below %s where it was "
                   "reported failing; fix: upgrade the NPU driver and firmware to %s or later, vllm-ascend #9005)",
                   ranks, npu_driver_version.c_str(), lo.text.c_str(), hi.text.c_str())};
  return {Mc2Transport::undecided,
          format("the NPU driver version: %s lies between %s, on which the MC2 dispatch over %lld A2 ranks failed with 'Failed to allocate resource[qp] ... "
                 "Reason: Memory resources are exhausted', and %s, on which it started (vllm-ascend #9005; engines.json mc2_transport_source); no source "
                 "reports a version between them",
                 npu_driver_version.c_str(), lo.text.c_str(), ranks, hi.text.c_str())};
}

int64_t whole_prompt_batched_tokens(const ModelSpec& m, const engine::EngineProfile& engine, int64_t batched_tokens, int64_t max_model_len) {
  if (!engine.applies(engine.whole_prompt_prefill)) return batched_tokens;
  // platform.py skips MLA models (model_config.use_mla) and multimodal ones (is_multimodal_model).
  if (has_mla_cache(m) || has_vision_tower(m)) return batched_tokens;
  return std::max(batched_tokens, max_model_len);
}

namespace {

std::string sizes_text(const std::vector<int64_t>& sizes) {
  std::string out = "[";
  for (size_t i = 0; i < sizes.size(); ++i) out += (i ? ", " : "") + std::to_string(sizes[i]);
  return out + "]";
}

bool has_full_decode(CudagraphMode mode) {
  return mode == CudagraphMode::full || mode == CudagraphMode::full_decode_only || mode == CudagraphMode::full_and_piecewise;
}

}  // namespace

Status check_capture_size_values(const std::vector<int64_t>& sizes) {
  for (const int64_t s : sizes)
    if (s < 1)
      return make_error(ErrorKind::invalid_argument,
                        format("cudagraph_capture_sizes: %lld is not a positive token count (vLLM's _set_cudagraph_sizes does not check it; no graph of "
                               "%lld tokens can be captured)", static_cast<long long>(s), static_cast<long long>(s)));
  return Ok{};
}

Status check_max_capture_size(int64_t max_capture_size, std::optional<int64_t> largest_size) {
  if (max_capture_size < 1)
    return make_error(ErrorKind::invalid_argument,
                      format("max_cudagraph_capture_size %lld: AssertionError: Maximum cudagraph size should be greater than or equal to 1 when using cuda graph. "
                             "(vLLM _set_cudagraph_sizes)", static_cast<long long>(max_capture_size)));
  if (largest_size && *largest_size != max_capture_size)
    return make_error(ErrorKind::invalid_argument,
                      format("ValueError: customized max_cudagraph_capture_size(=%lld) should be consistent with the max value of cudagraph_capture_sizes(=%lld)",
                             static_cast<long long>(max_capture_size), static_cast<long long>(*largest_size)));
  return Ok{};
}

Expected<CaptureSizes> cudagraph_capture_sizes(const CaptureInputs& in) {
  CaptureSizes c;
  if (in.mode == CudagraphMode::none) return c;
  const int64_t q = std::max<int64_t>(1, in.decode_query_len);
  const int64_t seqs = std::max<int64_t>(1, in.max_num_seqs), tokens = std::max<int64_t>(1, in.max_num_batched_tokens);
  // vllm/config/vllm.py _set_cudagraph_sizes: the ceiling, then at most max_num_batched_tokens.
  int64_t ceiling = in.max_capture_size ? *in.max_capture_size : std::min(seqs * q * 2, in.default_ceiling);
  ceiling = std::min(tokens, ceiling);
  PF_TRY(ceiling_ok, check_max_capture_size(ceiling, std::nullopt));
  (void)ceiling_ok;
  std::vector<int64_t> sizes;
  if (!in.capture_sizes.empty()) {
    PF_TRY(sizes_ok, check_capture_size_values(in.capture_sizes));
    (void)sizes_ok;
    std::vector<int64_t> given = in.capture_sizes;
    std::sort(given.begin(), given.end());
    given.erase(std::unique(given.begin(), given.end()), given.end());
    for (const int64_t s : given)
      if (s <= tokens) sizes.push_back(s);
    if (sizes.size() < given.size())
      c.notes.push_back(format("cudagraph_capture_sizes specified in compilation_config %s is overridden by config %s", sizes_text(in.capture_sizes).c_str(),
                               sizes_text(sizes).c_str()));
  } else {
    // Issue 19 (round 11): room for every size at once (a plan computes these lists once per fit, 1.5 million times).
    sizes.reserve(static_cast<size_t>(36 + std::max<int64_t>(0, (ceiling - 256) / 16)));
    for (const int64_t s : {int64_t{1}, int64_t{2}, int64_t{4}})
      if (s <= ceiling) sizes.push_back(s);
    for (int64_t s = 8; s <= ceiling && s < 256; s += 8) sizes.push_back(s);
    for (int64_t s = 256; s <= ceiling; s += 16) sizes.push_back(s);
    // Ascending: ceiling is at most max_num_batched_tokens, so that size, when within it, is the ceiling and comes last.
    if (tokens <= ceiling && (sizes.empty() || sizes.back() != tokens)) sizes.push_back(tokens);
  }
  int64_t largest = sizes.empty() ? 0 : sizes.back();
  if (in.max_capture_size && !in.capture_sizes.empty()) {
    PF_TRY(max_ok, check_max_capture_size(*in.max_capture_size, largest));
    (void)max_ok;
  } else if (in.max_capture_size && *in.max_capture_size != largest) {
    c.notes.push_back(format("Truncating max_cudagraph_capture_size to %lld", static_cast<long long>(largest)));
  }
  // compilation.py adjust_cudagraph_sizes_for_spec_decode, called by the model runner only when decode graphs are FULL:
  // each size rounded up to a multiple of the decode query length, those above the largest dropped.
  if (q > 1 && has_full_decode(in.mode) && !sizes.empty()) {
    std::vector<int64_t> rounded;
    for (const int64_t s : sizes) {
      const int64_t r = (s + q - 1) / q * q;
      if (r <= largest && (rounded.empty() || rounded.back() != r)) rounded.push_back(r);
    }
    if (rounded.empty() && q <= largest) rounded.push_back(q);
    if (rounded.empty())
      return make_error(ErrorKind::invalid_argument,
                        format("ValueError: No valid cudagraph sizes after rounding to multiple of %lld (num_speculative_tokens + 1 or tp if sequence parallelism "
                               "is enabled) please adjust num_speculative_tokens (%lld) or max_cudagraph_capture_size (%lld) or cudagraph_capture_sizes (%s)",
                               static_cast<long long>(q), static_cast<long long>(q - 1), static_cast<long long>(largest), sizes_text(sizes).c_str()));
    sizes = std::move(rounded);
  }
  const bool piecewise = in.mode == CudagraphMode::piecewise || in.mode == CudagraphMode::full_and_piecewise;
  if (in.mode == CudagraphMode::full) c.full = sizes;
  if (in.mode == CudagraphMode::full_and_piecewise || in.mode == CudagraphMode::full_decode_only) {
    c.full.reserve(sizes.size());
    for (const int64_t s : sizes)
      if (s <= seqs * q) c.full.push_back(s);
  }
  if (piecewise) c.piecewise = std::move(sizes);  // last: the full list above reads `sizes`
  return c;
}

CaptureSizes cudagraph_capture_sizes(int64_t max_num_seqs, int64_t max_num_batched_tokens, int64_t decode_query_len) {
  auto c = cudagraph_capture_sizes(CaptureInputs{.max_num_seqs = max_num_seqs, .max_num_batched_tokens = max_num_batched_tokens, .decode_query_len = decode_query_len});
  return c ? std::move(*c) : CaptureSizes{};
}

CudagraphMode resolve_cudagraph_mode(const engine::EngineProfile& engine, const Deployment& dep, const std::string& device_id, std::string* note) {
  if (dep.mode == ExecutionMode::eager) return CudagraphMode::none;
  const auto& g = dep.graph_capture;
  const bool levels = engine.applies(engine.optimization_levels);
  CudagraphMode mode = CudagraphMode::full_and_piecewise;
  if (g.mode) mode = *g.mode;
  else if (levels && g.optimization_level)  // vllm/config/vllm.py OPTIMIZATION_LEVEL_00 .. 03
    mode = *g.optimization_level == 0 ? CudagraphMode::none : *g.optimization_level == 1 ? CudagraphMode::piecewise : CudagraphMode::full_and_piecewise;
  const bool speculative = !dep.speculative.method.empty() && dep.speculative.num_speculative_tokens > 0;
  const auto& fi = engine.flashinfer_spec_decode_piecewise;
  const auto& trtllm = engine.flashinfer_uniform_batch_devices;
  if (mode == CudagraphMode::full_and_piecewise && speculative && g.attention_backend == "FLASHINFER" && engine.applies(fi) &&
      std::find(trtllm.begin(), trtllm.end(), device_id) == trtllm.end()) {
    mode = CudagraphMode::piecewise;
    if (note)
      *note = "CUDAGraphMode.FULL_AND_PIECEWISE is not supported with spec-decode for attention backend FlashInferBackend (support: "
              "AttentionCGSupport.UNIFORM_SINGLE_TOKEN_DECODE); setting cudagraph_mode=PIECEWISE";
  }
  return mode;
}

Expected<Term> estimate_graph(const engine::Overheads& oh, const engine::EngineProfile& engine, const std::string& device_id, const Deployment& dep,
                              bool graph_in_budget, int64_t max_num_seqs, int64_t max_num_batched_tokens, std::string* fallback_note) {
  std::string fallback;
  const CudagraphMode mode = resolve_cudagraph_mode(engine, dep, device_id, &fallback);
  if (fallback_note) *fallback_note = fallback;
  const bool eager = mode == CudagraphMode::none;
  const bool mechanism = !eager && graph_in_budget && oh.graph_per_capture_bytes > 0 && max_num_seqs > 0 && max_num_batched_tokens > 0;
  if (!mechanism) {
    const double bytes = eager ? 0.0 : oh.graph_bytes;
    if (!dep.explain) return Term{"graph capture", bytes, bytes * oh.band_fraction, {}, {}};
    return Term{"graph capture", bytes, bytes * oh.band_fraction,
                eager ? (dep.mode == ExecutionMode::eager ? "--enforce-eager: no graphs" : "cudagraph_mode NONE: no graphs")
                      : (graph_in_budget ? "estimated before KV sizing and subtracted from the budget (the platform's prior)"
                                         : "captured after KV allocation, outside the budget (needs the 1 - util headroom)"),
                {{"graph_bytes", bytes}, {"in_budget", graph_in_budget ? 1.0 : 0.0}}};
  }
  const int64_t q = dep.speculative.method.empty() ? 1 : 1 + std::max<int64_t>(0, dep.speculative.num_speculative_tokens);
  const auto& g = dep.graph_capture;
  const int64_t ceiling = engine.cudagraph_default_ceiling(device_id);
  const CaptureInputs capture{.max_num_seqs = max_num_seqs,
                               .max_num_batched_tokens = max_num_batched_tokens,
                               .decode_query_len = q,
                               .default_ceiling = ceiling,
                               .capture_sizes = g.capture_sizes,
                               .max_capture_size = g.max_capture_size,
                               .mode = mode};
  // profile_cudagraph_memory: max over modes of the first capture + sum over modes of (graphs - 1) x the second capture.
  const auto term_bytes = [&](int64_t pw, int64_t full) {
    const int64_t further = std::max<int64_t>(0, pw - 1) + std::max<int64_t>(0, full - 1);
    return pw + full == 0 ? 0.0 : oh.graph_first_capture_bytes + static_cast<double>(further) * oh.graph_per_capture_bytes;
  };
  if (!dep.explain) {
    // Issue 19 (round 13): without the text only the two graph counts matter, and a plan's tens of thousands of fits
    // share a handful of capture inputs: the counts are kept per thread by their inputs (a few entries).
    struct Counts {
      CaptureInputs in;
      int64_t piecewise = 0, full = 0;
    };
    thread_local std::vector<Counts> known;
    auto it = std::find_if(known.begin(), known.end(), [&](const Counts& c) { return c.in == capture; });
    if (it == known.end()) {
      PF_TRY(sizes, cudagraph_capture_sizes(capture));
      if (known.size() >= 64) known.clear();  // a bound on the search, never reached by the shipped catalogue's plans
      known.push_back({capture, static_cast<int64_t>(sizes.piecewise.size()), static_cast<int64_t>(sizes.full.size())});
      it = known.end() - 1;
    }
    const double bytes = term_bytes(it->piecewise, it->full);
    return Term{"graph capture", bytes, bytes * oh.band_fraction, {}, {}};
  }
  PF_TRY(sizes, cudagraph_capture_sizes(capture));
  const auto pw = static_cast<int64_t>(sizes.piecewise.size()), full = static_cast<int64_t>(sizes.full.size());
  const double bytes = term_bytes(pw, full);
  std::string settings;
  if (!g.capture_sizes.empty()) settings = "cudagraph_capture_sizes " + sizes_text(g.capture_sizes);
  else if (g.max_capture_size) settings = format("max_cudagraph_capture_size %lld", static_cast<long long>(*g.max_capture_size));
  else
    settings = format("capture sizes up to min(max_num_seqs %lld x decode query length %lld x 2, %lld)", static_cast<long long>(max_num_seqs), static_cast<long long>(q),
                      static_cast<long long>(ceiling));
  std::string notes = fallback;
  for (const auto& n : sizes.notes) notes += (notes.empty() ? "" : "; ") + n;
  return Term{"graph capture", bytes, bytes * oh.band_fraction,
              format("estimated before KV sizing and subtracted from the budget: first capture %.0f MiB + (PIECEWISE %lld - 1 + FULL %lld - 1) graphs x "
                     "%.2f MiB (cudagraph_mode %s; %s, at most max_num_batched_tokens %lld%s%s; %s)",
                     oh.graph_first_capture_bytes / (1024.0 * 1024), static_cast<long long>(pw), static_cast<long long>(full), oh.graph_per_capture_bytes / (1024.0 * 1024),
                     cudagraph_mode_name(mode), settings.c_str(), static_cast<long long>(max_num_batched_tokens), notes.empty() ? "" : "; vLLM: ", notes.c_str(),
                     oh.graph_capture_source.c_str()),
              {{"graph_bytes", bytes},
               {"in_budget", 1.0},
               {"piecewise_graphs", static_cast<double>(pw)},
               {"full_graphs", static_cast<double>(full)},
               {"largest_capture_tokens", static_cast<double>(sizes.piecewise.empty() ? (sizes.full.empty() ? 0 : sizes.full.back()) : sizes.piecewise.back())},
               {"largest_full_tokens", static_cast<double>(sizes.full.empty() ? 0 : sizes.full.back())}}};
}

}  // namespace preflight::estimate::terms
