#include "bench/sse_parser.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

using preflight::ErrorKind;
using preflight::Ok;
using preflight::Status;
using namespace preflight::bench;

namespace {

struct Collected {
  std::vector<std::pair<std::string, int64_t>> events;
};

SseFramer make(Collected& c, SseLimits limits = {}) {
  return SseFramer([&c](std::string_view d, int64_t t) -> Status {
    c.events.emplace_back(std::string(d), t);
    return Ok{};
  }, limits);
}

}  // namespace

TEST(SseFramer, SplitsEventsAcrossAndWithinReads) {
  struct Case {
    const char* name;
    std::vector<std::string> reads;
    std::vector<std::string> expected;
  };
  const std::vector<Case> cases = {
      {"one event one read", {"data: {\"a\":1}\n\n"}, {"{\"a\":1}"}},
      {"two events one read", {"data: x\n\ndata: y\n\n"}, {"x", "y"}},
      {"split inside data", {"da", "ta: hel", "lo\n", "\n"}, {"hello"}},
      {"split between CR and LF", {"data: a\r", "\n\r\n"}, {"a"}},
      {"crlf framing", {"data: a\r\n\r\ndata: b\r\n\r\n"}, {"a", "b"}},
      {"comment and other fields ignored", {": keep-alive\nevent: delta\nid: 7\ndata: z\n\n"}, {"z"}},
      {"multi-line data joined", {"data: l1\ndata: l2\n\n"}, {"l1\nl2"}},
      {"no space after colon", {"data:[DONE]\n\n"}, {"[DONE]"}},
      {"blank lines without data dispatch nothing", {"\n\n\n"}, {}},
  };
  for (const auto& c : cases) {
    Collected got;
    auto f = make(got);
    int64_t t = 0;
    for (const auto& r : c.reads) ASSERT_TRUE(f.feed(r, ++t)) << c.name;
    ASSERT_TRUE(f.finish(++t)) << c.name;
    ASSERT_EQ(got.events.size(), c.expected.size()) << c.name;
    for (size_t i = 0; i < c.expected.size(); ++i) EXPECT_EQ(got.events[i].first, c.expected[i]) << c.name;
  }
}

TEST(SseFramer, EventTimestampIsTheReadThatCompletedIt) {
  Collected got;
  auto f = make(got);
  ASSERT_TRUE(f.feed("data: first", 100));
  ASSERT_TRUE(f.feed("\n\ndata: second\n\n", 250));
  ASSERT_EQ(got.events.size(), 2u);
  EXPECT_EQ(got.events[0].second, 250);
  EXPECT_EQ(got.events[1].second, 250);
}

TEST(SseFramer, UnterminatedFinalEventIsDispatchedAtEnd) {
  Collected got;
  auto f = make(got);
  ASSERT_TRUE(f.feed("data: [DONE]", 5));
  EXPECT_TRUE(got.events.empty());
  ASSERT_TRUE(f.finish(9));
  ASSERT_EQ(got.events.size(), 1u);
  EXPECT_EQ(got.events[0].first, "[DONE]");
}

TEST(SseFramer, LineCapRejectsHugeLineAcrossReads) {
  Collected got;
  auto f = make(got, SseLimits{1000});
  ASSERT_TRUE(f.feed("data: " + std::string(600, 'x'), 1));
  auto st = f.feed(std::string(600, 'x'), 2);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().kind, ErrorKind::corrupt);
  EXPECT_NE(st.error().message.find("exceeds 1000 bytes"), std::string::npos);
  EXPECT_FALSE(f.feed("\n\n", 3));  // stays failed
  EXPECT_TRUE(got.events.empty());
  // In a single read too.
  Collected got2;
  auto g = make(got2, SseLimits{1000});
  EXPECT_FALSE(g.feed("data: " + std::string(2000, 'y') + "\n\n", 1));
}

// Issue 19 item 2: data lines that never reach the blank line grew one event without bound (8 GB
// in 60 s from one request). The event cap stops it; so does the per-stream byte cap.
TEST(SseFramer, Issue19_EndlessEventAndEndlessStreamAreBounded) {
  struct Case {
    const char* name;
    SseLimits limits;
    std::string read;     // fed repeatedly
    int reads;
    SseFailure failure;
    const char* message;
    int64_t dispatched;   // events delivered before the failure
  };
  const std::string kib_line = "data: " + std::string(1024, 'e') + "\n";
  const std::string kib_event = "data: " + std::string(1024, 'e') + "\n\n";
  const std::vector<Case> cases = {
      {"one event of 1 KiB lines", {.max_line_bytes = 4096, .max_event_bytes = 64 * 1024, .max_stream_bytes = 1ull << 30}, kib_line, 1000,
       SseFailure::event_too_large, "sse event exceeds 65536 bytes", 0},
      {"default event cap", {}, kib_line, 2000, SseFailure::event_too_large, "sse event exceeds 1048576 bytes", 0},
      {"whole events past the stream cap", {.max_line_bytes = 4096, .max_event_bytes = 64 * 1024, .max_stream_bytes = 100 * 1032}, kib_event, 1000,
       SseFailure::stream_too_large, "sse stream exceeds 103200 bytes", 100},
  };
  for (const auto& c : cases) {
    Collected got;
    auto framer = make(got, c.limits);
    Status st = Ok{};
    int fed = 0;
    for (; fed < c.reads && st; ++fed) st = framer.feed(c.read, fed);
    ASSERT_FALSE(st) << c.name;
    EXPECT_LT(fed, c.reads) << c.name << ": the cap fired before the input ran out";
    EXPECT_EQ(st.error().kind, ErrorKind::corrupt) << c.name;
    EXPECT_NE(st.error().message.find(c.message), std::string::npos) << c.name << ": " << st.error().message;
    EXPECT_EQ(framer.failure(), c.failure) << c.name;
    EXPECT_EQ(static_cast<int64_t>(got.events.size()), c.dispatched) << c.name;
    EXPECT_FALSE(framer.feed(c.read, 0)) << c.name << ": stays failed";
    EXPECT_FALSE(framer.finish(0)) << c.name;
  }
}

TEST(ParseChunk, ExtractsTheFieldsMetricsNeed) {
  struct Case {
    const char* name;
    const char* payload;
    int choices;
    int64_t content, reasoning, tool;
    const char* finish;
    int64_t prompt, completion;
    bool error;
  };
  const std::vector<Case> cases = {
      {"content delta", R"({"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hello"},"finish_reason":null}]})", 1, 5, 0, 0, "", -1, -1, false},
      {"role prelude is not a token", R"({"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]})", 1, 0, 0, 0, "", -1, -1, false},
      {"vllm reasoning", R"({"choices":[{"delta":{"reasoning":"Let me"}}]})", 1, 0, 6, 0, "", -1, -1, false},
      {"deepseek reasoning_content", R"({"choices":[{"delta":{"reasoning_content":"hm","content":null}}]})", 1, 0, 2, 0, "", -1, -1, false},
      {"tool call fragment", R"({"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\""}}]}}]})", 1, 0, 0, 44, "", -1, -1, false},
      {"empty tool_calls", R"({"choices":[{"delta":{"tool_calls":[]}}]})", 1, 0, 0, 0, "", -1, -1, false},
      {"completions text", R"({"object":"text_completion","choices":[{"index":0,"text":" world","finish_reason":"length"}]})", 1, 6, 0, 0, "length", -1, -1, false},
      {"escapes and utf-8 count as characters", R"({"choices":[{"delta":{"content":"a\n\u00e9\"ü"}}]})", 1, 5, 0, 0, "", -1, -1, false},
      {"usage chunk", R"({"choices":[],"usage":{"prompt_tokens":1024,"completion_tokens":128,"total_tokens":1152,"completion_tokens_details":{"reasoning_tokens":40}}})", 0, 0, 0, 0, "", 1024, 128, false},
      {"usage null", R"({"choices":[{"delta":{"content":"x"}}],"usage":null})", 1, 1, 0, 0, "", -1, -1, false},
      {"error object in 200 stream", R"({"error":{"message":"boom","code":500}})", 0, 0, 0, 0, "", -1, -1, true},
      {"vllm error object", R"({"object":"error","message":"too long","type":"BadRequestError","code":400})", 0, 0, 0, 0, "", -1, -1, true},
  };
  for (const auto& c : cases) {
    auto r = parse_chunk(c.payload);
    ASSERT_TRUE(r) << c.name << ": " << r.error().message;
    EXPECT_EQ(r->choices, c.choices) << c.name;
    EXPECT_EQ(r->content_chars, c.content) << c.name;
    EXPECT_EQ(r->reasoning_chars, c.reasoning) << c.name;
    EXPECT_EQ(r->tool_call_chars, c.tool) << c.name;
    EXPECT_EQ(r->finish_reason, c.finish) << c.name;
    EXPECT_EQ(r->prompt_tokens, c.prompt) << c.name;
    EXPECT_EQ(r->completion_tokens, c.completion) << c.name;
    EXPECT_EQ(r->is_error, c.error) << c.name;
  }
  auto e = parse_chunk(R"({"error":{"message":"boom"}})");
  EXPECT_EQ(e->error_message, "boom");
  auto u = parse_chunk(R"({"choices":[],"usage":{"completion_tokens_details":{"reasoning_tokens":40}}})");
  EXPECT_EQ(u->reasoning_tokens, 40);
  EXPECT_TRUE(parse_chunk(" [DONE] ")->is_done);
}

// Issue 19: usage counts that are valid JSON but no token count (1e300 was cast to int64_t: undefined behaviour) are
// refused with the field named; a count given as a string is a syntax error of the scan, as before.
TEST(ParseChunk, Issue19_UsageCountsOutsideTokenRangeAreRefused) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {R"({"choices":[],"usage":{"prompt_tokens":8,"completion_tokens":1e300}})", "usage.completion_tokens is 1e+300, expected a whole token count from 0 to 2^40"},
      {R"({"choices":[],"usage":{"prompt_tokens":-5,"completion_tokens":8}})", "usage.prompt_tokens is -5, expected"},
      {R"({"choices":[],"usage":{"completion_tokens":12.5}})", "usage.completion_tokens is 12.5, expected"},
      {R"({"choices":[],"usage":{"completion_tokens":1099511627777}})", "usage.completion_tokens is 1099511627777, expected"},
      {R"({"choices":[],"usage":{"completion_tokens_details":{"reasoning_tokens":-1}}})", "usage.completion_tokens_details.reasoning_tokens is -1"},
      {R"({"token":{"text":"a"},"generated_text":"a","details":{"generated_tokens":9.2e18}})", "details.generated_tokens is 9.2e+18"},
      {R"({"choices":[],"usage":{"completion_tokens":"12"}})", "syntax error at byte"},
  };
  for (const auto& [payload, fragment] : bad) {
    auto r = parse_chunk(payload);
    ASSERT_FALSE(r) << payload;
    EXPECT_EQ(r.error().kind, ErrorKind::corrupt);
    EXPECT_NE(r.error().message.find("malformed sse: "), std::string::npos) << r.error().message;
    EXPECT_NE(r.error().message.find(fragment), std::string::npos) << r.error().message;
  }
  auto edge = parse_chunk(R"({"choices":[],"usage":{"prompt_tokens":0,"completion_tokens":1099511627776}})");
  ASSERT_TRUE(edge) << edge.error().message;
  EXPECT_EQ(edge->completion_tokens, 1099511627776);
  EXPECT_EQ(edge->prompt_tokens, 0);
}

TEST(ParseChunk, RejectsMalformedPayloads) {
  const std::vector<std::string> bad = {
      R"({"choices":[{"delta":{"content":"x"})",  // truncated
      "not json",
      R"({"choices":[{"delta":{"content":"x\q"}}]})",  // bad escape
      R"({"a":1} trailing)",
      "[1,2]",
      "",
      std::string(100, '[') + std::string(100, ']'),  // nesting
      R"({"a":"\u12"})",
  };
  for (const auto& p : bad) {
    auto r = parse_chunk(p);
    ASSERT_FALSE(r) << p;
    EXPECT_EQ(r.error().kind, ErrorKind::corrupt);
    EXPECT_NE(r.error().message.find("malformed sse"), std::string::npos);
  }
}
