// Issue 15 (dpep), DP + EP on vLLM-Ascend: the MoE router of MLA models held in fp32 from v0.20.2rc1
// (engines.json moe_gate_fp32). Expected numbers are derived by hand from the published configs (shared/models) and
// the engine source named in each test.
#include <gtest/gtest.h>

#include "estimate/fit.hpp"
#include "fit_setup.hpp"

using namespace preflight;

// vllm-ascend PR #9617 (commit 78aa7ae362, in v0.20.2rc1 and later; not in v0.19.1rc1): for a model with
// is_deepseek_mla, utils.py register_ascend_customop replaces vLLM's GateLinear with AscendGateLinear
// (ops/fused_moe/gate_linear.py, params_dtype=torch.float32), and fused_moe.py stops casting e_score_correction_bias
// to the model dtype. Both are replicated, so every rank holds them whatever DP x TP and EP are.
// DeepSeek-V3.2 (config.json: hidden 7,168, 256 routed experts, 61 layers of which the first 3 are dense, bf16):
//   per MoE layer, (4 - 2) B x (256 x 7,168 gate + 256 bias) = 2 x 1,835,264 = 3,670,528 B
//   58 MoE layers: 212,890,624 B; with the MTP layer as the drafter (one MoE layer more): 59 x = 216,561,152 B
// Kimi-K2-Instruct (hidden 7,168, 384 experts, 61 layers, the first dense, MLA):
//   (4 - 2) B x (384 x 7,168 + 384) = 5,505,792 B per layer, x 60 = 330,347,520 B
TEST(Dpep, Issue15_MlaMoeRouterInFp32From0202) {
  struct Row {
    const char* model;
    const char* version;
    double expected_bytes;
  };
  const Row rows[] = {
      {"deepseek-ai/DeepSeek-V3.2", "0.13.0", 0.0},          {"deepseek-ai/DeepSeek-V3.2", "0.19.0", 0.0},
      {"deepseek-ai/DeepSeek-V3.2", "0.20.1", 0.0},          {"deepseek-ai/DeepSeek-V3.2", "0.20.2", 212890624.0},
      {"deepseek-ai/DeepSeek-V3.2", "0.22.0", 212890624.0},  {"deepseek-ai/DeepSeek-V3.2", "0.23.0", 212890624.0},
      {"deepseek-ai/DeepSeek-V3.2", "", 212890624.0},        {"moonshotai/Kimi-K2-Instruct", "0.23.0", 330347520.0},
      {"Qwen/Qwen3-30B-A3B", "0.23.0", 0.0},  // not MLA: vLLM's GateLinear stays in the model dtype
  };
  for (const auto& r : rows) {
    auto s = pftest::fit_setup(r.model, "910C", "vllm-ascend", r.version);
    const auto e = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, pftest::dsv32_a3_nightly());
    EXPECT_NEAR(e.gate_fp32_extra_bytes, r.expected_bytes, 1.0) << r.model << " @ " << r.version;
  }

  // Inside the weights line: 0.20.1 and 0.20.2 share a catalogue profile, so their weights differ by the router only.
  auto before = pftest::fit_setup("deepseek-ai/DeepSeek-V3.2", "910C", "vllm-ascend", "0.20.1");
  auto after = pftest::fit_setup("deepseek-ai/DeepSeek-V3.2", "910C", "vllm-ascend", "0.20.2");
  const auto b = estimate::estimate_fit(before.model, before.device, before.engine, before.overheads, pftest::dsv32_a3_nightly());
  const auto a = estimate::estimate_fit(after.model, after.device, after.engine, after.overheads, pftest::dsv32_a3_nightly());
  EXPECT_NEAR(a.weights_bytes - b.weights_bytes, 212890624.0, 1.0);

  // The MTP drafter's MoE layer builds the same router; the 310P keeps vLLM's GateLinear replaced too.
  estimate::Deployment mtp = pftest::dsv32_a3_nightly();
  mtp.speculative.method = "deepseek_mtp";
  mtp.speculative.num_speculative_tokens = 2;
  EXPECT_NEAR(estimate::estimate_fit(after.model, after.device, after.engine, after.overheads, mtp).gate_fp32_extra_bytes, 216561152.0, 1.0);
  auto p310 = pftest::fit_setup("deepseek-ai/DeepSeek-V3.2", "300I-Duo", "vllm-ascend", "0.23.0");
  EXPECT_NEAR(estimate::estimate_fit(p310.model, p310.device, p310.engine, p310.overheads, pftest::dsv32_a3_nightly()).gate_fp32_extra_bytes, 212890624.0, 1.0);
}
