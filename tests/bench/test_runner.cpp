// The streaming client against the in-repo fake server with injected timings.
#include <gtest/gtest.h>

#include <cmath>

#include "bench/measurement.hpp"
#include "fake.hpp"

using namespace preflight::bench;

TEST(Runner, ReasoningCountsForTtftAndRolePreludeDoesNot) {
  auto fake = pftest::start_fake({"--ttft-ms", "50", "--itl-ms", "5", "--reasoning", "3", "--role-prelude"});
  auto live = pftest::run_against(fake.url, "reasoning", pftest::fixed(2, 4), 10);
  ASSERT_EQ(live.result.records.size(), 4u);
  for (const auto& r : live.result.records) {
    ASSERT_TRUE(r.ok()) << r.error;
    // Lateness only adds (a loaded machine can deschedule either side), so the bounds that prove the
    // definitions are lower bounds: the role-only prelude at ~0 ms is not a token, the first token
    // is reasoning, and content comes with the 4th token, due 50 + 3 x 5 ms after the request.
    EXPECT_GE(*r.ttft_ms(), 49.5);
    EXPECT_LT(*r.ttft_ms(), 250);
    EXPECT_LT(r.t_first_chunk_ns, r.t_first_token_ns);  // vLLM's "first choice" event is the prelude
    EXPECT_GT(r.t_first_content_ns, r.t_first_token_ns);
    EXPECT_GE(ns_to_ms(r.t_first_content_ns - r.t_send_ns), 64.5);
    EXPECT_GT(r.reasoning_chars, 0);
  }
}

TEST(Runner, CompletionsEndpoint) {
  auto fake = pftest::start_fake({"--ttft-ms", "10", "--itl-ms", "2"});
  auto live = pftest::run_against(fake.url, "completions", pftest::fixed(3, 6), 8, {}, Api::completions);
  const auto s = compute_run_stats(live.result.records, {});
  EXPECT_EQ(s.succeeded, 6);
  EXPECT_EQ(s.output_tokens, 48);
}

TEST(Runner, RequestRateFollowsSchedule) {
  auto fake = pftest::start_fake({"--ttft-ms", "5", "--itl-ms", "2"});
  LoadPlan plan;
  plan.mode = LoadMode::request_rate;
  plan.request_rate = 40;
  plan.num_prompts = 40;
  plan.seed = 3;
  auto live = pftest::run_against(fake.url, "rate", plan, 4);
  ASSERT_EQ(live.result.records.size(), 40u);
  const auto offsets = arrival_offsets_s(40, 40, 1.0, 3);
  std::vector<double> lag_ms;
  for (const auto& r : live.result.records) {
    EXPECT_TRUE(r.ok()) << r.error;
    // The schedule is exact; the send is never early and, on a machine with CPU to spare, late by
    // well under a millisecond (a loaded CI box can deschedule us, so only the median is bounded).
    EXPECT_NEAR(ns_to_ms(r.t_sched_ns - live.result.t_start_ns), offsets[static_cast<size_t>(r.index)] * 1e3, 1e-3) << r.index;
    EXPECT_GE(r.t_send_ns, r.t_sched_ns);
    lag_ms.push_back(ns_to_ms(r.t_send_ns - r.t_sched_ns));
  }
  EXPECT_LT(summarize(lag_ms).p50, 5.0);
}

TEST(Runner, UnreachableServerFailsEveryRequestFast) {
  // A port nothing listens on: bind and close to get one.
  auto fake = pftest::start_fake({});
  const std::string url = fake.url;
  fake.process->kill(SIGKILL);
  auto live = pftest::run_against(url, "refused", pftest::fixed(2, 4), 4);
  ASSERT_EQ(live.result.records.size(), 4u);
  for (const auto& r : live.result.records) EXPECT_EQ(r.failure, FailureClass::connect) << r.error;
}

TEST(Runner, RejectsBadSetup) {
  SteadyClock clock;
  RunTarget t{"ftp://x", {}};
  EXPECT_FALSE(run_load(t, synthetic_prompts(1, 2, 2, 1), pftest::fixed(1, 1), {}, clock, nullptr));
  t.url = "http://127.0.0.1:1";
  EXPECT_FALSE(run_load(t, synthetic_prompts(1, 2, 2, 1), pftest::fixed(0, 1), {}, clock, nullptr));
  EXPECT_FALSE(run_load(t, {}, pftest::fixed(1, 1), {}, clock, nullptr));
}
