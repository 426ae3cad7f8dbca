// Issue 15 (evid25): vLLM-Ascend's EPLB redundant experts. --additional-config '{"eplb_config": {"num_redundant_experts":
// R}}' gives every MoE layer E + R expert slots spread evenly over the EP ranks (vllm-ascend ops/fused_moe/fused_moe.py
// at f8315f5: `self.global_num_experts = num_experts + self.global_redundant_expert_num`), each slot holding a whole
// expert. Expected bytes are derived by hand from Qwen/Qwen3-235B-A22B's config.json (shared/models) and checked against
// the nightly CI log of 2026-03-04 (data/evidence/vllm-startup-public.jsonl, round 12).
#include <gtest/gtest.h>

#include "estimate/fit.hpp"
#include "fit_setup.hpp"

using namespace preflight;

namespace {

// Qwen3-235B-A22B: hidden 4,096, moe_intermediate 1,536, 94 layers, all MoE, 128 routed experts, bf16.
// One expert of one layer: gate, up and down projections, 3 x 4,096 x 1,536 = 18,874,368 parameters, 37,748,736 B.
constexpr double k_expert_layer_bytes_bf16 = 3.0 * 4096.0 * 1536.0 * 2.0;

estimate::Deployment a3_dp4_tp4_ep() {
  estimate::Deployment d;
  d.tensor_parallel_size = 4;
  d.data_parallel_size = 4;
  d.enable_expert_parallel = true;
  d.max_model_len = 40960;
  d.max_num_seqs = 12;
  d.max_num_batched_tokens = 8192;
  d.gpu_memory_utilization = 0.9;
  return d;
}

estimate::FitEstimate fit(const pftest::FitSetup& s, const estimate::Deployment& d) {
  return estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
}

}  // namespace

// DP 4 x TP 4 with expert parallel: 16 EP ranks. 128 experts: 8 per rank; with 16 redundant experts 144 slots, 9 per
// rank: one more expert in each of the 94 layers, 94 x 37,748,736 = 3,548,381,184 B. Without expert parallel vLLM-Ascend
// builds no expert map (the experts are TP-split), so the count changes nothing.
TEST(Eplb, Issue15_RedundantExpertsAddWholeExpertsPerRank) {
  auto s = pftest::fit_setup("Qwen/Qwen3-235B-A22B", "910C", "vllm-ascend", "0.16.0");
  const estimate::Deployment plain = a3_dp4_tp4_ep();
  estimate::Deployment eplb = plain;
  eplb.num_redundant_experts = 16;
  EXPECT_NEAR(fit(s, eplb).weights_bytes - fit(s, plain).weights_bytes, 94.0 * k_expert_layer_bytes_bf16, 2.0);

  estimate::Deployment no_ep = plain;
  no_ep.enable_expert_parallel = false;
  estimate::Deployment no_ep_eplb = no_ep;
  no_ep_eplb.num_redundant_experts = 16;
  EXPECT_NEAR(fit(s, no_ep_eplb).weights_bytes, fit(s, no_ep).weights_bytes, 1.0);
}

// The W8A8 checkpoint of the same nightly job (vllm-ascend/Qwen3-235B-A22B-W8A8, --quantization ascend) printed
// 'Loading model weights took 15.5644 GB' without EPLB and 'Loading model weights took 17.2220 GB' with 16 redundant
// experts: 1.6576 GiB more per rank. The int8 expert weights alone are 94 x 18,874,368 B = 1.6523 GiB; the per-channel
// scales add the rest, so the difference lies between the int8 bytes and the printed difference plus 1%.
TEST(Eplb, Issue15_W8a8RedundantExpertsMatchTheNightlyLog) {
  auto s = pftest::fit_setup("Qwen/Qwen3-235B-A22B", "910C", "vllm-ascend", "0.16.0");
  estimate::Deployment plain = a3_dp4_tp4_ep();
  plain.quantization = "ascend";
  estimate::Deployment eplb = plain;
  eplb.num_redundant_experts = 16;
  const double gib = 1024.0 * 1024.0 * 1024.0;
  const double added = fit(s, eplb).weights_bytes - fit(s, plain).weights_bytes;
  EXPECT_GE(added, 94.0 * 3.0 * 4096.0 * 1536.0);
  EXPECT_LE(added, (17.2220 - 15.5644) * gib * 1.01);
  EXPECT_NEAR(fit(s, eplb).weights_bytes / gib, 17.2220, 17.2220 * 0.01);
}

// Issue 15 (evid26): dynamic EPLB's warm-up (vllm-ascend f8315f5: NPUModelRunner.profile_run -> eplb_warmup ->
// EplbUpdator.warm_up_eplb, a batch_isend_irecv on the default group, and VllmEplbAdaptor.init_buffer_tensor) comes off
// the KV budget. The nightly job of 2026-03-04 ran the same W8A8 deployment with and without
// '{"eplb_config": {"dynamic_eplb": "true", "num_redundant_experts": 16, ...}}' under HCCL_BUFFSIZE=1024:
// 'Available KV cache memory: 35.61 GiB' (FULL_DECODE_ONLY, no EPLB) against 31.65 GiB, and the weights 1.6576 GiB more.
// By hand, the warm-up: 2 x 1,024 MiB = 2.000 GiB for the default group's communicator, plus 144 / 16 = 9 local expert
// slots x one W8A8 expert of one layer (w13 2 x 1,536 x 4,096 B + w2 4,096 x 1,536 B = 18,874,368 B of int8, plus its
// scales) = 0.158 GiB: 2.158 GiB of the 35.61 - 31.65 - 1.66 = 2.30 GiB the log leaves after the redundant experts.
TEST(Eplb, Issue15_DynamicEplbWarmupComesOffTheKvBudget) {
  auto s = pftest::fit_setup("Qwen/Qwen3-235B-A22B", "910C", "vllm-ascend", "0.16.0");
  estimate::Deployment plain = a3_dp4_tp4_ep();
  plain.quantization = "ascend";
  plain.num_redundant_experts = 16;
  plain.hccl_buffsize_bytes = 1024.0 * 1024.0 * 1024.0;
  estimate::Deployment dynamic = plain;
  dynamic.dynamic_eplb = true;
  const double gib = 1024.0 * 1024.0 * 1024.0;
  const estimate::FitEstimate a = fit(s, plain), b = fit(s, dynamic);
  const double int8_slots = 9.0 * 3.0 * 4096.0 * 1536.0;
  const double lost = a.available_kv_bytes - b.available_kv_bytes;
  EXPECT_GE(lost, 2.0 * gib + int8_slots);
  EXPECT_LE(lost, 2.0 * gib + int8_slots * 1.05);
  EXPECT_LE(lost, 2.30 * gib);
  EXPECT_DOUBLE_EQ(a.weights_bytes, b.weights_bytes);

  // Without expert parallel there is no expert map and no EPLB process: nothing is added.
  estimate::Deployment no_ep = dynamic;
  no_ep.enable_expert_parallel = false;
  estimate::Deployment no_ep_plain = plain;
  no_ep_plain.enable_expert_parallel = false;
  EXPECT_DOUBLE_EQ(fit(s, no_ep).available_kv_bytes, fit(s, no_ep_plain).available_kv_bytes);

  // vLLM on CUDA has no such warm-up (its own --eplb-config is another code path): the CUDA profile adds nothing.
  auto cuda = pftest::fit_setup("Qwen/Qwen3-235B-A22B", "H100-SXM", "vllm", "0.16.0");
  estimate::Deployment c_plain = a3_dp4_tp4_ep();
  c_plain.gpu_memory_utilization = 0.9;
  estimate::Deployment c_dynamic = c_plain;
  c_dynamic.dynamic_eplb = true;
  EXPECT_DOUBLE_EQ(fit(cuda, c_plain).available_kv_bytes, fit(cuda, c_dynamic).available_kv_bytes);
}
