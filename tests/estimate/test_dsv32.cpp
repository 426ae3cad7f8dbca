// Issue 15 (dsv32), DeepSeek-V3.2 W8A8 DP + EP on Atlas A3: what VLLM_ASCEND_ENABLE_FLASHCOMM1 changes in the weights
// besides DSA context parallel. vLLM-Ascend keeps vLLM's sequence-parallel MoE off, so the shared experts are TP-split
// unless its own shared-expert DP is on (engines.json shared_experts_whole_only_with_sp), and a sparse-attention layer
// with MLAPO on builds int8 copies of its q_a / kv_a / q_b projections (engines.json sfa_mlapo_copies). Expected bytes
// are derived by hand from deepseek-ai/DeepSeek-V3.2's config.json (shared/models) and the engine source named below.
#include <gtest/gtest.h>

#include "estimate/fit.hpp"
#include "fit_setup.hpp"

using namespace preflight;

namespace {

// DeepSeek-V3.2: hidden 7,168, moe_intermediate 2,048, one shared expert, 61 layers of which the first 3 are dense
// (58 MoE layers), q_lora_rank 1,536, kv_lora_rank 512, qk_rope_head_dim 64, 128 heads of qk_nope + rope = 192.
// The "ascend" (msModelSlim W8A8) variant stores a non-expert linear as int8 [out, in] plus, per output channel,
// weight_scale and weight_offset (bf16), quant_bias (int32) and deq_scale (float32 for a bf16 model): 12 B, and per
// tensor input_scale and input_offset (bf16): 4 B (vllm-ascend quantization/w8a8.py get_perchannel_param /
// get_pertensor_param).
//   shared gate_proj, up_proj: 2,048 x 7,168 + 2,048 x 12 + 4 = 14,704,644 B each
//   shared down_proj:          7,168 x 2,048 + 7,168 x 12 + 4 = 14,766,084 B
//   one layer's shared expert: 44,175,372 B
constexpr double k_shared_expert_layer_bytes = 2.0 * 14704644.0 + 14766084.0;
// MLAPO (attention/sfa_v1.py _process_weights_for_fused_mlapo at 8900e33): wd_qkv = the q_a (1,536) and kv_a
// (512 + 64) rows in int8 with deq_scale (float32) and quant_bias (int32) per row; wu_q = this rank's q_b_proj rows
// (128 x 192 / TP) x q_lora_rank in int8, with the same two per-row vectors.
//   TP 8: 2,112 x (7,168 + 8) + 3,072 x (1,536 + 8) = 15,155,712 + 4,743,168 = 19,898,880 B per layer
constexpr double k_mlapo_layer_bytes_tp8 = 2112.0 * 7176.0 + 3072.0 * 1544.0;

estimate::Deployment with_mtp(estimate::Deployment d) {
  d.speculative.method = "deepseek_mtp";
  d.speculative.num_speculative_tokens = 2;
  return d;
}

estimate::FitEstimate fit(const pftest::FitSetup& s, const estimate::Deployment& d) {
  return estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
}

}  // namespace

// vllm-ascend platform.py (PR #3246, v0.11.0rc0 on) sets all2all_backend "flashinfer_all2allv" to turn vLLM's
// use_sequence_parallel_moe off, so at DP 2 x TP 8 with EP the shared experts keep the TP split; ops/linear_op.py
// get_parallel_op builds a "shared_experts" layer without TP only under shared_expert_dp_enabled()
// (enable_shared_expert_dp, or enable_sp(): VLLM_ASCEND_ENABLE_FLASHCOMM1=1). Whole on every rank instead of 1/8:
//   58 x 44,175,372 x 7/8 = 2,241,900,128.25 B (59 layers with the MTP drafter: 2,280,554,578.5 B)
TEST(Dsv32, Issue15_VllmAscendSharedExpertsSplitUnlessSharedExpertDp) {
  auto s = pftest::fit_setup("deepseek-ai/DeepSeek-V3.2", "910C", "vllm-ascend", "0.13.0");
  const estimate::Deployment split = pftest::dsv32_a3_nightly();
  estimate::Deployment whole = split;
  whole.enable_shared_expert_dp = true;
  EXPECT_NEAR(fit(s, whole).weights_bytes - fit(s, split).weights_bytes, 58.0 * k_shared_expert_layer_bytes * 7.0 / 8.0, 2.0);
  EXPECT_NEAR(fit(s, with_mtp(whole)).weights_bytes - fit(s, with_mtp(split)).weights_bytes, 59.0 * k_shared_expert_layer_bytes * 7.0 / 8.0, 2.0);

  // vLLM itself (no such rule) keeps them whole under its sequence-parallel MoE whatever the switches.
  auto v = pftest::fit_setup("deepseek-ai/DeepSeek-V3.2", "H200", "vllm", "0.13.0");
  estimate::Deployment gpu = split;
  gpu.quantization.clear();
  estimate::Deployment gpu_dp = gpu;
  gpu_dp.enable_shared_expert_dp = true;
  EXPECT_NEAR(fit(v, gpu_dp).weights_bytes, fit(v, gpu).weights_bytes, 1.0);
}

// MLAPO on a sparse-attention layer: off by default in 0.13 (envs.py "0" at v0.13.0 / 8900e33), on from 0.14.0rc1
// ("1"); VLLM_ASCEND_ENABLE_MLAPO as the environment sets it otherwise; never with DSA context parallel ("Currently
// mlapo does not support SFA with CP"), never outside the rule's versions (0.20.2rc1 reads ascend_config.enable_mlapo)
// and never for MLA without the indexer (mla_v1.py is another path).
//   61 layers x 19,898,880 = 1,213,831,680 B; with the MTP layer as the drafter 62 x = 1,233,730,560 B
TEST(Dsv32, Issue15_SfaMlapoWeightsBesideTheProjections) {
  struct Row {
    const char* version;
    std::optional<bool> mlapo;
    bool flashcomm1;
    double expected_bytes;
  };
  const Row rows[] = {
      {"0.13.0", std::nullopt, false, 0.0},
      {"0.13.0", true, false, 61.0 * k_mlapo_layer_bytes_tp8},
      {"0.14.0", std::nullopt, false, 61.0 * k_mlapo_layer_bytes_tp8},
      {"0.14.1", false, false, 0.0},
      {"0.14.1", true, true, 0.0},  // DSA context parallel turns MLAPO off
      {"0.15.0", std::nullopt, false, 61.0 * k_mlapo_layer_bytes_tp8},
      {"0.19.0", std::nullopt, false, 61.0 * k_mlapo_layer_bytes_tp8},
      {"0.20.2", true, false, 0.0},
  };
  for (const auto& r : rows) {
    auto s = pftest::fit_setup("deepseek-ai/DeepSeek-V3.2", "910C", "vllm-ascend", r.version);
    estimate::Deployment d = pftest::dsv32_a3_nightly();
    d.mlapo = r.mlapo;
    d.flashcomm1 = r.flashcomm1;
    EXPECT_NEAR(fit(s, d).sfa_mlapo_bytes, r.expected_bytes, 1.0) << r.version;
  }
  auto s = pftest::fit_setup("deepseek-ai/DeepSeek-V3.2", "910C", "vllm-ascend", "0.13.0");
  estimate::Deployment on = with_mtp(pftest::dsv32_a3_nightly());
  on.mlapo = true;
  estimate::Deployment off = on;
  off.mlapo = false;
  EXPECT_NEAR(fit(s, on).sfa_mlapo_bytes, 62.0 * k_mlapo_layer_bytes_tp8, 1.0);
  EXPECT_NEAR(fit(s, on).weights_bytes - fit(s, off).weights_bytes, 62.0 * k_mlapo_layer_bytes_tp8, 1.0);

  auto v31 = pftest::fit_setup("deepseek-ai/DeepSeek-V3.1", "910C", "vllm-ascend", "0.14.0");
  EXPECT_EQ(fit(v31, pftest::dsv32_a3_nightly()).sfa_mlapo_bytes, 0.0);
}

// The printed step between the 2026-01-21 and 2026-01-26 nightly runs (same layout: DP 4 x TP 8, EP 32, MTP 2; the job's
// config turned VLLM_ASCEND_ENABLE_FLASHCOMM1 from 0 to 1, MLAPO 1 on both): +4.7023 GiB per rank. FLASHCOMM1 moves three
// things at once: DSA context parallel (its own term, tests/estimate/test_fit_ep.cpp), the shared experts whole
// (59 x 44,175,372 x 7/8 B) and the MLAPO weights gone (62 x 19,898,880 B).
TEST(Dsv32, Issue15_Flashcomm1StepIsDsaCpPlusSharedExpertsLessMlapo) {
  auto s = pftest::fit_setup("deepseek-ai/DeepSeek-V3.2", "910C", "vllm-ascend", "0.14.1");
  estimate::Deployment off = with_mtp(pftest::dsv32_a3_nightly());
  off.data_parallel_size = 4;
  off.max_num_seqs = 16;
  off.max_num_batched_tokens = 4096;
  off.gpu_memory_utilization = 0.85;
  off.mlapo = true;
  estimate::Deployment on = off;
  on.flashcomm1 = true;
  const auto a = fit(s, off), b = fit(s, on);
  EXPECT_EQ(a.dsa_cp_weights_bytes, 0.0);
  EXPECT_GT(b.dsa_cp_weights_bytes, 0.0);
  EXPECT_NEAR(b.weights_bytes - a.weights_bytes,
              b.dsa_cp_weights_bytes + 59.0 * k_shared_expert_layer_bytes * 7.0 / 8.0 - 62.0 * k_mlapo_layer_bytes_tp8, 2.0);
}

// Issue 15 (dsv32r): the MTP drafter in the profile run (engines.json mtp_drafter_profile_tensors, vLLM-Ascend 0.13 -
// 0.15). vLLM's EagleProposer.__init__ (vllm/v1/spec_decode/eagle.py) allocates before the profile run, for
// T = max_num_batched_tokens rows: hidden_states and inputs_embeds [T, 7,168] bf16 (2 x 14,336 B), input_ids int32
// (4 B), positions int64 (8 B) and arange int32 (4 B): 28,688 B per token, in every phase. worker/model_runner_v1.py
// _dummy_run keeps the target's output [T, 7,168] bf16 (14,336 B per row) while drafter.dummy_run runs the MTP layer.
//   one A3 node, T 8,192:  buffers 8,192 x 28,688 = 235,012,096 B; held 8,192 x 14,336 = 117,440,512 B
//   two nodes, T 4,096:    buffers 117,506,048 B; held 58,720,256 B (FLASHCOMM1 off, or on from 0.15: gathered)
//   0.14 with FLASHCOMM1:  held ceil(4,096 / 8) = 512 rows x 14,336 = 7,340,032 B (the dummy run's output is not gathered)
TEST(Dsv32, Issue15_MtpDrafterBuffersAndHeldOutputInTheProfileRun) {
  struct Row {
    const char* version;
    int64_t batched_tokens;
    bool flashcomm1;
    double buffers_bytes, held_bytes;
  };
  const Row rows[] = {
      {"0.13.0", 8192, false, 235012096.0, 117440512.0},
      {"0.13.0", 4096, false, 117506048.0, 58720256.0},
      {"0.14.0", 4096, true, 117506048.0, 7340032.0},
      {"0.15.0", 4096, true, 117506048.0, 58720256.0},
      {"0.18.0", 4096, false, 0.0, 0.0},  // outside the rule (spec_decode restructured from 0.16)
  };
  for (const Row& r : rows) {
    SCOPED_TRACE(std::string(r.version) + " T " + std::to_string(r.batched_tokens) + (r.flashcomm1 ? " FLASHCOMM1" : ""));
    auto s = pftest::fit_setup("deepseek-ai/DeepSeek-V3.2", "910C", "vllm-ascend", r.version);
    estimate::Deployment d = pftest::dsv32_a3_nightly();
    d.max_num_batched_tokens = r.batched_tokens;
    d.flashcomm1 = r.flashcomm1;
    const estimate::FitEstimate with = fit(s, with_mtp(d));
    EXPECT_DOUBLE_EQ(with.activation_drafter_buffers_bytes, r.buffers_bytes);
    EXPECT_DOUBLE_EQ(with.activation_drafter_held_output_bytes, r.held_bytes);
    const estimate::FitEstimate without = fit(s, d);
    EXPECT_DOUBLE_EQ(without.activation_drafter_buffers_bytes, 0.0);
    EXPECT_DOUBLE_EQ(without.activation_drafter_held_output_bytes, 0.0);
  }
  // The text forward is the largest phase of the one-node run, so its peak grows by both: 352,452,608 B.
  auto s = pftest::fit_setup("deepseek-ai/DeepSeek-V3.2", "910C", "vllm-ascend", "0.13.0");
  const estimate::Deployment d = pftest::dsv32_a3_nightly();
  EXPECT_DOUBLE_EQ(fit(s, with_mtp(d)).activation_bytes - fit(s, d).activation_bytes, 352452608.0);
  // An n-gram drafter has no layers, and vLLM (CUDA) has no such rule.
  estimate::Deployment ngram = d;
  ngram.speculative.method = "ngram";
  ngram.speculative.num_speculative_tokens = 2;
  EXPECT_DOUBLE_EQ(fit(s, ngram).activation_drafter_buffers_bytes, 0.0);
  auto v = pftest::fit_setup("deepseek-ai/DeepSeek-V3.2", "H200", "vllm", "0.13.0");
  estimate::Deployment gpu = with_mtp(d);
  gpu.quantization.clear();
  EXPECT_DOUBLE_EQ(fit(v, gpu).activation_drafter_buffers_bytes, 0.0);
}
