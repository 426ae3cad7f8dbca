#include <gtest/gtest.h>

#include "estimate/fit.hpp"
#include "fit_setup.hpp"

using namespace preflight;

namespace {

// The numbers, verdict and message of a fit without its text (explain false), the device id left out.
void expect_same_fit(const estimate::FitEstimate& a, const estimate::FitEstimate& b, const std::string& at) {
  EXPECT_EQ(a.fits, b.fits) << at;
  EXPECT_EQ(a.failure, b.failure) << at;
  EXPECT_EQ(a.failure_message, b.failure_message) << at;
  EXPECT_EQ(a.max_num_batched_tokens, b.max_num_batched_tokens) << at;
  EXPECT_EQ(a.max_num_seqs, b.max_num_seqs) << at;
  EXPECT_DOUBLE_EQ(a.total_bytes, b.total_bytes) << at;
  EXPECT_DOUBLE_EQ(a.weights_bytes, b.weights_bytes) << at;
  EXPECT_DOUBLE_EQ(a.activation_bytes, b.activation_bytes) << at;
  EXPECT_DOUBLE_EQ(a.available_kv_bytes, b.available_kv_bytes) << at;
  EXPECT_EQ(a.num_blocks, b.num_blocks) << at;
  EXPECT_EQ(a.kv_tokens, b.kv_tokens) << at;
  EXPECT_DOUBLE_EQ(a.max_concurrency, b.max_concurrency) << at;
  EXPECT_EQ(a.weight_scheme, b.weight_scheme) << at;
  EXPECT_EQ(a.stages.size(), b.stages.size()) << at;
}

}  // namespace

// Issue 19 (round 5): the plan fits one device of each set of catalogue cards whose fit is the same
// (estimate::same_fit_device) and copies that fit to the others. H100-SXM and H800 are both hopper cards of
// 85,017,755,648 runtime bytes (80 GiB nominal) in the catalogue: the same fit but for the device id, for a
// dense, a VL and an MoE model at TP 1, TP 8 and TP 8 x PP 2. H200 (141 GiB) and a copy of the H100 read as
// ampere (vLLM's smaller batch defaults on A100-class cards) are not the same, and their fits do differ.
TEST(Fit, Issue19_SameFitDeviceGivesTheSameFit) {
  for (const char* id : {"Qwen/Qwen3-0.6B", "Qwen/Qwen3-VL-8B-Instruct", "Qwen/Qwen3-30B-A3B"}) {
    auto a = pftest::fit_setup(id, "H100-SXM", "vllm", "0.11.0");
    auto b = pftest::fit_setup(id, "H800", "vllm", "0.11.0");
    auto h200 = pftest::fit_setup(id, "H200", "vllm", "0.11.0");
    ASSERT_EQ(a.device.family, "hopper");
    ASSERT_TRUE(estimate::same_fit_device(a.device, b.device, a.engine)) << id;
    EXPECT_FALSE(estimate::same_fit_device(a.device, h200.device, a.engine)) << id;
    device::DeviceSpec ampere = a.device;
    ampere.family = "ampere";
    EXPECT_FALSE(estimate::same_fit_device(a.device, ampere, a.engine)) << id;
    for (const auto& [tp, pp] : {std::pair<int64_t, int64_t>{1, 1}, {8, 1}, {8, 2}}) {
      estimate::Deployment d;
      d.tensor_parallel_size = tp;
      d.pipeline_parallel_size = pp;
      d.max_model_len = 8192;
      d.explain = false;
      const std::string at = std::string(id) + " TP" + std::to_string(tp) + " PP" + std::to_string(pp);
      const auto fa = estimate::estimate_fit(a.model, a.device, a.engine, a.overheads, d);
      const auto fb = estimate::estimate_fit(b.model, b.device, b.engine, b.overheads, d);
      EXPECT_EQ(fa.device_id, "H100-SXM");
      EXPECT_EQ(fb.device_id, "H800");
      expect_same_fit(fa, fb, at);
      if (fa.fits) {
        EXPECT_NE(estimate::estimate_fit(a.model, h200.device, a.engine, a.overheads, d).num_blocks, fa.num_blocks) << at;
        EXPECT_NE(estimate::estimate_fit(a.model, ampere, a.engine, a.overheads, d).max_num_batched_tokens, fa.max_num_batched_tokens) << at;
      }
    }
  }
}

// The device id counts where the engine's MXFP4 layout is chosen by card (vLLM's SM100 path on B200 and B300,
// engines.json mxfp4_layouts): B200 and a card equal to it in every other field are not the same fit.
TEST(Fit, Issue19_SameFitDeviceHonoursPerCardMxfp4Layout) {
  auto s = pftest::fit_setup("Qwen/Qwen3-0.6B", "B200", "vllm", "0.11.0");
  device::DeviceSpec other = s.device;
  other.id = "B200-like";
  ASSERT_NE(s.engine.mxfp4_layout_for("B200", s.device.family), s.engine.mxfp4_layout_for("B200-like", s.device.family));
  EXPECT_FALSE(estimate::same_fit_device(s.device, other, s.engine));
  EXPECT_TRUE(estimate::same_fit_device(s.device, s.device, s.engine));
}
