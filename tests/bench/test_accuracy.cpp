// Accuracy against injected truth: the fake server sends the first token 200 ms after reading the
// request and one token every 20 ms after that, on an absolute schedule. Measured mean TTFT and
// TPOT must be within 2 % at concurrency 1 and 64.
#include <gtest/gtest.h>

#include <cmath>

#include "bench/measurement.hpp"
#include "fake.hpp"

using namespace preflight::bench;

namespace {

void expect_accuracy(int64_t concurrency, int64_t num_prompts) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "timing accuracy is a property of the optimized client; the sanitized build runs the same code several times slower";
#endif
  // Injected truth: TTFT 200 ms, ITL 20 ms, 30 tokens per request.
  auto fake = pftest::start_fake({"--ttft-ms", "200", "--itl-ms", "20"});
  ASSERT_FALSE(fake.url.empty());
  auto live = pftest::run_against(fake.url, "accuracy-c" + std::to_string(concurrency), pftest::fixed(concurrency, num_prompts), 30);
  const auto& records = live.result.records;
  ASSERT_EQ(records.size(), static_cast<size_t>(num_prompts));
  StatsOptions o;
  o.concurrency = concurrency;
  const auto s = compute_run_stats(records, o);
  EXPECT_EQ(s.failed, 0) << (s.failure_examples.empty() ? "" : s.failure_examples[0]);
  EXPECT_EQ(s.tokens_source, "usage");
  EXPECT_EQ(s.output_tokens, 30 * num_prompts);
  EXPECT_EQ(s.output_length_mismatches, 0);
  EXPECT_LT(std::abs(s.ttft_ms.mean - 200) / 200, 0.02) << "mean TTFT " << s.ttft_ms.mean << " ms";
  EXPECT_LT(std::abs(s.tpot_ms.mean - 20) / 20, 0.02) << "mean TPOT " << s.tpot_ms.mean << " ms";
  EXPECT_LT(std::abs(s.itl_ms.p50 - 20) / 20, 0.02) << "median ITL " << s.itl_ms.p50 << " ms";
  EXPECT_LT(s.ttfb_ms.mean, 50);  // headers go out at once
  EXPECT_EQ(s.peak_concurrency, concurrency);
  // The steady window: concurrency streams each at 1 token / 20 ms.
  ASSERT_TRUE(s.steady_decode_tok_s);
  EXPECT_LT(std::abs(*s.steady_decode_tok_s - 50.0 * static_cast<double>(concurrency)) / (50.0 * static_cast<double>(concurrency)), 0.03)
      << *s.steady_decode_tok_s;
  std::printf("[accuracy] concurrency %lld: mean TTFT %.2f ms (injected 200), mean TPOT %.3f ms (injected 20), steady decode %.1f tok/s\n",
              static_cast<long long>(concurrency), s.ttft_ms.mean, s.tpot_ms.mean, *s.steady_decode_tok_s);
  auto store = BenchStore::open(live.db_path);
  EXPECT_EQ(*store->request_count(live.run_id), num_prompts);
}

}  // namespace

TEST(RunnerAccuracy, InjectedTtft200Itl20AtConcurrency1) { expect_accuracy(1, 4); }
TEST(RunnerAccuracy, InjectedTtft200Itl20AtConcurrency64) { expect_accuracy(64, 128); }

