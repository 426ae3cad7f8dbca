// The memory terms of vLLM / vllm-ascend start-up, per shared/reference/engine-memory-accounting.md:
// weights (sec 9.1), the profile run's activation peak (1.1 step 3), non-torch and graph memory (1.2, 4.2).
// Weights are exact from the model's shapes and storage formats; the activation, non-torch and graph
// terms are modelled from their mechanism with per-platform fitted factors (engines.json "overheads").
#include "estimate/fit_terms.hpp"
#include "estimate/fit_term_predicates.hpp"
#include "estimate/fit_memo.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "base/checked.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "engine/moe_row_padding.hpp"
#include "estimate/gguf_vllm.hpp"
#include "estimate/vision_pass.hpp"
#include "model/quant_layers.hpp"
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

double fp8_marlin_loaded_bytes(const ModelSpec& m, const model::QuantScheme& scheme, const model::WeightGroup& g) {
  const double rows = static_cast<double>(g.rows), cols = static_cast<double>(g.cols);
  const double groups = std::ceil(cols / static_cast<double>(std::max<int64_t>(1, scheme.block_cols)));
  return (rows * cols + groups * rows * static_cast<double>(model::dtype_bits(m.dtype) / 8)) * static_cast<double>(g.count);
}

}  // namespace

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
  if (scheme.linear_format == model::WeightFormat::packed_bits && g.cols > 1 && !(g.expert && scheme.expert_format != model::WeightFormat::packed_bits))
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

void GroupBytesMemo::get(GroupBytes& out, const model::ModelSpec& m, const Deployment& dep) {
  const model::QuantScheme& scheme = terms::deployed_scheme(m, dep);
  {
    const std::lock_guard<std::mutex> lock(m_mutex);
    for (const Entry& e : m_entries)
      if (e.model == &m && e.scheme == scheme) {
        out = e.bytes;
        out.scheme = &scheme;
        ++m_reused;
        return;
      }
  }
  out = group_bytes_for(m, dep);  // outside the lock: two workers may both compute a key, and the second keeps its own
  const std::lock_guard<std::mutex> lock(m_mutex);
  ++m_computed;
  m_entries.push_back({&m, scheme, out});
  m_entries.back().bytes.scheme = nullptr;
}

GroupPlace group_place(const model::WeightGroup& g) {
  return {.layer = g.part == model::Part::text && is_layer_weight(g),  // the part first: no text search for the rest
          .shared_expert = g.module.find(".shared_expert.") != std::string::npos,
          .lm_head = g.module == "lm_head",
          .embed_tokens = g.module == "model.embed_tokens"};
}
}  // namespace preflight::estimate

namespace preflight::estimate::terms {
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

// Issue 15: block-FP8 weights on a CUDA card without FP8 tensor cores (Ampere, Turing) load through Marlin
// (fp8_marlin_loaded_bytes).
bool fp8_marlin_fallback(const device::DeviceSpec& device, const engine::EngineProfile& engine) {
  return engine.engine == "vllm" && engine.platform == "cuda" && (device.family == "ampere" || device.family == "turing");
}

// Issue 15: whether vLLM-Ascend keeps a FRACTAL_NZ copy of the vocab embeddings on the card's family (engines.json
// embedding_nz_copy).
bool embedding_nz_copy_on(const device::DeviceSpec& device, const engine::EngineProfile& engine) {
  const auto& fams = engine.embedding_nz_copy_families;
  return engine.applies(engine.embedding_nz_copy) && std::find(fams.begin(), fams.end(), device.family) != fams.end();
}

namespace {
// Issue 15: the second, FRACTAL_NZ copy vLLM-Ascend keeps of every vocab embedding (embed_tokens, lm_head) on the
// device families of engines.json embedding_nz_copy (310P); bytes on the first and on the last pipeline stage.
std::pair<double, double> embedding_nz_copy_bytes(const ModelSpec& m, const model::QuantScheme& scheme, const device::DeviceSpec& device,
                                                  const engine::EngineProfile& engine, const StageLayout& lay) {
  if (!embedding_nz_copy_on(device, engine)) return {0.0, 0.0};
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

// Issue 15 (acc29): the bytes an engine's MoE row padding (engine/moe_row_padding.hpp: vLLM's VLLM_ROCM_MOE_PADDING on
// ROCm) adds to one unquantized routed-expert group, as a whole-model figure that the group's rank share turns into one
// rank's. vLLM's w13 (gate_proj, up_proj: cols = hidden) keeps whole hidden-size rows on every rank, TP splitting the rows
// between ranks; w2 (down_proj) keeps intermediate / (DP x TP) of each row without expert parallel (the flattened tensor
// split of FusedMoEParallelConfig.make), so every rank holds all of its rows, and whole rows with it. A row whose bytes
// are a multiple of row_bytes_multiple gains pad_bytes (UnquantizedFusedMoEMethod._maybe_pad_weight).
double moe_row_padding_bytes(const ModelSpec& m, const model::WeightGroup& g, const engine::MoeRowPadding& pad, const Deployment& dep, const StageLayout& lay) {
  const double element = static_cast<double>(model::dtype_bits(m.dtype) / 8);
  const double ranks = static_cast<double>(lay.expert_ranks());
  const bool row_split = g.cols != m.hidden_size && !dep.enable_expert_parallel && lay.expert_ranks() > 1;
  const double row_bytes = static_cast<double>(g.cols) * element / (row_split ? ranks : 1.0);
  if (row_bytes <= 0 || std::fmod(row_bytes, pad.row_bytes_multiple) != 0.0) return 0.0;
  return static_cast<double>(g.rows) * static_cast<double>(g.count) * pad.pad_bytes * (row_split ? ranks : 1.0);
}

// One rank's row padding on the first and the last pipeline stage and per decoder layer (the routed experts' rank share
// and stage layers, as the weights), and the all-ranks total; only experts stored in the model dtype are padded.
struct RowPadding {
  double first = 0, last = 0, layer = 0, all_ranks = 0;
};
RowPadding moe_row_padding(const ModelSpec& m, const model::QuantScheme& scheme, const engine::MoeRowPadding& pad, const Deployment& dep, const StageLayout& lay) {
  const model::SchemeFormats formats(scheme);
  RowPadding out;
  const double n = static_cast<double>(lay.n_layers);
  for (const auto& g : m.weights) {
    if (g.part != model::Part::text || !g.expert || !g.linear || g.cols <= 1 || formats(g.module, g.expert) != model::WeightFormat::native) continue;
    if (scheme.linear_format == model::WeightFormat::packed_bits) continue;
    const double extra = moe_row_padding_bytes(m, g, pad, dep, lay);
    const double base = weight_rank_share(g, lay.tp) * lay.expert_share();
    out.first += extra * base * static_cast<double>(lay.first_layers) / n;
    out.last += extra * base * static_cast<double>(lay.last_layers) / n;
    out.layer += extra * base / n;
    out.all_ranks += extra;
  }
  return out;
}

// The rotary cos/sin caches a model allocates at load (max_position x rotary_dim x bytes per element, per instance).
// Issue 15 (acc31): a DeepseekScalingRotaryEmbedding keeps the engine's copies of its cache in the model dtype, and a
// DSA model builds two: vLLM's deepseek_v2.py gives the indexer its own get_rope(..., is_neox_style=True) beside the
// attention's is_neox_style=False (DeepseekV2MLAAttention.__init__, indexer_rope_emb, at 3e41992fe, v0.13.0's), and
// is_neox_style is part of get_rope's _ROPE_DICT key (rotary_embedding/__init__.py), so the two are not shared.
struct RopeCache {
  double bytes = 0;
  double element = 0;
  double instances = 1;
  bool deepseek_scaling = false;
};
RopeCache rope_cache(const ModelSpec& m, const engine::Overheads& oh) {
  RopeCache r;
  if (m.max_position_embeddings <= 0 || m.rotary_dim <= 0) return r;
  r.deepseek_scaling = m.rope_class == model::RopeClass::deepseek_scaling && oh.rope_cache_deepseek_scaling_copies.has_value();
  // Issue 15 (warmup32): on CUDA / ROCm the catalogue's bytes are the 16-bit model dtype's (vLLM builds the cache in the
  // model dtype), so --dtype float32 doubles them (Llama-3.1-8B on vLLM 0.19: 29.98 GiB printed, 32 MiB of it this cache);
  // the NPU's calibrated 8 B is an fp32 cache and its copies, whatever the model dtype.
  const double dtype_scale = oh.platform == "npu" ? 1.0 : static_cast<double>(model::dtype_bits(m.dtype)) / 16.0;
  r.element = r.deepseek_scaling ? *oh.rope_cache_deepseek_scaling_copies * static_cast<double>(model::dtype_bits(m.dtype) / 8) : oh.rope_cache_bytes_per_element * dtype_scale;
  r.instances = m.rope_class == model::RopeClass::deepseek_scaling && has_sparse_indexer(m) ? 2.0 : 1.0;
  r.bytes = r.instances * static_cast<double>(m.max_position_embeddings) * static_cast<double>(m.rotary_dim) * r.element;
  return r;
}

// The weights rule's words on where shared and routed experts sit (explain only).
void append_expert_split_rule(const ModelSpec& m, const engine::EngineProfile& engine, const StageLayout& lay, std::string& rule,
                              std::vector<std::pair<std::string, double>>& inputs) {
  const auto& sp_only = engine.shared_experts_whole_only_with_sp;
  const bool ascend_shared_rule = engine.applies(sp_only);
  if (ascend_shared_rule && m.num_shared_experts > 0 && lay.tp > 1)
    rule += lay.sequence_parallel_moe ? format("; shared experts whole on every rank (shared-expert DP: %s)", sp_only->source.c_str())
                                      : format("; shared experts split by TP (%s)", sp_only->source.c_str());
  if (lay.dp > 1) {
    rule += format("; routed experts split over DP x TP = %lld ranks%s", static_cast<long long>(lay.expert_ranks()),
                   lay.sequence_parallel_moe && !ascend_shared_rule ? ", shared experts whole on every rank (sequence-parallel MoE)" : "");
    inputs.emplace_back("data_parallel_size", static_cast<double>(lay.dp));
  }
}

// Issue 16 (llamacpp34): the weights rule's words for a GGUF on vLLM (explain only).
std::string vllm_gguf_rule(const VllmGgufBytes& gguf, bool file, double extra) {
  const std::string padding = gguf.padding_bytes > 0 ? format(", merged q/k/v and gate/up padded to their widest shard's rows (+%.2f GiB, vLLM 0.9.0 on)",
                                                              bytes_to_gib(gguf.padding_bytes))
                                                       : std::string();
  return format("; GGUF tensors as vLLM's loader holds them: each in its ggml type%s, F32 / F16 tensors in the model dtype (%.2f GiB)%s "
                "(%+.2f GiB over the file, all ranks; estimate/gguf_vllm)",
                file ? "" : " (llama-quantize's preset mix, estimate/llama_cpp_quant)", bytes_to_gib(gguf.unquantized_bytes), padding.c_str(), bytes_to_gib(extra));
}

Expected<StageWeights> weights_as_stored(const ModelSpec& m, const model::QuantScheme& scheme, const device::DeviceSpec& device, const engine::EngineProfile& engine,
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
  // Issue 16 (llamacpp34): a GGUF file or preset on vLLM, tensor by tensor as its loader holds them (estimate/gguf_vllm).
  const std::optional<VllmGgufBytes> gguf = engine.engine == "vllm" ? vllm_gguf_bytes(m, scheme, engine) : std::nullopt;
  double gguf_extra = 0;  // bytes vLLM holds over the file's (merged-linear padding, F32 tensors in the model dtype), all ranks
  for (size_t i = 0; i < m.weights.size(); ++i) {
    const model::WeightGroup& g = m.weights[i];
    const auto format_of = [&] { return pre_formats ? pre_formats[i] : (*formats_held)(g.module, g.expert); };
    if (g.part == model::Part::mtp) continue;
    const double stored = gguf ? gguf->stored[i] : pre ? pre[i] : group_bytes(m, scheme, *formats_held, g);
    computed_total += stored;
    if (skip_tower && g.part == model::Part::vision) continue;  // in the checkpoint, not loaded
    double bytes = gguf ? gguf->loaded[i] : stored;
    gguf_extra += bytes - stored;
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
  if (gguf) {
    if (explain) rule += vllm_gguf_rule(*gguf, m.quant.method == "gguf", gguf_extra);
    computed_total += gguf_extra;
    if (explain) inputs.emplace_back("gguf_vllm_extra_bytes", gguf_extra);
  }
  if (bnb_extra > 0) {
    if (explain) rule += format("; bitsandbytes nested absmax dequantized to fp32 at load (+%.2f GiB all ranks, vLLM bitsandbytes_loader _dequantize_dq)", bytes_to_gib(bnb_extra));
    computed_total += bnb_extra;
  }
  // Issues 15/16: loaded as stored with no flag or the flag naming the checkpoint's own method (--quantization ascend).
  if (m.exact_weight_bytes && computed_total > 0 && !dep.quant_scheme && (dep.quantization.empty() || to_lower(dep.quantization) == m.quant.method)) {
    const double exact = static_cast<double>(*m.exact_weight_bytes) + mxfp4_extra + marlin_extra + bnb_extra + (gguf ? gguf_extra : 0.0);
    weights = computed_rank * exact / computed_total;
    weights_last = computed_last * exact / computed_total;
    computed_layer = computed_layer * exact / computed_total;
    if (explain) {
      rule = "exact checkpoint bytes (headers) x this rank's share" + (gguf ? vllm_gguf_rule(*gguf, true, gguf_extra) : std::string());
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
  if (const RopeCache rope = rope_cache(m, oh); rope.bytes > 0) {
    weights += rope.bytes;
    weights_last += rope.bytes;
    shared += rope.bytes;
    if (explain) {
      rule += format(" + rotary caches %s%lld x %lld x %.0f B (%s)", rope.instances > 1 ? "2 (attention and DSA indexer) x " : "",
                     static_cast<long long>(m.max_position_embeddings), static_cast<long long>(m.rotary_dim), rope.element,
                     rope.deepseek_scaling ? oh.rope_cache_deepseek_scaling_source.c_str() : oh.rope_cache_source.c_str());
      inputs.emplace_back("rotary_cache_bytes", rope.bytes);
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
  if (explain) append_expert_split_rule(m, engine, lay, rule, inputs);
  StageWeights out;
  out.first = {"weights", weights, 0, rule, inputs};
  out.last = {"weights", weights_last, 0, rule, inputs};
  out.layer_bytes = computed_layer;
  out.shared_bytes = shared;
  if (explain) out.last.inputs[2].second = static_cast<double>(lay.last_layers);
  return out;
}

}  // namespace

// The weights as weights_as_stored sizes them, plus the row padding the engine gives unquantized MoE experts at load on
// this platform (issue 15, acc29).
Expected<StageWeights> estimate_weights(const ModelSpec& m, const model::QuantScheme& scheme, const device::DeviceSpec& device, const engine::EngineProfile& engine,
                                        const engine::Overheads& oh, const Deployment& dep, const StageLayout& lay, int64_t batched_tokens) {
  PF_TRY(out, weights_as_stored(m, scheme, device, engine, oh, dep, lay, batched_tokens));
  const engine::MoeRowPadding* pad = oh.moe_row_padding.get();
  if (!pad || !pad->applied_by(engine)) return out;
  const RowPadding p = moe_row_padding(m, scheme, *pad, dep, lay);
  if (p.all_ranks <= 0) return out;
  // Issue 15 (acc30): the environment turns it off (vllm/envs.py VLLM_ROCM_MOE_PADDING: bool(int(value)), default "1").
  if (dep.moe_row_padding && !*dep.moe_row_padding) {
    if (dep.explain) {
      const std::string note = format("; unquantized MoE experts not padded: %s in the engine's environment (the padding would add %.2f GiB all ranks; %s)",
                                      pad->switch_env.c_str(), bytes_to_gib(p.all_ranks), pad->source.c_str());
      for (Term* t : {&out.first, &out.last}) t->rule += note;
    }
    return out;
  }
  out.first.bytes += p.first;
  out.last.bytes += p.last;
  out.layer_bytes += p.layer;
  if (dep.explain) {
    const std::string note = format("; unquantized MoE experts padded %.0f B a row where the row is a multiple of %.0f B (+%.2f GiB all ranks; %s; %s turns it off)",
                                    pad->pad_bytes, pad->row_bytes_multiple, bytes_to_gib(p.all_ranks), pad->source.c_str(), pad->switch_env.c_str());
    for (Term* t : {&out.first, &out.last}) {
      t->rule += note;
      t->inputs.emplace_back("moe_row_padding_bytes", p.all_ranks);
    }
  }
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
    const bool mtp_kept = model::mtp_kept_unquantized(scheme);
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

}  // namespace preflight::estimate::terms
