// Accuracy against injected truth: the fake server sends the first token 200 ms after reading the
// request and one token every 20 ms after that, on an absolute schedule. Measured mean TTFT and
// TPOT must be within 2 % at concurrency 1 and 64 of that truth plus the lateness the server reports
// for its own writes (one thread writing 64 first tokens at once on a loaded 2-core machine can be
// several ms behind its schedule; a client that measures rightly sees that delay too).
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "bench/measurement.hpp"
#include "fake.hpp"

using namespace preflight::bench;

namespace {

void expect_accuracy(int64_t concurrency, int64_t num_prompts) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "timing accuracy is a property of the optimized client; the sanitized build runs the same code several times slower";
#endif
  // Injected truth: TTFT 200 ms, ITL 20 ms, 30 tokens per request.
  auto fake = pftest::start_fake({"--ttft-ms", "200", "--itl-ms", "20", "--report-lateness"});
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
  // The server's own lateness over the measured requests (the warm-up wave comes first: ids below concurrency).
  double first_late_ms = 0, last_late_ms = 0;
  int64_t late_streams = 0;
  for (int64_t seen = 0; seen < num_prompts + concurrency; ++seen) {
    const std::string line = fake.process->wait_for_line("LATE ", std::chrono::seconds(5));
    ASSERT_FALSE(line.empty()) << "the fake server reported " << seen << " finished streams";
    std::istringstream in(line.substr(5));
    long long id = -1, first_ns = 0, last_ns = 0;
    in >> id >> first_ns >> last_ns;
    ASSERT_TRUE(in) << line;
    if (id < concurrency) continue;
    first_late_ms += static_cast<double>(first_ns) / 1e6;
    last_late_ms += static_cast<double>(last_ns) / 1e6;
    ++late_streams;
  }
  ASSERT_EQ(late_streams, num_prompts);
  first_late_ms /= static_cast<double>(late_streams);
  last_late_ms /= static_cast<double>(late_streams);
  EXPECT_GE(first_late_ms, 0);
  const double ttft_truth = 200 + first_late_ms;
  const double tpot_truth = 20 + (last_late_ms - first_late_ms) / 29;  // 30 tokens: 29 gaps
  EXPECT_GE(s.ttft_ms.mean, 200) << "a client cannot see the first token before the server sends it";
  EXPECT_LT(std::abs(s.ttft_ms.mean - ttft_truth) / ttft_truth, 0.02) << "mean TTFT " << s.ttft_ms.mean << " ms, server " << first_late_ms << " ms late";
  EXPECT_LT(std::abs(s.tpot_ms.mean - tpot_truth) / tpot_truth, 0.02) << "mean TPOT " << s.tpot_ms.mean << " ms, truth " << tpot_truth;
  EXPECT_LT(std::abs(s.itl_ms.p50 - 20) / 20, 0.02) << "median ITL " << s.itl_ms.p50 << " ms";
  EXPECT_LT(s.ttfb_ms.mean, 50);  // headers go out at once
  EXPECT_EQ(s.peak_concurrency, concurrency);
  // The steady window: concurrency streams each at 1 token / 20 ms.
  ASSERT_TRUE(s.steady_decode_tok_s);
  EXPECT_LT(std::abs(*s.steady_decode_tok_s - 50.0 * static_cast<double>(concurrency)) / (50.0 * static_cast<double>(concurrency)), 0.03)
      << *s.steady_decode_tok_s;
  std::printf("[accuracy] concurrency %lld: mean TTFT %.2f ms (injected 200, server %.2f ms late), mean TPOT %.3f ms (injected 20), steady decode %.1f tok/s\n",
              static_cast<long long>(concurrency), s.ttft_ms.mean, first_late_ms, s.tpot_ms.mean, *s.steady_decode_tok_s);
  auto store = BenchStore::open(live.db_path);
  EXPECT_EQ(*store->request_count(live.run_id), num_prompts);
}

}  // namespace

TEST(RunnerAccuracy, InjectedTtft200Itl20AtConcurrency1) { expect_accuracy(1, 4); }
TEST(RunnerAccuracy, InjectedTtft200Itl20AtConcurrency64) { expect_accuracy(64, 128); }

