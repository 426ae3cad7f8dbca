#include "bench/measurement.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "bench/clock.hpp"
#include "bench/sse_parser.hpp"

using namespace preflight::bench;

namespace {

constexpr int64_t k_ms = 1'000'000;

void feed(RequestRecord& r, const std::string& payload, int64_t t_ns) {
  auto c = parse_chunk(payload);
  ASSERT_TRUE(c) << payload;
  apply_chunk(r, *c, t_ns);
}

std::string token(const char* text) { return std::string(R"({"choices":[{"index":0,"delta":{"content":")") + text + R"("},"finish_reason":null}]})"; }

// A request sent at `send_ms`, with token events at `token_ms`, usage N = token count, [DONE] 1 ms
// after the last token.
RequestRecord streamed(int64_t index, int64_t send_ms, const std::vector<int64_t>& token_ms, int64_t requested, bool usage = true) {
  RequestRecord r;
  r.index = index;
  r.t_sched_ns = r.t_send_ns = send_ms * k_ms;
  r.t_first_byte_ns = (send_ms + 2) * k_ms;
  r.requested_output_tokens = requested;
  feed(r, R"({"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]})", (send_ms + 3) * k_ms);  // role prelude
  for (size_t i = 0; i < token_ms.size(); ++i) {
    const bool last = i + 1 == token_ms.size();
    feed(r, last ? R"({"choices":[{"index":0,"delta":{"content":"t"},"finish_reason":"length"}]})" : token("t"), token_ms[i] * k_ms);
  }
  const int64_t end = token_ms.back() + 1;
  if (usage) feed(r, R"({"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":)" + std::to_string(token_ms.size()) + "}}", end * k_ms);
  feed(r, "[DONE]", end * k_ms);
  finish_record(r, end * k_ms);
  return r;
}

}  // namespace

TEST(Summary, MatchesNumpyLinearPercentilesAndPopulationStd) {
  // numpy.percentile([1..10], [50, 90, 95, 99]) = 5.5, 9.1, 9.55, 9.91; numpy.std = sqrt(8.25).
  const auto s = summarize({10, 9, 8, 7, 6, 5, 4, 3, 2, 1});
  EXPECT_EQ(s.count, 10);
  EXPECT_DOUBLE_EQ(s.mean, 5.5);
  EXPECT_NEAR(s.p50, 5.5, 1e-12);
  EXPECT_NEAR(s.p90, 9.1, 1e-12);
  EXPECT_NEAR(s.p95, 9.55, 1e-12);
  EXPECT_NEAR(s.p99, 9.91, 1e-12);
  EXPECT_NEAR(s.std, std::sqrt(8.25), 1e-12);
  EXPECT_EQ(s.min, 1);
  EXPECT_EQ(s.max, 10);
  const auto one = summarize({42});
  EXPECT_EQ(one.p99, 42);
  EXPECT_EQ(one.std, 0);
  EXPECT_EQ(summarize({}).count, 0);
}

TEST(RequestRecord, TimingsFollowTheReferenceDefinitions) {
  const auto r = streamed(0, 0, {100, 120, 140, 160}, 4);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.t_first_chunk_ns, 3 * k_ms);           // vLLM's event: the role prelude
  EXPECT_DOUBLE_EQ(*r.ttft_ms(), 100);               // ours: first non-empty delta
  EXPECT_DOUBLE_EQ(*r.ttfb_ms(), 2);
  EXPECT_DOUBLE_EQ(*r.e2e_ms(), 160);                // last token, not [DONE] at 161
  EXPECT_DOUBLE_EQ(*r.tpot_ms(), 20);                // (160 - 100) / (4 - 1)
  EXPECT_EQ(r.output_tokens(), 4);
  EXPECT_TRUE(r.usage_tokens());
  EXPECT_EQ(r.finish_reason, "length");
  EXPECT_EQ(r.token_events, 4);
}

TEST(RequestRecord, UsageCountOverridesEventCount) {
  // Two multi-token chunks, usage says 7 tokens: TPOT = (130 - 100) / 6.
  RequestRecord r;
  r.t_send_ns = 0;
  feed(r, token("abc"), 100 * k_ms);
  feed(r, token("def"), 130 * k_ms);
  feed(r, R"({"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":7}})", 131 * k_ms);
  feed(r, "[DONE]", 131 * k_ms);
  finish_record(r, 131 * k_ms);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.output_tokens(), 7);
  EXPECT_DOUBLE_EQ(*r.tpot_ms(), 5);
}

TEST(RequestRecord, StreamFaultsFailWithReasons) {
  {
    RequestRecord r;
    feed(r, token("a"), 10 * k_ms);
    finish_record(r, 20 * k_ms);
    EXPECT_EQ(r.failure, FailureClass::missing_done);
    EXPECT_NE(r.error.find("without [DONE]"), std::string::npos);
  }
  {
    RequestRecord r;
    feed(r, token("a"), 10 * k_ms);
    feed(r, R"({"error":{"message":"engine died"}})", 11 * k_ms);
    feed(r, "[DONE]", 12 * k_ms);
    finish_record(r, 12 * k_ms);
    EXPECT_EQ(r.failure, FailureClass::stream_error);
    EXPECT_NE(r.error.find("engine died"), std::string::npos);
  }
  {
    RequestRecord r;
    feed(r, R"({"choices":[{"delta":{"role":"assistant"}}]})", 10 * k_ms);
    feed(r, "[DONE]", 12 * k_ms);
    finish_record(r, 12 * k_ms);
    EXPECT_EQ(r.failure, FailureClass::no_output);
  }
}

TEST(RunStats, HandComputedTwoStreamsAndOneFailure) {
  std::vector<RequestRecord> records;
  records.push_back(streamed(0, 0, {100, 120, 140, 160}, 4));   // TTFT 100, TPOT 20, E2E 160, done 161
  records.push_back(streamed(1, 0, {150, 180, 210, 240}, 5));   // TTFT 150, TPOT 30, E2E 240, done 241
  RequestRecord failed;
  failed.index = 2;
  fail_record(failed, FailureClass::http_status, "http 500: injected", 10 * k_ms);
  records.push_back(failed);
  StatsOptions options;
  options.concurrency = 2;
  options.slo.ttft_ms = 120;
  const auto s = compute_run_stats(records, options);
  EXPECT_EQ(s.requests, 3);
  EXPECT_EQ(s.succeeded, 2);
  EXPECT_EQ(s.failed, 1);
  EXPECT_EQ(s.failures.at("http_status"), 1);
  EXPECT_EQ(s.tokens_source, "usage");
  EXPECT_EQ(s.output_length_mismatches, 1);          // asked 5, got 4
  EXPECT_EQ(s.finish_reasons.at("length"), 2);
  EXPECT_DOUBLE_EQ(s.ttft_ms.mean, 125);
  EXPECT_DOUBLE_EQ(s.ttft_ms.std, 25);
  EXPECT_DOUBLE_EQ(s.ttft_ms.p90, 145);              // 100 + 0.9 * 50
  EXPECT_DOUBLE_EQ(s.ttft_ms.p99, 149.5);
  EXPECT_DOUBLE_EQ(s.tpot_ms.mean, 25);
  EXPECT_DOUBLE_EQ(s.itl_ms.mean, 25);               // gaps 20,20,20,30,30,30
  EXPECT_DOUBLE_EQ(s.itl_ms.p50, 25);
  EXPECT_DOUBLE_EQ(s.e2e_ms.mean, 200);
  EXPECT_DOUBLE_EQ(s.duration_s, 0.241);             // first send 0 -> last end 241 ms
  EXPECT_EQ(s.output_tokens, 8);
  EXPECT_NEAR(s.output_throughput_tok_s, 8 / 0.241, 1e-9);
  EXPECT_NEAR(s.input_throughput_tok_s, 20 / 0.241, 1e-9);
  EXPECT_NEAR(s.request_throughput_per_s, 2 / 0.241, 1e-9);
  EXPECT_NEAR(*s.token_weighted_decode_tok_s, 6 / 0.150, 1e-9);  // (3 + 3) / (60 ms + 90 ms)
  EXPECT_NEAR(s.mean_concurrency, 0.400 / 0.241, 1e-9);          // (160 + 240 ms) / 241 ms
  EXPECT_EQ(s.peak_concurrency, 3);
  // Steady window: second first token (150) -> first finish (160). Inside it request 0 decodes at
  // 1/20 ms and request 1 at 1/30 ms: 50 + 33.33 tok/s.
  ASSERT_TRUE(s.steady_decode_tok_s);
  EXPECT_NEAR(*s.steady_window_s, 0.010, 1e-12);
  EXPECT_NEAR(*s.steady_decode_tok_s, 50 + 100.0 / 3, 1e-9);
  // Goodput: only request 0 meets TTFT <= 120 ms; the failure counts in the denominator.
  EXPECT_NEAR(*s.good_fraction, 1.0 / 3, 1e-12);
  EXPECT_NEAR(*s.goodput_req_s, 1 / 0.241, 1e-9);
}

TEST(RunStats, EventCountFallbackIsFlagged) {
  std::vector<RequestRecord> records = {streamed(0, 0, {100, 110, 120}, 3, false)};
  const auto s = compute_run_stats(records, {});
  EXPECT_EQ(s.tokens_source, "events");
  EXPECT_EQ(s.output_tokens, 3);
  ASSERT_FALSE(s.notes.empty());
  EXPECT_NE(s.notes[0].find("approximate"), std::string::npos);
}

TEST(RunStats, RateModeHasNoSteadyWindow) {
  std::vector<RequestRecord> records = {streamed(0, 0, {100, 110, 120}, 3)};
  StatsOptions o;
  o.mode = LoadMode::request_rate;
  const auto s = compute_run_stats(records, o);
  EXPECT_FALSE(s.steady_decode_tok_s);
}

TEST(ManualClock, DrivesTimestamps) {
  ManualClock clock(5);
  clock.advance_ms(1.5);
  EXPECT_EQ(clock.now_ns(), 1'500'005);
}

// Issue 19: an error event inside a 200 stream is server text that reaches the terminal and the
// database; its escape sequences and control characters are removed.
TEST(RequestRecord, Issue19_StreamErrorTextIsStrippedOfTerminalControls) {
  RequestRecord r;
  // The chunk scanner refuses raw C0 bytes inside JSON strings, but C1 controls (UTF-8 "\xc2\x9b",
  // a one-byte CSI on many terminals) and DEL pass it; the record gets what apply_chunk keeps.
  ChunkInfo info;
  info.is_error = true;
  info.error_message = "bad \x1b[2J\x1b]0;owned\x07input\x1b[31m here\x08 \xc2\x9b" "2J";
  apply_chunk(r, info, 5);
  EXPECT_EQ(r.failure, FailureClass::stream_error);
  EXPECT_EQ(r.error.find('\x1b'), std::string::npos) << r.error;
  EXPECT_EQ(r.error.find('\x07'), std::string::npos) << r.error;
  EXPECT_EQ(r.error.find('\x08'), std::string::npos) << r.error;
  EXPECT_EQ(r.error.find("\xc2\x9b"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("error inside a 200 stream: bad "), std::string::npos) << r.error;
  EXPECT_NE(r.error.find(" here"), std::string::npos) << r.error;
}

// Issue 19: the server's message was cut at byte 300 by hand: "x" then two-byte characters put byte 299 on a lead
// byte, left alone at the end (not UTF-8, in the terminal and the database), and the cut said nothing. clip_text now.
TEST(RequestRecord, Issue19_LongStreamErrorIsCutOnACharacter) {
  RequestRecord r;
  ChunkInfo info;
  info.is_error = true;
  info.error_message = "x";
  for (int i = 0; i < 200; ++i) info.error_message += "\xc3\xa9";
  apply_chunk(r, info, 5);
  EXPECT_EQ(r.error, "error inside a 200 stream: " + info.error_message.substr(0, 299) + "... (401 bytes in all)");
}
