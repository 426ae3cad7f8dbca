// Issue 15 (mm): the size of the dummy image that vLLM's profile run encodes. vLLM sizes the encoder budget and
// the item count from the largest image the processor makes (vllm/multimodal/encoder_budget.py MultiModalBudget,
// Qwen2VLProcessingInfo.get_image_size_with_most_features), and the encoded item from the dummy data, whose width
// and height --limit-mm-per-prompt '{"image": {"count": n, "width": W, "height": H}}' caps (ImageDummyOptions,
// vLLM PR #25631, from 0.11.1; BaseDummyInputsBuilder._get_dummy_images takes min(W, largest width) and likewise
// the height). The image processor then resizes it (transformers' Qwen2-VL smart_resize). Expected values below are
// worked out by hand from those rules (the Python of smart_resize agrees: round() is half-to-even) and the configs in
// shared/models, not read from the code under test.
#include <gtest/gtest.h>

#include "base/json_util.hpp"
#include "engine/capture_rules.hpp"
#include "engine/mm_profile_rules.hpp"
#include "estimate/fit.hpp"
#include "fit_setup.hpp"
#include "model/vision_tower.hpp"

using namespace preflight;

namespace {
estimate::Deployment capped(int64_t width, int64_t height) {
  estimate::Deployment d;
  d.max_model_len = 32768;
  d.image_dummy_width = width;
  d.image_dummy_height = height;
  return d;
}
}  // namespace

// Qwen3.5-27B (vision_config: patch 16, merge 2, so sides in multiples of 32 px; depth 27, hidden 1,152, MLP 4,304;
// no deepstack; text hidden 5,120) on vLLM-Ascend 0.23. The largest image: 16,384 tokens = 128 x 128, 4,096 px square.
// Capped at 1,024 x 768: 1,024 / 32 = 32 and 768 / 32 = 24 columns / rows of merged tokens, 786,432 px between
// shortest_edge 65,536 and longest_edge 16,777,216, so 32 x 24 = 768 tokens = 3,072 patches. The vision unit is
// 3,072 x (4,304 + 3 x 1,152 + 1,152) x 2 B = 3,072 x 17,824 = 54,755,328 B; the encoder outputs held through the text
// and sampler runs 768 x 5,120 x 2 B = 7,864,320 B. vLLM still prints the budget of the largest image (16,384 tokens,
// one item: max(2,048 batched tokens, 16,384) // 16,384).
TEST(MmDummy, Issue15_AnImageCapSizesTheEncoderPassOfQwen35) {
  auto s = pftest::fit_setup("Qwen/Qwen3.5-27B", "910B3", "vllm-ascend", "0.23.0");
  ASSERT_TRUE(s.engine.mm_dummy_size_options);
  const auto e = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, capped(1024, 768));
  EXPECT_EQ(e.encoder_budget_tokens, 16384);
  EXPECT_EQ(e.encoder_items, 1);
  EXPECT_DOUBLE_EQ(e.activation_vision_unit_bytes, 54755328.0);
  EXPECT_DOUBLE_EQ(e.activation_vision_bytes, s.overheads.vision_activation_factor * 54755328.0);
  EXPECT_DOUBLE_EQ(e.activation_encoder_held_bytes, 7864320.0);
  bool said = false;
  for (const auto& a : e.assumptions) said = said || a.find("768 tokens each, not 16384") != std::string::npos;
  EXPECT_TRUE(said);
}

// The processor's resize on Qwen3-VL-8B's tower (factor 32, shortest_edge 65,536, longest_edge 16,777,216):
//  - 200 x 100 px: round(6.25) x round(3.125) = 6 x 3 blocks = 192 x 96 = 18,432 px < 65,536, so scaled up by
//    beta = sqrt(65,536 / 20,000) = 1.8102: ceil(200 x 1.8102 / 32) = ceil(11.31) = 12, ceil(100 x 1.8102 / 32) =
//    ceil(5.66) = 6, 12 x 6 = 72 tokens;
//  - 1,040 x 1,072 px: 1,040 / 32 = 32.5 rounds to 32 (half to even), 1,072 / 32 = 33.5 to 34: 1,088 tokens (half-up
//    rounding would give 33 x 34 = 1,122);
//  - width 2,048 only: the height stays the largest image's 4,096 px: 64 x 128 = 8,192 tokens;
//  - no cap: the largest image, 16,384 tokens.
// Qwen2.5-VL-7B (patch 14, merge 2: factor 28; min_pixels 3,136, max_pixels 12,845,056; largest image 3,584 px
// square): 1,000 x 1,000 px, 1,000 / 28 = 35.7 rounds to 36, so 36 x 36 = 1,296 tokens.
TEST(MmDummy, Issue15_TheProcessorResizesTheCappedImage) {
  struct Row {
    const char* model;
    int64_t width, height, tokens;
  };
  for (const Row& row : {Row{"Qwen/Qwen3-VL-8B-Instruct", 200, 100, 72}, Row{"Qwen/Qwen3-VL-8B-Instruct", 1040, 1072, 1088},
                         Row{"Qwen/Qwen3-VL-8B-Instruct", 2048, 0, 8192}, Row{"Qwen/Qwen3-VL-8B-Instruct", 0, 0, 16384},
                         Row{"Qwen/Qwen2.5-VL-7B-Instruct", 1000, 1000, 1296}}) {
    auto m = model::resolve_model(row.model);
    ASSERT_TRUE(m.has_value()) << row.model;
    const auto tokens = model::dummy_image_tokens(*m, row.width, row.height);
    ASSERT_TRUE(tokens.has_value()) << row.model << " " << row.width << " x " << row.height;
    EXPECT_EQ(*tokens, row.tokens) << row.model << " " << row.width << " x " << row.height;
  }
}

// The processor rejects an aspect ratio above 200 (a ValueError at start-up): 4,096 px (the largest image's width) over
// 16 px is 256. A text-only model has no processor geometry.
TEST(MmDummy, Issue15_ImpossibleDummyImagesAreErrors) {
  auto vl = model::resolve_model("Qwen/Qwen3-VL-8B-Instruct");
  ASSERT_TRUE(vl.has_value());
  const auto wide = model::dummy_image_tokens(*vl, 0, 16);
  ASSERT_FALSE(wide.has_value());
  EXPECT_EQ(wide.error().kind, ErrorKind::invalid_argument);
  EXPECT_NE(wide.error().message.find("aspect ratio above 200"), std::string::npos) << wide.error().message;
  auto text = model::resolve_model("Qwen/Qwen3-8B");
  ASSERT_TRUE(text.has_value());
  const auto none = model::dummy_image_tokens(*text, 512, 512);
  ASSERT_FALSE(none.has_value());
  EXPECT_EQ(none.error().kind, ErrorKind::unsupported);
}

// vLLM 0.11.0 and earlier take only counts (limit_per_prompt: dict[str, int]), so the largest image is profiled and
// the estimate says so: Qwen2.5-VL-7B's 16,384 tokens = 65,536 patches of the tower (hidden 1,280, MLP 3,420) on vLLM
// 0.10 at 2,048 batched tokens (the image is the largest item below 32,768 tokens of context).
TEST(MmDummy, Issue15_VersionsBeforeTheOptionProfileTheLargestImage) {
  auto old = pftest::fit_setup("Qwen/Qwen2.5-VL-7B-Instruct", "A100-80G-SXM", "vllm", "0.10.0");
  auto recent = pftest::fit_setup("Qwen/Qwen2.5-VL-7B-Instruct", "A100-80G-SXM", "vllm", "0.12.0");
  ASSERT_FALSE(old.engine.mm_dummy_size_options);
  ASSERT_TRUE(recent.engine.mm_dummy_size_options);
  auto d = capped(1000, 1000);
  d.max_model_len = 8192;
  const auto before = estimate::estimate_fit(old.model, old.device, old.engine, old.overheads, d);
  const auto after = estimate::estimate_fit(recent.model, recent.device, recent.engine, recent.overheads, d);
  EXPECT_EQ(before.encoder_items, 1);
  EXPECT_EQ(after.encoder_items, 1);
  // Both: the pass's live tensors, 37,816 B a patch at TP 1 (issue 15 vis28, tests/estimate/test_vision_pass.cpp).
  EXPECT_DOUBLE_EQ(before.activation_vision_bytes, 65536.0 * 37816.0);
  EXPECT_DOUBLE_EQ(after.activation_vision_bytes, 1296.0 * 4.0 * 37816.0);
  bool said = false;
  for (const auto& a : before.assumptions) said = said || a.find("takes only counts") != std::string::npos;
  EXPECT_TRUE(said);
}

// The seed's Qwen3.8-27B (seeds/001 sections 6-7; the Qwen3.5-27B layout) with a dummy image capped at 1,024 x 1,024
// (1,024 tokens, 4,096 patches): the pass is 4,096 x 17,824 B x the NPU factor 3.1 = 0.21 GiB, below the text forward
// of 2,048 batched tokens (0.26 GiB, tests/estimate/test_seed27.cpp), so the peak is the text forward plus the held
// outputs (1,024 x 5,120 x 2 B = 10 MiB) and the estimate is within one block of the run without the pass, where the
// default 16,384-token image leaves ~1 GiB and does not fit. The seed records no such option: validate keeps the
// default (docs/memory-model.md, "The dummy image's size").
TEST(MmDummy, Issue15_ACappedDummyImageKeepsTheSeedsTwentySevenBInItsBudget) {
  auto s = pftest::fit_setup("Qwen/Qwen3.5-27B", "910B3", "vllm-ascend", "0.23.0");
  auto skip = capped(0, 0);
  skip.skip_mm_profiling = true;
  const auto without = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, skip);
  const auto small = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, capped(1024, 1024));
  const auto largest = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, capped(0, 0));
  EXPECT_DOUBLE_EQ(small.activation_vision_unit_bytes, 4096.0 * 17824.0);
  EXPECT_LT(small.activation_vision_bytes, without.activation_bytes);  // the run without the pass peaks at its text forward
  EXPECT_LE(without.num_blocks - small.num_blocks, 1);
  EXPECT_TRUE(small.fits);
  EXPECT_FALSE(largest.fits);
}

// A floor under the NPU pass from vLLM-Ascend 0.23's code path, not from the fitted factor: at the FIA call of one ViT
// block (vLLM Qwen2_5_VisionAttention.forward; vllm-ascend ops/mm_encoder_attention.py _forward_eager_fia pads head_dim
// 72 to 128) these are alive per patch, bf16, for the Qwen3 tower (hidden 1,152, 16 heads): the block input 1,152 and
// the position embeddings the encoder metadata keeps 1,152 (whole on every rank); the qkv output 3 x 1,152, the
// contiguous q/k copy 2 x 1,152 and its rotated copy 2 x 1,152 (AscendApplyRotaryEmb returns npu_rotary_mul's new
// tensor), q, k, v padded to 3 x 16 x 128 and the output 16 x 128 (split by TP). The pixel values stay whole: fp32
// and the bf16 copy, 3 x 2 x 16 x 16 = 1,536 values x 6 B = 9,216 B.
//   TP 1: (2,304 + 8,064 + 8,192) x 2 B + 9,216 = 46,336 B a patch; 65,536 patches: 3,036,676,096 B.
//   TP 2: (2,304 + (8,064 + 8,192) / 2) x 2 B + 9,216 = 30,080 B a patch; 65,536 patches: 1,971,322,880 B.
// The term may be larger (FIA workspace, allocator rounding), never smaller.
TEST(MmDummy, Issue15_TheNpuPassIsAtLeastTheTensorsAliveAtTheFiaCall) {
  struct Row {
    const char* model;
    int64_t tp;
    double floor_bytes;
  };
  for (const Row& row : {Row{"Qwen/Qwen3.5-27B", 1, 3036676096.0}, Row{"Qwen/Qwen3-VL-8B-Instruct", 1, 3036676096.0},
                         Row{"Qwen/Qwen3-VL-8B-Instruct", 2, 1971322880.0}}) {
    auto s = pftest::fit_setup(row.model, "910B3", "vllm-ascend", "0.23.0");
    auto d = capped(0, 0);
    d.tensor_parallel_size = row.tp;
    const auto e = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
    ASSERT_EQ(e.encoder_items, 1) << row.model;
    EXPECT_GE(e.activation_vision_bytes, row.floor_bytes) << row.model << " TP " << row.tp;
  }
}

// Issue 15 (vlprof35): vLLM's dummy video for Qwen3-VL (Qwen2VLProcessingInfo._get_max_video_frames from 2 frames, at
// most _MAX_FRAMES_PER_VIDEO = 24,576; engines.json mm_video_placeholder_tokens: the video processor's size
// {shortest_edge 4,096, longest_edge 25,165,824} px over all frames), each frame the largest image (4,096 px square,
// resize factor 32), resized by transformers' Qwen3-VL video smart_resize:
//  - max_model_len 65,536: 3 frames give 16,200 tokens (below), and so on up to the cap: 24,576 frames, all frames over
//    25,165,824 px, beta = sqrt(24,576 x 4,096^2 / 25,165,824) = sqrt(16,384) = 128, side max(32, floor(4,096 / 128 /
//    32) x 32) = 32 px; grid_t 24,576 / 2 = 12,288, one merged token a frame pair: 12,288 embeddings, x 12.5 = 153,600
//    tokens, the budget the sipeed log prints ("budget of 153600 tokens, and profiled with 1 video items").
//  - max_model_len 8,192: 3 frames round to t_bar 4 (round(1.5) is 2, half to even), 4 x 4,096^2 is above the limit,
//    beta = sqrt(3 x 4,096^2 / 25,165,824) = sqrt(2), side floor(4,096 / 1.41421 / 32) = 90 blocks = 2,880 px, grid_t
//    (3 + 1) / 2 = 2: 2 x 90 x 90 = 16,200 > 8,192, so the count stays at 2 frames: beta = sqrt(4 / 3) = 1.1547, side
//    floor(110.85) = 110 blocks = 3,520 px, grid_t 1: 12,100 embeddings.
TEST(MmDummy, Issue15_Qwen3VlDummyVideoFollowsMaxModelLen) {
  auto m = model::resolve_model("Qwen/Qwen3-VL-8B-Instruct");
  ASSERT_TRUE(m.has_value());
  const auto long_ctx = model::dummy_video(*m, 65536, 24576, 25165824, 4096);
  ASSERT_TRUE(long_ctx.has_value());
  EXPECT_EQ(long_ctx->frames, 24576);
  EXPECT_EQ(long_ctx->height_px, 32);
  EXPECT_EQ(long_ctx->tokens, 12288);
  const auto short_ctx = model::dummy_video(*m, 8192, 24576, 25165824, 4096);
  ASSERT_TRUE(short_ctx.has_value());
  EXPECT_EQ(short_ctx->frames, 2);
  EXPECT_EQ(short_ctx->width_px, 3520);
  EXPECT_EQ(short_ctx->tokens, 12100);
  auto text = model::resolve_model("Qwen/Qwen3-8B");
  ASSERT_TRUE(text.has_value());
  EXPECT_FALSE(model::dummy_video(*text, 8192, 24576, 25165824, 4096).has_value());
}

// Issue 15 (vlprof35): the profiled item and the held encoder cache by vLLM version, Qwen3-VL-8B (text hidden 4,096,
// three deepstack levels: 4 x 4,096 values a row, 32,768 B in bf16), max_model_len 65,536:
//  - 0.11.0, 2,048 batched tokens: the video counts 153,600 tokens (test above) > the image's 16,384, so the budget is
//    max(2,048, 153,600) = 153,600 with 1 video item; profile_run pads its 12,288 rows to the budget and the loop's
//    `output` keeps the unpadded ones: (153,600 + 12,288) x 32,768 B = 5,435,817,984 B.
//  - 307,200 batched tokens: 2 videos; 0.11.0 pads each to the budget, 2 x (307,200 + 12,288) x 32,768 =
//    20,937,965,568 B; 0.12.0 to the item's 153,600: 2 x (153,600 + 12,288) x 32,768 = 10,871,635,968 B.
//  - 0.13.0 counts embeddings only (12,288 < 16,384): the image, 16,384 x 32,768 = 536,870,912 B; so does 0.11.0 with
//    the video limited to 0.
TEST(MmDummy, Issue15_Qwen3VlProfilesTheDummyVideoOnVllm011And012) {
  auto v011 = pftest::fit_setup("Qwen/Qwen3-VL-8B-Instruct", "A100-80G-SXM", "vllm", "0.11.0");
  auto v012 = pftest::fit_setup("Qwen/Qwen3-VL-8B-Instruct", "A100-80G-SXM", "vllm", "0.12.0");
  auto v013 = pftest::fit_setup("Qwen/Qwen3-VL-8B-Instruct", "A100-80G-SXM", "vllm", "0.13.0");
  estimate::Deployment d;
  d.max_model_len = 65536;
  d.max_num_batched_tokens = 2048;
  const auto one = estimate::estimate_fit(v011.model, v011.device, v011.engine, v011.overheads, d);
  EXPECT_TRUE(one.encoder_profiles_video);
  EXPECT_EQ(one.encoder_budget_tokens, 153600);
  EXPECT_EQ(one.encoder_items, 1);
  EXPECT_DOUBLE_EQ(one.activation_encoder_held_bytes, 5435817984.0);
  auto wide = d;
  wide.max_num_batched_tokens = 307200;
  const auto two_011 = estimate::estimate_fit(v011.model, v011.device, v011.engine, v011.overheads, wide);
  const auto two_012 = estimate::estimate_fit(v012.model, v012.device, v012.engine, v012.overheads, wide);
  EXPECT_EQ(two_011.encoder_items, 2);
  EXPECT_EQ(two_012.encoder_items, 2);
  EXPECT_DOUBLE_EQ(two_011.activation_encoder_held_bytes, 20937965568.0);
  EXPECT_DOUBLE_EQ(two_012.activation_encoder_held_bytes, 10871635968.0);
  const auto image_013 = estimate::estimate_fit(v013.model, v013.device, v013.engine, v013.overheads, d);
  EXPECT_FALSE(image_013.encoder_profiles_video);
  EXPECT_EQ(image_013.encoder_budget_tokens, 16384);
  EXPECT_DOUBLE_EQ(image_013.activation_encoder_held_bytes, 536870912.0);
  auto no_video = d;
  no_video.no_video = true;
  const auto image_011 = estimate::estimate_fit(v011.model, v011.device, v011.engine, v011.overheads, no_video);
  EXPECT_FALSE(image_011.encoder_profiles_video);
  EXPECT_EQ(image_011.encoder_budget_tokens, 16384);
  EXPECT_DOUBLE_EQ(image_011.activation_encoder_held_bytes, 536870912.0);
  // Images limited to 0 leave the video on 0.11.0 (153,600 tokens, as above), not a text-only run.
  auto no_images = d;
  no_images.no_images = true;
  const auto video_only = estimate::estimate_fit(v011.model, v011.device, v011.engine, v011.overheads, no_images);
  EXPECT_TRUE(video_only.encoder_profiles_video);
  EXPECT_EQ(video_only.encoder_budget_tokens, 153600);
}

// The rules are data with a source each: a record's bad padding target or a rule without architectures is refused,
// naming the file, the record and the key; a good record is held by the profile's capture rules.
TEST(MmDummy, Issue15_MmProfileRulesAreCheckedWhenRead) {
  const char* bad_pad = R"({"mm_encoder_output_padding": [{"version_min": "0.11.0", "version_max": "0.11.99", "pad_to": "half", "source": "s"}]})";
  const char* no_arch = R"({"mm_video_placeholder_tokens": [{"version_min": "0.11.0", "version_max": "0.12.99", "architectures": [], "tokens_per_embed": 12.5,
      "max_frames_per_video": 24576, "video_max_pixels": 25165824, "video_min_pixels": 4096, "source": "s"}]})";
  for (const char* text : {bad_pad, no_arch}) {
    auto j = parse_json(text, "engines.json");
    ASSERT_TRUE(j.has_value());
    auto r = engine::parse_mm_profile_rules(JsonObject(*j, "engines.json"), "engines.json", "p");
    ASSERT_FALSE(r.has_value()) << text;
    EXPECT_EQ(r.error().kind, ErrorKind::corrupt);
    EXPECT_NE(r.error().message.find("engines.json: p: mm_"), std::string::npos) << r.error().message;
  }
  const char* good = R"({"mm_encoder_output_padding": [{"version_min": "0.12.0", "version_max": "0.12.99", "pad_to": "item", "source": "PR #29386"}]})";
  auto j = parse_json(good, "engines.json");
  ASSERT_TRUE(j.has_value());
  auto rules = engine::parse_capture_rules(JsonObject(*j, "engines.json"), "engines.json", "p");
  ASSERT_TRUE(rules.has_value()) << rules.error().describe();
  ASSERT_EQ(rules->mm_profile.encoder_output_padding.size(), 1u);
  EXPECT_EQ(rules->mm_profile.encoder_output_padding[0].to, engine::MmProfileRules::PadTo::item);
}

// Issue 15 (vlvid35): from vLLM 0.13 the budget counts only the modalities whose --limit-mm-per-prompt is above 0
// (MultiModalRegistry.get_max_tokens_per_item_by_modality: {modality: 1 ... if limit > 0}) and a Qwen3-VL video in
// embeddings (PR #30475), so with images limited to 0 the dummy video is profiled, not a text-only run. Qwen3-VL-8B
// (resize factor 32, 4 patches a merged token; text hidden 4,096 and three deepstack levels: 32,768 B a held row),
// 2,048 batched tokens:
//  - 0.13.0 (the 0.11 - 0.12 frame count, no x 12.5), max_model_len 65,536: 24,576 frames of 32 x 32 px, 12,288
//    embeddings (Issue15_Qwen3VlDummyVideoFollowsMaxModelLen), budget max(2,048, 12,288) = 12,288, 1 item, held
//    unpadded: 12,288 x 32,768 = 402,653,184 B; the pass is 12,288 x 4 = 49,152 patches, 0.75 of the image's 65,536.
//  - 0.13.0 at max_model_len 8,192: 2 frames of 3,520 px, 110 x 110 = 12,100 embeddings (the same test).
//  - 0.20.0 ("treat videos as special images", from 0.15): 2 frames, each the largest image within 25,165,824 / 2 =
//    12,582,912 px, i.e. 12,582,912 / 32^2 = 12,288 merged tokens, the closest factor pair 96 x 128 (3,072 x 4,096
//    px); 2 x 3,072 x 4,096 = 25,165,824 is not above the video limit, so no resize; grid_t 1: 12,288 at any length.
//  - images allowed: the image's 16,384 stays the largest (12,288 < 16,384), as before.
TEST(MmDummy, Issue15_ImagesLimitedToZeroProfileTheQwen3VlVideoFromVllm013) {
  auto m = model::resolve_model("Qwen/Qwen3-VL-8B-Instruct");
  ASSERT_TRUE(m.has_value());
  const auto two = model::dummy_video(*m, 8192, 2, 25165824, 4096);
  ASSERT_TRUE(two.has_value());
  EXPECT_EQ(two->frames, 2);
  EXPECT_EQ(two->height_px, 3072);
  EXPECT_EQ(two->width_px, 4096);
  EXPECT_EQ(two->tokens, 12288);
  auto v013 = pftest::fit_setup("Qwen/Qwen3-VL-8B-Instruct", "A100-80G-SXM", "vllm", "0.13.0");
  auto v020 = pftest::fit_setup("Qwen/Qwen3-VL-8B-Instruct", "A100-80G-SXM", "vllm", "0.20.0");
  estimate::Deployment d;
  d.max_model_len = 65536;
  d.max_num_batched_tokens = 2048;
  auto no_images = d;
  no_images.no_images = true;
  const auto image = estimate::estimate_fit(v013.model, v013.device, v013.engine, v013.overheads, d);
  const auto video = estimate::estimate_fit(v013.model, v013.device, v013.engine, v013.overheads, no_images);
  EXPECT_FALSE(image.encoder_profiles_video);
  EXPECT_EQ(image.encoder_budget_tokens, 16384);
  EXPECT_TRUE(video.encoder_profiles_video);
  EXPECT_EQ(video.encoder_budget_tokens, 12288);
  EXPECT_EQ(video.encoder_items, 1);
  EXPECT_DOUBLE_EQ(video.activation_encoder_held_bytes, 402653184.0);
  ASSERT_GT(image.activation_vision_bytes, 0.0);
  EXPECT_DOUBLE_EQ(video.activation_vision_bytes, 0.75 * image.activation_vision_bytes);
  auto short_ctx = no_images;
  short_ctx.max_model_len = 8192;
  EXPECT_EQ(estimate::estimate_fit(v013.model, v013.device, v013.engine, v013.overheads, short_ctx).encoder_budget_tokens, 12100);
  const auto v020_short = estimate::estimate_fit(v020.model, v020.device, v020.engine, v020.overheads, short_ctx);
  EXPECT_TRUE(v020_short.encoder_profiles_video);
  EXPECT_EQ(v020_short.encoder_budget_tokens, 12288);
  EXPECT_EQ(estimate::estimate_fit(v020.model, v020.device, v020.engine, v020.overheads, d).encoder_budget_tokens, 16384);
  // vLLM-Ascend 0.23 runs vLLM's profile_run: the same 12,288-embedding video.
  auto npu = pftest::fit_setup("Qwen/Qwen3-VL-8B-Instruct", "910B3", "vllm-ascend", "0.23.0");
  const auto npu_video = estimate::estimate_fit(npu.model, npu.device, npu.engine, npu.overheads, no_images);
  EXPECT_TRUE(npu_video.encoder_profiles_video);
  EXPECT_EQ(npu_video.encoder_budget_tokens, 12288);
  // Both limited to 0 stay text only.
  auto none = no_images;
  none.no_video = true;
  EXPECT_EQ(estimate::estimate_fit(v013.model, v013.device, v013.engine, v013.overheads, none).encoder_items, 0);
}
