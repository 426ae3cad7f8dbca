// Issue 15: the CUDA graph term as vLLM 0.21+ estimates it before KV sizing (gpu_model_runner.profile_cudagraph_memory):
// the capture sizes from vllm/config/vllm.py _set_cudagraph_sizes, written out by hand below from the rule (1, 2, 4,
// multiples of 8 below 256, multiples of 16 from 256, up to min(max_num_seqs x decode query length x 2, 512,
// max_num_batched_tokens); sizes rounded up to multiples of the decode query length under speculative decoding;
// FULL graphs for the uniform decode sizes, at most max_num_seqs x decode query length), and the bytes as
// first capture + (PIECEWISE - 1 + FULL - 1) x per-graph cost.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/embedded.hpp"
#include "base/json_util.hpp"
#include "engine/capture_rules.hpp"
#include "engine/engine_profile.hpp"
#include "estimate/fit.hpp"
#include "estimate/fit_terms.hpp"
#include "estimate/graph_captured.hpp"
#include "fit_setup.hpp"
#include "logs/engine_log.hpp"

using namespace preflight;

namespace {

// The default grid up to 512 tokens, typed out: 1, 2, 4 (3), 8 ... 248 (31), 256 ... 512 (17) = 51 sizes.
std::vector<int64_t> grid_512() {
  std::vector<int64_t> g{1, 2, 4};
  for (int64_t s = 8; s <= 248; s += 8) g.push_back(s);
  for (int64_t s = 256; s <= 512; s += 16) g.push_back(s);
  return g;
}

engine::Overheads capture_overheads(double first, double per_graph) {
  engine::Overheads oh;
  oh.platform = "cuda";
  oh.graph_bytes = 644245094;  // the prior: 0.6 GiB
  oh.band_fraction = 0.35;
  oh.graph_first_capture_bytes = first;
  oh.graph_per_capture_bytes = per_graph;
  oh.graph_capture_source = "test";
  return oh;
}

}  // namespace

// max_num_seqs 256, no speculative decoding: ceiling min(256 x 1 x 2, 512) = 512, under 8192 batched tokens. PIECEWISE
// takes all 51 sizes; FULL the ones up to 256 requests x 1 token: 1, 2, 4, 8 ... 248, 256 = 35 (the printed
// "Profiling CUDA graph memory: PIECEWISE=51, FULL=35" of a max_num_seqs 256 start).
TEST(GraphTerm, Issue15_CaptureSizesDefaultGrid) {
  const auto c = estimate::terms::cudagraph_capture_sizes(256, 8192, 1);
  const auto g = grid_512();
  EXPECT_EQ(c.piecewise, g);
  ASSERT_EQ(c.piecewise.size(), 51u);
  ASSERT_EQ(c.full.size(), 35u);
  EXPECT_EQ(c.full.front(), 1);
  EXPECT_EQ(c.full.back(), 256);
}

// MTP with 3 speculative tokens: decode query length 4.
// - max_num_seqs 8: ceiling min(8 x 4 x 2, 512) = 64; grid 1, 2, 4, 8 ... 64 rounded up to multiples of 4:
//   4, 8, 16, 24, 32, 40, 48, 56, 64 (9); FULL up to 8 x 4 = 32: 4, 8, 16, 24, 32 (5).
// - max_num_seqs 48: ceiling 384; 1, 2, 4 -> 4, then 8 ... 248 (31) and 256 ... 384 (9): 41 sizes, FULL up to 192:
//   4, 8 ... 192 = 25 (the counts vllm #46367 prints, "PIECEWISE=41 (largest=384), FULL=25 (largest=192)").
// - max_num_seqs 1 (the p2p-bench 2 x 5060 Ti start): ceiling 8; 1, 2, 4, 8 -> 4, 8; FULL up to 4: 4.
TEST(GraphTerm, Issue15_CaptureSizesSpeculativeDecoding) {
  const auto a = estimate::terms::cudagraph_capture_sizes(8, 8192, 4);
  EXPECT_EQ(a.piecewise, (std::vector<int64_t>{4, 8, 16, 24, 32, 40, 48, 56, 64}));
  EXPECT_EQ(a.full, (std::vector<int64_t>{4, 8, 16, 24, 32}));
  const auto b = estimate::terms::cudagraph_capture_sizes(48, 8192, 4);
  EXPECT_EQ(b.piecewise.size(), 41u);
  EXPECT_EQ(b.piecewise.back(), 384);
  EXPECT_EQ(b.full.size(), 25u);
  EXPECT_EQ(b.full.back(), 192);
  const auto c = estimate::terms::cudagraph_capture_sizes(1, 16384, 4);
  EXPECT_EQ(c.piecewise, (std::vector<int64_t>{4, 8}));
  EXPECT_EQ(c.full, (std::vector<int64_t>{4}));
}

// max_num_batched_tokens below the ceiling caps it and is captured itself: 100 tokens, 256 requests: 1, 2, 4, 8 ... 96
// (12), then 100: 16 sizes, all within 256 requests so all FULL too.
TEST(GraphTerm, Issue15_CaptureSizesCappedByBatchedTokens) {
  const auto c = estimate::terms::cudagraph_capture_sizes(256, 100, 1);
  std::vector<int64_t> want{1, 2, 4};
  for (int64_t s = 8; s <= 96; s += 8) want.push_back(s);
  want.push_back(100);
  EXPECT_EQ(c.piecewise, want);
  EXPECT_EQ(c.full, want);
}

// The bytes: first capture 100 MiB, 5 MiB per further graph, max_num_seqs 256:
// 100 MiB + (51 - 1 + 35 - 1) x 5 MiB = 100 + 420 = 520 MiB. Eager: 0. Not in the budget (vLLM < 0.21): the prior.
TEST(GraphTerm, Issue15_EstimateIsFirstCapturePlusExtrapolatedGraphs) {
  const double mib = 1024.0 * 1024.0;
  const auto oh = capture_overheads(100 * mib, 5 * mib);
  const engine::EngineProfile eng;  // no version rules: 512 ceiling, no optimization levels, no FlashInfer fallback
  auto graph = [&](const estimate::Deployment& d, bool in_budget, int64_t seqs, int64_t tokens) {
    auto t = estimate::terms::estimate_graph(oh, eng, "A100-80G-SXM", d, in_budget, seqs, tokens);
    EXPECT_TRUE(t.has_value()) << t.error().describe();
    return t ? *t : estimate::Term{};
  };
  estimate::Deployment dep;
  const auto t = graph(dep, true, 256, 8192);
  EXPECT_DOUBLE_EQ(t.bytes, 520 * mib);
  EXPECT_DOUBLE_EQ(t.band_bytes, 520 * mib * 0.35);
  EXPECT_NE(t.rule.find("PIECEWISE 51"), std::string::npos) << t.rule;
  EXPECT_EQ(graph(dep, false, 256, 8192).bytes, 644245094.0);
  estimate::Deployment eager;
  eager.mode = estimate::ExecutionMode::eager;
  EXPECT_EQ(graph(eager, true, 256, 8192).bytes, 0.0);
  // Speculative decoding from the deployment, at max_num_seqs 4. Without it: ceiling 8, PIECEWISE 1, 2, 4, 8 and FULL
  // 1, 2, 4: 3 + 2 further graphs, 100 + 5 x 5 = 125 MiB. MTP 3 (query length 4): ceiling 32, 1 ... 32 rounded to
  // 4, 8, 16, 24, 32 and FULL up to 16: 4, 8, 16: 4 + 2 further graphs, 130 MiB.
  estimate::Deployment mtp;
  mtp.speculative.method = "mtp";
  mtp.speculative.num_speculative_tokens = 3;
  EXPECT_DOUBLE_EQ(graph(dep, true, 4, 16384).bytes, 125 * mib);
  EXPECT_DOUBLE_EQ(graph(mtp, true, 4, 16384).bytes, 130 * mib);
  // No capture constants on the platform: the prior, in the budget or not.
  auto prior = estimate::terms::estimate_graph(capture_overheads(0, 0), eng, "A100-80G-SXM", dep, true, 256, 8192);
  ASSERT_TRUE(prior.has_value());
  EXPECT_EQ(prior->bytes, 644245094.0);
}

namespace {

estimate::terms::CaptureSizes sizes_of(const estimate::terms::CaptureInputs& in) {
  auto c = estimate::terms::cudagraph_capture_sizes(in);
  EXPECT_TRUE(c.has_value()) << c.error().describe();
  return c ? *c : estimate::terms::CaptureSizes{};
}

std::string error_of(const estimate::terms::CaptureInputs& in) {
  auto c = estimate::terms::cudagraph_capture_sizes(in);
  EXPECT_FALSE(c.has_value());
  return c ? std::string() : c.error().describe();
}

}  // namespace

// An explicit cudagraph_capture_sizes list (vllm/config/vllm.py _set_cudagraph_sizes): deduplicated, the sizes above
// max_num_batched_tokens (8192) dropped, sorted; no ceiling from max_num_seqs. [16, 4, 8, 4, 9000] -> [4, 8, 16], with
// vLLM's warning that the list was overridden. max_num_seqs 256: all three are uniform decode sizes, so FULL = [4, 8, 16].
TEST(GraphTerm, Issue15_ExplicitCaptureSizes) {
  const auto c = sizes_of({.max_num_seqs = 256, .max_num_batched_tokens = 8192, .capture_sizes = {16, 4, 8, 4, 9000}});
  EXPECT_EQ(c.piecewise, (std::vector<int64_t>{4, 8, 16}));
  EXPECT_EQ(c.full, (std::vector<int64_t>{4, 8, 16}));
  ASSERT_EQ(c.notes.size(), 1u);
  EXPECT_EQ(c.notes[0], "cudagraph_capture_sizes specified in compilation_config [16, 4, 8, 4, 9000] is overridden by config [4, 8, 16]");
  // max_num_seqs 4 caps only FULL: PIECEWISE [4, 8, 16], FULL [4].
  const auto d = sizes_of({.max_num_seqs = 4, .max_num_batched_tokens = 8192, .capture_sizes = {4, 8, 16}});
  EXPECT_EQ(d.full, (std::vector<int64_t>{4}));
  // A size of 0 is refused before anything is captured (vLLM itself does not check it).
  EXPECT_NE(error_of({.max_num_seqs = 4, .max_num_batched_tokens = 8192, .capture_sizes = {0, 8}}).find("cudagraph_capture_sizes: 0 is not a positive token count"),
            std::string::npos);
}

// max_cudagraph_capture_size replaces the max_num_seqs x query length x 2 ceiling (still at most max_num_batched_tokens):
// - 16 with MTP 3 (query length 4) at max_num_seqs 4, the p2p-bench 4 x 5060 Ti setting: grid 1, 2, 4, 8, 16 (the list
//   its log prints in the engine config), rounded up to multiples of 4 within 16: 4, 8, 16; FULL up to 4 x 4 = 16: the
//   same three. PIECEWISE only (its FlashInfer fallback): no rounding, 1, 2, 4, 8, 16 ("PIECEWISE=5 (largest=16)").
// - 20: the grid stops at 16, and vLLM warns "Truncating max_cudagraph_capture_size to 16".
// - 600 at max_num_seqs 256: 1, 2, 4 (3), 8 ... 248 (31), 256 ... 592 (22) = 56 sizes, truncated to 592.
TEST(GraphTerm, Issue15_MaxCaptureSize) {
  const auto a = sizes_of({.max_num_seqs = 4, .max_num_batched_tokens = 16768, .decode_query_len = 4, .max_capture_size = 16});
  EXPECT_EQ(a.piecewise, (std::vector<int64_t>{4, 8, 16}));
  EXPECT_EQ(a.full, (std::vector<int64_t>{4, 8, 16}));
  EXPECT_TRUE(a.notes.empty());
  const auto p = sizes_of({.max_num_seqs = 4, .max_num_batched_tokens = 16768, .decode_query_len = 4, .max_capture_size = 16, .mode = estimate::CudagraphMode::piecewise});
  EXPECT_EQ(p.piecewise, (std::vector<int64_t>{1, 2, 4, 8, 16}));
  EXPECT_TRUE(p.full.empty());
  const auto b = sizes_of({.max_num_seqs = 4, .max_num_batched_tokens = 8192, .max_capture_size = 20});
  EXPECT_EQ(b.piecewise, (std::vector<int64_t>{1, 2, 4, 8, 16}));
  ASSERT_EQ(b.notes.size(), 1u);
  EXPECT_EQ(b.notes[0], "Truncating max_cudagraph_capture_size to 16");
  const auto c = sizes_of({.max_num_seqs = 256, .max_num_batched_tokens = 8192, .max_capture_size = 600});
  EXPECT_EQ(c.piecewise.size(), 56u);
  EXPECT_EQ(c.piecewise.back(), 592);
  EXPECT_EQ(c.full.back(), 256);
}

// vLLM's own refusals, quoted: both settings given and inconsistent (vllm.py _set_cudagraph_sizes); nothing left after
// rounding to the decode query length (compilation.py adjust_cudagraph_sizes_for_spec_decode): [3] with query length 4
// rounds to 4 > 3, and 4 > 3 leaves no fallback. [5] rounds to 8 > 5, but 4 <= 5: vLLM keeps [4].
TEST(GraphTerm, Issue15_CaptureSettingsVllmRefuses) {
  EXPECT_NE(error_of({.max_num_seqs = 8, .max_num_batched_tokens = 8192, .capture_sizes = {1, 2, 4}, .max_capture_size = 8})
                .find("ValueError: customized max_cudagraph_capture_size(=8) should be consistent with the max value of cudagraph_capture_sizes(=4)"),
            std::string::npos);
  EXPECT_NE(error_of({.max_num_seqs = 8, .max_num_batched_tokens = 8192, .decode_query_len = 4, .capture_sizes = {3}})
                .find("ValueError: No valid cudagraph sizes after rounding to multiple of 4 (num_speculative_tokens + 1 or tp if sequence parallelism is "
                      "enabled) please adjust num_speculative_tokens (3) or max_cudagraph_capture_size (3) or cudagraph_capture_sizes ([3])"),
            std::string::npos);
  const auto kept = sizes_of({.max_num_seqs = 8, .max_num_batched_tokens = 8192, .decode_query_len = 4, .capture_sizes = {5}});
  EXPECT_EQ(kept.piecewise, (std::vector<int64_t>{4}));
  EXPECT_NE(error_of({.max_num_seqs = 8, .max_num_batched_tokens = 8192, .max_capture_size = 0})
                .find("AssertionError: Maximum cudagraph size should be greater than or equal to 1 when using cuda graph."),
            std::string::npos);
}

// cudagraph_mode decides which graphs exist. max_num_seqs 4, no speculative decoding: sizes 1, 2, 4, 8 (ceiling 8), uniform
// decode up to 4 tokens: 1, 2, 4. Bytes at 100 MiB + 5 MiB per further graph:
//   FULL_AND_PIECEWISE 4 + 3: 100 + (3 + 2) x 5 = 125 MiB; PIECEWISE 4 + 0: 115; FULL (every size) 0 + 4: 115;
//   FULL_DECODE_ONLY 0 + 3: 110; NONE: 0.
TEST(GraphTerm, Issue15_CudagraphModeShapesTheGraphs) {
  using estimate::CudagraphMode;
  const struct {
    CudagraphMode mode;
    size_t piecewise, full;
    double mib;
  } rows[] = {{CudagraphMode::full_and_piecewise, 4, 3, 125}, {CudagraphMode::piecewise, 4, 0, 115}, {CudagraphMode::full, 0, 4, 115},
              {CudagraphMode::full_decode_only, 0, 3, 110}, {CudagraphMode::none, 0, 0, 0}};
  const double mib = 1024.0 * 1024.0;
  const auto oh = capture_overheads(100 * mib, 5 * mib);
  const engine::EngineProfile eng;
  for (const auto& r : rows) {
    const auto c = sizes_of({.max_num_seqs = 4, .max_num_batched_tokens = 8192, .mode = r.mode});
    EXPECT_EQ(c.piecewise.size(), r.piecewise) << estimate::cudagraph_mode_name(r.mode);
    EXPECT_EQ(c.full.size(), r.full) << estimate::cudagraph_mode_name(r.mode);
    estimate::Deployment d;
    d.graph_capture.mode = r.mode;
    if (r.mode == CudagraphMode::none) d.mode = estimate::ExecutionMode::eager;  // what deploy sets for NONE
    auto t = estimate::terms::estimate_graph(oh, eng, "A100-80G-SXM", d, true, 4, 8192);
    ASSERT_TRUE(t.has_value());
    EXPECT_DOUBLE_EQ(t->bytes, r.mib * mib) << estimate::cudagraph_mode_name(r.mode);
  }
  EXPECT_EQ(estimate::parse_cudagraph_mode("full_decode_only"), CudagraphMode::full_decode_only);
  EXPECT_FALSE(estimate::parse_cudagraph_mode("FULLL").has_value());
}

// The version rules of the catalogue (engines.json):
// - the 1024-token default ceiling on data center Blackwell (PR #49390) in the 0.26-0.27 and 0.28-0.30 profiles: B200 and B300, not an
//   RTX PRO 6000 (compute capability 12.0) or an H100; 512 on a B200 in 0.23. At max_num_seqs 1024 on a B200 with 0.26:
//   ceiling min(1024 x 2, 1024) = 1024: 3 + 31 + (1024 - 256) / 16 + 1 = 49 -> 83 PIECEWISE sizes.
// - -O<n> from 0.12 (PR #26847): -O0 NONE, -O1 PIECEWISE, -O2 / -O3 FULL_AND_PIECEWISE; an explicit cudagraph_mode wins.
//   In 0.11 -O<n> is the compilation level and leaves the mode at FULL_AND_PIECEWISE.
// - FlashInfer with speculative decoding: PIECEWISE outside B200 / B300, with the warning vLLM prints.
TEST(GraphTerm, Issue15_CatalogueGraphRulesByVersion) {
  auto engines = engine::load_engine_catalog();
  ASSERT_TRUE(engines.has_value());
  auto v026 = engine::select_engine(*engines, "vllm", "0.26.0");
  auto v023 = engine::select_engine(*engines, "vllm", "0.23.0");
  auto v011 = engine::select_engine(*engines, "vllm", "0.11.0");
  ASSERT_TRUE(v026 && v023 && v011);
  EXPECT_EQ(v026->cudagraph_default_ceiling("B200"), 1024);
  EXPECT_EQ(v026->cudagraph_default_ceiling("B300"), 1024);
  EXPECT_EQ(v026->cudagraph_default_ceiling("RTXPRO6000"), 512);
  EXPECT_EQ(v026->cudagraph_default_ceiling("H100-SXM"), 512);
  EXPECT_EQ(v023->cudagraph_default_ceiling("B200"), 512);
  EXPECT_EQ(sizes_of({.max_num_seqs = 1024, .max_num_batched_tokens = 16384, .default_ceiling = 1024}).piecewise.size(), 83u);

  using estimate::CudagraphMode;
  auto mode = [](const engine::EngineProfile& e, const estimate::Deployment& d, const std::string& device, std::string* note = nullptr) {
    return estimate::terms::resolve_cudagraph_mode(e, d, device, note);
  };
  estimate::Deployment d;
  for (const auto& [level, want] : {std::pair{0, CudagraphMode::none}, std::pair{1, CudagraphMode::piecewise}, std::pair{2, CudagraphMode::full_and_piecewise},
                                    std::pair{3, CudagraphMode::full_and_piecewise}}) {
    d.graph_capture.optimization_level = level;
    EXPECT_EQ(mode(*v023, d, "H100-SXM"), want) << "-O" << level;
    EXPECT_EQ(mode(*v011, d, "H100-SXM"), CudagraphMode::full_and_piecewise) << "-O" << level << " on 0.11";
  }
  d.graph_capture.optimization_level = 1;
  d.graph_capture.mode = CudagraphMode::full;
  EXPECT_EQ(mode(*v023, d, "H100-SXM"), CudagraphMode::full);

  estimate::Deployment fi;
  fi.speculative.method = "mtp";
  fi.speculative.num_speculative_tokens = 3;
  fi.graph_capture.attention_backend = "FLASHINFER";
  std::string note;
  EXPECT_EQ(mode(*v023, fi, "RTX5060Ti-16G", &note), CudagraphMode::piecewise);
  EXPECT_EQ(note, "CUDAGraphMode.FULL_AND_PIECEWISE is not supported with spec-decode for attention backend FlashInferBackend (support: "
                  "AttentionCGSupport.UNIFORM_SINGLE_TOKEN_DECODE); setting cudagraph_mode=PIECEWISE");
  // estimate_graph hands the same note back, so that fit does not resolve the mode a second time; none on B200.
  std::string graph_note = "not set";
  ASSERT_TRUE(estimate::terms::estimate_graph(engine::Overheads{}, *v023, "RTX5060Ti-16G", fi, false, 0, 0, &graph_note).has_value());
  EXPECT_EQ(graph_note, note);
  ASSERT_TRUE(estimate::terms::estimate_graph(engine::Overheads{}, *v023, "B200", fi, false, 0, 0, &graph_note).has_value());
  EXPECT_EQ(graph_note, "");
  EXPECT_EQ(mode(*v023, fi, "B200"), CudagraphMode::full_and_piecewise);
  estimate::Deployment fa = fi;
  fa.graph_capture.attention_backend = "FLASH_ATTN";
  EXPECT_EQ(mode(*v023, fa, "RTX5060Ti-16G"), CudagraphMode::full_and_piecewise);
  estimate::Deployment plain = fi;
  plain.speculative = {};
  EXPECT_EQ(mode(*v023, plain, "RTX5060Ti-16G"), CudagraphMode::full_and_piecewise);
}

// End to end with the catalogue's constants: Qwen2.5-7B on one A100 80GB with vLLM 0.23.0, where the estimate
// is subtracted before KV sizing. The A100 takes vLLM's default 256 requests and 2048 batched tokens (get_batch_defaults
// leaves the A100 out of the large devices), ceiling min(512, 512, 2048) = 512: 51 PIECEWISE + 35 FULL graphs.
//   99,968,935 + (50 + 34) x 6,053,189 = 99,968,935 + 508,467,876 = 608,436,811 B (0.567 GiB; the prior was 0.60)
// and it leaves the budget: vLLM 0.20 (estimate off by default) keeps the 0.60 GiB prior outside it.
TEST(GraphTerm, Issue15_CatalogueConstantsOnVllm023) {
  auto s = pftest::fit_setup("Qwen/Qwen2.5-7B", "A100-80G-SXM", "vllm", "0.23.0");
  ASSERT_EQ(s.overheads.graph_first_capture_bytes, 99968935.0);
  ASSERT_EQ(s.overheads.graph_per_capture_bytes, 6053189.0);
  estimate::Deployment d;
  d.max_model_len = 16384;
  const auto e = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
  ASSERT_EQ(e.max_num_seqs, 256);
  ASSERT_EQ(e.max_num_batched_tokens, 2048);
  EXPECT_TRUE(e.graph_in_budget);
  EXPECT_DOUBLE_EQ(e.graph_bytes, 608436811.0);
  // The lines the engine logs before the KV line: 608,436,811 B = 0.567 GiB.
  bool profiling = false, estimated = false;
  for (const auto& l : e.lines) {
    profiling = profiling || l == "Profiling CUDA graph memory: PIECEWISE=51 (largest=512), FULL=35 (largest=256)";
    estimated = estimated || l == "Estimated CUDA graph memory: 0.57 GiB total";
  }
  EXPECT_TRUE(profiling && estimated);
  // vLLM 0.20 captures after KV sizing: the captured graphs' cost (issue 15, warmup33; refit in graph34), the same 51 + 35
  // graphs x (per graph / TP 1 + 28 layers x per layer) = 86 x (3,549,870 + 28 x 192,550) = 768,949,220 B (0.72 GiB; the
  // prior was 0.60).
  auto old = pftest::fit_setup("Qwen/Qwen2.5-7B", "A100-80G-SXM", "vllm", "0.20.0");
  const auto o = estimate::estimate_fit(old.model, old.device, old.engine, old.overheads, d);
  EXPECT_FALSE(o.graph_in_budget);
  EXPECT_DOUBLE_EQ(o.graph_bytes, 768949220.0);
  for (const auto& l : o.lines) EXPECT_EQ(l.find("CUDA graph memory"), std::string::npos) << l;
}

// The capture constants are optional in an overheads record; present, they are bounded and the per-graph cost names
// its source, and the loader's error names the file and the key.
TEST(GraphTerm, Issue15_CaptureConstantsAreChecked) {
  auto text = [](const std::string& capture) {
    return R"({"schema_version": 1, "profiles": [], "overheads": [{"platform": "cuda", "non_torch_bytes": 1, "graph_bytes": 1,
      "activation_bytes_per_batched_token_factor": 1, "vision_activation_factor": 0.1, "rope_cache_bytes_per_element": 2, "rope_cache_source": "s",
      "evidence": "e", "band_fraction": 0.3, "non_torch_multi_rank_fraction": 0.5, "non_torch_multi_rank_source": "s")" + capture + "}]}";
  };
  auto good = parse_json(text(R"(, "graph_first_capture_bytes": 100, "graph_per_capture_bytes": 5, "graph_capture_source": "s")"), "engines.json");
  ASSERT_TRUE(good.has_value());
  auto ok = engine::parse_engine_catalog(*good, "engines.json");
  ASSERT_TRUE(ok.has_value()) << ok.error().describe();
  EXPECT_DOUBLE_EQ(ok->overheads.front().graph_first_capture_bytes, 100.0);
  EXPECT_DOUBLE_EQ(ok->overheads.front().graph_per_capture_bytes, 5.0);
  auto none = parse_json(text(""), "engines.json");
  ASSERT_TRUE(none.has_value());
  auto prior = engine::parse_engine_catalog(*none, "engines.json");
  ASSERT_TRUE(prior.has_value()) << prior.error().describe();
  EXPECT_EQ(prior->overheads.front().graph_per_capture_bytes, 0.0);
  for (const std::string bad : {std::string(R"(, "graph_per_capture_bytes": -5, "graph_capture_source": "s")"), std::string(R"(, "graph_per_capture_bytes": 5)")}) {
    auto j = parse_json(text(bad), "engines.json");
    ASSERT_TRUE(j.has_value());
    auto e = engine::parse_engine_catalog(*j, "engines.json");
    ASSERT_FALSE(e.has_value()) << bad;
    EXPECT_NE(e.error().describe().find("engines.json"), std::string::npos);
    EXPECT_NE(e.error().describe().find("graph_per_capture_bytes"), std::string::npos) << e.error().describe();
  }
}

// The logs read-back: "Estimated CUDA graph memory: X GiB total" (the line profile_cudagraph_memory logs, as the p2p-bench
// 2 x 5060 Ti log prints it) is its own field beside the capture's "took" figure, with its line number.
TEST(GraphTerm, Issue15_LogsReadTheEstimateLine) {
  auto sigs = logs::load_signatures();
  ASSERT_TRUE(sigs.has_value()) << sigs.error().describe();
  const std::string text =
      "INFO 06-16 10:00:00 [gpu_model_runner.py:6021] Profiling CUDA graph memory: PIECEWISE=2 (largest=8), FULL=1 (largest=4)\n"
      "(Worker_TP0 pid=1) INFO 06-16 10:00:02 [gpu_model_runner.py:6100] Estimated CUDA graph memory: 0.10 GiB total\n"
      "(Worker_TP0 pid=1) INFO 06-16 10:00:02 [gpu_worker.py:460] Available KV cache memory: 2.04 GiB\n"
      "(Worker_TP0 pid=1) INFO 06-16 10:00:09 [gpu_model_runner.py:6200] Graph capturing finished in 7 secs, took 0.08 GiB\n";
  const auto log = logs::parse_engine_log(text, *sigs);
  ASSERT_TRUE(log.printed.graph_estimate_gib);
  EXPECT_DOUBLE_EQ(log.printed.graph_estimate_gib->value, 0.10);
  EXPECT_EQ(log.printed.graph_estimate_gib->line, 2);
  ASSERT_TRUE(log.printed.graph_gib);
  EXPECT_DOUBLE_EQ(log.printed.graph_gib->value, 0.08);
}

// Issue 15 (warmup33): where the version captures after KV sizing (vLLM < 0.21), the graph term is the graphs vLLM
// captures times their cost per graph and decoder layer (engines.json overheads[cuda].graph_captured_*), against the
// logs' "Graph capturing finished in N secs, took X GiB". The counts, by hand:
// - gpt-oss-20b, one H100 80GB, vLLM 0.19.0: the model sets max_cudagraph_capture_size 1024 (GptOssForCausalLMConfig),
//   the 0.11 grid up to 1024 is 1, 2, 4 (3), 8 ... 248 (31), 256 ... 1024 (49) = 83 sizes; max_num_seqs defaults to 1024
//   on the H100, so FULL_AND_PIECEWISE captures 83 PIECEWISE + 83 FULL = 166 graphs; 24 decoder layers, all MoE.
//   Printed: 1.84 GiB (TP 1, ...-FAIL).
// - Llama-3.1-8B, same card and version: no model ceiling, min(1024 x 2, 512) = 512: 51 + 51 = 102 graphs, 32 dense
//   layers. Printed: 0.91 GiB (pub-llmdplanner-llama31-8b-h100-tp1-v019-len32768).
// - Qwen2.5-7B at vLLM 0.10.1 on an A100 80GB (256 requests): PIECEWISE only, 1, 2, 4 and the multiples of 8 to 512:
//   3 + 64 = 67 graphs, 28 dense layers. Printed for the 28-layer Qwen2-7B on that card and version: 0.50 GiB
//   (dl22-qwen2-7b-a100x1-u025).
// The tolerance is the refit's leave-one-out spread on these lines (tools/fit_overheads.py --graph-captured): 0.25 GiB.
TEST(GraphTerm, Issue15_CapturedGraphsScaleWithGraphsAndLayers) {
  const double gib = 1073741824.0;
  estimate::Deployment d;
  d.max_model_len = 8192;
  auto oss = pftest::fit_setup("openai/gpt-oss-20b", "H100-SXM", "vllm", "0.19.0");
  const engine::CapturedGraphCost& c = engine::captured_graph_cost(oss.overheads);
  ASSERT_TRUE(c.modelled());
  auto e = estimate::estimate_fit(oss.model, oss.device, oss.engine, oss.overheads, d);
  ASSERT_EQ(e.max_num_seqs, 1024);
  EXPECT_FALSE(e.graph_in_budget);
  EXPECT_DOUBLE_EQ(e.graph_bytes, 166.0 * (c.per_graph_bytes + 24.0 * c.per_layer_bytes + 24.0 * c.per_moe_layer_bytes));
  EXPECT_NEAR(e.graph_bytes / gib, 1.84, 0.25);
  auto llama = pftest::fit_setup("meta-llama/Meta-Llama-3.1-8B", "H100-SXM", "vllm", "0.19.0");
  e = estimate::estimate_fit(llama.model, llama.device, llama.engine, llama.overheads, d);
  EXPECT_DOUBLE_EQ(e.graph_bytes, 102.0 * (c.per_graph_bytes + 32.0 * c.per_layer_bytes));
  EXPECT_NEAR(e.graph_bytes / gib, 0.91, 0.25);
  auto qwen = pftest::fit_setup("Qwen/Qwen2.5-7B", "A100-80G-SXM", "vllm", "0.10.1");
  e = estimate::estimate_fit(qwen.model, qwen.device, qwen.engine, qwen.overheads, d);
  ASSERT_EQ(e.max_num_seqs, 256);
  EXPECT_DOUBLE_EQ(e.graph_bytes, 67.0 * (c.per_graph_bytes + 28.0 * c.per_layer_bytes));
  EXPECT_NEAR(e.graph_bytes / gib, 0.50, 0.25);
  // gpt-oss at 0.10.1: its 1024 ceiling takes the 0.11 grid (83 sizes), PIECEWISE only.
  const auto sizes = estimate::terms::captured_graph_sizes(oss.model, qwen.engine, "A100-80G-SXM", d, estimate::CudagraphMode::full_and_piecewise, 256, 8192);
  ASSERT_TRUE(sizes.has_value());
  EXPECT_EQ(sizes->piecewise.size(), 83u);
  EXPECT_EQ(sizes->piecewise.back(), 1024);
  EXPECT_TRUE(sizes->full.empty());
  // A capture flag overrides the model's ceiling: max_cudagraph_capture_size 512 at 0.19 gives 51 sizes.
  estimate::Deployment flagged = d;
  flagged.graph_capture.max_capture_size = 512;
  const auto capped = estimate::terms::captured_graph_sizes(oss.model, oss.engine, "H100-SXM", flagged, estimate::CudagraphMode::full_and_piecewise, 1024, 8192);
  ASSERT_TRUE(capped.has_value());
  EXPECT_EQ(capped->piecewise.size(), 51u);
  // Eager mode captures nothing.
  estimate::Deployment eager = d;
  eager.mode = estimate::ExecutionMode::eager;
  e = estimate::estimate_fit(oss.model, oss.device, oss.engine, oss.overheads, eager);
  EXPECT_EQ(e.graph_bytes, 0.0);
}

// Issue 15 (graph34): from vLLM 0.11 the per-graph part of the captured graphs' cost is the rank's share, divided by TP
// (engines.json graph_captured_per_graph_by_tp); the per-layer parts are not. Llama-3.1-8B on one H100 at vLLM 0.19.0:
// 51 PIECEWISE + 51 FULL = 102 graphs and 32 decoder layers at every TP, so TP 1 -> 2 takes 102 x per_graph / 2 off and
// TP 2 -> 4 another 102 x per_graph / 4. Printed (the llm-d-planner sweep, data/evidence/vllm-startup-public.jsonl):
// 0.91 / 0.76 / 0.67 GiB at TP 1 / 2 / 4; the tolerance is the refit's leave-one-out error on these three lines
// (tools/fit_overheads.py --graph-captured: 0.014, 0.007, 0.000 GiB) rounded up to 0.05 GiB. Before 0.11 (PIECEWISE only)
// the whole per-graph part stays: Qwen2.5-7B at 0.10.1 on an A100 costs the same at TP 2 as at TP 1 (67 graphs, 28 layers).
TEST(GraphTerm, Issue15_PerGraphPartIsTheRanksShareFrom011) {
  const double gib = 1073741824.0;
  auto llama = pftest::fit_setup("meta-llama/Meta-Llama-3.1-8B", "H100-SXM", "vllm", "0.19.0");
  const engine::CapturedGraphCost& c = engine::captured_graph_cost(llama.overheads);
  ASSERT_TRUE(c.modelled());
  const std::pair<int64_t, double> printed[] = {{1, 0.91}, {2, 0.76}, {4, 0.67}};
  for (const auto& [tp, gib_printed] : printed) {
    estimate::Deployment d;
    d.max_model_len = 8192;
    d.tensor_parallel_size = tp;
    const auto e = estimate::estimate_fit(llama.model, llama.device, llama.engine, llama.overheads, d);
    ASSERT_EQ(e.max_num_seqs, 1024) << tp;
    EXPECT_DOUBLE_EQ(e.graph_bytes, 102.0 * (c.per_graph_bytes / static_cast<double>(tp) + 32.0 * c.per_layer_bytes)) << tp;
    EXPECT_NEAR(e.graph_bytes / gib, gib_printed, 0.05) << tp;
  }
  auto qwen = pftest::fit_setup("Qwen/Qwen2.5-7B", "A100-80G-SXM", "vllm", "0.10.1");
  for (const int64_t tp : {1, 2}) {
    estimate::Deployment d;
    d.max_model_len = 8192;
    d.tensor_parallel_size = tp;
    const auto e = estimate::estimate_fit(qwen.model, qwen.device, qwen.engine, qwen.overheads, d);
    EXPECT_DOUBLE_EQ(e.graph_bytes, 67.0 * (c.per_graph_bytes + 28.0 * c.per_layer_bytes)) << tp;
  }
}

// Issue 15 (warmup33): the capture rules' records are checked with the rest of the catalogue; a bad one is a corrupt
// error that names the file, the record and the key.
TEST(GraphTerm, Issue15_CaptureRuleRecordsAreChecked) {
  auto parse = [](const std::string& text) { return parse_json(text, "engines.json"); };
  auto ok = parse(R"({"id": "p", "cudagraph_model_capture_sizes": [{"max_capture_size": 1024, "architectures": ["GptOssForCausalLM"],
                      "version_min": "0.10.1", "version_max": "0.20.99", "source": "s"}], "graph_captured_after_kv": {"version_min": "0.8.0",
                      "version_max": "0.20.99", "source": "s"}})");
  ASSERT_TRUE(ok.has_value());
  auto rules = engine::parse_capture_rules(JsonObject(*ok, "engines.json"), "engines.json", "p");
  ASSERT_TRUE(rules.has_value()) << rules.error().describe();
  ASSERT_EQ(rules->model_capture_sizes.size(), 1u);
  EXPECT_EQ(rules->model_capture_sizes[0].max_capture_size, 1024);
  EXPECT_TRUE(rules->graph_captured_after_kv.has_value());
  EXPECT_FALSE(rules->piecewise_grid_of_8.has_value());
  const std::vector<std::pair<std::string, std::string>> bad = {
      {R"({"cudagraph_model_capture_sizes": [{"max_capture_size": 1024, "architectures": [], "version_min": "0.10.1", "version_max": "1.0.0", "source": "s"}]})",
       "cudagraph_model_capture_sizes needs max_capture_size >= 1 and architectures"},
      {R"({"cudagraph_piecewise_grid_of_8": {"version_min": "0.8.0", "version_max": "0.10.99", "source": " "}})", "every figure needs its source"},
      {R"({"graph_captured_after_kv": {"version_min": "0.9.0", "version_max": "0.8.0", "source": "s"}})", "graph_captured_after_kv: bad version range"},
  };
  for (const auto& [text, fragment] : bad) {
    auto j = parse(text);
    ASSERT_TRUE(j.has_value()) << text;
    auto r = engine::parse_capture_rules(JsonObject(*j, "engines.json"), "engines.json", "p");
    ASSERT_FALSE(r.has_value()) << text;
    EXPECT_EQ(r.error().kind, ErrorKind::corrupt);
    EXPECT_NE(r.error().message.find(fragment), std::string::npos) << r.error().message;
    EXPECT_NE(r.error().message.find("engines.json"), std::string::npos) << r.error().message;
  }
  auto cost = parse(R"({"platform": "cuda", "graph_captured_per_graph_bytes": 4000000})");
  ASSERT_TRUE(cost.has_value());
  auto c = engine::parse_captured_graph_cost(JsonObject(*cost, "engines.json"), "engines.json", "cuda");
  ASSERT_FALSE(c.has_value());
  EXPECT_NE(c.error().message.find("has no graph_captured_source"), std::string::npos) << c.error().message;
}

// Issue 15 (lead, after warmup33): the capture rules were looked up by profile id in the embedded catalogue, so a
// catalogue whose records carry them under other ids (a user's copy of a profile) got none: the versions before 0.11
// lost the PIECEWISE-only grid and every version its after-KV capture. The rules now ride on the profile and overheads
// records that carry them.
TEST(GraphTerm, Issue15_CaptureRulesRideOnTheRecordsThatCarryThem) {
  auto root = parse_json(std::string(embedded_data("engines/engines.json")), "data/engines/engines.json");
  ASSERT_TRUE(root.has_value());
  int renamed = 0;
  for (auto& p : (*root)["profiles"])
    if (p.value("engine", "") == "vllm") {
      p["id"] = "copy-of-" + p["id"].get<std::string>();
      ++renamed;
    }
  ASSERT_GT(renamed, 5);
  auto copy = engine::parse_engine_catalog(*root, "my-engines.json");
  ASSERT_TRUE(copy.has_value()) << copy.error().message;
  auto old = engine::select_engine(*copy, "vllm", "0.10.1");
  ASSERT_TRUE(old.has_value());
  EXPECT_EQ(old->id.rfind("copy-of-", 0), 0u) << old->id;
  EXPECT_TRUE(old->applies(engine::capture_rules(*old).piecewise_grid_of_8));
  EXPECT_TRUE(old->applies(engine::capture_rules(*old).graph_captured_after_kv));
  auto v019 = engine::select_engine(*copy, "vllm", "0.19.0");
  ASSERT_TRUE(v019.has_value());
  EXPECT_FALSE(v019->applies(engine::capture_rules(*v019).piecewise_grid_of_8));
  EXPECT_TRUE(v019->applies(engine::capture_rules(*v019).graph_captured_after_kv));
  // The same architecture's own ceiling (GptOssForCausalLMConfig: 1024) and the platform's cost as in the shipped catalogue.
  EXPECT_EQ(engine::model_max_capture_size(*v019, "GptOssForCausalLM"), std::optional<int64_t>(1024));
  const engine::Overheads* cuda = nullptr;
  for (const auto& o : copy->overheads)
    if (o.platform == "cuda") cuda = &o;
  ASSERT_NE(cuda, nullptr);
  EXPECT_TRUE(engine::captured_graph_cost(*cuda).modelled());
  // A catalogue whose records carry none gives none.
  for (auto& p : (*root)["profiles"]) {
    p.erase("graph_captured_after_kv");
    p.erase("cudagraph_piecewise_grid_of_8");
  }
  auto bare = engine::parse_engine_catalog(*root, "my-engines.json");
  ASSERT_TRUE(bare.has_value()) << bare.error().message;
  auto bare_old = engine::select_engine(*bare, "vllm", "0.10.1");
  ASSERT_TRUE(bare_old.has_value());
  EXPECT_FALSE(bare_old->applies(engine::capture_rules(*bare_old).graph_captured_after_kv));
}
