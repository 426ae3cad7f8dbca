// Issue 15: the CUDA graph term as vLLM 0.21+ estimates it before KV sizing (gpu_model_runner.profile_cudagraph_memory):
// the capture sizes from vllm/config/vllm.py _set_cudagraph_sizes, written out by hand below from the rule (1, 2, 4,
// multiples of 8 below 256, multiples of 16 from 256, up to min(max_num_seqs x decode query length x 2, 512,
// max_num_batched_tokens); sizes rounded up to multiples of the decode query length under speculative decoding;
// FULL graphs for the uniform decode sizes, at most max_num_seqs x decode query length), and the bytes as
// first capture + (PIECEWISE - 1 + FULL - 1) x per-graph cost.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "base/json_util.hpp"
#include "engine/engine_profile.hpp"
#include "estimate/fit.hpp"
#include "estimate/fit_terms.hpp"
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

// Issue 19: the graph term counts the sizes without building them (cudagraph_capture_counts). The hand-worked counts
// of the three tests above: 256 requests, 8192 tokens: PIECEWISE 51 (largest 512), FULL 35 (largest 256); MTP 3 with 48
// requests: 41 (384) and 25 (192); 100 batched tokens: 16 and 16, both largest 100. Then the counts are those of the
// lists over a sweep of requests, batched tokens and query lengths (edges included: 0 and 1 batched tokens).
TEST(GraphTerm, Issue19_CaptureCountsAreTheListsCounted) {
  using estimate::terms::cudagraph_capture_counts;
  const auto a = cudagraph_capture_counts(256, 8192, 1);
  EXPECT_EQ(a.piecewise, 51);
  EXPECT_EQ(a.full, 35);
  EXPECT_EQ(a.largest_piecewise, 512);
  EXPECT_EQ(a.largest_full, 256);
  const auto b = cudagraph_capture_counts(48, 8192, 4);
  EXPECT_EQ(b.piecewise, 41);
  EXPECT_EQ(b.full, 25);
  EXPECT_EQ(b.largest_piecewise, 384);
  EXPECT_EQ(b.largest_full, 192);
  const auto c = cudagraph_capture_counts(256, 100, 1);
  EXPECT_EQ(c.piecewise, 16);
  EXPECT_EQ(c.full, 16);
  EXPECT_EQ(c.largest_piecewise, 100);
  EXPECT_EQ(c.largest_full, 100);
  for (const int64_t seqs : {0, 1, 2, 3, 7, 8, 48, 100, 256, 1024})
    for (const int64_t tokens : {0, 1, 2, 5, 64, 100, 255, 256, 300, 512, 513, 2048, 8192})
      for (const int64_t q : {1, 2, 3, 4, 6}) {
        const auto lists = estimate::terms::cudagraph_capture_sizes(seqs, tokens, q);
        const auto counts = cudagraph_capture_counts(seqs, tokens, q);
        const std::string at = std::to_string(seqs) + " " + std::to_string(tokens) + " " + std::to_string(q);
        EXPECT_EQ(counts.piecewise, static_cast<int64_t>(lists.piecewise.size())) << at;
        EXPECT_EQ(counts.full, static_cast<int64_t>(lists.full.size())) << at;
        EXPECT_EQ(counts.largest_piecewise, lists.piecewise.empty() ? 0 : lists.piecewise.back()) << at;
        EXPECT_EQ(counts.largest_full, lists.full.empty() ? 0 : lists.full.back()) << at;
      }
}

// The bytes: first capture 100 MiB, 5 MiB per further graph, max_num_seqs 256:
// 100 MiB + (51 - 1 + 35 - 1) x 5 MiB = 100 + 420 = 520 MiB. Eager: 0. Not in the budget (vLLM < 0.21): the prior.
TEST(GraphTerm, Issue15_EstimateIsFirstCapturePlusExtrapolatedGraphs) {
  const double mib = 1024.0 * 1024.0;
  const auto oh = capture_overheads(100 * mib, 5 * mib);
  estimate::Deployment dep;
  const auto t = estimate::terms::estimate_graph(oh, dep, true, 256, 8192);
  EXPECT_DOUBLE_EQ(t.bytes, 520 * mib);
  EXPECT_DOUBLE_EQ(t.band_bytes, 520 * mib * 0.35);
  EXPECT_NE(t.rule.find("PIECEWISE 51"), std::string::npos) << t.rule;
  EXPECT_EQ(estimate::terms::estimate_graph(oh, dep, false, 256, 8192).bytes, 644245094.0);
  estimate::Deployment eager;
  eager.mode = estimate::ExecutionMode::eager;
  EXPECT_EQ(estimate::terms::estimate_graph(oh, eager, true, 256, 8192).bytes, 0.0);
  // Speculative decoding from the deployment, at max_num_seqs 4. Without it: ceiling 8, PIECEWISE 1, 2, 4, 8 and FULL
  // 1, 2, 4: 3 + 2 further graphs, 100 + 5 x 5 = 125 MiB. MTP 3 (query length 4): ceiling 32, 1 ... 32 rounded to
  // 4, 8, 16, 24, 32 and FULL up to 16: 4, 8, 16: 4 + 2 further graphs, 130 MiB.
  estimate::Deployment mtp;
  mtp.speculative.method = "mtp";
  mtp.speculative.num_speculative_tokens = 3;
  EXPECT_DOUBLE_EQ(estimate::terms::estimate_graph(oh, dep, true, 4, 16384).bytes, 125 * mib);
  EXPECT_DOUBLE_EQ(estimate::terms::estimate_graph(oh, mtp, true, 4, 16384).bytes, 130 * mib);
  // No capture constants on the platform: the prior, in the budget or not.
  EXPECT_EQ(estimate::terms::estimate_graph(capture_overheads(0, 0), dep, true, 256, 8192).bytes, 644245094.0);
}

// End to end with the catalogue's constants: Qwen2.5-7B on one A100 80GB with vLLM 0.23.0, where the estimate
// is subtracted before KV sizing. The A100 takes vLLM's default 256 requests and 2048 batched tokens (get_batch_defaults
// leaves the A100 out of the large devices), ceiling min(512, 512, 2048) = 512: 51 PIECEWISE + 35 FULL graphs.
//   91,666,714 + (50 + 34) x 6,149,795 = 91,666,714 + 516,582,780 = 608,249,494 B (0.566 GiB; the prior was 0.60)
// and it leaves the budget: vLLM 0.20 (estimate off by default) keeps the 0.60 GiB prior outside it.
TEST(GraphTerm, Issue15_CatalogueConstantsOnVllm023) {
  auto s = pftest::fit_setup("Qwen/Qwen2.5-7B", "A100-80G-SXM", "vllm", "0.23.0");
  ASSERT_EQ(s.overheads.graph_first_capture_bytes, 91666714.0);
  ASSERT_EQ(s.overheads.graph_per_capture_bytes, 6149795.0);
  estimate::Deployment d;
  d.max_model_len = 16384;
  const auto e = estimate::estimate_fit(s.model, s.device, s.engine, s.overheads, d);
  ASSERT_EQ(e.max_num_seqs, 256);
  ASSERT_EQ(e.max_num_batched_tokens, 2048);
  EXPECT_TRUE(e.graph_in_budget);
  EXPECT_DOUBLE_EQ(e.graph_bytes, 608249494.0);
  // The lines the engine logs before the KV line: 608,249,494 B = 0.566 GiB.
  bool profiling = false, estimated = false;
  for (const auto& l : e.lines) {
    profiling = profiling || l == "Profiling CUDA graph memory: PIECEWISE=51 (largest=512), FULL=35 (largest=256)";
    estimated = estimated || l == "Estimated CUDA graph memory: 0.57 GiB total";
  }
  EXPECT_TRUE(profiling && estimated);
  auto old = pftest::fit_setup("Qwen/Qwen2.5-7B", "A100-80G-SXM", "vllm", "0.20.0");
  const auto o = estimate::estimate_fit(old.model, old.device, old.engine, old.overheads, d);
  EXPECT_FALSE(o.graph_in_budget);
  EXPECT_DOUBLE_EQ(o.graph_bytes, 644245094.0);
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
