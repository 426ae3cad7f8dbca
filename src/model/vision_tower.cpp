// Vision towers, by kind:
//  - qwen3_vl (Qwen3-VL, Qwen3.5/3.6): Conv3d patch embed with bias, learned position embedding
//    (num_position_embeddings x hidden), `depth` blocks of LayerNorm(w,b) x2 + qkv/proj with bias +
//    fc1/fc2 with bias, a merger (LayerNorm on hidden, fc1 on hidden*merge^2, fc2 to out_hidden_size)
//    and one post-shuffle merger per deepstack_visual_indexes entry.
//  - qwen2_5_vl: Conv3d without bias, blocks of RMSNorm x2 + qkv/proj with bias + gated MLP with
//    bias, merger of RMSNorm + two Linear layers.
//  - generic_vit (CLIP / SigLIP towers): patch conv + position embedding + pre-LN blocks, plus a
//    two-layer projector to the text hidden size. Marked as an approximation.
#include "model/vision_tower.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "base/units.hpp"

namespace preflight::model {

namespace {
// The tower's linear layers are vLLM's tensor-parallel linears (QKV/column and row parallel in the blocks and
// mergers; mm_encoder_tp_mode "weights", the default), so each rank holds 1/TP of them; the patch and position
// embeddings, norms and biases are counted whole on every rank.
void add(VisionTower& v, const std::string& module, int64_t rows, int64_t cols, int64_t count = 1, bool linear = true) {
  if (rows <= 0 || cols <= 0 || count <= 0) return;
  v.weights.push_back(WeightGroup{"model.visual." + module, rows, cols, count, linear ? Shard::column : Shard::replicated, Part::vision, linear, false, 1.0, 0});
}
void bias(VisionTower& v, const std::string& module, int64_t rows, int64_t count = 1) { add(v, module, rows, 1, count, false); }
}  // namespace

Expected<VisionTower> add_vision_tower(const Json& vision_config, const std::string& origin, VisionKind kind, int64_t text_hidden) {
  VisionTower v;
  JsonObject c(vision_config, origin, "vision_config");
  PF_TRY(depth_a, c.opt_int("depth"));
  PF_TRY(depth_b, c.opt_int("num_hidden_layers"));
  PF_TRY(hidden_opt, c.opt_int("hidden_size"));
  PF_TRY(inter_opt, c.opt_int("intermediate_size"));
  PF_TRY(patch_opt, c.opt_int("patch_size"));
  PF_TRY(tpatch_opt, c.opt_int("temporal_patch_size"));
  PF_TRY(chans_a, c.opt_int("in_channels"));
  PF_TRY(chans_b, c.opt_int("in_chans"));
  PF_TRY(chans_c, c.opt_int("num_channels"));
  PF_TRY(merge_opt, c.opt_int("spatial_merge_size"));
  PF_TRY(out_opt, c.opt_int("out_hidden_size"));
  PF_TRY(pos_opt, c.opt_int("num_position_embeddings"));
  PF_TRY(image_opt, c.opt_int("image_size"));
  const int64_t depth = depth_a.value_or(depth_b.value_or(0));
  const int64_t h = hidden_opt.value_or(0);
  const int64_t inter = inter_opt.value_or(4 * h);
  const int64_t patch = patch_opt.value_or(14);
  const int64_t chans = chans_a.value_or(chans_b.value_or(chans_c.value_or(3)));
  const int64_t merge = merge_opt.value_or(2);
  const int64_t out = out_opt.value_or(text_hidden);
  auto bad = [&](int64_t value, int64_t cap) { return value < 0 || value > cap; };
  if (depth <= 0 || h <= 0 || bad(depth, 1000) || bad(h, 1 << 16) || bad(inter, 1 << 18) || patch <= 0 || bad(patch, 1024) ||
      bad(chans, 64) || merge <= 0 || bad(merge, 64) || bad(out, 1 << 20) || bad(tpatch_opt.value_or(0), 64) || bad(image_opt.value_or(0), 1 << 20)) {
    return make_error(ErrorKind::corrupt, format("%s: vision_config: depth/hidden_size/patch sizes/image_size missing or out of range", origin.c_str()), origin);
  }
  v.hidden_size = h;
  v.depth = depth;
  v.intermediate_size = inter;
  if (kind == VisionKind::qwen3_vl || kind == VisionKind::qwen2_5_vl) {
    // Qwen processors cap an image at 16,384 merged tokens: Qwen3-VL/3.5 longest_edge 16,777,216 px over
    // (16 x 2)^2, Qwen2.5-VL max_pixels 12,845,056 over (14 x 2)^2 (preprocessor_config.json of the checkpoints).
    v.max_tokens_per_image = 16384;
    v.patches_per_token = merge * merge;
    // Their smallest resized area (preprocessor_config.json): Qwen3-VL/3.5 size.shortest_edge 65,536 px, Qwen2.5-VL
    // min_pixels 3,136 px; sides in multiples of patch x merge (32 and 28 px).
    v.resize_factor_px = patch * merge;
    v.min_pixels = kind == VisionKind::qwen3_vl ? 65536 : 3136;
    // Qwen2-VL / 2.5-VL in vLLM: the dummy video has frames of the largest image size, as many as
    // max_model_len holds, capped at _MAX_FRAMES_PER_VIDEO = 14 (7 temporal groups): a 128,000-token
    // context profiles "1 video items" with an encoder budget of 114,688 tokens (vllm-openai v0.23.0 log,
    // Qwen2.5-VL-7B on an A100; data/evidence). Qwen3-VL/3.5 size the dummy video by the video processor's
    // pixel limit (25,165,824 px = 12,288 tokens), below the image: vLLM-Ascend 0.13-0.23 logs profile images.
    if (kind == VisionKind::qwen2_5_vl) v.video_max_groups = 7;
  }
  const int64_t merged = h * merge * merge;
  if (kind == VisionKind::qwen3_vl) {
    const int64_t tpatch = tpatch_opt.value_or(2);
    add(v, "patch_embed.proj", h, chans * tpatch * patch * patch, 1, false);
    bias(v, "patch_embed.proj.bias", h);
    if (pos_opt && *pos_opt > 0 && *pos_opt < (1 << 22)) add(v, "pos_embed", *pos_opt, h, 1, false);
    bias(v, "blocks.*.norms", 4 * h, depth);
    add(v, "blocks.*.attn.qkv", 3 * h, h, depth);
    bias(v, "blocks.*.attn.qkv.bias", 3 * h, depth);
    add(v, "blocks.*.attn.proj", h, h, depth);
    bias(v, "blocks.*.attn.proj.bias", h, depth);
    add(v, "blocks.*.mlp.linear_fc1", inter, h, depth);
    bias(v, "blocks.*.mlp.linear_fc1.bias", inter, depth);
    add(v, "blocks.*.mlp.linear_fc2", h, inter, depth);
    bias(v, "blocks.*.mlp.linear_fc2.bias", h, depth);
    int64_t deepstack = 0;
    if (const Json* ds = c.find("deepstack_visual_indexes"); ds && ds->is_array()) deepstack = static_cast<int64_t>(ds->size());
    bias(v, "merger.norm", 2 * h);
    add(v, "merger.linear_fc1", merged, merged);
    bias(v, "merger.linear_fc1.bias", merged);
    add(v, "merger.linear_fc2", out, merged);
    bias(v, "merger.linear_fc2.bias", out);
    v.deepstack_levels = deepstack;
    if (deepstack > 0) {
      bias(v, "deepstack_merger_list.*.norm", 2 * merged, deepstack);
      add(v, "deepstack_merger_list.*.linear_fc1", merged, merged, deepstack);
      bias(v, "deepstack_merger_list.*.linear_fc1.bias", merged, deepstack);
      add(v, "deepstack_merger_list.*.linear_fc2", out, merged, deepstack);
      bias(v, "deepstack_merger_list.*.linear_fc2.bias", out, deepstack);
    }
    v.rule = format("Qwen3-VL vision tower: %lld blocks of hidden %lld, merger and %lld deepstack mergers", static_cast<long long>(depth),
                    static_cast<long long>(h), static_cast<long long>(deepstack));
  } else if (kind == VisionKind::qwen2_5_vl) {
    const int64_t tpatch = tpatch_opt.value_or(2);
    add(v, "patch_embed.proj", h, chans * tpatch * patch * patch, 1, false);
    bias(v, "blocks.*.norms", 2 * h, depth);
    add(v, "blocks.*.attn.qkv", 3 * h, h, depth);
    bias(v, "blocks.*.attn.qkv.bias", 3 * h, depth);
    add(v, "blocks.*.attn.proj", h, h, depth);
    bias(v, "blocks.*.attn.proj.bias", h, depth);
    add(v, "blocks.*.mlp.gate_proj", inter, h, depth);
    add(v, "blocks.*.mlp.up_proj", inter, h, depth);
    bias(v, "blocks.*.mlp.gate_up.bias", 2 * inter, depth);
    add(v, "blocks.*.mlp.down_proj", h, inter, depth);
    bias(v, "blocks.*.mlp.down_proj.bias", h, depth);
    bias(v, "merger.ln_q", h);
    add(v, "merger.mlp.0", merged, merged);
    bias(v, "merger.mlp.0.bias", merged);
    add(v, "merger.mlp.2", out, merged);
    bias(v, "merger.mlp.2.bias", out);
    v.rule = format("Qwen2.5-VL vision tower: %lld blocks of hidden %lld with gated MLP", static_cast<long long>(depth), static_cast<long long>(h));
  } else {
    const int64_t image = image_opt.value_or(0);
    const int64_t positions = image > 0 ? (image / patch) * (image / patch) + 1 : 0;
    add(v, "embeddings.patch_embedding", h, chans * patch * patch, 1, false);
    bias(v, "embeddings.patch_embedding.bias", h);
    if (positions > 0) add(v, "embeddings.position_embedding", positions, h, 1, false);
    bias(v, "encoder.layers.*.norms", 4 * h, depth);
    add(v, "encoder.layers.*.self_attn.qkvo", 4 * h, h, depth);
    bias(v, "encoder.layers.*.self_attn.bias", 4 * h, depth);
    add(v, "encoder.layers.*.mlp.fc1", inter, h, depth);
    bias(v, "encoder.layers.*.mlp.fc1.bias", inter, depth);
    add(v, "encoder.layers.*.mlp.fc2", h, inter, depth);
    bias(v, "encoder.layers.*.mlp.fc2.bias", h, depth);
    add(v, "projector.linear_1", text_hidden, h);
    add(v, "projector.linear_2", text_hidden, text_hidden);
    v.rule = format("generic ViT: %lld pre-LN blocks of hidden %lld, MLP %lld, and a 2-layer projector", static_cast<long long>(depth),
                    static_cast<long long>(h), static_cast<long long>(inter));
    v.assumption = "vision tower counted as a generic ViT with a 2-layer projector; exact for CLIP/SigLIP towers, approximate for resamplers";
  }
  return v;
}

namespace {

// get_image_size_with_most_features: the first token count from the largest down whose closest factor pair has an
// aspect ratio of at most 200 (16,384 tokens: 128 x 128, so 4,096 px square at patch 16, 3,584 px at patch 14), as
// (rows, cols) in resize factors.
std::pair<int64_t, int64_t> largest_image_grid(int64_t most) {
  int64_t rows = 1, cols = most;
  for (int64_t n = most; n > 0; --n) {
    rows = 1;
    for (auto d = static_cast<int64_t>(std::sqrt(static_cast<double>(n))) + 1; d >= 1; --d)
      if (d * d <= n && n % d == 0) { rows = d; break; }
    cols = n / rows;
    if (cols <= 200 * rows) break;
  }
  return {rows, cols};
}

// transformers' Qwen3-VL video smart_resize (temporal_factor 2): the sides of `frames` frames of h x w px, their pixels
// over all frames (the frame count rounded half-to-even to an even number) within min_px - max_px.
std::pair<double, double> video_smart_resize(int64_t frames, double h, double w, double f, double min_px, double max_px) {
  double h_bar = std::nearbyint(h / f) * f, w_bar = std::nearbyint(w / f) * f;
  const double t_bar = std::nearbyint(static_cast<double>(frames) / 2.0) * 2.0, all = static_cast<double>(frames) * h * w;
  if (t_bar * h_bar * w_bar > max_px) {
    const double beta = std::sqrt(all / max_px);
    h_bar = std::max(f, std::floor(h / beta / f) * f);
    w_bar = std::max(f, std::floor(w / beta / f) * f);
  } else if (t_bar * h_bar * w_bar < min_px) {
    const double beta = std::sqrt(min_px / all);
    h_bar = std::ceil(h * beta / f) * f;
    w_bar = std::ceil(w * beta / f) * f;
  }
  return {h_bar, w_bar};
}

}  // namespace

Expected<DummyVideo> dummy_video(const ModelSpec& m, int64_t seq_len, int64_t max_frames, int64_t video_max_pixels, int64_t video_min_pixels) {
  const int64_t most = m.vision_max_tokens_per_image, f = m.vision_resize_factor_px;
  if (most <= 0 || f <= 0) return make_error(ErrorKind::unsupported, "the dummy video's size is known only for Qwen2.5-VL / Qwen3-VL / Qwen3.5 towers");
  // Issue 15 (vlvid35): a two-frame dummy (max_frames 2, vLLM >= 0.15 "treat videos as special images") has frames of
  // the largest image within video_max_pixels / 2 (get_image_size_with_most_features(max_pixels=longest_edge //
  // temporal_patch_size)); before, frames of the image processor's largest image, resized over all frames below.
  const bool two_frames = max_frames == 2;
  const int64_t frame_tokens = two_frames ? video_max_pixels / 2 / (f * f) : most;
  if (frame_tokens <= 0) return make_error(ErrorKind::unsupported, "the two-frame dummy video holds no merged token within video_max_pixels");
  const auto [rows, cols] = largest_image_grid(frame_tokens);
  const double fd = static_cast<double>(f), h = static_cast<double>(rows * f), w = static_cast<double>(cols * f);
  auto at = [&](int64_t frames) {
    const auto [hb, wb] = video_smart_resize(frames, h, w, fd, static_cast<double>(video_min_pixels), static_cast<double>(video_max_pixels));
    const int64_t grid_t = std::max<int64_t>((frames + frames % 2) / 2, 1);
    return DummyVideo{frames, grid_t * static_cast<int64_t>(hb / fd) * static_cast<int64_t>(wb / fd), static_cast<int64_t>(hb), static_cast<int64_t>(wb)};
  };
  // _get_max_video_frames(seq_len, start_num_frames=2): the first count whose next one exceeds seq_len; then at most
  // max_frames (_MAX_FRAMES_PER_VIDEO), and at least 2 (_get_dummy_videos).
  int64_t frames = 2;
  while (frames < max_frames && at(frames + 1).tokens <= seq_len) ++frames;
  return at(std::max<int64_t>(frames, 2));
}

Expected<int64_t> dummy_image_tokens(const ModelSpec& m, int64_t width_cap_px, int64_t height_cap_px) {
  const int64_t most = m.vision_max_tokens_per_image, f = m.vision_resize_factor_px;
  if (width_cap_px <= 0 && height_cap_px <= 0) return most;
  if (most <= 0 || f <= 0)
    return make_error(ErrorKind::unsupported, "the dummy image's size is known only for Qwen2.5-VL / Qwen3-VL / Qwen3.5 towers");
  const auto [rows, cols] = largest_image_grid(most);
  const double h = static_cast<double>(height_cap_px > 0 ? std::min(rows * f, height_cap_px) : rows * f);
  const double w = static_cast<double>(width_cap_px > 0 ? std::min(cols * f, width_cap_px) : cols * f);
  if (std::max(h, w) / std::min(h, w) > 200)
    return make_error(ErrorKind::invalid_argument, format("--limit-mm-per-prompt: a dummy image of %.0f x %.0f px has an aspect ratio above 200, which the image processor rejects", w, h));
  // smart_resize (Python's round: half to even, as std::nearbyint in the default rounding mode).
  const double fd = static_cast<double>(f), max_pixels = static_cast<double>(most) * fd * fd, min_pixels = static_cast<double>(m.vision_min_pixels);
  double h_bar = std::nearbyint(h / fd) * fd, w_bar = std::nearbyint(w / fd) * fd;
  if (h_bar * w_bar > max_pixels) {
    const double beta = std::sqrt((h * w) / max_pixels);
    h_bar = std::max(fd, std::floor(h / beta / fd) * fd);
    w_bar = std::max(fd, std::floor(w / beta / fd) * fd);
  } else if (h_bar * w_bar < min_pixels) {
    const double beta = std::sqrt(min_pixels / (h * w));
    h_bar = std::ceil(h * beta / fd) * fd;
    w_bar = std::ceil(w * beta / fd) * fd;
  }
  return static_cast<int64_t>(h_bar / fd) * static_cast<int64_t>(w_bar / fd);
}

}  // namespace preflight::model
