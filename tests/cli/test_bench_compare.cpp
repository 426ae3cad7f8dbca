#include "cli/bench_compare.hpp"

#include <gtest/gtest.h>

#include <cmath>

using namespace preflight;
using namespace preflight::cli;

TEST(BenchCompare, EfficiencyFitByLeastSquaresInLogSpace) {
  // Rates: 100 -> 80 and 200 -> 180 (ratios 0.8, 0.9); a time 50 ms predicted, 62.5 ms measured
  // (ratio predicted/measured 0.8). e = (0.8 * 0.9 * 0.8)^(1/3) = 0.576^(1/3).
  const std::vector<ComparisonRow> rows = {{"throughput tok/s", 4, 100, 80, "tok/s", ComparisonRow::Kind::rate},
                                           {"throughput tok/s", 16, 200, 180, "tok/s", ComparisonRow::Kind::rate},
                                           {"TTFT ms", 1, 50, 62.5, "ms", ComparisonRow::Kind::time}};
  const auto f = fit_efficiency("vllm", "H100", rows);
  EXPECT_EQ(f.pairs, 3);
  EXPECT_NEAR(f.efficiency, std::cbrt(0.576), 1e-12);
  // Before: |err| 25 %, 11.1 %, 20 % -> median 20 %. After: 100e = 83.20 (4.00 %), 200e = 166.41
  // (7.55 %), 50/e = 60.09 (3.85 %) -> median 4.00 %.
  EXPECT_NEAR(f.median_abs_error_before_pct, 20, 1e-9);
  EXPECT_NEAR(f.median_abs_error_after_pct, (100 * std::cbrt(0.576) - 80) / 80 * 100, 1e-9);
  EXPECT_LT(f.median_abs_error_after_pct, f.median_abs_error_before_pct);
  EXPECT_EQ(fit_efficiency("x", "y", {}).pairs, 0);
}

TEST(BenchCompare, LevelPairsAndPredictionFile) {
  bench::RunStats s;
  s.succeeded = 4;
  s.tpot_ms = bench::summarize({20, 20});
  s.ttft_ms = bench::summarize({100, 120});
  s.steady_decode_tok_s = 48;
  auto p = prediction_from_json(Json::parse(R"({"decode_tok_s_single": 60, "ttft_ms": 90, "throughput_tok_s": {"1": 60, "8": 400}})"), "p.json");
  ASSERT_TRUE(p) << p.error().describe();
  const auto rows = compare_level(*p, 1, s);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].metric, "decode tok/s (1 stream)");
  EXPECT_DOUBLE_EQ(rows[0].measured, 50);  // 1000 / 20 ms
  EXPECT_DOUBLE_EQ(rows[1].measured, 110);
  EXPECT_DOUBLE_EQ(rows[2].measured, 48);  // the steady window, not the whole-run average
  EXPECT_NEAR(rows[0].error_pct(), 20, 1e-12);
  EXPECT_TRUE(compare_level(*p, 4, s).empty());  // no prediction at 4
  EXPECT_FALSE(prediction_from_json(Json::parse(R"({"throughput_tok_s": {"x": 1}})"), "p.json"));
  EXPECT_FALSE(prediction_from_json(Json::parse(R"({"decode_tok_s": 1})"), "p.json"));
  EXPECT_FALSE(prediction_from_json(Json::parse(R"({"ttft_ms": -1})"), "p.json"));
  // Issue 20: the 910B4 has no measured or datasheet bandwidth; its catalogue prior (800 GB/s peak x copy
  // fraction 0.80 = 640 GB/s) gives a prediction, and the source names that bandwidth.
  auto prior = predict_for_bench({"Qwen/Qwen3-8B", "910B4", "", 128, 128, {1}});
  ASSERT_TRUE(prior) << prior.error().describe();
  EXPECT_NE(prior->source.find("640 GB/s copy bandwidth"), std::string::npos) << prior->source;
}

// The speed model answers for --device/--spec: decode speed, TTFT, throughput by concurrency, KV tokens.
TEST(BenchCompare, SpeedModelPredictsForTheBenchmarkedDeployment) {
  auto p = predict_for_bench({"Qwen/Qwen3-8B", "H100", "vllm", 1024, 256, {1, 16}});
  ASSERT_TRUE(p.has_value()) << p.error().describe();
  ASSERT_TRUE(p->decode_tok_s_single.has_value());
  EXPECT_GT(*p->decode_tok_s_single, 50.0);   // H100: ~15 GB of weights at ~2.5 TB/s effective
  EXPECT_LT(*p->decode_tok_s_single, 400.0);
  ASSERT_TRUE(p->ttft_ms.has_value());
  EXPECT_GT(*p->ttft_ms, 0.0);
  ASSERT_EQ(p->throughput_tok_s.size(), 2u);
  EXPECT_GT(p->throughput_tok_s.at(16), p->throughput_tok_s.at(1) * 8);
  ASSERT_TRUE(p->kv_tokens.has_value());
  EXPECT_GT(*p->kv_tokens, 100000);
  EXPECT_NE(p->source.find("speed model"), std::string::npos);
}
