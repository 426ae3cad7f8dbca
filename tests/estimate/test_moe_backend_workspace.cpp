// Issue 15 (evid24): the workspaces vLLM 0.25's --moe-backend flashinfer_b12x keeps from the profile run on, one
// B12xMoEWrapper per MoE layer (docs/memory-model.md, "The FlashInfer b12x MoE workspace"). Expected bytes are worked by
// hand from FlashInfer v0.6.13 (b12x_moe.py B12xMoEWrapper._allocate_buffers; blackwell_sm12x/moe_dispatch.py
// allocate_sm120_static_workspace, allocate_sm120_dynamic_workspace, _dynamic_task_geometry) with the configs in
// ../shared/models:
//  - R = max_num_tokens x top_k routed rows; above 640 (_STATIC_COMPACT_CUTOVER_PAIRS_DEFAULT) a dynamic workspace is
//    allocated too and the static one holds 640 rows per expert;
//  - static: E x rows x hidden/2 (packed input) + E x align(rows, 128) x align(hidden/16, 4) (scales) + 2 x E x rows x 4
//    (token map, weights) + 3 x E x 4 + max(E, rows) x 4 + 3 x 4;
//  - dynamic: tiles = ceil(R / 128) + min(E, R) - 1, rows = 128 x tiles: rows x (hidden/2 + align(hidden/16, 4) + 8)
//    + 6 x tiles x ceil(n / 128) x 4 + tiles x 4 + 2 x E x 4 + (E + 1) x 4 + 6 x 4;
//  - output: max_num_tokens x hidden x 2.
// nvidia/Qwen3-30B-A3B-NVFP4: hidden 2048, 128 experts, top 8, moe_intermediate 768, 48 layers, all MoE.
// Qwen3.6-35B-A3B shapes (vLLM #49476): hidden 2048, 256 experts, top 8, moe_intermediate 512, 40 MoE layers.
#include <gtest/gtest.h>

#include "engine/moe_backend_workspace.hpp"
#include "estimate/fit.hpp"
#include "estimate/fit_terms.hpp"
#include "fit_setup.hpp"
#include "test_support.hpp"

using namespace preflight;

namespace {

const char* const k_nvfp4_moe = "nvidia/Qwen3-30B-A3B-NVFP4";

estimate::Deployment layout(const std::string& backend, int64_t tp = 1, int64_t batched = 8192) {
  estimate::Deployment d;
  d.tensor_parallel_size = tp;
  d.max_model_len = 32768;
  d.max_num_batched_tokens = batched;
  d.gpu_memory_utilization = 0.9;
  d.moe_backend = backend;
  return d;
}

estimate::FitEstimate fit(const std::string& model, const std::string& device, const std::string& version, const estimate::Deployment& d) {
  auto s = pftest::fit_setup(model, device, "vllm", version);
  return estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
}

const engine::MoeBackendWorkspace& record() {
  static const engine::MoeBackendWorkspace w = [] {
    auto s = pftest::fit_setup(k_nvfp4_moe, "RTXPRO6000", "vllm", "0.25.1");
    EXPECT_NE(s.overheads.moe_backend_workspaces, nullptr) << "engines.json overheads[cuda].moe_backend_workspaces";
    if (!s.overheads.moe_backend_workspaces) return engine::MoeBackendWorkspace{};
    for (const auto& r : *s.overheads.moe_backend_workspaces)
      if (r.backend == "flashinfer_b12x") return r;
    ADD_FAILURE() << "no flashinfer_b12x record";
    return engine::MoeBackendWorkspace{};
  }();
  return w;
}

}  // namespace

// The shipped record: vLLM 0.25, the SM 12.x cards, NVFP4 experts, FlashInfer 0.6.13's constants.
TEST(MoeBackendWorkspace, CatalogueRecord) {
  const auto& w = record();
  EXPECT_EQ(w.engine, "vllm");
  EXPECT_EQ(w.weight_format, "nvfp4");
  EXPECT_EQ(w.static_cutover_routed_rows, 640);
  EXPECT_EQ(w.tile_rows, 128);
  EXPECT_EQ(w.tile_columns, 128);
  EXPECT_EQ(w.scale_block, 16);
  EXPECT_EQ(w.scale_column_align, 4);
  EXPECT_EQ(w.scale_row_align, 128);
  EXPECT_EQ(w.output_bytes_per_element, 2);
  for (const char* id : {"RTX5090", "RTXPRO6000", "GB10"}) EXPECT_NE(std::find(w.devices.begin(), w.devices.end(), id), w.devices.end()) << id;
  for (const char* id : {"H100-SXM", "B200"}) EXPECT_EQ(std::find(w.devices.begin(), w.devices.end(), id), w.devices.end()) << id;
}

// vLLM's normalization of the flag's value (KernelConfig._normalize_moe_backend).
TEST(MoeBackendWorkspace, NormalizesAsVllm) {
  EXPECT_EQ(engine::normalize_moe_backend("FlashInfer-B12X"), "flashinfer_b12x");
  EXPECT_EQ(engine::normalize_moe_backend(" marlin "), "marlin");
}

// One layer's sizes, worked by hand (header):
//  - Qwen3-30B-A3B at 8192 tokens, TP 1: R = 65,536 > 640: static 83,886,080 + 10,485,760 + 655,360 + 1,536 + 2,560 + 12
//    = 95,031,308; tiles 512 + 128 - 1 = 639, rows 81,792: 83,755,008 + 10,469,376 + 654,336 + 6 x 639 x 6 x 4 (92,016)
//    + 2,556 + 1,024 + 516 + 24 = 94,974,856; output 8192 x 2048 x 2 = 33,554,432; 223,560,596 per layer.
//  - the same at TP 2: n = 384, 3 gate tiles: the task arrays 46,008, so 46,008 bytes less.
//  - 64 tokens: R = 512 <= 640, static only with 512 rows: 67,108,864 + 128 x 512 x 128 (8,388,608) + 524,288 + 1,536
//    + 2,048 + 12 = 76,025,356; output 262,144; 76,287,500.
//  - Qwen3.6-35B-A3B at 8192: static 167,772,160 + 20,971,520 + 1,310,720 + 3,072 + 2,560 + 12 = 190,060,044; tiles
//    512 + 256 - 1 = 767, rows 98,176: 100,532,224 + 12,566,528 + 785,408 + 73,632 + 3,068 + 2,048 + 1,028 + 24 =
//    113,963,960; output 33,554,432; 337,578,436 per layer.
TEST(MoeBackendWorkspace, FlashInferSizes) {
  const auto& w = record();
  const auto a = estimate::terms::moe_backend_workspace_sizes(w, 128, 8, 2048, 768, 8192);
  EXPECT_TRUE(a.dynamic);
  EXPECT_EQ(a.static_rows, 640);
  EXPECT_EQ(a.dynamic_tiles, 639);
  EXPECT_DOUBLE_EQ(a.static_bytes, 95031308.0);
  EXPECT_DOUBLE_EQ(a.dynamic_bytes, 94974856.0);
  EXPECT_DOUBLE_EQ(a.output_bytes, 33554432.0);
  EXPECT_DOUBLE_EQ(a.layer_bytes, 223560596.0);
  const auto tp2 = estimate::terms::moe_backend_workspace_sizes(w, 128, 8, 2048, 384, 8192);
  EXPECT_DOUBLE_EQ(a.layer_bytes - tp2.layer_bytes, 46008.0);
  const auto small = estimate::terms::moe_backend_workspace_sizes(w, 128, 8, 2048, 768, 64);
  EXPECT_FALSE(small.dynamic);
  EXPECT_EQ(small.static_rows, 512);
  EXPECT_DOUBLE_EQ(small.layer_bytes, 76287500.0);
  const auto q36 = estimate::terms::moe_backend_workspace_sizes(w, 256, 8, 2048, 512, 8192);
  EXPECT_DOUBLE_EQ(q36.static_bytes, 190060044.0);
  EXPECT_DOUBLE_EQ(q36.dynamic_bytes, 113963960.0);
  EXPECT_DOUBLE_EQ(q36.layer_bytes, 337578436.0);
}

// Issue 15 (evid24): --moe-backend flashinfer_b12x on an RTX PRO 6000 with vLLM 0.25.1: 48 layers x 223,560,596 bytes
// = 10,730,908,608 bytes, exactly that much less available KV than the default backend, listed as its own term.
TEST(MoeBackendWorkspace, Issue15_Evid24_B12xOnRtxPro6000) {
  const auto b12x = fit(k_nvfp4_moe, "RTXPRO6000", "0.25.1", layout("flashinfer_b12x"));
  const auto dflt = fit(k_nvfp4_moe, "RTXPRO6000", "0.25.1", layout(""));
  const auto marlin = fit(k_nvfp4_moe, "RTXPRO6000", "0.25.1", layout("marlin"));
  EXPECT_DOUBLE_EQ(b12x.moe_backend_workspace_bytes, 10730908608.0);
  EXPECT_DOUBLE_EQ(dflt.moe_backend_workspace_bytes, 0.0);
  EXPECT_DOUBLE_EQ(marlin.moe_backend_workspace_bytes, 0.0);
  EXPECT_NEAR(dflt.available_kv_bytes - b12x.available_kv_bytes, 10730908608.0, 1.0);
  EXPECT_DOUBLE_EQ(marlin.available_kv_bytes, dflt.available_kv_bytes);
  bool named = false;
  for (const auto& t : b12x.terms) named = named || (t.name == "MoE backend workspace" && t.bytes == b12x.moe_backend_workspace_bytes);
  EXPECT_TRUE(named) << "the term is listed with its bytes";
}

// Where no workspace is counted: versions outside 0.25 (0.24 before, 0.26 with FlashInfer 0.6.17 after), a card the
// backend does not run on (H100), expert parallelism (B12xMoEWrapper refuses it), a dense model, BF16 experts.
TEST(MoeBackendWorkspace, NotAllocated) {
  for (const char* version : {"0.24.0", "0.26.0"})
    EXPECT_DOUBLE_EQ(fit(k_nvfp4_moe, "RTXPRO6000", version, layout("flashinfer_b12x")).moe_backend_workspace_bytes, 0.0) << version;
  EXPECT_DOUBLE_EQ(fit(k_nvfp4_moe, "H100-SXM", "0.25.1", layout("flashinfer_b12x")).moe_backend_workspace_bytes, 0.0);
  estimate::Deployment ep = layout("flashinfer_b12x", 2);
  ep.enable_expert_parallel = true;
  const auto with_ep = fit(k_nvfp4_moe, "RTXPRO6000", "0.25.1", ep);
  EXPECT_DOUBLE_EQ(with_ep.moe_backend_workspace_bytes, 0.0);
  bool said = false;
  for (const auto& a : with_ep.assumptions) said = said || a.find("expert parallelism") != std::string::npos;
  EXPECT_TRUE(said) << "the reason is an assumption";
  EXPECT_DOUBLE_EQ(fit("Qwen/Qwen3-32B", "RTXPRO6000", "0.25.1", layout("flashinfer_b12x")).moe_backend_workspace_bytes, 0.0);
  EXPECT_DOUBLE_EQ(fit("Qwen/Qwen3-30B-A3B", "RTXPRO6000", "0.25.1", layout("flashinfer_b12x")).moe_backend_workspace_bytes, 0.0);
}

// The flag from the command line: a name vLLM's normalization leaves a backend word is taken, anything else is bad input.
TEST(MoeBackendWorkspace, FitFlag) {
  const auto ok = pftest::run_cli("fit nvidia/Qwen3-30B-A3B-NVFP4 --device RTXPRO6000 --engine vllm@0.25.1 --max-model-len 32768 --moe-backend FlashInfer-B12X --json",
                                  {"NO_COLOR=1", false});
  ASSERT_EQ(ok.code, 0) << ok.out;
  EXPECT_NE(ok.out.find("MoE backend workspace"), std::string::npos);
  const auto bad = pftest::run_cli("fit nvidia/Qwen3-30B-A3B-NVFP4 --device RTXPRO6000 --engine vllm@0.25.1 --moe-backend 'flash infer'", {"NO_COLOR=1", true});
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.out.find("--moe-backend"), std::string::npos) << bad.out;
  EXPECT_NE(bad.out.find("expected a MoE backend name"), std::string::npos) << bad.out;
}
