// engine/mm_profile_rules: vLLM's multimodal profile run by version (issue 15, vlprof35): which dummy item the encoder
// pass profiles and what the encoder cache holds through the text and sampler dummy runs. Read from engines.json
// profiles[] (mm_video_placeholder_tokens, mm_encoder_output_padding) with the record's capture rules
// (engine/capture_rules.hpp parse_capture_rules), held by the profile's CaptureRules so that EngineProfile needs no field.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "base/json_util.hpp"
#include "engine/engine_profile.hpp"

namespace preflight::engine {

struct MmProfileRules {
  // Versions whose model processor counts a video item in prompt tokens, not embeddings (vLLM 0.11 - 0.12 Qwen3-VL:
  // get_max_video_tokens returns the video's embeddings x 12.5, the timestamp text around each one; PR #25557, removed by
  // #30475 in 0.13), so the video can win the "maximum tokens per item" over the largest image. With the dummy video's
  // geometry: at most max_frames_per_video frames (_MAX_FRAMES_PER_VIDEO) of the largest image, resized by the video
  // processor's smart_resize within video_min_pixels - video_max_pixels over all frames (video_preprocessor_config.json).
  struct VideoPlaceholderTokens {
    double tokens_per_embed = 0;
    int64_t max_frames_per_video = 0, video_max_pixels = 0, video_min_pixels = 0;
    std::vector<std::string> architectures;  // config.json architectures[0]
    EngineProfile::VersionRule rule;
    bool operator==(const VideoPlaceholderTokens&) const = default;
  };
  std::vector<VideoPlaceholderTokens> video_placeholder_tokens;
  // Versions whose profile run pads each dummy encoder output with zero rows before caching it (gpu_model_runner
  // profile_run, "scattered multimodal embeddings"): to the encoder budget (0.11, PR #25810) or to the modality's maximum
  // tokens per item (0.12, PR #29386); from 0.13 the cache holds embeddings only (PR #30475).
  enum class PadTo { none, budget, item };
  struct OutputPadding {
    PadTo to = PadTo::none;
    EngineProfile::VersionRule rule;
    bool operator==(const OutputPadding&) const = default;
  };
  std::vector<OutputPadding> encoder_output_padding;
  bool operator==(const MmProfileRules&) const = default;
};

// One profile record's rules (absent keys: none); corrupt errors name the file, the record and the key.
Expected<MmProfileRules> parse_mm_profile_rules(const JsonObject& profile, const std::string& origin, const std::string& id);
const std::vector<std::string>& mm_profile_rule_keys();

// The rules of this profile's record (empty when none).
const MmProfileRules& mm_profile_rules(const EngineProfile& profile);
// The video placeholder rule covering the profile's rule version for `architecture`, or nullptr.
const MmProfileRules::VideoPlaceholderTokens* video_placeholder_tokens(const EngineProfile& profile, const std::string& architecture);
// The padding of the dummy encoder outputs in the profile's rule version (none outside every rule) and its source.
MmProfileRules::PadTo encoder_output_padding(const EngineProfile& profile, std::string* source = nullptr);

}  // namespace preflight::engine
