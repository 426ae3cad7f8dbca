// Issue 15, held-out NPU cases of data/evidence/vllm-startup-public.jsonl: two vLLM-Ascend rules that hold only for
// some versions or device families (engines.json whole_prompt_prefill and embedding_nz_copy). Expected numbers are
// derived by hand from the published configs (shared/models) and the engine source named in each test.
#include <gtest/gtest.h>

#include <cmath>

#include "base/json_util.hpp"
#include "base/units.hpp"
#include "estimate/fit.hpp"
#include "estimate/fit_terms.hpp"
#include "fit_setup.hpp"

using namespace preflight;

namespace {

// vllm-ascend #3453: vllm.LLM(Qwen3-32B, tensor_parallel_size=2, dtype float16, max_num_batched_tokens=2048,
// gpu_memory_utilization=0.85), max_model_len the model's 40,960.
estimate::Deployment issue3453() {
  estimate::Deployment d;
  d.tensor_parallel_size = 2;
  d.max_model_len = 40960;
  d.max_num_batched_tokens = 2048;
  d.gpu_memory_utilization = 0.85;
  return d;
}

}  // namespace

// vllm-ascend v0.10.2rc1 platform.py (PR #2894): a model that is neither MLA nor multimodal gets the Ascend scheduler,
// and max_num_batched_tokens < max_model_len is raised to max_model_len, the explicit 2,048 included. The profile
// run then forwards 40,960 tokens. Text forward per rank in graph mode, the live tensors of one decoder layer
// (Qwen3-32B: hidden 5,120, 64 heads x head_dim 128, intermediate 25,600, TP 2, 2 B; see the next test):
// 40,960 x (2 x 5,120 + 8,192 / 2 + 3 x 12,800) x 2 B = 40,960 x 52,736 x 2 B = 4,320,133,120 B at the NPU factor;
// at 2,048 tokens 2,048 x 52,736 x 2 B = 216,006,656 B.
TEST(NpuVersions, Issue15_AscendScheduler0102ProfilesMaxModelLenTokens) {
  auto s = pftest::fit_setup("Qwen/Qwen3-32B", "910B2", "vllm-ascend", "0.10.2");
  const double factor = s.overheads.activation_bytes_per_batched_token_factor;
  const auto e = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, issue3453());
  EXPECT_EQ(e.max_num_batched_tokens, 40960);
  EXPECT_NEAR(e.activation_text_bytes, factor * 4320133120.0, 1.0);

  // 0.10.1 (the same catalogue profile, before PR #2894) keeps the flag's 2,048; the text forward is the larger
  // phase at both sizes (sampler run 256 rows x 151,936 x 4 B x 0.5 + 2,048 x 5,120 x 2 B held = 98,762,752 B), so the
  // budgets differ by exactly the text forward's growth, factor x (4,320,133,120 - 216,006,656) B.
  auto before = pftest::fit_setup("Qwen/Qwen3-32B", "910B2", "vllm-ascend", "0.10.1");
  const auto b = estimate::estimate_fit(before.model, before.device, before.engine, before.overheads, issue3453());
  EXPECT_EQ(b.max_num_batched_tokens, 2048);
  EXPECT_NEAR(b.activation_text_bytes, factor * 216006656.0, 1.0);
  EXPECT_NEAR(b.available_kv_bytes - e.available_kv_bytes, factor * 4104126464.0, 2.0);
}

// Issue 15 (npuact): on vLLM-Ascend a dense model's text forward is the tensors one decoder layer holds at its peak
// (engines.json overheads[npu].text_activation_live_tensors). Graph mode (vLLM's piecewise backend, use_inductor off:
// FX code frees each value after its last use; the split graph holds the piece's inputs): at the SwiGLU the incoming
// residual, the attention output (heads x head_dim / TP), npu_add_rms_norm's new residual, gate_up (2 x intermediate /
// TP) and the SwiGLU output (intermediate / TP) = 2 x hidden + attention + 3 x intermediate / TP. Eager mode (Python
// frames hold their locals): the model loop's layer input and residual, the layer's new residual and normed input,
// Qwen2MLP's gate_up and SwiGLU output and the down projection's output = 5 x hidden + 3 x intermediate / TP.
// Qwen3-32B, TP 2, 40,960 tokens, 2 B: graph 4,320,133,120 B (above); eager 40,960 x (5 x 5,120 + 3 x 12,800) x 2 B =
// 40,960 x 64,000 x 2 B = 5,242,880,000 B. A MoE model keeps the fitted unit: Qwen3-30B-A3B (hidden 2,048, 8 of 128
// experts of moe_intermediate 768), TP 1, 2,048 tokens: 2,048 x (2,048 + 2 x 768 x 8) x 2 B = 58,720,256 B in either
// mode. CUDA's record has no live-tensor set: vLLM on an H100 keeps factor x 40,960 x (5,120 + 2 x 12,800) x 2 B
// (2,516,582,400 B of unit).
TEST(NpuVersions, Issue15_NpuTextForwardIsTheDecoderLayersLiveTensors) {
  auto s = pftest::fit_setup("Qwen/Qwen3-32B", "910B2", "vllm-ascend", "0.10.2");
  ASSERT_TRUE(s.overheads.text_activation_live_tensors.has_value());
  const double factor = s.overheads.activation_bytes_per_batched_token_factor;
  estimate::Deployment eager = issue3453();
  eager.mode = estimate::ExecutionMode::eager;
  const auto e = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, eager);
  EXPECT_EQ(e.max_num_batched_tokens, 40960);
  EXPECT_NEAR(e.activation_text_bytes, factor * 5242880000.0, 1.0);

  auto moe = pftest::fit_setup("Qwen/Qwen3-30B-A3B", "910B2", "vllm-ascend", "0.11.0");
  estimate::Deployment d;
  d.max_model_len = 4096;
  d.max_num_batched_tokens = 2048;
  for (const auto mode : {estimate::ExecutionMode::graph, estimate::ExecutionMode::eager}) {
    d.mode = mode;
    const auto m = estimate::estimate_fit(moe.model, moe.device, moe.engine, moe.overheads, d);
    EXPECT_NEAR(m.activation_text_bytes, moe.overheads.activation_bytes_per_batched_token_factor * 58720256.0, 1.0);
  }

  auto cuda = pftest::fit_setup("Qwen/Qwen3-32B", "H100-SXM", "vllm", "0.10.2");
  EXPECT_FALSE(cuda.overheads.text_activation_live_tensors.has_value());
  estimate::Deployment c = issue3453();
  c.max_num_batched_tokens = 40960;
  const auto ce = estimate::estimate_fit(cuda.model, cuda.device, cuda.engine, cuda.overheads, c);
  EXPECT_NEAR(ce.activation_text_bytes, cuda.overheads.activation_bytes_per_batched_token_factor * 2516582400.0, 1.0);
}

// The catalogue record is validated: both modes, the three widths within 0-16 with a non-zero MLP width, a source.
TEST(NpuVersions, Issue15_LiveTensorRecordIsValidated) {
  auto text = [](const std::string& live) {
    return R"({"schema_version": 1, "profiles": [], "overheads": [{"platform": "npu", "non_torch_bytes": 1, "graph_bytes": 1,
      "activation_bytes_per_batched_token_factor": 1, "vision_activation_factor": 0.1, "rope_cache_bytes_per_element": 2, "rope_cache_source": "s",
      "evidence": "e", "band_fraction": 0.3, "non_torch_multi_rank_fraction": 0.5, "non_torch_multi_rank_source": "s", "text_activation_live_tensors": )" +
           live + "}]}";
  };
  const std::string graph = R"("graph": {"hidden": 2, "attention_output": 1, "mlp": 3})";
  const std::string eager = R"("eager": {"hidden": 5, "attention_output": 0, "mlp": 3})";
  auto good = parse_json(text("{" + graph + ", " + eager + R"(, "source": "s"})"), "engines.json");
  ASSERT_TRUE(good.has_value());
  auto ok = engine::parse_engine_catalog(*good, "engines.json");
  ASSERT_TRUE(ok.has_value()) << ok.error().describe();
  ASSERT_TRUE(ok->overheads.front().text_activation_live_tensors.has_value());
  EXPECT_DOUBLE_EQ(ok->overheads.front().text_activation_live_tensors->graph.attention_output, 1.0);
  EXPECT_DOUBLE_EQ(ok->overheads.front().text_activation_live_tensors->eager.hidden, 5.0);
  struct Bad {
    std::string live, fragment;
  };
  const Bad bads[] = {
      {"{" + graph + R"(, "source": "s"})", "text_activation_live_tensors.eager"},
      {"{" + graph + ", " + eager + "}", "source"},
      {"{" + graph + ", " + eager + R"(, "source": ""})", "empty source"},
      {R"({"graph": {"hidden": -1, "attention_output": 1, "mlp": 3}, )" + eager + R"(, "source": "s"})", "outside 0-16"},
      {R"({"graph": {"hidden": 2, "attention_output": 1, "mlp": 0}, )" + eager + R"(, "source": "s"})", "mlp"},
      {R"({"graph": {"hidden": 2, "attention_output": 1, "mlp": 3, "gate": 1}, )" + eager + R"(, "source": "s"})", "gate"},
      {"[]", "expected an object"},
  };
  for (const auto& bad : bads) {
    auto j = parse_json(text(bad.live), "engines.json");
    ASSERT_TRUE(j.has_value()) << bad.live;
    auto e = engine::parse_engine_catalog(*j, "engines.json");
    ASSERT_FALSE(e.has_value()) << bad.live;
    EXPECT_EQ(e.error().kind, ErrorKind::corrupt) << bad.live;
    EXPECT_NE(e.error().describe().find("engines.json"), std::string::npos);
    EXPECT_NE(e.error().describe().find(bad.fragment), std::string::npos) << e.error().describe();
  }
}

// The rule is PR #2894's window only: reverted by PR #3967 (v0.11.0rc1 and later), absent in v0.10.1rc1, and not
// applied where no version is named (the profile's newest, 0.12). MLA models (DeepSeek-V3) and multimodal ones
// (Qwen3-VL-8B) are outside it in every version.
TEST(NpuVersions, Issue15_WholePromptPrefillOnlyFor0102TextNonMla) {
  struct Row {
    const char* model;
    const char* version;
    int64_t expected_tokens;
  };
  const Row rows[] = {
      {"Qwen/Qwen3-32B", "0.10.2", 40960}, {"Qwen/Qwen3-32B", "0.10.1", 2048},         {"Qwen/Qwen3-32B", "0.11.0", 2048},
      {"Qwen/Qwen3-32B", "", 2048},        {"Qwen/Qwen3-VL-8B-Instruct", "0.10.2", 2048}, {"deepseek-ai/DeepSeek-V3", "0.10.2", 2048},
  };
  for (const auto& r : rows) {
    auto s = pftest::fit_setup(r.model, "910B2", "vllm-ascend", r.version);
    estimate::Deployment d = issue3453();
    d.tensor_parallel_size = 1;
    const auto e = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
    EXPECT_EQ(e.max_num_batched_tokens, r.expected_tokens) << r.model << " @ " << r.version;
  }
}

// vllm-ascend _310p/ops/vocab_parallel_embedding.py (PR #6851, from v0.16.0rc1): on 310P every vocab embedding keeps
// its ND weight and a FRACTAL_NZ copy. Qwen3.6-35B-A3B: vocab 248,320 (a multiple of 64, no padding), hidden 2,048,
// untied: embed_tokens and lm_head, each 248,320 / 2 x 2,048 x 2 B = 508,559,360 B per rank at TP 2, so the
// weights grow by 1,017,118,720 B (0.947 GiB; vllm-ascend #10122 printed 18.8 GiB against 17.72 predicted without it).
TEST(NpuVersions, Issue15_310pKeepsAnNzCopyOfTheVocabEmbeddingsFrom016) {
  estimate::Deployment d;
  d.tensor_parallel_size = 2;
  d.max_model_len = 4096;
  auto with = pftest::fit_setup("Qwen/Qwen3.6-35B-A3B", "300I-Duo", "vllm-ascend", "0.16.0");
  auto without = pftest::fit_setup("Qwen/Qwen3.6-35B-A3B", "300I-Duo", "vllm-ascend", "0.15.0");
  const auto a = estimate::estimate_fit(with.model, with.device, with.engine, with.overheads, d);
  const auto b = estimate::estimate_fit(without.model, without.device, without.engine, without.overheads, d);
  EXPECT_NEAR(a.weights_bytes - b.weights_bytes, 1017118720.0, 1.0);

  // Not on the A2 910B at the same version: the copy is the 310P's.
  auto a2 = pftest::fit_setup("Qwen/Qwen3.6-35B-A3B", "910B3", "vllm-ascend", "0.16.0");
  auto a2_before = pftest::fit_setup("Qwen/Qwen3.6-35B-A3B", "910B3", "vllm-ascend", "0.15.0");
  const auto c = estimate::estimate_fit(a2.model, a2.device, a2.engine, a2.overheads, d);
  const auto c0 = estimate::estimate_fit(a2_before.model, a2_before.device, a2_before.engine, a2_before.overheads, d);
  EXPECT_NEAR(c.weights_bytes, c0.weights_bytes, 1.0);
}

// vllm-ascend 0.12 - 0.19: every AscendFusedMoE builds all token dispatchers (setup_moe_comm_method), and the MC2 and
// all-to-all dispatchers call get_hccl_comm_name on the mc2 and ep groups (DP x TP ranks), so with expert parallel off
// a MoE model on more than one rank opens them too: 2 x (HCCL_BUFFSIZE 200 MiB [mc2] + 200 MiB [ep]) = 800 MiB =
// 838,860,800 B before the profile run (DP 1: no dp group). vllm-ascend #6250 (Qwen3-Next-80B-A3B, TP 4, 0.13.0rc2).
// PR #8532 (v0.20.2rc1) builds only the all-gather dispatcher when ep_size is 1; dense models and one rank open none.
TEST(NpuVersions, Issue15_MoeDispatchersOpenHcclCommunicatorsWithEpOff) {
  struct Row {
    const char* model;
    const char* version;
    int64_t tp;
    double expected_bytes;
  };
  const Row rows[] = {
      {"Qwen/Qwen3-Next-80B-A3B-Thinking", "0.13.0", 4, 838860800.0}, {"Qwen/Qwen3-Next-80B-A3B-Thinking", "0.18.0", 4, 838860800.0},
      {"Qwen/Qwen3-Next-80B-A3B-Thinking", "0.20.2", 4, 0.0},         {"Qwen/Qwen3-Next-80B-A3B-Thinking", "0.11.0", 4, 0.0},
      {"Qwen/Qwen3-Next-80B-A3B-Thinking", "0.13.0", 1, 0.0},         {"Qwen/Qwen3-32B", "0.13.0", 4, 0.0},
  };
  for (const auto& r : rows) {
    auto s = pftest::fit_setup(r.model, "910B3", "vllm-ascend", r.version);
    estimate::Deployment d;
    d.tensor_parallel_size = r.tp;
    d.max_model_len = 4096;
    const auto e = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
    EXPECT_EQ(e.expert_parallel_size, 1) << r.model << " @ " << r.version;
    EXPECT_NEAR(e.ep_communicator_bytes, r.expected_bytes, 1.0) << r.model << " @ " << r.version << " TP " << r.tp;
  }
}


// vLLM-Ascend's AscendW8A8DynamicFusedMoEMethod.process_weights_after_loading keeps, per expert, an fp32 copy of the
// w13 scale (w13_weight_scale_fp32: 2 x moe_intermediate x 4 B, PR #1891, v0.10.0rc1 on) and, from PR #3532
// (v0.12.0rc1) until PR #6794 (v0.16.0rc1) made them depend on VLLM_ASCEND_ENABLE_FUSED_MC2 (default 0), int64
// copies of both scales (fused_w1_scale 2 x moe_intermediate x 8 B, fused_w2_scale hidden x 8 B).
// DeepSeek-V3.2 (config.json: hidden 7,168, moe_intermediate 2,048, 256 experts, 61 layers, the first 3 dense):
//   per expert, 0.12 - 0.15: 4,096 x (4 + 8) + 7,168 x 8 = 49,152 + 57,344 = 106,496 B; 0.10 - 0.11 and 0.16+: 16,384 B
//   EP 16 (DP 2 x TP 8): 256 / 16 = 16 experts x 58 MoE layers = 928 experts per rank
//     -> 928 x 106,496 = 98,828,288 B; 928 x 16,384 = 15,204,352 B
//   with the MTP layer as the drafter: 16 experts more -> 944 x 106,496 = 100,532,224 B
//   EP off, TP 8: w13 256 x 4,096 / 8 x 12 B = 1,572,864 B and w2 (hidden channels whole) 256 x 7,168 x 8 B =
//     14,680,064 B per layer, x 58 = 942,669,824 B
// The one-node nightly log printed 45.4712 GB of weights against 45.08 GiB predicted without the copies.
TEST(NpuVersions, Issue15_W8a8DynamicExpertScaleCopiesByVersion) {
  struct Row {
    const char* version;
    double expected_bytes;
  };
  const Row rows[] = {{"0.9.1", 0.0},          {"0.11.0", 15204352.0}, {"0.12.0", 98828288.0}, {"0.13.0", 98828288.0},
                      {"0.15.0", 98828288.0},  {"0.16.0", 15204352.0}, {"0.18.0", 15204352.0}, {"0.23.0", 15204352.0}};
  for (const auto& r : rows) {
    auto s = pftest::fit_setup("deepseek-ai/DeepSeek-V3.2", "910C", "vllm-ascend", r.version);
    const auto e = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, pftest::dsv32_a3_nightly());
    EXPECT_NEAR(e.expert_scale_copy_bytes, r.expected_bytes, 1.0) << r.version;
  }
  // Inside the weights line: 0.15 and 0.16 share a catalogue profile, so their weights differ by the int64 copies only.
  auto s15 = pftest::fit_setup("deepseek-ai/DeepSeek-V3.2", "910C", "vllm-ascend", "0.15.0");
  auto s16 = pftest::fit_setup("deepseek-ai/DeepSeek-V3.2", "910C", "vllm-ascend", "0.16.0");
  const auto e15 = estimate::estimate_fit(s15.model, s15.device, s15.engine, s15.overheads, pftest::dsv32_a3_nightly());
  const auto e16 = estimate::estimate_fit(s16.model, s16.device, s16.engine, s16.overheads, pftest::dsv32_a3_nightly());
  EXPECT_NEAR(e15.weights_bytes - e16.weights_bytes, 98828288.0 - 15204352.0, 1.0);

  auto s = pftest::fit_setup("deepseek-ai/DeepSeek-V3.2", "910C", "vllm-ascend", "0.13.0");
  estimate::Deployment mtp = pftest::dsv32_a3_nightly();
  mtp.speculative.method = "deepseek_mtp";
  mtp.speculative.num_speculative_tokens = 2;
  EXPECT_NEAR(estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, mtp).expert_scale_copy_bytes, 100532224.0, 1.0);
  estimate::Deployment tp = pftest::dsv32_a3_nightly();
  tp.data_parallel_size = 1;
  tp.enable_expert_parallel = false;
  EXPECT_NEAR(estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, tp).expert_scale_copy_bytes, 942669824.0, 1.0);
  // bf16 experts have no scales to copy; the 310P builds its MoE from its own method (v0.15.0rc1 on), which keeps none.
  estimate::Deployment bf16 = pftest::dsv32_a3_nightly();
  bf16.quantization.clear();
  EXPECT_EQ(estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, bf16).expert_scale_copy_bytes, 0.0);
  auto p310 = pftest::fit_setup("deepseek-ai/DeepSeek-V3.2", "300I-Duo", "vllm-ascend", "0.18.0");
  EXPECT_EQ(estimate::estimate_fit(p310.model, p310.device, p310.engine, p310.overheads, pftest::dsv32_a3_nightly()).expert_scale_copy_bytes, 0.0);
}

// Issue 15 (build): PR #6794's merge on main, 23bf5d4d48, describes as v0.15.0rc1-85-g23bf5d4d48 (git describe --tags
// --match 'v*', vllm-ascend mirror), so the first build without the int64 copies is 0.15.0rc2.dev85. The 2026-03-04
// nightly ran vLLM 0.16.0 (whose version alone drops the copies) on 0.15.0rc2.dev46+g566c367a1: with the build, the
// copies are back, 928 x 106,496 = 98,828,288 B at EP 16 (worked out above); 0.15.0rc2.dev85 and the 03-14 build
// 0.16.0rc2.dev45 have only the fp32 copy, 928 x 16,384 = 15,204,352 B. A vLLM 0.15.0 run on dev85 loses them.
TEST(NpuVersions, Issue15_EngineBuildDecidesPr6794ScaleCopies) {
  struct Row {
    const char *version, *build;
    double expected_bytes;
  };
  const Row rows[] = {{"0.16.0", "0.15.0rc2.dev46+g566c367a1", 98828288.0}, {"0.16.0", "0.15.0rc2.dev84", 98828288.0},
                      {"0.16.0", "0.15.0rc2.dev85", 15204352.0},            {"0.17.0", "0.16.0rc2.dev45+g199df0352", 15204352.0},
                      {"0.15.0", "0.15.0rc2.dev85", 15204352.0},            {"0.15.0", "0.15.0rc1", 98828288.0},
                      {"0.16.0", "", 15204352.0}};
  for (const auto& r : rows) {
    auto s = pftest::fit_setup("deepseek-ai/DeepSeek-V3.2", "910C", "vllm-ascend", r.version);
    if (*r.build) s.engine.build_named = *engine::parse_engine_build(r.build, "test");
    const auto e = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, pftest::dsv32_a3_nightly());
    EXPECT_NEAR(e.expert_scale_copy_bytes, r.expected_bytes, 1.0) << r.version << " on " << r.build;
  }
}

// vLLM's DeepSeek MTP layer builds its [embedding; hidden] projection as a plain torch nn.Linear
// (vllm/model_executor/models/deepseek_mtp.py: `self.eh_proj = nn.Linear(config.hidden_size * 2, config.hidden_size,
// bias=False)`), which no quantization method reaches: it loads as 7,168 x 14,336 x 2 B = 205,520,896 B in bf16 on
// every rank, however the checkpoint is quantized. So the drafter's bytes under the W8A8 scheme equal those under the
// same scheme with eh_proj left unquantized; before, the int8 eh_proj (102,760,448 B + its scales) was counted.
TEST(NpuVersions, Issue15_DeepSeekMtpEhProjLoadsInTheModelDtype) {
  auto s = pftest::fit_setup("deepseek-ai/DeepSeek-V3.2", "910C", "vllm-ascend", "0.13.0");
  estimate::Deployment d = pftest::dsv32_a3_nightly();
  d.speculative.method = "deepseek_mtp";
  d.speculative.num_speculative_tokens = 2;
  const auto quantized = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
  model::QuantScheme kept = estimate::terms::deployed_scheme(s.model, d);
  ASSERT_TRUE(kept.quantized());
  kept.ignore.push_back("eh_proj");
  estimate::Deployment k = d;
  k.quant_scheme = kept;
  const auto unquantized = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, k);
  ASSERT_GT(quantized.drafter_weights_bytes, 205520896.0);
  EXPECT_NEAR(quantized.drafter_weights_bytes, unquantized.drafter_weights_bytes, 1.0);
}

namespace {

// vllm-ascend #5020: vllm serve Qwen/Qwen3-Next-80B-A3B-Instruct --tensor-parallel-size 4 --max-model-len 4096
// --gpu-memory-utilization U --compilation-config '{"cudagraph_mode":"FULL_DECODE_ONLY"}' on A3 (one 910C die per rank).
estimate::Deployment issue5020(double util, estimate::ExecutionMode mode) {
  estimate::Deployment d;
  d.tensor_parallel_size = 4;
  d.max_model_len = 4096;
  d.gpu_memory_utilization = util;
  d.mode = mode;
  return d;
}

}  // namespace

// vllm-ascend model_runner_v1.py _allocate_kv_cache_tensors (engines.json hybrid_kv_tensor_copies). Qwen3-Next-80B
// (config.json: 48 layers, full_attention_interval 4) has 12 attention and 36 linear-attention layers; vLLM groups them
// by 12 (the smaller kind, 36 > 1.25 x 12), so group_size = 12 shared tensors of num_blocks x page bytes, tensor i
// shared by layer i of the one attention group and of the three linear-attention groups. In eager mode the margin
// after KV sizing is the copies alone:
//   v0.11 (per_layer): every one of the 48 layers gets its own tensor: (48 - 12) x num_blocks x page more than the pool;
//   v0.12 - v0.15 (per_kind): one tensor for the linear layers and one K/V pair for the attention layer of each of
//     the 12 tensors: 12 x num_blocks x page more (twice the pool);
//   v0.16 (PR #6887): one allocation per tensor: 0. A model without linear-attention layers (Qwen3-32B): 0 in every version.
TEST(NpuVersions, Issue15_HybridKvTensorsAllocatedPerLayerOrPerKindByVersion) {
  const auto eager = estimate::ExecutionMode::eager;
  struct Row {
    const char* version;
    int64_t extra_tensors;
  };
  for (const Row r : {Row{"0.11.0", 36}, Row{"0.12.0", 12}, Row{"0.13.0", 12}, Row{"0.15.0", 12}, Row{"0.16.0", 0}}) {
    auto s = pftest::fit_setup("Qwen/Qwen3-Next-80B-A3B-Thinking", "910C", "vllm-ascend", r.version);
    const auto e = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, issue5020(0.8, eager));
    ASSERT_EQ(e.group_size, 12) << r.version;
    ASSERT_GT(e.num_blocks, 0) << r.version;
    const double tensor = static_cast<double>(e.num_blocks) * static_cast<double>(e.page_bytes);
    EXPECT_EQ(e.after_kv_needed_low_bytes, static_cast<double>(r.extra_tensors) * tensor) << r.version;
    EXPECT_EQ(e.after_kv_needed_high_bytes, e.after_kv_needed_low_bytes) << r.version;
  }
  auto dense = pftest::fit_setup("Qwen/Qwen3-32B", "910C", "vllm-ascend", "0.12.0");
  const auto d = estimate::estimate_fit(dense.model, dense.device, dense.engine, dense.overheads, issue5020(0.8, eager));
  EXPECT_EQ(d.after_kv_needed_low_bytes, 0.0);
}

// vllm-ascend #5020 on v0.12.0rc1: u 0.85 died in initialize_from_config after 'GPU KV cache size: 282,240 tokens', u 0.75
// started. The second copy of the pool (12 x num_blocks x page, about the budget) must fit in total x (1 - u): at
// 0.85 the pool is larger than the 15% left, at 0.75 it is well inside the 25% left. The highest utilization that
// fits solves g + c x (pool + (u - 0.85) x total) <= (1 - u) x total with c = 1 (one copy) and g the graph term's
// high end: u <= (total - g - (pool - 0.85 x total)) / (2 x total), which the message names, below 0.85.
TEST(NpuVersions, Issue15_Issue5020SecondKvCopyFailsAt085AndFitsAt075) {
  auto s = pftest::fit_setup("Qwen/Qwen3-Next-80B-A3B-Thinking", "910C", "vllm-ascend", "0.12.0");
  const auto graph = estimate::ExecutionMode::graph;
  const auto high = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, issue5020(0.85, graph));
  EXPECT_FALSE(high.fits);
  EXPECT_EQ(high.failure, estimate::Failure::after_kv_oom);
  EXPECT_NE(high.failure_message.find("RuntimeError: NPU out of memory in initialize_from_config"), std::string::npos) << high.failure_message;
  const double pool = 12.0 * static_cast<double>(high.num_blocks) * static_cast<double>(high.page_bytes);
  const double g = high.after_kv_needed_high_bytes - pool;
  const double u = std::floor((high.total_bytes - g - (pool - 0.85 * high.total_bytes)) / (2.0 * high.total_bytes) * 100.0 + 1e-9) / 100.0;
  EXPECT_LT(u, 0.85);
  EXPECT_NE(high.failure_message.find(format("--gpu-memory-utilization %.2f or lower", u)), std::string::npos) << high.failure_message;
  const auto low = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, issue5020(0.75, graph));
  EXPECT_TRUE(low.fits) << low.failure_message;
}
