// Issue 15 (task npumoe): the MoE text forward on vLLM-Ascend from the code path. Where the profile run's expert path
// is the all-to-all one (engines.json profiles[].moe_all2all_rows), a MoE layer's peak is its live tensors besides the
// routed rows (overheads[npu].text_activation_live_tensors.moe_graph / moe_eager) plus the rows the all-to-all holds at
// the combine. Expected numbers are written out from the engine source and Qwen/Qwen3-30B-A3B's config.json (hidden
// 2,048, 32 heads x head_dim 128, 128 experts, top_k 8, moe_intermediate 768, bf16), not read back from the code.
#include <gtest/gtest.h>

#include <string>

#include "base/json_util.hpp"
#include "estimate/fit.hpp"
#include "fit_setup.hpp"
#include "model/quant_variant.hpp"

using namespace preflight;

namespace {

// vllm-ascend #2473's layout: 8 x 910B4, TP 8, expert parallel (its traceback runs fused_experts_with_all2all ->
// init_routing_quant, the path only an expert map takes), 2,048 batched tokens, max_model_len 4,096.
estimate::Deployment issue2473() {
  estimate::Deployment d;
  d.tensor_parallel_size = 8;
  d.enable_expert_parallel = true;
  d.max_model_len = 4096;
  d.max_num_batched_tokens = 2048;
  d.gpu_memory_utilization = 0.9;
  return d;
}

// The msModelSlim W8A8_DYNAMIC scheme of the variant list, as validate applies it to a bf16 checkpoint.
void use_w8a8_dynamic(estimate::Deployment& d) {
  const auto& catalog = model::load_variant_catalog();
  ASSERT_TRUE(catalog.has_value());
  auto v = model::find_variant(*catalog, "w8a8_dynamic");
  ASSERT_TRUE(v.has_value()) << v.error().describe();
  d.quantization = "ascend";
  d.quant_scheme = (*v)->scheme;
}

}  // namespace

// v0.10.0rc1, graph mode (vLLM's FusedMoE takes all T tokens; forced even routing; fused_experts_with_all2all):
//   R = 2,048 x 8 = 16,384 rows; at the combine 3 model-dtype [R, hidden] (grouped-matmul output, index_select reorder,
//   new_empty receive buffer) + 2 int8 [R, hidden] (quantized_tokens, gathered_tokens):
//   16,384 x 2,048 x (3 x 2 + 2 x 1) = 268,435,456 B.
//   Live tensors besides (graph: residual in, attention output, new residual, normed input, router logits):
//   2,048 x (3 x 2,048 + 32 x 128 / 8 + 128) x 2 B = 2,048 x 6,784 x 2 = 27,787,264 B, times the NPU factor.
// Eager mode (AscendFusedMoE tensor_splits the tokens over TP first): R = ceil(2,048 / 8) x 8 = 2,048 rows:
//   2,048 x 2,048 x 8 = 33,554,432 B; live: 2,048 x (4 x 2,048 + 128) x 2 = 34,078,720 B.
TEST(NpuMoe, Issue15_Issue2473AllToAllRowsW8a8Dynamic) {
  auto s = pftest::fit_setup("Qwen/Qwen3-30B-A3B", "910B4", "vllm-ascend", "0.10.0");
  const double factor = s.overheads.activation_bytes_per_batched_token_factor;
  estimate::Deployment d = issue2473();
  use_w8a8_dynamic(d);
  d.explain = true;
  const auto g = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
  ASSERT_EQ(g.expert_parallel_size, 8);
  EXPECT_DOUBLE_EQ(g.activation_text_moe_routed_bytes, 268435456.0);
  EXPECT_DOUBLE_EQ(g.activation_text_unit_bytes, 27787264.0);
  EXPECT_NEAR(g.activation_text_bytes, factor * 27787264.0 + 268435456.0, 1.0);
  bool said = false;
  for (const auto& a : g.assumptions) said = said || a.find("MoE all-to-all routed rows") != std::string::npos;
  EXPECT_TRUE(said);

  d.mode = estimate::ExecutionMode::eager;
  const auto e = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
  EXPECT_DOUBLE_EQ(e.activation_text_moe_routed_bytes, 33554432.0);
  EXPECT_DOUBLE_EQ(e.activation_text_unit_bytes, 34078720.0);
}

// Where no record applies the MoE layer keeps the fitted unit, 2,048 x (2,048 + 2 x 768 x 8 / 8) x 2 B = 14,680,064 B
// at TP 8, and no routed rows: expert parallel off (NaiveMulticast, not derived), bf16 experts on 0.10.0 (the
// unquantized ops/fused_moe.py path, not derived), 0.11.0 (the record is 0.10.0 only) and the 310P.
TEST(NpuMoe, Issue15_FittedUnitWhereNoAllToAllRowIsDerived) {
  struct Row {
    const char* device;
    const char* version;
    bool ep, w8a8;
  };
  const Row rows[] = {{"910B4", "0.10.0", false, true}, {"910B4", "0.10.0", true, false}, {"910B4", "0.11.0", true, true}, {"310P3", "0.10.0", true, true}};
  for (const auto& r : rows) {
    auto s = pftest::fit_setup("Qwen/Qwen3-30B-A3B", r.device, "vllm-ascend", r.version);
    estimate::Deployment d = issue2473();
    d.enable_expert_parallel = r.ep;
    if (r.w8a8) use_w8a8_dynamic(d);
    const auto e = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
    EXPECT_EQ(e.activation_text_moe_routed_bytes, 0.0) << r.device << " " << r.version;
    EXPECT_DOUBLE_EQ(e.activation_text_unit_bytes, 14680064.0) << r.device << " " << r.version;
  }
}

// 0.13 - 0.17 on A3 above the MC2 capacity: ALLTOALL (TokenDispatcherWithAll2AllV), tokens split over TP in both
// modes. TP 8, EP 8, 8,192 batched tokens: R = ceil(8,192 / 8) x 8 = 8,192 rows.
//   bf16 experts: the dispatched input is kept (unquant_apply_mlp) beside 3 model-dtype rows at the combine:
//     8,192 x 2,048 x 4 x 2 B = 134,217,728 B;
//   W8A8_DYNAMIC: the int8 input is disposed after the first grouped matmul: 8,192 x 2,048 x 3 x 2 B = 100,663,296 B.
//   Live tensors (graph): 8,192 x 6,784 x 2 B = 111,149,056 B.
// 512 batched tokens fit the MC2 capacity (MC2, not derived): 0. On A2 the same layout takes ALLGATHER (the
// moe_allgather term): 0 here.
TEST(NpuMoe, Issue15_A3AllToAllRowsSplitOverTp) {
  auto s = pftest::fit_setup("Qwen/Qwen3-30B-A3B", "910C", "vllm-ascend", "0.13.0");
  estimate::Deployment d = issue2473();
  d.max_model_len = 8192;
  d.max_num_batched_tokens = 8192;
  const auto bf16 = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
  EXPECT_DOUBLE_EQ(bf16.activation_text_moe_routed_bytes, 134217728.0);
  EXPECT_DOUBLE_EQ(bf16.activation_text_unit_bytes, 111149056.0);
  use_w8a8_dynamic(d);
  const auto int8 = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
  EXPECT_DOUBLE_EQ(int8.activation_text_moe_routed_bytes, 100663296.0);
  auto later = pftest::fit_setup("Qwen/Qwen3-30B-A3B", "910C", "vllm-ascend", "0.17.0");
  EXPECT_DOUBLE_EQ(estimate::estimate_fit(later.model, later.device, later.engine, later.overheads, d).activation_text_moe_routed_bytes, 100663296.0);

  estimate::Deployment small = d;
  small.max_num_batched_tokens = 512;
  EXPECT_EQ(estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, small).activation_text_moe_routed_bytes, 0.0);
  auto a2 = pftest::fit_setup("Qwen/Qwen3-30B-A3B", "910B3", "vllm-ascend", "0.13.0");
  const auto on_a2 = estimate::estimate_fit(a2.model, a2.device, a2.engine, a2.overheads, d);
  EXPECT_EQ(on_a2.activation_text_moe_routed_bytes, 0.0);
  EXPECT_GT(on_a2.moe_allgather_bytes, 0.0);
}

// Issue 15 (dsv): the same path re-read at v0.18.0 and the 2026-03 nightly commits (9bf9b4b, 1de805c, 55c6800):
// ALLTOALL above the MC2 capacity, tokens split over TP, int8 rows disposed after the first grouped matmul, three
// model-dtype [R, hidden] at the combine. Same layout as above, W8A8_DYNAMIC experts, TP 8 = EP 8, 8,192 tokens:
// R = ceil(8,192 / 8) x 8 = 8,192, 8,192 x 2,048 x 3 x 2 B = 100,663,296 B on 0.18.0. v0.19.1rc1 and later were not
// read: the fitted unit, no routed rows.
TEST(NpuMoe, Issue15_A3AllToAllRowsOnVllmAscend018) {
  estimate::Deployment d = issue2473();
  d.max_model_len = 8192;
  d.max_num_batched_tokens = 8192;
  use_w8a8_dynamic(d);
  auto v018 = pftest::fit_setup("Qwen/Qwen3-30B-A3B", "910C", "vllm-ascend", "0.18.0");
  EXPECT_DOUBLE_EQ(estimate::estimate_fit(v018.model, v018.device, v018.engine, v018.overheads, d).activation_text_moe_routed_bytes, 100663296.0);
  auto v019 = pftest::fit_setup("Qwen/Qwen3-30B-A3B", "910C", "vllm-ascend", "0.19.1");
  EXPECT_EQ(estimate::estimate_fit(v019.model, v019.device, v019.engine, v019.overheads, d).activation_text_moe_routed_bytes, 0.0);
}

// An MLA layer's attention output is heads x v_head_dim, its o_proj input: DeepSeek-V3.2 (hidden 7,168, 128 heads x
// v_head_dim 128, 256 routed experts, top_k 8) in vllm-ascend's one-node nightly layout (DP 2 x TP 8, EP 16, 8,192
// batched tokens) with W8A8_DYNAMIC experts on A3 under 0.13:
//   unit 8,192 x (3 x 7,168 + 128 x 128 / 8 + 256) x 2 B = 8,192 x 23,808 x 2 = 390,070,272 B
//   routed R = ceil(8,192 / 8) x 8 = 8,192 rows: 8,192 x 7,168 x 3 x 2 B = 352,321,536 B
TEST(NpuMoe, Issue15_MlaAttentionOutputIsHeadsTimesVHeadDim) {
  auto s = pftest::fit_setup("deepseek-ai/DeepSeek-V3.2", "910C", "vllm-ascend", "0.13.0");
  estimate::Deployment d = pftest::dsv32_a3_nightly();
  use_w8a8_dynamic(d);
  const auto e = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
  EXPECT_DOUBLE_EQ(e.activation_text_unit_bytes, 390070272.0);
  EXPECT_DOUBLE_EQ(e.activation_text_moe_routed_bytes, 352321536.0);
}

// A dense model is untouched by the MoE record (npuact's live tensors): Qwen3-32B TP 2, 2,048 tokens, graph mode,
// 2,048 x (2 x 5,120 + 8,192 / 2 + 3 x 12,800) x 2 B = 216,006,656 B, with expert parallel asked for.
TEST(NpuMoe, Issue15_DenseModelKeepsItsLiveTensors) {
  auto s = pftest::fit_setup("Qwen/Qwen3-32B", "910C", "vllm-ascend", "0.13.0");
  estimate::Deployment d;
  d.tensor_parallel_size = 2;
  d.enable_expert_parallel = true;
  d.max_model_len = 4096;
  d.max_num_batched_tokens = 2048;
  const auto e = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
  EXPECT_EQ(e.activation_text_moe_routed_bytes, 0.0);
  EXPECT_DOUBLE_EQ(e.activation_text_unit_bytes, 216006656.0);
}

// The profile record is validated: families, row counts within 0-16 and not both 0, modes graph or eager, a
// non-negative token bound, a version range and a source.
TEST(NpuMoe, Issue15_MoeAllToAllRowsRecordIsValidated) {
  const std::string profile = R"({"schema_version": 1, "profiles": [{"id": "x@1", "engine": "x", "version_min": "1.0.0", "version_max": "1.9.0",
      "platform": "npu", "default_gpu_memory_utilization": 0.9, "block_size": 128, "hybrid_block_rule": "cuda_align", "hybrid_mamba_mode": "none",
      "max_num_seqs": 256, "max_num_batched_tokens": 2048, "max_num_batched_tokens_large_device": 8192, "sampler_logit_copies": 1,
      "sampler_source": "s", "requested_rounding": "floor", "tokens_rule": "blocks", "source": "s", "moe_all2all_rows": [RECORD]}]})";
  auto parse = [&](const std::string& record) {
    std::string p = profile;
    p.replace(p.find("RECORD"), 6, record);
    auto j = parse_json(p, "engines.json");
    EXPECT_TRUE(j.has_value()) << record;
    return engine::parse_engine_catalog(*j, "engines.json");
  };
  const std::string range = R"("version_min": "1.0.0", "version_max": "1.9.0", "source": "s")";
  auto good = parse(R"({"families": ["ascend-a3"], "model_dtype_rows": 3, "int8_rows": 2, "unquantized_input_rows": 1, "int8_experts_only": true,
      "tokens_split_by_tp_in": ["eager"], "above_tokens": 512, )" + range + "}");
  ASSERT_TRUE(good.has_value()) << good.error().describe();
  ASSERT_EQ(good->profiles.front().moe_all2all_rows.size(), 1u);
  const auto& r = good->profiles.front().moe_all2all_rows.front();
  EXPECT_DOUBLE_EQ(r.model_dtype_rows, 3.0);
  EXPECT_DOUBLE_EQ(r.int8_rows, 2.0);
  EXPECT_DOUBLE_EQ(r.unquantized_input_rows, 1.0);
  EXPECT_TRUE(r.int8_experts_only);
  EXPECT_EQ(r.tokens_split_by_tp_in, std::vector<std::string>{"eager"});
  EXPECT_EQ(r.above_tokens, 512);
  struct Bad {
    std::string record, fragment;
  };
  const Bad bads[] = {
      {R"({"model_dtype_rows": 3, "int8_rows": 0, )" + range + "}", "needs families"},
      {R"({"families": ["ascend-a3"], "model_dtype_rows": 0, "int8_rows": 0, )" + range + "}", "not both 0"},
      {R"({"families": ["ascend-a3"], "model_dtype_rows": 17, "int8_rows": 0, )" + range + "}", "[0, 16]"},
      {R"({"families": ["ascend-a3"], "model_dtype_rows": 3, "int8_rows": 0, "unquantized_input_rows": -1, )" + range + "}", "unquantized_input_rows"},
      {R"({"families": ["ascend-a3"], "model_dtype_rows": 3, "int8_rows": 0, "tokens_split_by_tp_in": ["compiled"], )" + range + "}", "expected graph or eager"},
      {R"({"families": ["ascend-a3"], "model_dtype_rows": 3, "int8_rows": 0, "above_tokens": -1, )" + range + "}", "above_tokens"},
      {R"({"families": ["ascend-a3"], "model_dtype_rows": 3, "int8_rows": 0, "version_min": "1.0.0", "version_max": "1.9.0", "source": ""})", "needs a source"},
      {R"({"families": ["ascend-a3"], "model_dtype_rows": 3, "int8_rows": 0, "version_min": "1.9.0", "version_max": "1.0.0", "source": "s"})", "bad version range"},
      {R"({"families": ["ascend-a3"], "model_dtype_rows": 3, "int8_rows": 0, "rows": 1, )" + range + "}", "rows"},
  };
  for (const auto& bad : bads) {
    auto e = parse(bad.record);
    ASSERT_FALSE(e.has_value()) << bad.record;
    EXPECT_EQ(e.error().kind, ErrorKind::corrupt) << bad.record;
    EXPECT_NE(e.error().describe().find("engines.json"), std::string::npos);
    EXPECT_NE(e.error().describe().find(bad.fragment), std::string::npos) << e.error().describe();
  }
}

// The MoE widths of the live-tensor record: both modes with three widths within 0-16, router logits above 0, and a
// moe_source; any one of the three keys asks for all.
TEST(NpuMoe, Issue15_MoeLiveWidthsAreValidated) {
  auto text = [](const std::string& moe) {
    return R"({"schema_version": 1, "profiles": [], "overheads": [{"platform": "npu", "non_torch_bytes": 1, "graph_bytes": 1,
      "activation_bytes_per_batched_token_factor": 1, "vision_activation_factor": 0.1, "rope_cache_bytes_per_element": 2, "rope_cache_source": "s",
      "evidence": "e", "band_fraction": 0.3, "non_torch_multi_rank_fraction": 0.5, "non_torch_multi_rank_source": "s", "text_activation_live_tensors": {
      "graph": {"hidden": 2, "attention_output": 1, "mlp": 3}, "eager": {"hidden": 5, "attention_output": 0, "mlp": 3}, "source": "s")" +
           moe + "}}]}";
  };
  const std::string graph = R"("moe_graph": {"hidden": 3, "attention_output": 1, "router_logits": 1})";
  const std::string eager = R"("moe_eager": {"hidden": 4, "attention_output": 0, "router_logits": 1})";
  auto good_json = parse_json(text(", " + graph + ", " + eager + R"(, "moe_source": "s")"), "engines.json");
  ASSERT_TRUE(good_json.has_value());
  auto good = engine::parse_engine_catalog(*good_json, "engines.json");
  ASSERT_TRUE(good.has_value()) << good.error().describe();
  const auto& live = good->overheads.front().text_activation_live_tensors;
  ASSERT_TRUE(live && live->moe_graph && live->moe_eager);
  EXPECT_DOUBLE_EQ(live->moe_graph->hidden, 3.0);
  EXPECT_DOUBLE_EQ(live->moe_eager->router_logits, 1.0);
  auto none_json = parse_json(text(""), "engines.json");
  auto none = engine::parse_engine_catalog(*none_json, "engines.json");
  ASSERT_TRUE(none.has_value());
  EXPECT_FALSE(none->overheads.front().text_activation_live_tensors->moe_graph.has_value());
  struct Bad {
    std::string moe, fragment;
  };
  const Bad bads[] = {
      {", " + graph + R"(, "moe_source": "s")", "moe_eager"},
      {", " + graph + ", " + eager, "moe_source"},
      {", " + graph + ", " + eager + R"(, "moe_source": "")", "empty moe_source"},
      {R"(, "moe_graph": {"hidden": 3, "attention_output": 1, "router_logits": 0}, )" + eager + R"(, "moe_source": "s")", "router_logits"},
      {R"(, "moe_graph": {"hidden": 17, "attention_output": 1, "router_logits": 1}, )" + eager + R"(, "moe_source": "s")", "outside 0-16"},
      {R"(, "moe_graph": {"hidden": 3, "attention_output": 1, "router_logits": 1, "mlp": 1}, )" + eager + R"(, "moe_source": "s")", "mlp"},
  };
  for (const auto& bad : bads) {
    auto j = parse_json(text(bad.moe), "engines.json");
    ASSERT_TRUE(j.has_value()) << bad.moe;
    auto e = engine::parse_engine_catalog(*j, "engines.json");
    ASSERT_FALSE(e.has_value()) << bad.moe;
    EXPECT_EQ(e.error().kind, ErrorKind::corrupt) << bad.moe;
    EXPECT_NE(e.error().describe().find(bad.fragment), std::string::npos) << e.error().describe();
  }
}
