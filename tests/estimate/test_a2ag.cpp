// Issue 15 (task a2ag): the A2 all-gather MoE rows with expert parallel off. vllm-ascend select_moe_comm_method
// (ascend_forward_context.py, v0.13.0rc2 - v0.25.1rc1): "Without expert parallel, fall back to all-gather" at any
// token count, so TokenDispatcherWithAllGather permutes T x top_k rows on every rank (all experts local, TP-sharded;
// vLLM's FusedMoEParallelConfig flattens TP x DP into the MoE layer's TP group). Expected numbers are written out
// from those sources, not read back from the code.
#include <gtest/gtest.h>

#include <string>

#include "estimate/fit.hpp"
#include "fit_setup.hpp"

using namespace preflight;

namespace {
constexpr double k_mib = 1024.0 * 1024.0;

pftest::FitSetup setup(const std::string& model_id, const std::string& device_id, const std::string& version) {
  return pftest::fit_setup(model_id, device_id, "vllm-ascend", version);
}

bool term_says(const estimate::FitEstimate& e, const std::string& fragment) {
  for (const auto& t : e.terms)
    if (t.name == "MoE all-gather rows" && t.rule.find(fragment) != std::string::npos) return true;
  return false;
}
}  // namespace

// The held-out case pub-ascend6250-qwen3-next-80b-a2-tp4-u0.8 (vllm-ascend #6250): Qwen3-Next-80B-A3B bf16, TP 4 on
// A2, 0.13, 4,096 batched tokens, EP off. config.json: hidden 2048, top_k 10, moe_intermediate 512.
//   N = DP 1 x 4096 = 4096 tokens:           4096 x 2048 x 2 B                 =  16,777,216 B
//   R = 4096 x 10 = 40,960 rows, inter 512 / 4 = 128: 40,960 x (128 x 2 + 2048 x 2) = 40,960 x 4,352 = 178,257,920 B
//   total 195,035,136 B (0.18 GiB). The same layout on an A3 die (family not listed) carries no term, and its budget
//   is higher by exactly the term (same requested memory).
TEST(A2ag, Issue15_EpOffAllGatherRowsQwen3NextTp4) {
  auto s = setup("Qwen/Qwen3-Next-80B-A3B-Thinking", "910B3", "0.13.0");
  estimate::Deployment d;
  d.tensor_parallel_size = 4;
  d.max_model_len = 32768;
  d.max_num_batched_tokens = 4096;
  d.gpu_memory_utilization = 0.8;
  d.device_total_bytes = 65452113920.0;
  d.explain = true;
  const auto a2 = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
  ASSERT_EQ(a2.expert_parallel_size, 1);
  EXPECT_DOUBLE_EQ(a2.moe_allgather_bytes, 195035136.0);
  EXPECT_TRUE(term_says(a2, "expert parallel off"));
  EXPECT_TRUE(term_says(a2, "/ 4 TP x DP ranks"));

  auto s3 = setup("Qwen/Qwen3-Next-80B-A3B-Thinking", "910C", "0.13.0");
  const auto a3 = estimate::estimate_fit(s3.model, s3.device, s3.engine, s3.overheads, d);
  EXPECT_EQ(a3.moe_allgather_bytes, 0.0);
  EXPECT_NEAR(a3.available_kv_bytes - a2.available_kv_bytes, 195035136.0, 1.0);
}

// Without EP every rank keeps all experts at moe_intermediate / (TP x DP); with EP whole experts. Qwen3-30B-A3B
// (hidden 2048, top_k 8, moe_intermediate 768, bf16) on 910B3 under 0.15, DP 2 x TP 2, 2,048 batched tokens:
//   N = 2 x 2048 = 4096: 4096 x 2048 x 2 B = 16,777,216; R = 32,768 rows
//   EP off: inter 768 / 4 = 192: 32,768 x (192 x 2 + 2048 x 2) = 32,768 x 4,480 = 146,800,640 -> 163,577,856 B
//   EP on:  inter 768:           32,768 x (768 x 2 + 2048 x 2) = 32,768 x 5,632 = 184,549,376 -> 201,326,592 B (192 MiB)
TEST(A2ag, Issue15_EpOffShardsTheExpertsOverTpTimesDp) {
  auto s = setup("Qwen/Qwen3-30B-A3B", "910B3", "0.15.0");
  estimate::Deployment d;
  d.tensor_parallel_size = 2;
  d.data_parallel_size = 2;
  d.max_model_len = 4096;
  d.max_num_batched_tokens = 2048;
  d.gpu_memory_utilization = 0.9;
  const auto off = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
  EXPECT_DOUBLE_EQ(off.moe_allgather_bytes, 163577856.0);
  d.enable_expert_parallel = true;
  const auto on = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
  EXPECT_DOUBLE_EQ(on.moe_allgather_bytes, 192.0 * k_mib);
}

// EP off never takes MC2, so the MC2 capacity (512 tokens) does not switch the term off. Qwen3-30B-A3B, TP 2, 512
// batched tokens under 0.13:
//   N = 512: 512 x 2048 x 2 = 2,097,152; R = 4,096 rows, inter 768 / 2 = 384: 4,096 x (384 x 2 + 2048 x 2) = 19,922,944
//   total 22,020,096 B. With EP on (EP 2) the same 512 tokens fit the MC2 capacity: 0.
TEST(A2ag, Issue15_EpOffHasNoMc2Capacity) {
  auto s = setup("Qwen/Qwen3-30B-A3B", "910B3", "0.13.0");
  estimate::Deployment d;
  d.tensor_parallel_size = 2;
  d.max_model_len = 4096;
  d.max_num_batched_tokens = 512;
  d.gpu_memory_utilization = 0.9;
  EXPECT_DOUBLE_EQ(estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d).moe_allgather_bytes, 22020096.0);
  d.enable_expert_parallel = true;
  EXPECT_EQ(estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d).moe_allgather_bytes, 0.0);
}

// Not applied: a dense model (no MoE layer), the 0.7 - 0.12 profile (select_moe_comm_method not checked there: no
// moe_allgather_families), and an A3 die with EP off (the source takes ALLGATHER there too, but no A3 EP-off MoE case
// was checked; the family list stays A2).
TEST(A2ag, Issue15_EpOffNotOnDenseOldProfilesOrA3) {
  estimate::Deployment d;
  d.tensor_parallel_size = 2;
  d.max_model_len = 4096;
  d.max_num_batched_tokens = 2048;
  d.gpu_memory_utilization = 0.9;
  auto dense = setup("Qwen/Qwen3-8B", "910B3", "0.13.0");
  EXPECT_EQ(estimate::estimate_fit(dense.model, dense.device, dense.engine, dense.overheads, d).moe_allgather_bytes, 0.0);
  auto old = setup("Qwen/Qwen3-30B-A3B", "910B3", "0.11.0");
  EXPECT_EQ(estimate::estimate_fit(old.model, old.device, old.engine, old.overheads, d).moe_allgather_bytes, 0.0);
  auto a3 = setup("Qwen/Qwen3-30B-A3B", "910C", "0.13.0");
  EXPECT_EQ(estimate::estimate_fit(a3.model, a3.device, a3.engine, a3.overheads, d).moe_allgather_bytes, 0.0);
  auto a2 = setup("Qwen/Qwen3-30B-A3B", "910B3", "0.13.0");
  EXPECT_GT(estimate::estimate_fit(a2.model, a2.device, a2.engine, a2.overheads, d).moe_allgather_bytes, 0.0);
}
