// The profile run's activation peak of vLLM / vllm-ascend start-up (shared/reference/engine-memory-accounting.md
// sec 1.1 step 3): the text forward, the vision encoder's dummy pass, the sampler run and a drafter's buffers.
// Split out of fit_terms.cpp (weights, drafter); the non-torch, communication and graph terms are in fit_overhead_terms.cpp.

#include "estimate/fit_terms.hpp"
#include "estimate/fit_term_predicates.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "base/checked.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "engine/mm_profile_rules.hpp"
#include "estimate/vision_pass.hpp"
#include "model/vision_tower.hpp"


namespace preflight::estimate::terms {

using model::ModelSpec;

namespace {

// Issue 15 (vlprof35): the dummy video of a version whose processor counts a video in prompt tokens (engines.json
// mm_video_placeholder_tokens: vLLM 0.11 - 0.12 Qwen3-VL, 12.5 per embedding), when it is the modality with the most
// tokens per item (vLLM's max() keeps the image on a tie) or the only one: its prompt tokens (0: the image is profiled)
// and the embeddings the encoder makes of it. From vLLM 0.13 the rules count embeddings (1 per embedding, below the
// image's 16,384), so the video is profiled only where --limit-mm-per-prompt allows no image (issue 15, vlvid35).
struct PlaceholderVideo {
  int64_t tokens = 0, embeds = 0, frames = 0, height_px = 0, width_px = 0;
  const engine::MmProfileRules::VideoPlaceholderTokens* rule = nullptr;
};
Expected<PlaceholderVideo> video_placeholder_item(const ModelSpec& m, const engine::EngineProfile& engine, const Deployment& dep, int64_t L, int64_t per_image) {
  PlaceholderVideo out;
  const auto* rule = engine::video_placeholder_tokens(engine, m.architecture);
  if (!rule || dep.no_video || per_image <= 0) return out;
  PF_TRY(v, model::dummy_video(m, L, rule->max_frames_per_video, rule->video_max_pixels, rule->video_min_pixels));
  // get_max_video_tokens: int(embeddings x tokens_per_embed), Python's int() truncating.
  const auto tokens = static_cast<int64_t>(static_cast<double>(v.tokens) * rule->tokens_per_embed);
  if (tokens <= per_image && !dep.no_images) return out;
  return PlaceholderVideo{tokens, v.tokens, v.frames, v.height_px, v.width_px, rule};
}

// Issue 15 (vlprof35): the rows the encoder cache holds through the text and sampler dummy runs. Versions that pad each
// dummy output (engines.json mm_encoder_output_padding) give every item budget rows (0.11) or the modality's maximum
// tokens per item (0.12) when its output is shorter; the padding loop's variable (`output`) still references the last
// unpadded output until the sampler run returns, and that output is a split() view of the tower's one output tensor
// (Qwen2.5-VL / Qwen3-VL _process_*_input), so every unpadded row is held too. Other versions: the outputs as encoded.
Expected<int64_t> held_encoder_rows(const engine::EngineProfile& engine, const Deployment& dep, int64_t items, int64_t encoded_per_item, int64_t per_item,
                                    int64_t budget, std::vector<std::string>& assumptions) {
  std::string source;
  const auto pad = engine::encoder_output_padding(engine, &source);
  const int64_t target = pad == engine::MmProfileRules::PadTo::budget ? budget : pad == engine::MmProfileRules::PadTo::item ? per_item : 0;
  if (target <= encoded_per_item) return checked_product(items, encoded_per_item, "encoder outputs held");
  PF_TRY(padded, checked_product(items, target, "encoder outputs held (padded)"));
  PF_TRY(unpadded, checked_product(items, encoded_per_item, "encoder outputs held"));
  if (dep.explain)
    assumptions.push_back(format("%s pads each dummy encoder output of %lld rows to %lld (%s) and caches them through the text and sampler dummy runs, with the "
                                 "unpadded output still referenced: %lld rows held (%s)",
                                 engine.id.c_str(), static_cast<long long>(encoded_per_item), static_cast<long long>(target),
                                 pad == engine::MmProfileRules::PadTo::budget ? "the encoder budget" : "the maximum tokens per item", static_cast<long long>(padded + unpadded),
                                 source.c_str()));
  return padded + unpadded;
}

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
  PF_TRY(placeholder, video_placeholder_item(m, engine, dep, L, per_image));
  int64_t video_embeds = 0;
  if (placeholder.tokens > 0 && !video) {
    per_item = placeholder.tokens;
    video_embeds = placeholder.embeds;
    video = true;
  }
  if (video_embeds > 0 && dep.explain && dep.no_images)
    run.assumptions.push_back(format("--limit-mm-per-prompt allows no image: %s profiles the dummy video, %lld frames at %lld x %lld px (max_model_len %lld), %lld embeddings%s (%s)",
                                     engine.id.c_str(), static_cast<long long>(placeholder.frames), static_cast<long long>(placeholder.width_px),
                                     static_cast<long long>(placeholder.height_px), static_cast<long long>(L), static_cast<long long>(video_embeds),
                                     per_item != video_embeds ? format(" counted as %lld tokens", static_cast<long long>(per_item)).c_str() : "",
                                     placeholder.rule->rule.source.c_str()));
  else if (video_embeds > 0 && dep.explain)
    run.assumptions.push_back(format("%s counts a video in prompt tokens (%.1f per embedding, the timestamps around each): the dummy video of %lld frames at %lld x %lld px "
                                     "(max_model_len %lld) encodes %lld embeddings and counts %lld tokens, above an image's %lld, so the profile run encodes the video; "
                                     "--limit-mm-per-prompt '{\"video\": 0}' profiles the image instead (%s)",
                                     engine.id.c_str(), placeholder.rule->tokens_per_embed, static_cast<long long>(placeholder.frames),
                                     static_cast<long long>(placeholder.width_px), static_cast<long long>(placeholder.height_px), static_cast<long long>(L),
                                     static_cast<long long>(video_embeds), static_cast<long long>(per_item), static_cast<long long>(per_image),
                                     placeholder.rule->rule.source.c_str()));
  run.encoder_profiles_video = video;
  const int64_t budget = std::max(batched_tokens, per_item);
  int64_t encoder_tokens = budget;
  int64_t held_rows = budget;
  run.encoder_items = 0;
  if (per_item > 0) {
    // Issue 15 (mm): the budget and the item count come from the largest item (vLLM MultiModalBudget), the
    // encoded item from the dummy data, which an image width/height in --limit-mm-per-prompt caps (vLLM >= 0.11.1).
    run.encoder_items = std::max<int64_t>(1, budget / per_item);
    int64_t encoded_per_item = video_embeds > 0 ? video_embeds : per_item;
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
    PF_TRY(rows, held_encoder_rows(engine, dep, run.encoder_items, encoded_per_item, per_item, budget, run.assumptions));
    held_rows = rows;
  }
  run.encoder_budget_tokens = budget;
  if (video && video_embeds == 0 && dep.explain)
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
  // Issue 15 (vlprof35): the rows the cache holds follow the version's padding (held_encoder_rows).
  ph.encoder_held_bytes = static_cast<double>(held_rows) * static_cast<double>(m.hidden_size) * static_cast<double>(1 + m.vision_deepstack_levels) * b;
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
  // Session 30 (evid30's vLLM #16692 line: DeepSeek-R1 FP8, TP 16 + EP over two 8 x H800 nodes, KV tokens +47%): with
  // expert parallelism each rank's routed experts are whole (vLLM FusedMoEParallelConfig.make: use_ep gives the MoE
  // tp_size 1, so FusedMoE's intermediate_size_per_partition is moe_intermediate_size), and the fused-MoE intermediate
  // caches the profile forward allocates (fused_moe.py fused_experts_impl: [M, top_k, N] with N the rank's w13 width)
  // are not divided by TP. Under sequence-parallel MoE (DP > 1, EP, TP > 1) a rank routes 1 / TP of the tokens, which
  // divides the same bytes by TP again. vLLM only (CUDA / ROCm, the Triton fused-MoE path read); vLLM-Ascend's MoE
  // layers keep their records and fitted unit (test_npumoe.cpp, test_fit_ep.cpp).
  const double mlp_divisor = engine.engine == "vllm" && m.num_experts > 0 && dep.enable_expert_parallel && !lay.sequence_parallel_moe ? 1.0 : tp;
  ph.text_unit_bytes = static_cast<double>(batched_tokens) *
                       (widths[0] * static_cast<double>(m.hidden_size) + widths[1] * attention_width / tp + widths[2] * mlp_width / mlp_divisor +
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
  // A video the version profiles (issue 15, vlprof35 / vlvid35: vLLM 0.11+ Qwen3-VL) keeps the pass with images limited to 0.
  const bool video_profiled = m.vision_video_max_groups > 0 || engine::video_placeholder_tokens(engine, m.architecture) != nullptr;
  const bool text_only = has_vision && dep.no_images && (dep.no_video || !video_profiled);
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


}  // namespace preflight::estimate::terms
