// Issue 15: the profile-run terms of hybrid (Gated DeltaNet) models. vLLM's chunked GDN prefill
// (vllm/model_executor/layers/fla/ops/chunk.py chunk_gated_delta_rule_fwd, chunk_delta_h.py chunk_gated_delta_rule_fwd_h)
// holds, inside one linear-attention layer over N batched tokens, at chunk_fwd_o:
//   per token and value head: g cumsum fp32 (4 B), the solved A [64] in the key dtype, w [dk], u, v_new, o [dv] each;
//   per 64-token chunk and value head: one dv x dk state h in the key dtype;
//   per token and key head: the l2-normalised q and k copies [dk].
// Expected bytes below are worked out by hand from Qwen3.5-27B's config (shared/models/Qwen__Qwen3.5-27B/config.json:
// linear_num_value_heads 48, linear_num_key_heads 16, linear_key_head_dim 128, linear_value_head_dim 128, bf16).
#include <gtest/gtest.h>

#include <string>

#include "deploy/deployment.hpp"
#include "estimate/fit.hpp"
#include "estimate/fit_terms.hpp"
#include "fit_setup.hpp"

using namespace preflight;

namespace {

estimate::FitEstimate qwen27b(const std::string& engine, const std::string& version, const std::string& device, int64_t tp, int64_t batched) {
  auto s = pftest::fit_setup("Qwen/Qwen3.5-27B", device, engine, version);
  estimate::Deployment d;
  d.tensor_parallel_size = tp;
  d.max_model_len = 65536;
  d.max_num_seqs = 1;
  d.max_num_batched_tokens = batched;
  d.language_model_only = true;
  d.speculative.method = "mtp";
  d.speculative.num_speculative_tokens = 3;
  return estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
}

}  // namespace

// TP 2 (24 value heads, 8 key heads on the rank), 16,384 tokens (the p2p-bench 2 x 5060 Ti run):
//   per token 24 x (4 + 64 x 2 + 128 x 2 + 3 x 128 x 2) + 2 x 8 x 128 x 2 = 24 x 1,156 + 4,096 = 31,840 B
//   x 16,384 = 521,666,560; chunks 16,384 / 64 = 256 x 24 x 128 x 128 x 2 = 201,326,592; total 722,993,152 B.
// TP 4, 8,192 tokens: 12 x 1,156 + 2 x 4 x 128 x 2 = 15,920 B x 8,192 = 130,416,640; 128 x 12 x 32,768 = 50,331,648;
//   total 180,748,288 B. 100 tokens: 2 chunks (rounded up).
TEST(MtpProfile, Issue15_GdnPrefillWorkspaceHandDerived) {
  auto s = pftest::fit_setup("Qwen/Qwen3.5-27B", "RTX3090", "vllm", "0.23.0");
  const auto tp2 = estimate::terms::stage_layout(s.model, 2, 1);
  const auto tp4 = estimate::terms::stage_layout(s.model, 4, 1);
  EXPECT_DOUBLE_EQ(estimate::terms::gdn_prefill_workspace_bytes(s.model, tp2, 16384), 722993152.0);
  EXPECT_DOUBLE_EQ(estimate::terms::gdn_prefill_workspace_bytes(s.model, tp4, 8192), 180748288.0);
  EXPECT_DOUBLE_EQ(estimate::terms::gdn_prefill_workspace_bytes(s.model, tp4, 100), 100.0 * 15920.0 + 2.0 * 12.0 * 32768.0);
}

// Issue 15: the key heads come from the config's linear_num_key_heads (LayerSpec::linear_num_key_heads), not from the
// conv channels. Qwen3.5-27B with its conv channels zeroed keeps 722,993,152 B at TP 2 and 16,384 tokens; with 8 key
// heads instead of 16 the q/k copies shrink from 2 x 8 x 128 x 2 B to 2 x 4 x 128 x 2 B per token (rank): 2,048 B less
// x 16,384 = 33,554,432 B, so 689,438,720 B.
// Qwen3-Next-80B-A3B (32 value, 16 key heads of 128, bf16) at TP 4, 8,192 tokens: 8 x 1,156 + 2 x 4 x 128 x 2 = 11,296 B
// per token x 8,192 = 92,536,832; 128 chunks x 8 x 128 x 128 x 2 = 33,554,432; total 126,091,264 B.
TEST(MtpProfile, Issue15_GdnWorkspaceUsesLinearNumKeyHeads) {
  auto s = pftest::fit_setup("Qwen/Qwen3.5-27B", "RTX3090", "vllm", "0.23.0");
  const auto tp2 = estimate::terms::stage_layout(s.model, 2, 1);
  auto m = s.model;
  for (auto& l : m.layers) l.conv_channels = 0;
  EXPECT_DOUBLE_EQ(estimate::terms::gdn_prefill_workspace_bytes(m, tp2, 16384), 722993152.0);
  for (auto& l : m.layers)
    if (l.kind == model::LayerKind::linear_attention) l.linear_num_key_heads = 8;
  EXPECT_DOUBLE_EQ(estimate::terms::gdn_prefill_workspace_bytes(m, tp2, 16384), 689438720.0);
  auto next = pftest::fit_setup("Qwen/Qwen3-Next-80B-A3B-Thinking", "RTX3090", "vllm", "0.23.0");
  const auto tp4 = estimate::terms::stage_layout(next.model, 4, 1);
  EXPECT_DOUBLE_EQ(estimate::terms::gdn_prefill_workspace_bytes(next.model, tp4, 8192), 126091264.0);
}

// A model without linear-attention layers has no such workspace.
TEST(MtpProfile, Issue15_NoWorkspaceWithoutLinearAttention) {
  auto s = pftest::fit_setup("Qwen/Qwen3-8B", "RTX3090", "vllm", "0.23.0");
  const auto lay = estimate::terms::stage_layout(s.model, 1, 1);
  EXPECT_EQ(estimate::terms::gdn_prefill_workspace_bytes(s.model, lay, 8192), 0.0);
}

// In the fit: the text forward is the fitted factor x its unit plus the workspace on vLLM (CUDA), and the workspace is
// exported for tools/fit_overheads.py; a text-only MTP run at 16,384 batched tokens is bound by the text forward.
TEST(MtpProfile, Issue15_TextForwardCarriesGdnWorkspaceOnVllm) {
  auto s = pftest::fit_setup("Qwen/Qwen3.5-27B", "RTX5060Ti-16G", "vllm", "0.23.0");
  const auto e = qwen27b("vllm", "0.23.0", "RTX5060Ti-16G", 2, 16384);
  EXPECT_DOUBLE_EQ(e.activation_text_workspace_bytes, 722993152.0);
  EXPECT_NEAR(e.activation_text_bytes, s.overheads.activation_bytes_per_batched_token_factor * e.activation_text_unit_bytes + 722993152.0, 1.0);
  EXPECT_GE(e.activation_bytes, e.activation_text_bytes);
}

// vLLM-Ascend runs its own kernels with its own fitted factors: no workspace added there.
TEST(MtpProfile, Issue15_NoGdnWorkspaceOnVllmAscend) {
  const auto e = qwen27b("vllm-ascend", "0.18.0", "910B3", 2, 16384);
  EXPECT_EQ(e.activation_text_workspace_bytes, 0.0);
}
