// model/vision_tower: parameter layout of the vision encoder of a vision-language model, from
// config.json's vision_config and the tower kind named in the architecture traits.
#pragma once

#include <string>
#include <vector>

#include "base/error.hpp"
#include "base/json_util.hpp"
#include "model/architecture_traits.hpp"
#include "model/model_spec.hpp"

namespace preflight::model {

struct VisionTower {
  std::vector<WeightGroup> weights;  // Part::vision; the linears split by TP, embeddings, norms and biases whole
  int64_t hidden_size = 0;
  int64_t depth = 0;
  int64_t intermediate_size = 0;
  // The largest image in encoder-output tokens, and patches per token (the spatial merge squared): what
  // the profile run's encoder pass is sized by. 0 tokens: the processor's limit is not known.
  int64_t max_tokens_per_image = 0;
  int64_t patches_per_token = 1;
  // The processor's resize of an image (transformers' Qwen2-VL smart_resize, which vLLM's dummy image goes through):
  // sides rounded to multiples of resize_factor_px (patch x merge), the area raised to at least min_pixels. 0: not known.
  int64_t resize_factor_px = 0;
  int64_t min_pixels = 0;
  // The dummy video vLLM profiles when it is the modality with the most tokens per item: frames at the
  // largest image size, one max_tokens_per_image group per temporal patch (2 frames), as many groups as
  // max_model_len holds, at most video_max_groups. 0: the video item is never larger than the image.
  int64_t video_max_groups = 0;
  // Qwen3-VL deepstack: vision features injected into the first decoder layers, one level per entry of
  // deepstack_visual_indexes (vLLM keeps a max_num_batched_tokens x text hidden buffer per level).
  int64_t deepstack_levels = 0;
  std::string rule;        // how the count was derived
  std::string assumption;  // set when the layout is approximated
};

Expected<VisionTower> add_vision_tower(const Json& vision_config, const std::string& origin, VisionKind kind, int64_t text_hidden);

// The merged tokens of vLLM's dummy image when --limit-mm-per-prompt caps its size (issue 15, mm): the largest image
// (vLLM Qwen2VLProcessingInfo.get_image_size_with_most_features: max_tokens_per_image factored into the closest pair
// h <= w, sides in multiples of resize_factor_px), each side capped by the option (0: not capped; dummy_inputs.py
// _get_dummy_images takes the smaller), then resized as the processor does (transformers' Qwen2-VL smart_resize:
// sides rounded half-to-even to multiples of the factor, raised to min_pixels, lowered to the largest image's area).
// Returns max_tokens_per_image when neither side is capped; invalid_argument for an aspect ratio above 200 (the
// processor's ValueError); unsupported when the tower's processor geometry is not known.
Expected<int64_t> dummy_image_tokens(const ModelSpec& m, int64_t width_cap_px, int64_t height_cap_px);

// vLLM's dummy video of a Qwen3-VL-style processor (issue 15, vlprof35; Qwen2VLProcessingInfo._get_max_video_frames and
// get_num_frames_with_most_features with Qwen3VLProcessingInfo._get_vision_info): frames of the largest image, counted up
// from 2 while the next count's video stays within seq_len tokens (max_model_len), at most max_frames; each count resized
// by the video processor's smart_resize (all frames' pixels within video_min_pixels - video_max_pixels, sides multiples
// of resize_factor_px, Python's rounding), its tokens grid_t x (h / factor) x (w / factor), grid_t = frames padded to
// even / 2. max_frames 2 is vLLM >= 0.15's two-frame dummy (issue 15, vlvid35): its frames are the largest image within
// video_max_pixels / 2 instead. unsupported when the tower's processor geometry is not known.
struct DummyVideo {
  int64_t frames = 0, tokens = 0, height_px = 0, width_px = 0;
};
Expected<DummyVideo> dummy_video(const ModelSpec& m, int64_t seq_len, int64_t max_frames, int64_t video_max_pixels, int64_t video_min_pixels);

}  // namespace preflight::model
