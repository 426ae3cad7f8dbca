#include <gtest/gtest.h>

#include <algorithm>

#include "base/units.hpp"
#include "device/device_spec.hpp"
#include "engine/engine_profile.hpp"
#include "estimate/fit.hpp"
#include "estimate/fit_terms.hpp"
#include "model/model_source.hpp"
#include "fit_setup.hpp"

using namespace preflight;

using Setup = pftest::FitSetup;
using pftest::fit_setup;

// vllm-ascend issue #3800 (0.11.0rc0): Qwen3-VL-235B-A22B, TP 8, max_model_len 32768, printed
// "Available memory: 11857880064". Per rank: 1 KV head (4 // 8 -> replicated), page 2 x 128 x 1 x 128 x 2 = 65,536 B;
// num_blocks = 11857880064 // 65536 // 94 = 1924; tokens 1924 x 128 = 246,272; concurrency 1924 / 256 = 7.52.
TEST(Fit, Issue3800ReproducedExactlyFromPrintedAvailableMemory) {
  auto s = fit_setup("Qwen/Qwen3-VL-235B-A22B-Instruct", "910B3", "vllm-ascend", "0.11.0");
  estimate::Deployment d;
  d.tensor_parallel_size = 8;
  d.max_model_len = 32768;
  d.kv_cache_memory_bytes = 11857880064.0;
  const auto e = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
  EXPECT_EQ(e.page_bytes, 65536);
  EXPECT_EQ(e.num_blocks, 1924);
  EXPECT_EQ(e.kv_tokens, 246272);
  EXPECT_NEAR(e.max_concurrency, 7.515, 0.001);
  ASSERT_GE(e.lines.size(), 2u);
  EXPECT_EQ(e.lines[e.lines.size() - 2], "GPU KV cache size: 246,272 tokens");
  EXPECT_EQ(e.lines.back(), "Maximum concurrency for 32,768 tokens per request: 7.52x");
}

// Hybrid page on vllm-ascend >= 0.16 for the Qwen3.5-27B architecture (seeds/001): ssm fp32 48x128x128x4 = 3,145,728,
// K per token 4 x 256 x 2 = 2,048 -> block 128 x ceil(3145728 / 262144) = 1,536; page = 1536 x 4096 + conv 61,440 = 6,352,896.
// With 41 blocks the engine prints 53,739 tokens and 1.64x for 32,768 (41 / (ceil(32768/1536) + 3 state groups)).
TEST(Fit, HybridPageAndTokensFollowTheNpuRule) {
  auto s = fit_setup("Qwen/Qwen3.5-27B", "910B3", "vllm-ascend", "0.23.0");
  estimate::Deployment d;
  d.max_model_len = 32768;
  d.kv_cache_memory_bytes = 41.0 * 16 * 6352896 + 1000;
  const auto e = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
  EXPECT_EQ(e.block_size, 1536);
  EXPECT_EQ(e.page_bytes, 6352896);
  EXPECT_EQ(e.group_size, 16);
  EXPECT_EQ(e.num_blocks, 41);
  EXPECT_EQ(e.kv_tokens, 53739);
  EXPECT_NEAR(e.max_concurrency, 1.64, 0.005);
}

TEST(Fit, SeedsFromBudgetModel) {
  // seeds/001 section 6: Qwen3-VL-8B on one 910B3, vllm-ascend 0.23: 254,336 tokens, 7.76x at 32k (issue 3: 3%).
  // The profile run's peak is the encoder pass over one 4096x4096 image.
  auto s = fit_setup("Qwen/Qwen3-VL-8B-Instruct", "910B3", "vllm-ascend", "0.23.0");
  estimate::Deployment d;
  d.max_model_len = 32768;
  auto e = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
  EXPECT_TRUE(e.fits);
  EXPECT_NEAR(static_cast<double>(e.kv_tokens), 254336.0, 254336.0 * 0.03);
  EXPECT_NEAR(e.max_concurrency, 7.76, 7.76 * 0.03);
  EXPECT_DOUBLE_EQ(e.activation_bytes, e.activation_vision_bytes);
  EXPECT_LE(e.kv_tokens_low, 254336);
  EXPECT_GE(e.kv_tokens_high, 254336);
  // --skip-mm-profiling leaves the encoder pass out: more KV.
  d.skip_mm_profiling = true;
  const auto skipped = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
  EXPECT_GT(skipped.kv_tokens, e.kv_tokens);
  EXPECT_DOUBLE_EQ(skipped.activation_vision_bytes, 0.0);
  d.skip_mm_profiling = false;
  // vLLM's encoder budget is max(max_num_batched_tokens, 16,384 tokens of the largest image): one image
  // (65,536 patches) at the default 2048, two at 32,768. Per rank the tower's heads and MLP are split by TP,
  // its residual stream is not: (intermediate + 3 x hidden) / TP + hidden.
  EXPECT_DOUBLE_EQ(e.activation_vision_unit_bytes, 65536.0 * (4304 + 4 * 1152) * 2);
  d.max_num_batched_tokens = 32768;
  EXPECT_DOUBLE_EQ(estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d).activation_vision_unit_bytes, 2 * e.activation_vision_unit_bytes);
  d.tensor_parallel_size = 2;
  EXPECT_DOUBLE_EQ(estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d).activation_vision_unit_bytes,
                   2 * 65536.0 * ((4304 + 3 * 1152) / 2.0 + 1152) * 2);
  d.tensor_parallel_size = 1;
  d.max_num_batched_tokens.reset();
  // The 27B hybrid (53,739 tokens, 1.64x at 32k; issue 3: 5%): with the same tower's pass the KV cache holds
  // far less than 32k and the engine refuses to start; the seed's run started, so it ran without the pass.
  auto h = fit_setup("Qwen/Qwen3.5-27B", "910B3", "vllm-ascend", "0.23.0");
  e = estimate::estimate_fit(h.model, h.device, h.engine, h.overheads, d);
  EXPECT_FALSE(e.fits);
  EXPECT_EQ(e.failure, estimate::Failure::max_model_len_too_large);
  EXPECT_NE(e.failure_message.find("max seq len (32768)"), std::string::npos) << e.failure_message;
  EXPECT_LT(e.kv_tokens, 32768);
  d.skip_mm_profiling = true;
  e = estimate::estimate_fit(h.model, h.device, h.engine, h.overheads, d);
  EXPECT_TRUE(e.fits);
  // Issue 15 (nt018): the 0.23 worker counts only the non-torch increase since its init snapshot (PR #7427), so the
  // term is 944 MiB less the printed 0.36 GiB context: 388,337,664 B more budget = 3.7 blocks of 16 x 6,352,896 B. The
  // no-pass reading is 45 blocks (57,671 tokens, 1.76x) against the printed 41 (1.64x), 7.3% high: the seed pair's
  // conflict with the one-device 0.18 runs (docs/memory-model.md, "Non-torch memory by worker formula"), kept visible.
  EXPECT_NEAR(static_cast<double>(e.kv_tokens), 53739.0, 53739.0 * 0.08);
  EXPECT_GT(e.kv_tokens, 53739);
  EXPECT_NEAR(e.max_concurrency, 1.64, 1.64 * 0.08);
}

// The vision tower's linears are vLLM's tensor-parallel linears: at TP2 each rank holds half of them. The
// public TP2 run in data/evidence printed "Loading model weights took 9.1948 GB" (Qwen3-VL-8B, 32,768 batched
// tokens); counting the tower whole on each rank would give 9.70 GiB.
TEST(Fit, VisionTowerLinearsAreShardedByTp) {
  auto s = fit_setup("Qwen/Qwen3-VL-8B-Instruct", "910B3", "vllm-ascend", "0.23.0");
  estimate::Deployment d;
  d.max_model_len = 65536;
  d.max_num_batched_tokens = 32768;
  d.tensor_parallel_size = 2;
  const auto e = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
  EXPECT_NEAR(bytes_to_gib(e.weights_bytes), 9.1948, 9.1948 * 0.01);
  double linear = 0, whole = 0;
  for (const auto& g : s.model.weights) {
    if (g.part != model::Part::vision) continue;
    (g.shard == model::Shard::replicated ? whole : linear) += model::weight_group_bytes(s.model, g);
  }
  EXPECT_GT(linear, 10 * whole);  // blocks and mergers dominate; patch/position embeddings, norms, biases stay whole
}

// vLLM profiles the modality with the most tokens per item. Qwen2.5-VL's dummy video has frames of the largest
// image (16,384 tokens per two-frame group), as many groups as max_model_len holds, at most 7 (14 frames): at the
// default 128,000 that is one 114,688-token video, the "budget of 114688 tokens ... 1 video items" an A100 log
// printed (data/evidence); at 32,768 two groups; at 16,384 the image. Qwen3-VL keeps the image.
TEST(Fit, QwenVlVideoItemFollowsTheContext) {
  auto s = fit_setup("Qwen/Qwen2.5-VL-7B-Instruct", "A100-80G-SXM", "vllm", "0.23.0");
  ASSERT_EQ(s.model.vision_video_max_groups, 7);
  // Issue 15 (vis28): the pass's live tensors, 37,816 B a patch at TP1 (tests/estimate/test_vision_pass.cpp).
  const double per_patch = 37816.0;
  auto unit = [&](std::optional<int64_t> len) {
    estimate::Deployment d;
    d.max_model_len = len;
    return estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d).activation_vision_bytes;
  };
  EXPECT_DOUBLE_EQ(unit(128000), 114688.0 * 4 * per_patch);
  EXPECT_DOUBLE_EQ(unit(std::nullopt), 114688.0 * 4 * per_patch);  // the model's own 128,000
  EXPECT_DOUBLE_EQ(unit(32768), 32768.0 * 4 * per_patch);
  EXPECT_DOUBLE_EQ(unit(16384), 16384.0 * 4 * per_patch);
  auto q3 = fit_setup("Qwen/Qwen3-VL-8B-Instruct", "A100-80G-SXM", "vllm", "0.23.0");
  EXPECT_EQ(q3.model.vision_video_max_groups, 0);
  estimate::Deployment d;
  d.max_model_len = 131072;
  EXPECT_DOUBLE_EQ(estimate::estimate_fit(q3.model, q3.device, q3.engine, q3.overheads, d).activation_vision_bytes, 65536.0 * 40704.0);
}

// Issue 15 (cudabudget): during vLLM's encoder pass the dummy image's pixel values sit on every rank whole, as the
// processor made them (fp32) and as the tower's dtype (_process_image_input: pixel_values.type(self.visual.dtype)).
// Qwen3.5-27B (shared/models/Qwen__Qwen3.5-27B/config.json vision_config: in_channels 3, temporal_patch_size 2,
// patch_size 16): 3 x 2 x 16 x 16 = 1,536 values per patch; one 16,384-token image = 65,536 patches;
// 65,536 x 1,536 x (4 + 2) B = 603,979,776 B at TP 1 and at TP 2 alike. Qwen2.5-VL-7B (patch 14): 3 x 2 x 14 x 14 = 1,176.
// The vision peak is these bytes plus the pass's live tensors (issue 15 vis28: Qwen3.5's tower has no deepstack, so
// per patch (attention 2 x 1,152 + 8 x 1,152 / TP + position embeddings 1,152) x 2 B: 25,344 B at TP 1, 16,128 B at
// TP 2). vLLM-Ascend keeps its fitted factor alone.
TEST(Fit, Issue15_VisionPixelValuesAreWholeOnEveryRank) {
  auto s = fit_setup("Qwen/Qwen3.5-27B", "A100-80G-SXM", "vllm", "0.23.0");
  EXPECT_EQ(estimate::terms::vision_pixels_per_patch(s.model), 1536);
  estimate::Deployment d;
  d.max_model_len = 65536;
  for (int64_t tp : {1, 2}) {
    d.tensor_parallel_size = tp;
    const auto e = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
    EXPECT_DOUBLE_EQ(e.activation_vision_pixel_bytes, 603979776.0) << "TP " << tp;
    EXPECT_DOUBLE_EQ(e.activation_vision_unit_bytes, 0.0) << "TP " << tp;
    EXPECT_NEAR(e.activation_vision_bytes, 65536.0 * (tp == 1 ? 25344.0 : 16128.0) + 603979776.0, 1.0) << "TP " << tp;
  }
  auto q25 = fit_setup("Qwen/Qwen2.5-VL-7B-Instruct", "A100-80G-SXM", "vllm", "0.23.0");
  EXPECT_EQ(estimate::terms::vision_pixels_per_patch(q25.model), 1176);
  auto text = fit_setup("Qwen/Qwen3-8B", "A100-80G-SXM", "vllm", "0.23.0");
  EXPECT_EQ(estimate::terms::vision_pixels_per_patch(text.model), 0);
  auto npu = fit_setup("Qwen/Qwen3-VL-8B-Instruct", "910B3", "vllm-ascend", "0.23.0");
  estimate::Deployment n;
  n.max_model_len = 32768;
  const auto e = estimate::estimate_fit(npu.model, npu.device, npu.engine, npu.overheads, n);
  EXPECT_EQ(e.activation_vision_pixel_bytes, 0.0);
  EXPECT_DOUBLE_EQ(e.activation_vision_bytes, npu.overheads.vision_activation_factor * e.activation_vision_unit_bytes);
}

// What Qwen3-VL holds beyond its parameters. At load (inside "Model loading took"): one deepstack buffer per
// deepstack_visual_indexes entry, max_num_batched_tokens x text hidden x bf16 (vLLM qwen3_vl.py __init__):
// 3 x 2048 x 4096 x 2 = 50,331,648 B on the NPU's 2048 batched tokens, four times that at 8192. During the
// profile run: the encoder outputs of the profiled image stay in the encoder cache through the text and
// sampler runs: 16,384 tokens x 4096 x (1 + 3 deepstack levels) x 2 B = 536,870,912 B. The printed weights of
// both 910B3 seeds (16.63 and 51.08 GiB, seeds/001 section 6) are matched within 0.1%.
TEST(Fit, QwenVlDeepstackBuffersAndHeldEncoderOutputs) {
  auto s = fit_setup("Qwen/Qwen3-VL-8B-Instruct", "910B3", "vllm-ascend", "0.23.0");
  ASSERT_EQ(s.model.vision_deepstack_levels, 3);
  estimate::Deployment d;
  d.max_model_len = 32768;
  const auto e = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
  EXPECT_EQ(e.max_num_batched_tokens, 2048);
  EXPECT_NEAR(bytes_to_gib(e.weights_bytes), 16.63, 16.63 * 0.001);
  d.max_num_batched_tokens = 8192;
  const auto e8k = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
  EXPECT_DOUBLE_EQ(e8k.weights_bytes - e.weights_bytes, 3.0 * (8192 - 2048) * 4096 * 2);
  d.max_num_batched_tokens.reset();
  EXPECT_DOUBLE_EQ(e.activation_encoder_held_bytes, 536870912.0);
  // The held outputs add to the text run; at 2048 batched tokens the encoder pass is the larger phase.
  EXPECT_NEAR(e.activation_text_bytes + e.activation_encoder_held_bytes,
              s.overheads.activation_bytes_per_batched_token_factor * e.activation_text_unit_bytes + 536870912.0, 1.0);
  EXPECT_GT(e.activation_vision_bytes, e.activation_text_bytes + e.activation_encoder_held_bytes);
  d.skip_mm_profiling = true;
  const auto skipped = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
  EXPECT_DOUBLE_EQ(skipped.activation_encoder_held_bytes, 0.0);
  EXPECT_NEAR(skipped.activation_bytes, std::max(skipped.activation_text_bytes, skipped.activation_sampler_bytes), 1.0);
  // The 27B architecture has no deepstack and a 5120-wide output: 16,384 x 5120 x 2 = 167,772,160 B held.
  auto h = fit_setup("Qwen/Qwen3.5-27B", "910B3", "vllm-ascend", "0.23.0");
  EXPECT_EQ(h.model.vision_deepstack_levels, 0);
  d.skip_mm_profiling = false;
  const auto e27 = estimate::estimate_fit(h.model, h.device, h.engine, h.overheads, d);
  EXPECT_DOUBLE_EQ(e27.activation_encoder_held_bytes, 167772160.0);
  EXPECT_NEAR(bytes_to_gib(e27.weights_bytes), 51.08, 51.08 * 0.001);
}

// The profile run's peak is the largest of its phases. On an H100 (>= 70 GiB, not A100) vLLM defaults to
// 1024 sequences, and versions that sort the logits for top-k/top-p hold ~10 fp32 copies of them on every
// TP rank: llm-d measured a 4.76 GiB activation peak for Llama-3.1-8B there (vllm-startup.dev.jsonl), most of
// it the sampler (1024 x 128,256 x 4 B = 0.49 GiB per copy). An A100-80G keeps 256 sequences.
TEST(Fit, SamplerRunSetsThePeakOnLargeDevices) {
  auto s = fit_setup("meta-llama/Meta-Llama-3.1-8B", "H100-SXM", "vllm", "0.11.0");
  estimate::Deployment d;
  d.max_model_len = 16000;
  auto e = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
  EXPECT_EQ(e.max_num_seqs, 1024);
  EXPECT_EQ(e.max_num_batched_tokens, 8192);
  EXPECT_NEAR(bytes_to_gib(e.activation_bytes), 4.76, 4.76 * 0.06);
  EXPECT_DOUBLE_EQ(e.activation_bytes, e.activation_sampler_bytes);
  d.tensor_parallel_size = 2;  // logits are all-gathered: the sampler's share does not shrink with TP
  const auto tp2 = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
  EXPECT_DOUBLE_EQ(tp2.activation_sampler_unit_bytes, e.activation_sampler_unit_bytes);
  auto a100 = fit_setup("meta-llama/Meta-Llama-3.1-8B", "A100-80G-SXM", "vllm", "0.11.0");
  e = estimate::estimate_fit(a100.model, a100.device, a100.engine, a100.overheads, estimate::Deployment{});
  EXPECT_EQ(e.max_num_seqs, 256);
  EXPECT_EQ(e.max_num_batched_tokens, 2048);
  // From 0.21 FlashInfer samples without a full sort: about a third of the memory.
  auto fi = fit_setup("meta-llama/Meta-Llama-3.1-8B", "H100-SXM", "vllm", "0.23.0");
  d.tensor_parallel_size = 1;
  const auto newer = estimate::estimate_fit(fi.model, fi.device, fi.engine, fi.overheads, d);
  EXPECT_LT(newer.activation_sampler_bytes, 0.45 * tp2.activation_sampler_bytes);
}

// Issue 15 (outlier34): vLLM 0.16-0.20 samples with the Triton top-k/top-p kernels (PR #33538): three fp32 copies of
// the logits in the sampler and ~80 MiB of kernel buffers, while GPUModelRunner._dummy_sampler_run keeps the model-dtype
// logits compute_logits returned (half an fp32 copy in bf16): 3.5 copies. On an H100 (1,024 sequences, 8,192 batched
// tokens) by hand, with the forward's [8192, hidden] bf16 output held beside them:
//  - Llama-3.1-8B (vocab 128,256, hidden 4,096): 3.5 x 1,024 x 128,256 x 4 = 1,838,678,016 + 83,886,080
//    + 8,192 x 4,096 x 2 = 67,108,864 -> 1,989,672,960 B (1.853 GiB);
//  - Qwen2.5-7B (vocab 152,064, hidden 3,584): 3.5 x 1,024 x 152,064 x 4 = 2,179,989,504 + 83,886,080
//    + 8,192 x 3,584 x 2 = 58,720,256 -> 2,322,595,840 B (2.163 GiB).
// vLLM 0.19.0 printed 'torch peak memory increase: 1.89GiB' and '2.21GiB' for these two at TP 1, 2 and 4 (the
// llm-d-planner sweep, data/evidence/vllm-startup-public.jsonl, pub-llmdplanner-*-v019-*); three copies gave 1.61 and
// 1.87 GiB.
TEST(Fit, Issue15_Outlier34_TritonSamplerRunHoldsTheModelDtypeLogits) {
  struct Row {
    const char* model;
    double bytes, printed_gib;
  };
  for (const Row r : {Row{"meta-llama/Meta-Llama-3.1-8B", 1989672960.0, 1.89}, Row{"Qwen/Qwen2.5-7B", 2322595840.0, 2.21}}) {
    auto s = fit_setup(r.model, "H100-SXM", "vllm", "0.19.0");
    estimate::Deployment d;
    d.max_model_len = 8192;
    d.gpu_memory_utilization = 0.95;
    const auto e = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
    EXPECT_EQ(e.max_num_seqs, 1024) << r.model;
    EXPECT_NEAR(e.activation_sampler_bytes, r.bytes, 1.0) << r.model;
    EXPECT_DOUBLE_EQ(e.activation_bytes, e.activation_sampler_bytes) << r.model << ": the sampler run sets the peak";
    EXPECT_NEAR(bytes_to_gib(e.activation_bytes), r.printed_gib, 0.06) << r.model;
  }
}

// V0 (vLLM < 0.8) leaves chunked prefill off up to 32K context, so the profile batch is the whole
// max_model_len: vllm#10517 printed peak_torch_memory 17.06 GiB with 14.99 GiB of weights at 20,000 tokens
// on a 3090, i.e. a 2.07 GiB activation peak, and 1952 blocks.
TEST(Fit, V0ProfilesTheWholeContextWithoutChunkedPrefill) {
  auto s = fit_setup("meta-llama/Meta-Llama-3.1-8B", "RTX3090", "vllm", "0.6.4");
  estimate::Deployment d;
  d.max_model_len = 20000;
  d.gpu_memory_utilization = 0.9;
  d.device_total_bytes = 23.58 * 1024.0 * 1024.0 * 1024.0;
  const auto e = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
  EXPECT_EQ(e.max_num_batched_tokens, 20000);
  EXPECT_NEAR(bytes_to_gib(e.activation_bytes), 2.07, 2.07 * 0.15);  // 2.32 predicted: text factor 1.9 is fitted across cases
  EXPECT_NEAR(static_cast<double>(e.num_blocks), 1952.0, 1952.0 * 0.03);
  d.max_model_len = 40000;  // above 32K chunked prefill turns on
  EXPECT_EQ(estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d).max_num_batched_tokens, 2048);
}

// gpt-oss MXFP4 experts as vLLM lays them out at load (mxfp4.py). Per layer of gpt-oss-20b (32 experts,
// hidden = intermediate = 2880), by hand: checkpoint 32 x (2 x fp4[2880,2880] + fp4[2880,2880]) + bf16 biases
// = 423,567,360 B, where fp4[r,c] = r x c / 2 + r x c / 32. Marlin (A100) pads I to 2944 and H to 3072:
// 32 x (2 x fp4[2944,3072] + fp4[3072,2944]) + (2 x 2944 + 3072) x 2 x 32 = 461,815,808 B. Triton on Hopper
// (vLLM >= 0.11.1) keeps the scales plus a swizzled copy padded along N to 256 and makes the biases fp32:
// 423,567,360 - 552,960 + 1,105,920 + 32 x (5888 + 3072) x 90 = 449,925,120 B.
// With TP 2 the padding applies to each rank's slice: 1440 -> 1536, i.e. 3072 over both ranks (not 2944):
// 32 x 3 x fp4[3072,3072] + (2 x 3072 + 3072) x 2 x 32 = 481,886,208 B per layer, half of it per rank.
TEST(Fit, Mxfp4ExpertsAsTheKernelLaysThemOut) {
  auto weights = [](const std::string& device, const std::string& version, int64_t tp = 1) {
    auto s = fit_setup("openai/gpt-oss-20b", device, "vllm", version);
    estimate::Deployment d;
    d.tensor_parallel_size = tp;
    d.max_model_len = 16000;
    return estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d).weights_bytes;
  };
  const double as_stored = weights("H100-SXM", "0.8.5");  // before gpt-oss support: no layout, checkpoint bytes
  EXPECT_NEAR(weights("A100-80G-SXM", "0.11.2") - as_stored, 24.0 * (461815808.0 - 423567360.0), 2.0);
  EXPECT_NEAR(weights("H100-SXM", "0.11.2") - as_stored, 24.0 * (449925120.0 - 423567360.0), 2.0);
  EXPECT_NEAR(weights("A100-80G-SXM", "0.11.2", 2) - weights("H100-SXM", "0.8.5", 2), 24.0 * (481886208.0 - 423567360.0) / 2.0, 2.0);
  // llm-d's H100 run printed 13.47 GiB (vllm-startup.dev.jsonl).
  EXPECT_NEAR(bytes_to_gib(weights("H100-SXM", "0.11.2")), 13.47, 13.47 * 0.01);
}

// vLLM 0.9.2-0.11.0 samples with FlashInfer whenever flashinfer is installed (PR #26859 made native the default
// in 0.11.1). The estimate keeps the native sort; the high side of the band reaches the FlashInfer path:
// Llama-3.1-8B on an H100 (1024 seqs): (10 - 3.5) x 1024 x 128,256 x 4 B = 3,414,687,744 B more KV at most.
// gpt-oss-120b on one H100 at 0.10.1 ran its experts through Marlin (vllm#23278: "Model loading took 65.9651 GiB",
// "Available KV cache memory: -2.14 GiB"); from 0.11.1 Hopper uses triton_kernels (vllm#33155 at 0.14.1: 64.38 GiB).
TEST(Fit, FlashInferSamplerBandAndHopperMxfp4ByVersion) {
  auto llama = fit_setup("meta-llama/Meta-Llama-3.1-8B", "H100-SXM", "vllm", "0.10.1");
  estimate::Deployment d;
  d.max_model_len = 8192;
  const auto e = estimate::estimate_fit(llama.model, llama.device, llama.engine, llama.overheads, d);
  EXPECT_NEAR(e.available_kv_band_high_bytes - e.available_kv_band_bytes, 6.5 * 1024 * 128256 * 4, 1.0);
  EXPECT_GT(e.kv_tokens_high, e.kv_tokens);
  bool says = false;
  for (const auto& a : e.assumptions) says |= a.find("VLLM_USE_FLASHINFER_SAMPLER=0") != std::string::npos;
  EXPECT_TRUE(says);
  auto later = fit_setup("meta-llama/Meta-Llama-3.1-8B", "H100-SXM", "vllm", "0.11.2");
  const auto e2 = estimate::estimate_fit(later.model, later.device, later.engine, later.overheads, d);
  EXPECT_DOUBLE_EQ(e2.available_kv_band_high_bytes, e2.available_kv_band_bytes);

  d.max_model_len = 32768;
  auto oss = fit_setup("openai/gpt-oss-120b", "H100-SXM", "vllm", "0.10.1");
  const auto g = estimate::estimate_fit(oss.model, oss.device, oss.engine, oss.overheads, d);
  EXPECT_NEAR(bytes_to_gib(g.weights_bytes), 65.9651, 65.9651 * 0.002);
  EXPECT_EQ(g.failure, estimate::Failure::kv_negative);
  EXPECT_NEAR(bytes_to_gib(g.available_kv_bytes), -2.14, 0.5);
  auto oss14 = fit_setup("openai/gpt-oss-120b", "H100-SXM", "vllm", "0.14.1");
  EXPECT_NEAR(bytes_to_gib(estimate::estimate_fit(oss14.model, oss14.device, oss14.engine, oss14.overheads, d).weights_bytes), 64.38, 64.38 * 0.002);
}

TEST(Fit, Seed910B4CasesFailForTheEnginesReason) {
  auto s = fit_setup("nvidia/Qwen3.6-27B-NVFP4", "910B4", "vllm-ascend", "0.18.0");
  estimate::Deployment d;
  d.max_model_len = 512;
  d.gpu_memory_utilization = 0.98;
  d.quantization = "ascend";
  auto e = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
  EXPECT_FALSE(e.fits);
  EXPECT_EQ(e.failure, estimate::Failure::weights_oom);
  d.quantization = "fp8";
  e = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
  EXPECT_EQ(e.failure, estimate::Failure::unsupported_quantization);
  EXPECT_NE(e.failure_message.find("fp8 quantization is currently not supported in npu."), std::string::npos);
  d.quantization = "awq";
  e = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
  EXPECT_NE(e.failure_message.find("awq quantization is currently not supported in npu."), std::string::npos);
  auto moe = fit_setup("Qwen/Qwen3.6-35B-A3B", "910B4", "vllm-ascend", "0.18.0");
  d.quantization.clear();
  d.max_model_len = 2048;
  d.gpu_memory_utilization = 0.92;
  e = estimate::estimate_fit(moe.model, moe.device, moe.engine, moe.overheads, d);
  EXPECT_EQ(e.failure, estimate::Failure::weights_oom);
  EXPECT_GT(bytes_to_gib(e.weights_bytes), 60.0);  // every expert loads
}

// Issue 16 (ux28): when the weights do not load, the worker raises inside load_model: it never logs "Loading model weights
// took" nor the KV line. The seed's four runs of the 27B W8A8 on one 910B4 (seeds/000 4.3.1) printed only
// "RuntimeError: NPU out of memory. Tried to allocate ..."; fit showed "Loading model weights took 33.6129 GB" and
// "Available KV cache memory: -11.01 GiB" under "the engine will print". The same model on two cards does load and
// prints both lines (vLLM-Ascend 0.18's templates: "Loading model weights took ... GB", "Available KV cache memory: ... GiB").
TEST(Fit, Issue16_WeightsThatDoNotLoadPrintNoEngineLines) {
  auto s = fit_setup("Qwen/Qwen3.6-27B", "910B4", "vllm-ascend", "0.18.0");
  estimate::Deployment d;
  d.max_model_len = 4096;
  d.gpu_memory_utilization = 0.92;
  d.quantization = "ascend";
  auto one = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
  ASSERT_EQ(one.failure, estimate::Failure::weights_oom);
  EXPECT_TRUE(one.lines.empty()) << one.lines.front();
  d.tensor_parallel_size = 2;
  auto two = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
  ASSERT_TRUE(two.fits) << two.failure_message.str();
  ASSERT_GE(two.lines.size(), 2u);
  EXPECT_EQ(two.lines[0].rfind("Loading model weights took ", 0), 0u) << two.lines[0];
  EXPECT_TRUE(std::any_of(two.lines.begin(), two.lines.end(), [](const std::string& l) { return l.rfind("Available KV cache memory: ", 0) == 0; }));
}

TEST(Fit, TensorParallelRulesAndInvalidLayouts) {
  auto s = fit_setup("Qwen/Qwen3-8B", "H100", "vllm", "");
  estimate::Deployment d;
  d.max_model_len = 8192;
  d.tensor_parallel_size = 3;
  auto e = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
  EXPECT_EQ(e.failure, estimate::Failure::invalid_layout);
  EXPECT_NE(e.failure_message.find("must be divisible by tensor parallel size (3)"), std::string::npos);
  // 8 KV heads at TP 16 are replicated: one head per rank, so KV bytes per token per rank stay 36 x 1 x 256 x 2.
  auto big = fit_setup("Qwen/Qwen3-32B", "H100", "vllm", "");
  d.tensor_parallel_size = 16;
  d.max_model_len = 8192;
  e = estimate::estimate_fit(big.model, big.device, big.engine, big.overheads, d);
  EXPECT_EQ(e.kv_bytes_per_token_rank, 64 * 1 * 256 * 2);
  // MLA is not split by TP.
  auto ds = fit_setup("deepseek-ai/DeepSeek-V3", "H200", "vllm", "");
  d.tensor_parallel_size = 8;
  e = estimate::estimate_fit(ds.model, ds.device, ds.engine, ds.overheads, d);
  EXPECT_EQ(e.kv_bytes_per_token_rank, 61 * 576 * 2);
}

// Issue 14 (A): the fit is a typed tree per rank whose terms add up to the printed budget. Qwen3-8B (hidden 4,096,
// 32 heads x head_dim 128, intermediate 12,288, bf16) on one 910B3 with vllm-ascend 0.23 (max_num_batched_tokens 2,048
// on NPUs), graph mode: text unit = the live tensors of one decoder layer (issue 15 npuact, test_npu_versions.cpp) =
// 2,048 x (2 x 4,096 + 4,096 + 3 x 12,288) x 2 B = 2,048 x 49,152 x 2 = 201,326,592 B.
// available = floor(requested - weights - activation peak - non-torch [- graph when in the budget]).
TEST(Fit, Issue14_RankTreeAddsUpToTheBudget) {
  auto s = fit_setup("Qwen/Qwen3-8B", "910B3", "vllm-ascend", "0.23.0");
  estimate::Deployment d;
  d.max_model_len = 32768;
  const auto e = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
  ASSERT_EQ(e.ranks.size(), 1u);
  const auto& r = e.ranks[0];
  EXPECT_EQ(r.stage, "all");
  EXPECT_EQ(r.rank, 0);
  EXPECT_DOUBLE_EQ(r.activation.text_unit_bytes, 201326592.0);
  EXPECT_DOUBLE_EQ(r.activation.vision_encoder.bytes, 0.0);  // a text model: no encoder pass
  EXPECT_DOUBLE_EQ(r.activation.peak.bytes, std::max(r.activation.text_forward.bytes, r.activation.sampler_run.bytes));
  double used = r.weights.bytes + r.activation.peak.bytes + r.non_torch.bytes;
  if (e.graph_in_budget) used += r.graph.bytes;
  EXPECT_NEAR(r.available_kv.bytes, e.requested_bytes - used, 1.0);
  EXPECT_DOUBLE_EQ(r.available_kv.bytes, e.available_kv_bytes);
  // KV geometry: 36 full-attention layers, 8 KV heads x (128 + 128) x 2 B = 4,096 B per token per layer; block 128.
  EXPECT_EQ(r.kv.kv_bytes_per_token, 36 * 4096);
  EXPECT_EQ(r.kv.page_bytes, 128 * 4096);
  ASSERT_EQ(r.kv.groups.size(), 1u);
  EXPECT_EQ(r.kv.groups[0].kind, "full_attention");
  EXPECT_EQ(r.kv.groups[0].blocks_per_request, 32768 / 128);
  EXPECT_EQ(r.kv.num_blocks, static_cast<int64_t>(e.available_kv_bytes) / (128 * 4096) / 36);
}

// Under PP 2 the tree has the first stage (rank 0: embedding, no sampler) and the last (rank TP x 1: head, sampler).
TEST(Fit, Issue14_PipelineStagesAreSeparateRanks) {
  auto s = fit_setup("Qwen/Qwen3-8B", "H100-SXM", "vllm", "0.20.0");
  estimate::Deployment d;
  d.tensor_parallel_size = 2;
  d.pipeline_parallel_size = 2;
  d.max_model_len = 32768;
  const auto e = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
  ASSERT_EQ(e.ranks.size(), 2u);
  EXPECT_EQ(e.ranks[0].stage, "first");
  EXPECT_EQ(e.ranks[0].rank, 0);
  EXPECT_EQ(e.ranks[1].stage, "last");
  EXPECT_EQ(e.ranks[1].rank, 2);
  EXPECT_DOUBLE_EQ(e.ranks[0].activation.sampler_run.bytes, 0.0);
  EXPECT_GT(e.ranks[1].activation.sampler_run.bytes, 0.0);
  // The printed budget is the lower of the two stages.
  EXPECT_DOUBLE_EQ(e.available_kv_bytes, std::min(e.ranks[0].available_kv.bytes, e.ranks[1].available_kv.bytes));
}

// Issue 14 (C): the group padding ratio comes from the engine version. Qwen3.5-27B with 12 of its 48 linear-attention
// layers turned into full attention: 28 attention + 36 state layers, 36 / 28 = 1.29. vLLM 0.14 pads only below
// x 1.25: groups of 28 (1 attention + ceil(36/28) = 2 state groups = 3); vLLM 0.18 pads below x 1.5: groups of 36
// (1 + 1 = 2 groups); vLLM 0.10 never pads: 28.
TEST(Fit, Issue14_HybridGroupSizeFollowsTheVersionRatio) {
  auto s = fit_setup("Qwen/Qwen3.5-27B", "H100-SXM", "vllm", "0.18.0");
  model::LayerSpec attention;
  for (const auto& l : s.model.layers) if (l.kind == model::LayerKind::full_attention) attention = l;
  int converted = 0;
  for (auto& l : s.model.layers) {
    if (l.kind == model::LayerKind::linear_attention && converted < 12) { l = attention; ++converted; }
  }
  ASSERT_EQ(converted, 12);
  auto engines = engine::load_engine_catalog();
  ASSERT_TRUE(engines.has_value());
  estimate::Deployment d;
  d.max_model_len = 32768;
  d.kv_cache_memory_bytes = 20.0 * k_gib;
  struct Row { const char* version; int64_t group_size; size_t groups_of_state; };
  for (const Row row : {Row{"0.10.1", 28, 2}, Row{"0.14.0", 28, 2}, Row{"0.18.0", 36, 1}, Row{"0.20.0", 36, 1}}) {
    const auto eng = engine::select_engine(*engines, "vllm", row.version);
    ASSERT_TRUE(eng.has_value());
    const auto e = estimate::estimate_fit(s.model, s.device, *eng, s.overheads, d);
    EXPECT_EQ(e.group_size, row.group_size) << row.version;
    ASSERT_EQ(e.ranks.size(), 1u);
    EXPECT_EQ(e.ranks[0].kv.num_groups, 1 + static_cast<int64_t>(row.groups_of_state)) << row.version;
  }
}

// Issue 19 item 5: a huge kv_lora_rank (MLA) or ssm_state_size (Mamba) wrapped the 64-bit KV size and gave a
// smaller KV per token, or "fits". Now the product is checked: an invalid_argument naming the field, and the
// verdict-only wrapper refuses.
TEST(Fit, Issue19_OverflowingModelValuesAreErrors) {
  struct Row { const char* model; model::LayerKind kind; const char* field; };
  for (const Row row : {Row{"deepseek-ai/DeepSeek-V3", model::LayerKind::mla_attention, "kv_lora_rank"},
                        Row{"nvidia/Nemotron-H-56B-Base-8K", model::LayerKind::mamba, "ssm_state_size"}}) {
    auto s = fit_setup(row.model, "H100-SXM", "vllm", "0.20.0");
    int changed = 0;
    for (auto& l : s.model.layers) {
      if (l.kind != row.kind) continue;
      if (row.kind == model::LayerKind::mla_attention) l.mla_cache_dim = int64_t{1} << 62;
      else l.ssm_state_dim = int64_t{1} << 62;
      ++changed;
    }
    ASSERT_GT(changed, 0) << row.model;
    estimate::Deployment d;
    d.tensor_parallel_size = 8;
    d.max_model_len = 4096;
    const auto checked = estimate::try_estimate_fit(s.model, s.device, s.engine, s.overheads, d);
    ASSERT_FALSE(checked.has_value()) << row.model;
    EXPECT_EQ(checked.error().kind, ErrorKind::invalid_argument);
    EXPECT_NE(checked.error().message.find(row.field), std::string::npos) << checked.error().message;
    EXPECT_NE(checked.error().message.find("overflows"), std::string::npos) << checked.error().message;
    const auto verdict = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
    EXPECT_FALSE(verdict.fits) << row.model;
    EXPECT_GT(verdict.failure_message.size(), 0u);
  }
}

// Issue 19 (start-up time): the overflow checks name the layer only when a product overflows (the
// name is no longer formatted for every layer of every candidate); the message is the same as before.
TEST(Fit, Issue19_LayerNamedOnlyOnOverflowSameMessage) {
  auto s = fit_setup("deepseek-ai/DeepSeek-V3", "H100-SXM", "vllm", "0.20.0");
  size_t first = s.model.layers.size();
  for (size_t i = 0; i < s.model.layers.size(); ++i) {
    if (s.model.layers[i].kind != model::LayerKind::mla_attention || s.model.layers[i].kv_shared) continue;
    if (first == s.model.layers.size()) first = i;
    s.model.layers[i].mla_cache_dim = int64_t{1} << 62;
  }
  ASSERT_LT(first, s.model.layers.size());
  estimate::Deployment d;
  d.tensor_parallel_size = 8;
  d.max_model_len = 4096;
  const auto checked = estimate::try_estimate_fit(s.model, s.device, s.engine, s.overheads, d);
  ASSERT_FALSE(checked.has_value());
  const std::string want = "layer " + std::to_string(first) +
                           ": kv_lora_rank + qk_rope_head_dim (mla_cache_dim) x cache dtype bytes: 4611686018427387904 x 2 overflows 64 bits";
  EXPECT_EQ(checked.error().message, want);
}

// Issue 19 (start-up time): Deployment::explain = false (what plan's candidate search sets) leaves the
// explanatory text empty and changes no number, verdict or failure message. Covers a plain dense model,
// a VL model whose profile run takes a dummy video, a hybrid (state) model, PP 2, a --quantization flag,
// a weights OOM and a too-long context.
TEST(Fit, Issue19_ExplainFalseSameNumbersNoText) {
  struct Row { const char* model; const char* device; const char* engine; const char* version; int64_t tp, pp, len; const char* q; };
  const Row rows[] = {
      {"Qwen/Qwen3-VL-8B-Instruct", "910B3", "vllm-ascend", "0.23", 1, 1, 32768, ""},
      {"Qwen/Qwen3-VL-8B-Instruct", "H100-SXM", "vllm", "", 2, 1, 131072, ""},
      {"Qwen/Qwen3.5-27B", "910B3", "vllm-ascend", "0.23", 1, 1, 262144, ""},
      {"Qwen/Qwen3.5-27B", "910B3", "vllm-ascend", "0.23", 8, 2, 32768, "ascend"},
      {"deepseek-ai/DeepSeek-V3", "H100-SXM", "vllm", "", 8, 2, 8192, ""},
      {"deepseek-ai/DeepSeek-V3", "T4", "vllm", "", 1, 1, 8192, "fp8"},
      {"Qwen/Qwen3.5-27B", "H100-SXM", "vllm", "", 1, 1, 32768, "awq"},
  };
  for (const auto& r : rows) {
    auto s = fit_setup(r.model, r.device, r.engine, r.version);
    estimate::Deployment d;
    d.tensor_parallel_size = r.tp;
    d.pipeline_parallel_size = r.pp;
    d.max_model_len = r.len;
    d.quantization = r.q;
    const auto full = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
    d.explain = false;
    const auto bare = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
    const std::string at = std::string(r.model) + " on " + r.device + " TP" + std::to_string(r.tp) + " PP" + std::to_string(r.pp) + " " + r.q;
    EXPECT_FALSE(full.assumptions.empty()) << at;
    EXPECT_TRUE(bare.assumptions.empty()) << at;
    EXPECT_TRUE(bare.provenance.empty()) << at;
    EXPECT_TRUE(bare.lines.empty()) << at;
    EXPECT_EQ(bare.fits, full.fits) << at;
    EXPECT_EQ(bare.failure, full.failure) << at;
    EXPECT_EQ(bare.failure_message, full.failure_message) << at;
    EXPECT_EQ(bare.quantization, full.quantization) << at;
    EXPECT_EQ(bare.weight_scheme, full.weight_scheme) << at;
    EXPECT_EQ(bare.weights_bytes, full.weights_bytes) << at;
    EXPECT_EQ(bare.activation_bytes, full.activation_bytes) << at;
    EXPECT_EQ(bare.activation_vision_bytes, full.activation_vision_bytes) << at;
    EXPECT_EQ(bare.encoder_profiles_video, full.encoder_profiles_video) << at;
    EXPECT_EQ(bare.non_torch_bytes, full.non_torch_bytes) << at;
    EXPECT_EQ(bare.graph_bytes, full.graph_bytes) << at;
    EXPECT_EQ(bare.available_kv_bytes, full.available_kv_bytes) << at;
    EXPECT_EQ(bare.available_kv_band_bytes, full.available_kv_band_bytes) << at;
    EXPECT_EQ(bare.available_kv_band_high_bytes, full.available_kv_band_high_bytes) << at;
    EXPECT_EQ(bare.block_size, full.block_size) << at;
    EXPECT_EQ(bare.page_bytes, full.page_bytes) << at;
    EXPECT_EQ(bare.num_blocks, full.num_blocks) << at;
    EXPECT_EQ(bare.kv_tokens, full.kv_tokens) << at;
    EXPECT_EQ(bare.kv_tokens_low, full.kv_tokens_low) << at;
    EXPECT_EQ(bare.kv_tokens_high, full.kv_tokens_high) << at;
    EXPECT_EQ(bare.max_concurrency, full.max_concurrency) << at;
    ASSERT_EQ(bare.terms.size(), full.terms.size()) << at;
    for (size_t i = 0; i < bare.terms.size(); ++i) {
      EXPECT_EQ(bare.terms[i].name, full.terms[i].name) << at;
      EXPECT_EQ(bare.terms[i].bytes, full.terms[i].bytes) << at << " " << full.terms[i].name;
      EXPECT_EQ(bare.terms[i].band_bytes, full.terms[i].band_bytes) << at << " " << full.terms[i].name;
      EXPECT_TRUE(bare.terms[i].rule.empty()) << at << " " << bare.terms[i].rule;
    }
    ASSERT_EQ(bare.ranks.size(), full.ranks.size()) << at;
    for (size_t i = 0; i < bare.ranks.size(); ++i) {
      EXPECT_EQ(bare.ranks[i].weights.bytes, full.ranks[i].weights.bytes) << at;
      EXPECT_EQ(bare.ranks[i].activation.peak.bytes, full.ranks[i].activation.peak.bytes) << at;
      EXPECT_EQ(bare.ranks[i].available_kv.bytes, full.ranks[i].available_kv.bytes) << at;
      EXPECT_EQ(bare.ranks[i].kv.num_blocks, full.ranks[i].kv.num_blocks) << at;
    }
  }
}
